#pragma once
// The common part of every analysis view: the analysis runs in a worker thread (QtConcurrent with a
// QPromise for progress and cancel), errors come back as a message the user can act on, and the
// figure is the set of panels (heatmaps, painted plots, Qt Charts) inside figure(), drawn by one
// painter path for the screen and for export. A view draws results; it computes no statistic.
#include <QFutureWatcher>
#include <QPointer>
#include <QPromise>
#include <QStringList>
#include <QWidget>
#include <QtConcurrent/QtConcurrent>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "views/figure_export.hpp"
#include "views/work_thread_pool.hpp"
#include "views/worker_errors.hpp"

class QLabel;

namespace routescope::views {

/// The narrowest column of a print layout (AnalysisView::prepare_print): a print narrower than
/// twice this is one column of panels; below it a figure may not fit its page (a headless
/// export then checks its layout, docs/user-guide.md).
inline constexpr double kMinPrintColumnMm = 80;

/// What a worker sees of its view: progress between the steps of an analysis (layers, models) and
/// the user's cancel, honoured at the next step (the analysis library itself has no cancel points).
class AnalysisSteps {
public:
    struct Cancelled {};
    AnalysisSteps(std::function<void(int, int)> report,
                  std::shared_ptr<std::atomic<bool>> cancelled)
        : report_(std::move(report)), cancelled_(std::move(cancelled)) {}
    void set_total(int total) {
        total_ = total;
        report_(0, total_);
    }
    /// Marks `done` steps finished; throws Cancelled when the user cancelled.
    void done(int done) {
        report_(done, total_);
        check();
    }
    void check() const {
        if (*cancelled_) throw Cancelled{};
    }

private:
    std::function<void(int, int)> report_;
    std::shared_ptr<std::atomic<bool>> cancelled_;
    int total_ = 1;
};

class AnalysisView : public QWidget, public FigureSource {
    Q_OBJECT
public:
    /// `kind`: "kernels", "gates", ... (the ANALYSES.md section; also the export file stem).
    AnalysisView(QString kind, QWidget* parent = nullptr);
    ~AnalysisView() override;

    const QString& kind() const { return kind_; }
    /// A short title for the tab ("Kernels — model.dump.h5").
    virtual QString title() const = 0;
    /// Starts (or restarts) the analysis with the current settings.
    virtual void start() = 0;
    /// Draws again with the workspace's current names and colours (a rename, a new colour). By
    /// default the analysis restarts (views whose analyses are cached pay only the reading); a view
    /// that keeps its last result redraws from it without computing anything.
    virtual void restyle() { start(); }
    /// The view's settings as JSON (for project files) and back; restore re-runs when needed.
    virtual nlohmann::json settings() const = 0;
    virtual void restore_settings(const nlohmann::json& settings) = 0;
    /// restore_settings(settings), not reported as an edit (what undo, redo and a project do).
    void apply_settings(const nlohmann::json& settings);

    /// Issue 25: a view reads its files in this process, so the workbench lets an analysis start
    /// only on files its loader has read through in a child process. The gate answers, for the
    /// files the analysis is about to read (input_files(), as the current settings say): go, wait
    /// (the analysis waits, busy, "waiting for the check of …", until recheck_inputs()), or refuse
    /// (the analysis fails with the gate's message, naming the file; it is never read here).
    struct InputCheck {
        enum class State { go, wait, refuse } state = State::go;
        QString text;  ///< wait: the files waited for; refuse: the message
    };
    using InputGate = std::function<InputCheck(const QStringList& files)>;
    void set_input_gate(InputGate gate) { gate_ = std::move(gate); }
    /// The dumps, checkpoints (or other files) the analysis reads with the current settings.
    virtual QStringList input_files() const { return {}; }
    /// Asks the gate again for an analysis that waits: it starts, waits on, or fails.
    void recheck_inputs();
    bool waiting_for_inputs() const { return static_cast<bool>(held_run_); }

    bool busy() const { return busy_; }
    /// Busy, and its worker has begun (not waiting for its input files or queued behind other
    /// analyses in the work pool).
    bool worker_started() const { return busy_ && !held_run_ && *started_; }
    /// The last progress the running analysis reported: {steps done, steps} ({0, 0}: none yet).
    std::pair<int, int> progress() const { return progress_; }
    bool has_result() const { return has_result_; }
    QString error() const { return error_; }
    void cancel();

    // FigureSource: the panels of figure() in their on-screen arrangement.
    QSize figure_size() const override;
    void paint_figure(QPainter& painter, const QRect& target) const override;
    QString figure_name() const override;
    nlohmann::json figure_provenance() const override;
    std::function<void()> prepare_print(QSizeF print, double font_px, int panel) const override;
    QStringList panel_titles() const override;
    /// Writes `path` (format from its suffix) and its provenance JSON; returns the files.
    QStringList export_to(const QString& path, int dpi = 150) const;
    QStringList export_to(const QString& path, const FigureExportOptions& options) const;

    QWidget* figure() const { return figure_; }
    /// Each chart's own options, in the figure's chart order: its legend position and, when it
    /// is zoomed, the limits it shows in the axes' own values,
    /// [{"legend": "right", "limits": {"x": [x0, x1], "y": [y0, y1]}}, {}, ...]; empty when every
    /// chart has the defaults.
    nlohmann::json chart_options() const;
    /// Applies what chart_options() returned (unknown entries and values are ignored). Limits
    /// wait for the next result to be shown (a chart fits its data when it arrives) and are then
    /// applied as typed-in limits; until then chart_options() reports them as they will be.
    void apply_chart_options(const nlohmann::json& options);

signals:
    void analysisStarted(const QString& what);
    void progressChanged(int value, int maximum);
    void analysisFinished();
    void analysisFailed(const QString& message);
    void analysisCancelled();
    /// A person changed the view's settings (a control, a click on a plot): settings() before
    /// and after the setter. The workspace records it as an undoable command (a setter is a
    /// command). Changes the view makes itself — showing a result, applying settings — are not
    /// reported.
    /// `continuous`: one step of a change made in steps (typing, a spin box's arrows), which the
    /// history merges with the steps just before it.
    void settingsEdited(const QString& what, const nlohmann::json& before,
                        const nlohmann::json& after, bool continuous);
    /// What chart_options() returns may have changed: a chart zoomed or reset, its legend moved,
    /// an axis made logarithmic (at once: the workspace document records them as they happen).
    void chartOptionsChanged();

protected:
    /// Provenance JSON of every result shown (filled by subclasses).
    virtual nlohmann::json result_provenance() const = 0;
    /// A short name of the shown input(s) for file stems ("model_a" or "model_a-vs-model_b").
    virtual QString input_stem() const = 0;

    /// Runs `work` in a worker; `work` may report progress and check cancellation through the
    /// promise. `done` runs on the GUI thread with the result. Every exception (std::exception,
    /// H5::Exception, anything else) of `work` or `done` ends in analysisFailed, never escapes.
    template <typename T>
    void run(const QString& what, std::function<T(AnalysisSteps&)> work,
             std::function<void(T&)> done);

    void set_status(const QString& text);
    /// Runs a setter — `change` updates the settings and redraws or restarts — as one edit named
    /// `what`: settingsEdited when settings() changed, unless the view is showing a result or
    /// applying settings (then it is the view's own change).
    void edit(const QString& what, const std::function<void()>& change, bool continuous = false);
    /// An edit made in steps (typing, a spin box's value): see settingsEdited.
    void edit_steps(const QString& what, const std::function<void()>& change) {
        edit(what, change, true);
    }
    /// Counts the scopes in which settings changes are the view's own (see edit).
    struct OwnChange {
        explicit OwnChange(AnalysisView* v) : view(v) { ++view->own_changes_; }
        ~OwnChange() { --view->own_changes_; }
        OwnChange(const OwnChange&) = delete;
        OwnChange& operator=(const OwnChange&) = delete;
        AnalysisView* view;
    };
    QWidget* figure_ = nullptr;
    QLabel* status_ = nullptr;

private:
    QString kind_;
    bool busy_ = false, has_result_ = false;
    int own_changes_ = 0;
    QString error_;
    std::shared_ptr<std::atomic<bool>> cancelled_;
    std::shared_ptr<std::atomic<bool>> started_ = std::make_shared<std::atomic<bool>>(false);
    std::pair<int, int> progress_{0, 0};
    QPointer<QObject> watcher_;
    InputGate gate_;
    std::function<void()> held_run_;                      ///< the analysis that waits for the gate
    std::map<qsizetype, nlohmann::json> pending_limits_;  ///< chart index → limits (above)
    void apply_pending_limits();
    /// Has every chart and plot of the figure report its option changes (chartOptionsChanged).
    void watch_charts();
    void note_chart_change();
    void begin(const QString& what);
    void end_ok();
    void end_failed(const QString& message);
};

template <typename T>
void AnalysisView::run(const QString& what, std::function<T(AnalysisSteps&)> work,
                       std::function<void(T&)> done) {
    if (gate_) {
        const InputCheck check = gate_(input_files());
        if (check.state == InputCheck::State::refuse) {  // never read here
            held_run_ = nullptr;
            cancel();
            begin(what);
            return end_failed(check.text);
        }
        if (check.state == InputCheck::State::wait) {  // starts when the files have passed
            if (!held_run_) {
                cancel();
                begin(what);
            }
            set_status(tr("%1: waiting for the check of %2…").arg(what, check.text));
            held_run_ = [this, what, work, done] { run<T>(what, work, done); };
            return;
        }
        held_run_ = nullptr;
    }
    cancel();
    begin(what);
    struct Outcome {
        std::shared_ptr<T> value;
        QString error;
    };
    auto cancelled = cancelled_;
    auto started = started_;
    auto* watcher = new QFutureWatcher<Outcome>(this);
    watcher_ = watcher;
    connect(watcher, &QFutureWatcher<Outcome>::progressValueChanged, this, [this, watcher](int v) {
        if (watcher_ == watcher) progress_ = {v, watcher->progressMaximum()};
        emit progressChanged(v, watcher->progressMaximum());
    });
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher, cancelled, done] {
        watcher->deleteLater();
        if (watcher_ == watcher) watcher_ = nullptr;
        if (*cancelled) return;  // cancelled: whatever came back is dropped
        // The worker catches everything, so result() has nothing to rethrow; guarded all the same
        // (issue 25: an exception rethrown here, on the GUI thread, terminated the workbench).
        Outcome out;
        try {
            if (watcher->future().resultCount() == 0)
                return end_failed(tr("The analysis stopped without a result."));
            out = watcher->future().result();
        } catch (...) {
            return end_failed(current_exception_message(tr("in the analysis")));
        }
        if (!out.value) return end_failed(out.error);
        // Not busy while `done` runs, so that it may start a follow-up job (a detail to read).
        // What it sets in the controls (a layer picker filled, a default gate) is the view's own.
        busy_ = false;
        const OwnChange own(this);
        try {
            done(*out.value);
            if (!busy_)
                end_ok();
            else
                has_result_ = true;
        } catch (...) {
            end_failed(current_exception_message(tr("while showing the analysis")));
        }
    });
    watcher->setFuture(QtConcurrent::run(
        work_thread_pool(), [work, cancelled, started, kind = kind_](QPromise<Outcome>& promise) {
            *started = true;
            Outcome out;
            try {
                lower_thread_priority();
                AnalysisSteps steps(
                    [&promise](int value, int maximum) {
                        promise.setProgressRange(0, maximum);
                        promise.setProgressValue(value);
                    },
                    cancelled);
                fault_throw_point("analysis");                         // tests only (issue 25)
                fault_delay_point(kind, [&steps] { steps.check(); });  // tests only
                out.value = std::make_shared<T>(work(steps));
            } catch (const AnalysisSteps::Cancelled&) {
            } catch (...) {
                // std::exception, H5::Exception (not a std::exception), anything: the view's error.
                try {
                    out.error = current_exception_message(tr("in the analysis"));
                } catch (...) {
                }
            }
            promise.addResult(std::move(out));
        }));
}

// A project's settings are read through these (never nlohmann's get<int>() or value(), which
// narrowed 4294967297 to 1 and answered a wrong type or a null with
// "[json.exception.type_error.302] type must be number, but is null", naming no key). Each throws
// FormatError naming the setting's place, `at` + "." + KEY ("settings.m: null is not a whole number
// in [...]"); `at` is "settings" or a place inside it ("settings.a" for a kernels view's {"a":
// {"path": …}}). The workbench adds the view's place in the project (views[2].settings.m).

/// A settings value that names one of the view's choices (`allowed`, its combo box's data), or
/// `fallback` when the key is absent. FormatError "settings.KEY: 'v' is not one of a, b" for any
/// other value: a project naming another was drawn with the default while its provenance recorded
/// the unknown value (the project loader leaves the view out and says so).
QString setting_choice(const nlohmann::json& j, const char* key, const QString& fallback,
                       std::initializer_list<const char*> allowed);
/// The same for a choice known at run time (analysis::similarity_measures()).
QString setting_choice(const nlohmann::json& j, const char* key, const QString& fallback,
                       const std::vector<std::string>& allowed);

/// A settings value that is a whole number in [lo, hi] (the range of the view's own control, or
/// of the CLI's option), or `fallback` when the key is absent. FormatError "settings.KEY: v is
/// not a whole number in [lo, hi]" otherwise: a project's "bins": 2147483647 took gigabytes, and
/// "bins": 0 drew a bin to infinity. The JSON number is compared as it is (never narrowed first).
std::int64_t setting_int(const nlohmann::json& j, const char* key, std::int64_t fallback,
                         std::int64_t lo, std::int64_t hi, const std::string& at = "settings");
/// The same for a value inside a setting (a list's entry), named `place` in full
/// ("settings.scatter[0]").
std::int64_t whole_number_at(const nlohmann::json& v, std::int64_t lo, std::int64_t hi,
                             const std::string& place);
/// setting_int over the range of the type the view holds it in, for settings whose range the
/// analysis checks itself (a layer the file lacks, a sample size below 1): "layer": 4294967297
/// was read as layer 1.
int setting_as_int(const nlohmann::json& j, const char* key, int fallback,
                   const std::string& at = "settings");
std::int64_t setting_as_int64(const nlohmann::json& j, const char* key, std::int64_t fallback,
                              const std::string& at = "settings");
std::uint64_t setting_as_uint64(const nlohmann::json& j, const char* key, std::uint64_t fallback,
                                const std::string& at = "settings");
/// A settings value that is a finite number in [lo, hi], or `fallback` when absent.
double setting_number(const nlohmann::json& j, const char* key, double fallback, double lo,
                      double hi, const std::string& at = "settings");
/// true or false, or `fallback` when absent.
bool setting_bool(const nlohmann::json& j, const char* key, bool fallback,
                  const std::string& at = "settings");
/// A string (a path, a dataset, a pattern), or `fallback` when absent.
QString setting_string(const nlohmann::json& j, const char* key, const QString& fallback,
                       const std::string& at = "settings");
/// A list of strings (the view's files), or `fallback` when absent; FormatError naming the entry
/// ("settings.dumps[0]: 5 is not a string").
QStringList setting_strings(const nlohmann::json& j, const char* key, const QStringList& fallback,
                            const std::string& at = "settings");
/// An object (a group of settings: a kernels view's "a"), or `fallback` when absent.
nlohmann::json setting_object(const nlohmann::json& j, const char* key,
                              const nlohmann::json& fallback, const std::string& at = "settings");

}  // namespace routescope::views
