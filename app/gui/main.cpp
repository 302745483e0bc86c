// routescope: the workbench. `routescope [FILES...]` opens dumps and checkpoints;
// `--screenshot PNG` opens them, saves a picture of the window and exits (headless demo, CI).
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <iostream>

#include "app/gui/main_window.hpp"
#include "engine/core/build_info.hpp"
#include "routescope/version.hpp"

int main(int argc, char** argv) {
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
    parser.addPositionalArgument("files", "Dumps (*.dump.h5) and checkpoints (*.ckpt.h5) to open.",
                                 "[files...]");
    parser.process(app);

    routescope::gui::MainWindow window;
    for (const QString& f : parser.positionalArguments())
        window.open_file(f);
    window.show();

    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        auto* poll = new QTimer(&app);
        QObject::connect(poll, &QTimer::timeout, &app, [&window, out, poll] {
            if (window.loader()->pending() > 0) return;
            poll->stop();
            const bool ok = window.grab().save(out);
            std::cout << (ok ? "saved a screenshot of the workbench to " : "could not write ")
                      << out.toStdString() << "\n";
            QApplication::exit(ok ? 0 : 3);
        });
        poll->start(100);
    }
    return app.exec();
}
