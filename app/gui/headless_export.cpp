#include "app/gui/headless_export.hpp"

#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSet>
#include <QThread>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <ostream>

#include "app/gui/analysis_registry.hpp"
#include "app/gui/main_window.hpp"
#include "app/gui/project_file.hpp"
#include "app/gui/workspace.hpp"
#include "engine/data/utf8.hpp"
#include "views/analysis_view.hpp"
#include "views/figure_layout.hpp"

namespace routescope::gui {
namespace {
/// What became of a view's analyses during the export, from its own signals.
struct Outcome {
    int finished = 0;  ///< analyses that ended with a result
    QString failed;    ///< the last one's error, when it failed
};

QString seconds(double s) {  // as given: "6", "0.5"
    return QString::number(s, 'g', 6);
}

/// Where an unfinished view stands: waiting for the check of its files, queued behind other
/// analyses in the work pool, or running (with its progress when it reports one).
QString state_of(const views::AnalysisView& v) {
    if (v.waiting_for_inputs()) return QStringLiteral("waiting for the check of its files");
    if (!v.worker_started()) return QStringLiteral("queued behind other analyses, not started");
    const auto [done, total] = v.progress();
    if (total > 0) return QStringLiteral("running, step %1 of %2").arg(done).arg(total);
    return QStringLiteral("running");
}
/// The project's views not opened yet because their files are still being checked (the views
/// are made once every file they read has its verdict): "views[0] (Layer Transitions on
/// a.dump.h5)", in the project's order.
QStringList views_waiting_for_files(const MainWindow& window) {
    QStringList out;
    const Project* p = window.document()->waiting_views();
    if (!p) return out;
    for (std::size_t i = 0; i < p->views.size(); ++i) {
        const ProjectView& v = p->views[i];
        const AnalysisKind* entry = find_analysis(v.kind);
        QStringList names;
        for (const QString& f : v.inputs)
            names << QFileInfo(f).fileName();
        out << QStringLiteral("views[%1] (%2%3)")
                   .arg(i)
                   .arg(entry ? QString::fromUtf8(entry->label) : v.kind)
                   .arg(names.isEmpty() ? QString() : QStringLiteral(" on ") + names.join(", "));
    }
    return out;
}

// Longer than any export runs (about 31 years): waited for as no limit. In milliseconds from now,
// a --timeout of 1e16 s overflowed the deadline into one that had already passed.
constexpr double kNoLimitAboveS = 1e9;

/// A message of a view or a dialog on one line (a dialog's paragraphs, as errors_shown has them),
/// printable.
std::string line(const QString& text) {
    return printable_text(QString(text).replace("\n\n", " ").replace('\n', ' '));
}
}  // namespace

std::string printable_text(std::string_view text) {
    return data::printable_text(text);
}

std::string printable_text(const QString& text) {
    const QByteArray utf8 = text.toUtf8();
    return printable_text(
        std::string_view(utf8.constData(), static_cast<std::size_t>(utf8.size())));
}

QStringList files_opened_by(const QString& path) {
    QStringList out;
    const auto add = [&out](const QString& p) {
        const QFileInfo info(p);
        if (info.isDir()) {
            // A run directory: the training view reads its log, and its model's checkpoint.
            const QDir dir(info.absoluteFilePath());
            for (const QString& n : dir.entryList({"*.jsonl", "*.h5"}, QDir::Files))
                out << dir.filePath(n);
        } else if (info.exists()) {
            out << info.absoluteFilePath();
        }
    };
    add(path);
    if (!path.endsWith(QStringLiteral(".rsproj"), Qt::CaseInsensitive)) return out;
    Project project;
    try {
        project = Project::load(QFileInfo(path).absoluteFilePath());
    } catch (const std::exception&) {
        return out;  // opening it says why
    }
    for (const QString& f : project.files)
        add(f);
    for (const QString& r : project.runs)
        add(r);
    for (const ProjectView& v : project.views) {
        for (const QString& f : v.inputs)
            add(f);
        for (const QString& f : absolute_paths_in(v.settings))
            add(f);
    }
    out.removeDuplicates();
    return out;
}

QStringList absolute_paths_in(const nlohmann::json& settings) {
    // The settings' paths are absolute once a project is read (relative to it); any other text
    // (a measure's name) names no file.
    QStringList out;
    std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
        if (j.is_string()) {
            const QString s = QString::fromStdString(j.get<std::string>());
            if (QDir::isAbsolutePath(s)) out << s;
        } else if (j.is_array() || j.is_object()) {
            for (const auto& v : j)
                walk(v);
        }
    };
    walk(settings);
    return out;
}

int export_project(const QString& project, const QString& out_dir,
                   const views::FigureExportOptions& options, std::ostream& out, std::ostream& err,
                   bool check_layout, double timeout_s) {
    MainWindow window;
    window.set_records_recent_files(false);
    // Laid out as on screen (charts lay out only when shown); offscreen, nothing is displayed.
    window.resize(1400, 900);
    window.show();
    try {
        window.open_project(project);
    } catch (const std::exception& e) {
        err << "routescope: error: " << printable_text(e.what()) << "\n";
        return 2;
    }
    // No figure, CSV or provenance is written over a file the project opens (a name in --out
    // that is a link to its dump: the dump became a CSV, exit 0).
    const views::ExportInputs inputs(files_opened_by(project));
    // Each view's own outcome (session 28: at a fixed limit of 600 s, views that had failed at
    // once, or finished and been started again behind a long analysis, were all reported as
    // "did not finish in 600 s"). `context`, destroyed first, ends the connections before the
    // window's views go.
    std::map<const views::AnalysisView*, Outcome> outcomes;
    QObject context;
    for (auto* view : window.analysis_views()) {
        outcomes[view];
        QObject::connect(view, &views::AnalysisView::analysisFinished, &context, [&outcomes, view] {
            Outcome& o = outcomes[view];
            ++o.finished;
            o.failed.clear();
        });
        QObject::connect(
            view, &views::AnalysisView::analysisFailed, &context,
            [&outcomes, view](const QString& message) { outcomes[view].failed = message; });
    }
    // Every view's analysis, however long it takes, unless --timeout says otherwise.
    const bool limited = timeout_s > 0 && timeout_s <= kNoLimitAboveS;
    const QDeadlineTimer deadline = limited ? QDeadlineTimer(static_cast<qint64>(timeout_s * 1000))
                                            : QDeadlineTimer(QDeadlineTimer::Forever);
    QElapsedTimer clock;
    clock.start();
    qint64 next_report_ms = 60 * 1000;
    // Idle twice in a row, with the posted events delivered in between: a finished analysis may
    // queue a follow-up (the similarity view's saved cell starts its scatter from a queued call
    // after the matrix arrives), and the window is idle for a moment before it starts. Leaving
    // at the first idle moment wrote that cell's panel empty, or reported it as timed out.
    int idle_in_a_row = 0;
    while (idle_in_a_row < 2 && !deadline.hasExpired()) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QApplication::sendPostedEvents();
        if (window.idle()) {
            ++idle_in_a_row;
            continue;
        }
        idle_in_a_row = 0;
        QThread::msleep(10);
        if (clock.elapsed() >= next_report_ms) {  // a sign of life in a CI log
            next_report_ms += 60 * 1000;
            QStringList waiting;
            for (auto* view : window.analysis_views())
                if (view->busy()) waiting << view->title() + " (" + state_of(*view) + ")";
            for (const QString& v : views_waiting_for_files(window))
                waiting << v + " (waiting for the check of its files)";
            err << "routescope: after " << clock.elapsed() / 60000 << " min, waiting for "
                << (waiting.isEmpty() ? std::string("the project's files to load")
                                      : line(waiting.join("; ")))
                << "\n";
        }
    }
    QApplication::processEvents();
    int status = 0;
    bool timed_out = false;
    // Not written: a view whose analysis did not finish or failed. What it shows, if anything, is
    // an earlier result, not one of the settings it holds now (a Gates view whose "example" 999
    // is not in the dump drew "No data" panels with a provenance of example 999).
    QSet<const views::AnalysisView*> left_out;
    // The views not even made when the deadline came: their files were still being checked.
    if (deadline.hasExpired() && !window.idle()) {
        const QStringList waiting = views_waiting_for_files(window);
        for (const QString& v : waiting)
            err << "routescope: error: " << line(v) << ": "
                << line(QStringLiteral("the analysis did not finish within --timeout %1 s "
                                       "(waiting for the check of its files)")
                            .arg(seconds(timeout_s)))
                << "\n";
        if (!waiting.isEmpty()) {
            timed_out = true;  // the checks are abandoned with the process, as analyses are
            status = 3;
        }
    }
    for (auto* view : window.analysis_views()) {
        const Outcome& o = outcomes[view];
        const std::string title = line(view->title());
        if (view->busy()) {
            timed_out = true;
            QString text =
                limited
                    ? QStringLiteral("the analysis did not finish within --timeout %1 s (%2)")
                          .arg(seconds(timeout_s), state_of(*view))
                    : QStringLiteral("the analysis was still running (%1)").arg(state_of(*view));
            if (o.finished > 0 && view->has_result())
                text += QStringLiteral(
                    "; it had finished once and was started again: its "
                    "earlier result is not written");
            else if (!o.failed.isEmpty())
                text += QStringLiteral("; an earlier run failed: %1").arg(o.failed);
            err << "routescope: error: " << title << ": " << line(text) << "\n";
            view->cancel();
            left_out.insert(view);
            status = 3;
        } else if (!view->error().isEmpty()) {
            err << "routescope: error: " << title << ": " << line(view->error())
                << (view->has_result()
                        ? " (not written: the result it shows is of its earlier settings)"
                        : "")
                << "\n";
            left_out.insert(view);
            status = 3;
        } else if (!view->has_result()) {
            err << "routescope: error: " << title << ": the view has no result\n";
            status = 3;
        }
    }
    // What the window showed in dialogs: a file it refused, an unknown view kind, settings that
    // could not be restored. Each left a view out of the export. A view's failed analysis is
    // said above, by the view; its dialog is not said again.
    for (const QString& e : window.errors_shown()) {
        bool said = false;
        for (auto* view : window.analysis_views())
            said = said || e.startsWith(QStringLiteral("Analysis failed: ") + view->title());
        if (said) continue;
        err << "routescope: error: " << line(e) << "\n";
        status = 3;
    }
    int written = 0;
    bool write_failed = false;
    try {
        // Every file written is listed, those of a view that failed partway (a full disk) too,
        // and each failure said (the list was empty when one view failed).
        QStringList failures;
        for (const QString& f : window.export_all(out_dir, options, &failures, left_out)) {
            out << printable_text(f) << "\n";
            ++written;
        }
        for (const QString& f : failures)
            err << "routescope: error: " << printable_text(out_dir) << ": " << printable_text(f)
                << "\n";
        if (!failures.isEmpty()) {
            err << "routescope: error: " << printable_text(out_dir) << ": (" << written
                << " other files written, listed on stdout)\n";
            status = 3;
            write_failed = true;  // said above: not "no view has a result"
        }
    } catch (const std::exception& e) {
        err << "routescope: error: " << printable_text(out_dir) << ": " << printable_text(e.what())
            << "\n";
        status = 3;
        write_failed = true;
    }
    if (written == 0 && !write_failed) {
        err << "routescope: error: " << printable_text(project)
            << ": nothing was exported (no view of the project has a result to write)\n";
        status = 3;
    }
    // Below the print layout's narrowest column (80 mm: views::kMinPrintColumnMm) a figure may
    // not fit its page: checked then even without --check-layout, and said as a count, exit 4
    // (a 40 mm export ran panels off the page and exited 0).
    const bool narrow = options.width_mm > 0 && options.width_mm < views::kMinPrintColumnMm;
    if (check_layout || narrow)
        for (auto* view : window.analysis_views()) {
            if (!view->has_result() || left_out.contains(view)) continue;
            window.show_view(view);
            const views::FigureLayout layout = views::figure_layout(*view, options);
            const QStringList problems = views::figure_layout_problems(layout);
            if (check_layout)
                for (const QString& p : problems)
                    err << "routescope: " << printable_text(view->figure_name())
                        << ": does not read: " << line(p) << "\n";
            else if (!problems.isEmpty())
                err << "routescope: " << printable_text(view->figure_name()) << ": "
                    << problems.size() << " text(s) do not read in full at "
                    << seconds(options.width_mm).toStdString()
                    << " mm, narrower than the print layout's "
                    << "narrowest column (" << seconds(views::kMinPrintColumnMm).toStdString()
                    << " mm): --check-layout lists them; a wider --width or a smaller --font-pt "
                       "fits them\n";
            if (!problems.isEmpty() && status == 0) status = 4;
        }
    if (auto* box = window.last_error()) box->close();
    if (timed_out) {
        // --timeout: "stop waiting". A cancelled analysis ends at its next check of the cancel
        // flag, which a long step (a kernel of 2^31 positions) reaches only minutes later, and
        // the window's destruction waited for it. Everything this export writes is written;
        // the unfinished workers are abandoned with the process.
        out.flush();
        err.flush();
        std::fflush(nullptr);
        std::_Exit(status);
    }
    return status;
}

}  // namespace routescope::gui
