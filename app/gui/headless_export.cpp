#include "app/gui/headless_export.hpp"

#include <QApplication>
#include <QDeadlineTimer>
#include <QThread>

#include <ostream>

#include "app/gui/main_window.hpp"
#include "views/analysis_view.hpp"
#include "views/figure_layout.hpp"

namespace routescope::gui {
namespace {
// A project's analyses are the interactive ones (seconds each); ten minutes means something hangs.
constexpr int kWaitMs = 10 * 60 * 1000;
}  // namespace

int export_project(const QString& project, const QString& out_dir,
                   const views::FigureExportOptions& options, std::ostream& out, std::ostream& err,
                   bool check_layout) {
    MainWindow window;
    // Laid out as on screen (charts lay out only when shown); offscreen, nothing is displayed.
    window.resize(1400, 900);
    window.show();
    try {
        window.open_project(project);
    } catch (const std::exception& e) {
        err << "routescope: error: " << e.what() << "\n";
        return 2;
    }
    QDeadlineTimer deadline(kWaitMs);
    while (!window.idle() && !deadline.hasExpired()) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(10);
    }
    QApplication::processEvents();
    int status = 0;
    for (auto* view : window.analysis_views())
        if (view->busy()) {
            err << "routescope: error: " << view->title().toStdString()
                << ": the analysis did not finish in " << kWaitMs / 1000 << " s\n";
            view->cancel();
            status = 3;
        } else if (!view->has_result()) {
            err << "routescope: error: " << view->title().toStdString() << ": "
                << (view->error().isEmpty() ? std::string("the view has no result")
                                            : view->error().toStdString())
                << "\n";
            status = 3;
        }
    // What the window showed in dialogs: a file it refused, an unknown view kind, settings that
    // could not be restored. Each left a view out of the export.
    for (const QString& e : window.errors_shown()) {
        err << "routescope: error: " << e.toStdString() << "\n";
        status = 3;
    }
    int written = 0;
    bool write_failed = false;
    try {
        for (const QString& f : window.export_all(out_dir, options)) {
            out << f.toStdString() << "\n";
            ++written;
        }
    } catch (const std::exception& e) {
        err << "routescope: error: " << out_dir.toStdString() << ": " << e.what() << "\n";
        status = 3;
        write_failed = true;  // said above: not "no view has a result"
    }
    if (written == 0 && !write_failed) {
        err << "routescope: error: " << project.toStdString()
            << ": nothing was exported (no view of the project has a result)\n";
        status = 3;
    }
    if (check_layout)
        for (auto* view : window.analysis_views()) {
            if (!view->has_result()) continue;
            window.show_view(view);
            const views::FigureLayout layout = views::figure_layout(*view, options);
            const QStringList problems = views::figure_layout_problems(layout);
            for (const QString& p : problems)
                err << "routescope: " << view->figure_name().toStdString()
                    << ": does not read: " << p.toStdString() << "\n";
            if (!problems.isEmpty() && status == 0) status = 4;
        }
    if (auto* box = window.last_error()) box->close();
    return status;
}

}  // namespace routescope::gui
