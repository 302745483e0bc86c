#pragma once
// Training curves (issue 6, "Training"): loss, learning rate, gradient norm and tokens per second
// of one or more runs, read from each run's log.jsonl (docs/cli.md) and extended live with the
// records of a running run as the launcher reads them; for a Birdie run (train.objective "birdie")
// also the objective mixture per arm and each arm's loss against step, from the "mixture" records
// of its controller (an EMA bandit, named as such). Like every view it only draws: the numbers are
// the log's own.
#include <QColor>
#include <QJsonObject>

#include "views/analysis_view.hpp"

class QChartView;
class QLineSeries;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QLabel;
class QTimer;

namespace routescope::views {

struct TrainingViewSettings {
    QStringList runs;    ///< run directories (each holds log.jsonl)
    QString x = "step";  ///< step | time (elapsed seconds)
    /// TensorBoard's smoothing weight (analysis/smoothing.hpp) of the training loss, gradient
    /// norm and throughput curves, in [0, 0.99]; 0 draws the raw curves only. The raw curve stays
    /// under the smoothed one, faint.
    double smoothing = 0.6;
    /// A regular expression (case-insensitive) the shown runs' directory names match; empty: all.
    QString run_filter;
    nlohmann::json to_json() const;
    static TrainingViewSettings from_json(const nlohmann::json& j);
};

/// The records of one run's log.
struct TrainingLog {
    struct Step {
        double step, elapsed, loss, lr, grad_norm, tokens_per_s;
    };
    struct Eval {
        double step, elapsed, loss, accuracy;
    };
    /// A Birdie controller update: weight, validation loss and reward of each arm (indexed as
    /// `arms`; NaN where the record has none, e.g. the first update's rewards).
    struct Mixture {
        double step, elapsed;
        std::vector<double> weights, losses, rewards;
    };
    QString dir;
    std::vector<Step> steps;
    std::vector<Eval> evals;
    QStringList arms;    ///< the Birdie arms named by the mixture records, in order of appearance
    QString controller;  ///< the mixture records' "controller" (the last one read)
    std::vector<Mixture> mixtures;
    QString device;   ///< the "start" record's engine device (cpu | cuda); empty: not recorded
    int threads = 0;  ///< the "start" record's thread count (0: not recorded)
    /// Adds one JSON record ("start", "step", "eval" and "mixture"; others are ignored). A step at
    /// or before the last one read (a resumed run cuts its log back) drops the records after it; so
    /// does a mixture record for the mixtures.
    void add(const QJsonObject& record);
    /// Reads dir/log.jsonl (missing: empty); throws IoError when it exists but cannot be read.
    static TrainingLog read(const QString& dir);
    /// The device of dir/log.jsonl's last "start" record, read from the log's first lines only
    /// (a long log is not read for it); empty when there is none.
    static QString recorded_device(const QString& dir);
    /// "CPU", "CUDA", or "not recorded" (logs written before the start record named it).
    static QString device_text(const QString& device);
};

class TrainingView : public AnalysisView {
    Q_OBJECT
public:
    explicit TrainingView(TrainingViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;

    /// A record of a running run in `dir` (from its process): appended and redrawn shortly after.
    void append_record(const QString& dir, const QJsonObject& record);
    void set_x(const QString& x);
    void set_smoothing(double weight);
    void set_run_filter(const QString& pattern);
    /// Draws the records appended since the last draw now (what the redraw timer does).
    void draw_pending();
    const std::vector<TrainingLog>& logs() const { return logs_; }
    /// loss | lr | grad_norm | tokens_per_s | mixture | arm_loss
    QChartView* chart(const QString& metric) const;
    /// "Device: <run> CPU (2 threads) · ..." from each run's start record.
    QString device_text() const;

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;

private:
    /// The colour of the run in `dir`: that of the model of the checkpoint it writes.
    static QColor run_colour(const QString& dir);
    TrainingViewSettings settings_;
    std::vector<TrainingLog> logs_;
    std::vector<std::pair<QString, QJsonObject>> pending_;  ///< live records while reading the logs
    QComboBox* x_box_;
    QDoubleSpinBox* smoothing_box_;
    QLineEdit* filter_edit_;
    bool shown_run(const QString& dir) const;
    QChartView *loss_, *lr_, *grad_, *speed_;
    QWidget* mixture_panel_;  ///< the mixture charts and the controller's name: Birdie runs only
    QChartView *mixture_, *arm_loss_;
    QLabel* controller_label_;
    QLabel* device_label_;
    void show_devices();
    QTimer* redraw_timer_;
    /// What the charts show of each log (same order as logs_), so that a live update refills the
    /// existing series instead of rebuilding every chart, axis and legend.
    struct Drawn {
        std::size_t steps = 0, evals = 0, mixtures = 0;
        double last_step = -1, last_eval = -1;
        bool shown = true;  ///< matches the run filter
        QLineSeries *loss = nullptr, *lr = nullptr, *grad = nullptr, *speed = nullptr,
                    *eval = nullptr;
        /// The raw curves under the smoothed ones (null without smoothing).
        QLineSeries *loss_raw = nullptr, *grad_raw = nullptr, *speed_raw = nullptr;
    };
    std::vector<Drawn> drawn_;
    QString drawn_x_;
    void redraw();
    /// Puts `log`'s steps and evals into `d`'s series (at most kMaxDrawnPoints each).
    void draw_steps(const TrainingLog& log, Drawn& d) const;
    /// Refills the series with the records so far; falls back to redraw() when a log was cut back
    /// (a resumed run), a series is missing (the first eval) or the x axis changed.
    void update_live();
    void redraw_mixtures();
    /// Names, under each chart's title, the shown runs that chart has nothing of: a log with no
    /// records yet (a run just started, or an empty log.jsonl), or with evaluations and no steps.
    void note_empty_logs();
};

}  // namespace routescope::views
