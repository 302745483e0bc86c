// Benchmark (not a CTest test) of the workbench issue's "opening a 4 GB dump shows its structure in
// ≤ 1 s": opens DUMP in the main window (offscreen) as File › Open does and prints, as one JSON
// line, the milliseconds until the workspace shows the file's structure (layers, datasets) and
// until the background scan of every value has finished. scripts/bench_open_dump.sh writes the
// dump, runs this and deletes the dump; docs/benchmarks.md has the figures.
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QTimer>
#include <QTreeWidgetItem>

#include <cstdio>

#include "app/gui/main_window.hpp"
#include "app/gui/workspace_dock.hpp"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Routescope-bench");
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_open_dump DUMP\n");
        return 2;
    }
    const QString path = QFileInfo(QString::fromLocal8Bit(argv[1])).absoluteFilePath();
    routescope::gui::MainWindow window;
    window.show();
    QApplication::processEvents();

    QElapsedTimer clock;
    double structure_ms = -1, scanned_ms = -1;
    int rows = 0;
    // Polled from the event loop, as a user sees it: the item has left "opening…" and lists rows.
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &app, [&] {
        QTreeWidgetItem* item = window.workspace()->item_for(path);
        if (structure_ms < 0 && item && item->childCount() > 0) {
            structure_ms = clock.nsecsElapsed() / 1e6;
            rows = item->childCount();
        }
        if (structure_ms >= 0 && window.loader()->pending() == 0) {
            scanned_ms = clock.nsecsElapsed() / 1e6;
            QApplication::quit();
        }
    });
    clock.start();
    window.open_file(path);
    poll.start(1);
    QTimer::singleShot(30 * 60 * 1000, &app, &QApplication::quit);
    QApplication::exec();
    std::printf(
        "{\"dump\":\"%s\",\"bytes\":%lld,\"structure_ms\":%.1f,\"rows\":%d,"
        "\"value_scan_ms\":%.1f}\n",
        qPrintable(path), static_cast<long long>(QFileInfo(path).size()), structure_ms, rows,
        scanned_ms);
    return structure_ms >= 0 ? 0 : 3;
}
