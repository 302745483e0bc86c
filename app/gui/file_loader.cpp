#include "app/gui/file_loader.hpp"

#include <QtConcurrent/QtConcurrent>

namespace routescope::gui {

LoadedFile load_file(const QString& path, bool scan_values) {
    LoadedFile out;
    out.path = path;
    ValidateOptions options;
    options.scan_values = scan_values;
    try {
        out.report = validate_file(path.toStdString(), options);
        if (out.report.readable)
            out.info = read_file_info(path.toStdString());
        else
            out.error = QString::fromStdString(out.report.violations.at(0).found);
    } catch (const std::exception& e) {
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

FileLoader::FileLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LoadedFile>();
}

void FileLoader::open(const QString& path) {
    ++pending_;
    emit started(path);
    auto* watcher = new QFutureWatcher<LoadedFile>(this);
    connect(watcher, &QFutureWatcher<LoadedFile>::finished, this, [this, watcher] {
        --pending_;
        emit loaded(watcher->result());
        watcher->deleteLater();
    });
    // Full value scan: dumps small enough to open are scanned for NaN/Inf as DUMP_FORMAT.md asks.
    watcher->setFuture(QtConcurrent::run([path] { return load_file(path, true); }));
}

}  // namespace routescope::gui
