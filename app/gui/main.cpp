// routescope: the workbench. `routescope [FILES...]` opens dumps, checkpoints and projects
// (*.rsproj); `--screenshot PNG` opens them, waits for their analyses, saves a picture of the
// window and exits (headless demo, CI; a project that cannot be read: its reason on stderr, exit
// 2);
// `--export project.rsproj --out DIR` redraws every figure of a project without a display.
#include <QApplication>
#include <QBuffer>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <fcntl.h>
#include <unistd.h>
#include <cmath>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "app/gui/headless_export.hpp"
#include "app/gui/main_window.hpp"
#include "engine/core/build_info.hpp"
#include "engine/core/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/io/standard_descriptors.hpp"
#include "routescope/version.hpp"
#include "views/work_thread_pool.hpp"

namespace {
// SIGINT / SIGTERM / SIGHUP / SIGUSR1 during --export or --screenshot: the temporaries being
// written are unlinked and the process exits 130, as routescope-cli does (a figure's
// ".NAME.png.tmp-PID" was left in --out). Async-signal-safe: unlink, write, _exit.
extern "C" void on_terminating_signal(int sig) {
    // A figure and its provenance being renamed into place: held until both are there, then
    // raised again (atomic_file.hpp), so a stop never leaves half a set (as routescope-cli).
    if (routescope::hold_signal_while_renaming(sig)) return;
    routescope::unlink_registered_temporaries();
    static const char text[] = "routescope: interrupted\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, text, sizeof text - 1);
    ::_exit(130);
}

// An analysis cancelled when its view closed may still be running on the work pool: waited for
// before main returns, since the static result cache it writes into is destroyed after main
// (a failed analysis restarted by its view's settings crashed `--export` at exit, 1 run in 12).
// One that does not finish in a minute is left, and the process ends without running the static
// destructors under it.
int after_background_work(int status) {
    if (!routescope::views::work_thread_pool()->waitForDone(60000)) {
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(status);
    }
    return status;
}
// Qt's own -platform NAME (or -platform=NAME) argument.
bool platform_chosen(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "-platform" || a == "--platform" || a.starts_with("-platform=") ||
            a.starts_with("--platform="))
            return true;
    }
    return false;
}

bool is_option(std::string_view a, std::string_view o) {
    return a == o || (a.starts_with(o) && a.size() > o.size() && a[o.size()] == '=');
}

// --export always draws offscreen; --screenshot uses the display where there is one.
bool needs_no_display(int argc, char** argv, bool display) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--") break;
        if (is_option(a, "--export") || (!display && is_option(a, "--screenshot"))) return true;
        if (a == "-h" || a == "--help" || a == "-?" || a == "--help-all" || a == "-v" ||
            a == "--version")
            return true;
    }
    return false;
}

bool display_available() {
#if defined(__linux__) || defined(__FreeBSD__)
    for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY"}) {
        const char* s = std::getenv(v);
        if (s != nullptr && *s != '\0') return true;
    }
    return false;
#else
    return true;
#endif
}
}  // namespace

int main(int argc, char** argv) {
    routescope::occupy_closed_standard_descriptors();  // first: nothing may open a file before it
    // A file-size limit (ulimit -f) or a pipe whose reader left is a write error the export and
    // the views report (a failed figure names its file), not a signal that kills the process
    // silently with a half-written figure (SIGXFSZ: exit 153 and a .part file).
    std::signal(SIGXFSZ, SIG_IGN);
    std::signal(SIGPIPE, SIG_IGN);
    // --export, --screenshot, --help and --version need no display: unless the user chose a
    // platform, they draw offscreen (CI, servers). Without a display the window cannot open, and
    // Qt's xcb plugin would abort (SIGABRT, "could not connect to display"): say so, exit 2.
    // QT_QPA_PLATFORM set to nothing is no choice (Qt takes its default platform then): with it,
    // --export aborted without a display.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && !platform_chosen(argc, argv)) {
        const bool display = display_available();
        if (needs_no_display(argc, argv, display))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        else if (!display) {
            std::cerr << "routescope: error: no display (neither DISPLAY nor WAYLAND_DISPLAY is "
                         "set): run it in a desktop session or with ssh -X; figures without a "
                         "window: routescope --export PROJECT --out DIR, or --screenshot PNG "
                         "FILES\n";
            return 2;
        }
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName("Routescope");
    QApplication::setOrganizationName("Routescope");
    QApplication::setApplicationVersion(routescope::kVersion);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Routescope: a workbench for attention-free pretrained language models.");
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(
        "screenshot", "Open FILES, save a PNG of the window to PATH, and exit.", "PATH");
    parser.addOption(screenshot);
    QCommandLineOption export_project(
        "export",
        "Open the project PATH, write every view's figures (PNG, SVG, PDF, CSV and "
        "provenance) into --out, and exit. Needs no display.",
        "PATH");
    parser.addOption(export_project);
    QCommandLineOption export_out("out", "The directory --export writes into.", "DIR");
    parser.addOption(export_out);
    QCommandLineOption export_dpi("dpi", "PNG resolution of --export (default 150).", "DPI", "150");
    parser.addOption(export_dpi);
    QCommandLineOption export_width(
        "width",
        "Printed width of --export's figures: single (89 mm), double (183 mm), a width in mm, "
        "or screen (the on-screen size, the default); the height follows each figure's aspect.",
        "WIDTH", "screen");
    parser.addOption(export_width);
    QCommandLineOption export_font("font-pt",
                                   "Size in points of every text of --export's figures in print "
                                   "(journals: 7, 8, 9 or 10; default: the on-screen fonts).",
                                   "PT", "0");
    parser.addOption(export_font);
    QCommandLineOption export_check(
        "check-layout",
        "With --export: list every text of a figure that a reader would not read in full "
        "(elided, clipped, off the page, on another text or on a plot) and exit with 4 if any.");
    parser.addOption(export_check);
    QCommandLineOption export_timeout(
        "timeout",
        "With --export: stop waiting for the views' analyses after S seconds (those unfinished "
        "are reported, exit 3). Default: no limit, every view is waited for (so is any S above "
        "1e9, 31 years).",
        "S");
    parser.addOption(export_timeout);
    parser.addPositionalArgument(
        "files", "Dumps (*.dump.h5), checkpoints (*.ckpt.h5) and projects (*.rsproj) to open.",
        "[files...]");
    // An option that cannot be read (misspelt, its value missing) is exit 2 with the parser's
    // reason, as a bad value is (process() exits 1 there); process() then only answers --help
    // and --version (exit 0).
    if (!parser.parse(QApplication::arguments())) {
        std::cerr << "routescope: error: " << parser.errorText().toStdString()
                  << " (routescope --help lists the options)\n";
        return 2;
    }
    parser.process(app);
    // The headless modes end on a signal as the CLI does (docs/reliability.md); the window keeps
    // Qt's default (it writes through the same temporaries, which a later writer sweeps).
    if (parser.isSet(export_project) || parser.isSet(screenshot)) {
        struct sigaction sa {};
        sa.sa_handler = on_terminating_signal;
        sigemptyset(&sa.sa_mask);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1})
            sigaction(sig, &sa, nullptr);
    }

    if (!parser.isSet(export_project))
        // Options of --export alone: given without it they did nothing, and the window opened.
        for (const auto* o : {&export_out, &export_dpi, &export_width, &export_font, &export_check,
                              &export_timeout})
            if (parser.isSet(*o)) {
                std::cerr << "routescope: error: --" << o->names().first().toStdString()
                          << " applies to --export PROJECT (the figures of a project, written "
                             "without a window)\n";
                return 2;
            }
    if (parser.isSet(export_project)) {
        if (!parser.isSet(export_out) || parser.value(export_out).isEmpty()) {
            std::cerr << "routescope: error: --export needs --out DIR\n";
            return 2;
        }
        bool ok = false;
        const int dpi = parser.value(export_dpi).toInt(&ok);
        if (!ok || dpi < 10 || dpi > 2400) {
            // A PNG's resolution is a whole number of dots per inch: 72.5 is in the range and
            // was refused with the range alone.
            std::cerr << "routescope: error: --dpi must be a whole number of dots per inch, "
                         "10..2400, got '"
                      << parser.value(export_dpi).toStdString() << "'\n";
            return 2;
        }
        double timeout_s = 0;  // none
        if (parser.isSet(export_timeout)) {
            timeout_s = parser.value(export_timeout).toDouble(&ok);
            if (!ok || !(timeout_s > 0) || !std::isfinite(timeout_s)) {
                std::cerr << "routescope: error: --timeout must be a number of seconds above 0, "
                             "got '"
                          << parser.value(export_timeout).toStdString() << "'\n";
                return 2;
            }
        }
        routescope::views::FigureExportOptions options;
        options.dpi = dpi;
        try {
            options.width_mm =
                routescope::views::figure_width_mm_from_text(parser.value(export_width));
            options.font_pt = parser.value(export_font).toDouble(&ok);
            if (!ok)
                throw routescope::ConfigError("--font-pt must be a number of points, got '" +
                                              parser.value(export_font).toStdString() + "'");
            routescope::views::check_export_options(options);
        } catch (const std::exception& e) {
            std::cerr << "routescope: error: " << e.what() << "\n";
            return 2;
        }
        return after_background_work(routescope::gui::export_project(
            parser.value(export_project), parser.value(export_out), options, std::cout, std::cerr,
            parser.isSet(export_check), timeout_s));
    }

    if (parser.isSet(screenshot)) {
        // The screenshot is a new PNG: a name without .png was written anyway (emptied, then
        // "could not write" on stdout, exit 3), and a name that is also an input — the dump or
        // project being opened — was destroyed that way.
        const QString out = parser.value(screenshot);
        const std::string shown = routescope::gui::printable_text(out.toStdString());
        // The files a project opens too (its dumps, its views' inputs and settings' files): a
        // PNG name that linked to the project's dump replaced the dump with the picture, exit 0.
        // Links followed as the writer follows them, and hard links.
        for (const QString& f : parser.positionalArguments())
            for (const QString& input : routescope::gui::files_opened_by(f)) {
                if (!routescope::same_output_file(out.toStdString(), input.toStdString())) continue;
                std::cerr << "routescope: error: --screenshot " << shown
                          << " is also a file to open";
                if (QFileInfo(input).absoluteFilePath() != QFileInfo(f).absoluteFilePath())
                    std::cerr << " (" << routescope::gui::printable_text(input) << ", which "
                              << routescope::gui::printable_text(f) << " opens)";
                std::cerr << "; give another name (nothing written)\n";
                return 2;
            }
        if (!out.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive) ||
            QFileInfo(out).fileName().size() <= 4) {
            std::cerr << "routescope: error: --screenshot " << shown
                      << ": the screenshot is a PNG file; give a name ending in .png\n";
            return 2;
        }
    }

    int status = 0;
    {
        routescope::gui::MainWindow window;
        if (parser.isSet(screenshot)) window.set_records_recent_files(false);
        window.show();
        for (const QString& f : parser.positionalArguments()) {
            // Headless (--screenshot): a project that cannot be read is said on stderr, exit 2,
            // as --export says it (the window would show a dialog nobody sees, and exit 0).
            if (parser.isSet(screenshot) && f.endsWith(".rsproj", Qt::CaseInsensitive)) {
                try {
                    window.open_project(QFileInfo(f).absoluteFilePath());
                } catch (const std::exception& e) {
                    std::cerr << "routescope: error: " << routescope::gui::printable_text(e.what())
                              << "\n";
                    status = 2;
                    break;
                }
                continue;
            }
            window.open_file(f);
        }

        if (status == 0 && parser.isSet(screenshot)) {
            const QString out = parser.value(screenshot);
            auto* poll = new QTimer(&app);
            QObject::connect(poll, &QTimer::timeout, &app, [&window, out, poll] {
                if (!window.idle()) return;
                poll->stop();
                // Written whole or not at all: the PNG made in memory, then a temporary beside it
                // renamed (atomic_file.hpp). Not QSaveFile: Qt 6.4's commit() reported success
                // after a write that a full disk cut short (a truncated PNG, exit 0).
                QByteArray png;
                QBuffer buffer(&png);
                std::string why;
                bool ok = buffer.open(QIODevice::WriteOnly) && window.grab().save(&buffer, "PNG");
                if (!ok) why = "the PNG could not be made";
                if (ok) try {
                        routescope::write_text_atomically(out.toStdString(), png.toStdString());
                    } catch (const routescope::Error& e) {
                        ok = false;
                        why = e.what();
                    }
                const std::string shown = routescope::gui::printable_text(out.toStdString());
                if (ok)
                    std::cout << "saved a screenshot of the workbench to " << shown << "\n";
                else
                    std::cerr << "routescope: error: --screenshot " << shown << ": cannot write ("
                              << routescope::gui::printable_text(why) << ")\n";
                QApplication::exit(ok ? 0 : 3);
            });
            poll->start(100);
        }
        if (status == 0) status = app.exec();
    }  // the window and its views go (their analyses are cancelled) before the work is awaited
    return after_background_work(status);
}
