#include "app/gui/file_loader.hpp"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrent>

#include "analysis/hdf5_lock.hpp"
#include "engine/io/contained_validation.hpp"
#include "views/work_thread_pool.hpp"

namespace routescope::gui {

LoadedFile load_file(const QString& path, bool scan_values, double timeout_s) {
    LoadedFile out;
    out.path = path;
    ValidateOptions options;
    options.scan_values = scan_values;
    out.values_scanned = scan_values;
    try {
        // The file is untrusted: libhdf5 itself may crash on its metadata (issue 17, class 2), so
        // it is first read in a child process; a child killed by a signal is an unreadable file
        // with the verdict, and this process never opens it. Only a file the child read through
        // is opened here (its summary). The HDF5 lock is held across the fork only.
        // A library that never returns is stopped too: timeout_s (60 s) for the structure, plus 1 s
        // per 20 MB for the value scan (a 4 GB dump: 260 s; the scan reads far faster than that).
        const double limit =
            timeout_s + (scan_values ? static_cast<double>(QFileInfo(path).size()) / 20e6 : 0.0);
        out.report =
            validate_file_contained(path.toStdString(), options, &analysis::hdf5_mutex(), limit);
        if (out.report.crashed)
            out.report.readable = false;  // cannot be opened: the error dialog, no value scan
        if (!out.report.readable) {
            if (!out.report.violations.empty())
                out.error = QString::fromStdString(out.report.violations.front().found);
        } else if (!scan_values) {
            analysis::Hdf5Lock lock;
            out.info = read_file_info(path.toStdString());
        }
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
    auto* structure = new QFutureWatcher<LoadedFile>(this);
    connect(structure, &QFutureWatcher<LoadedFile>::finished, this, [this, structure] {
        const LoadedFile first = structure->result();
        structure->deleteLater();
        emit loaded(first);
        if (!first.report.readable) {
            --pending_;
            return;
        }
        // The value scan DUMP_FORMAT.md asks for (NaN/Inf, lengths, ids): reads every byte.
        auto* scan = new QFutureWatcher<LoadedFile>(this);
        connect(scan, &QFutureWatcher<LoadedFile>::finished, this, [this, scan, first] {
            LoadedFile full = scan->result();
            scan->deleteLater();
            full.info = first.info;
            if (!full.report.readable && full.error.isEmpty()) full.error = first.error;
            --pending_;
            emit loaded(full);
        });
        const QString path = first.path;
        const double timeout_s = timeout_s_;
        scan->setFuture(QtConcurrent::run(views::work_thread_pool(), [path, timeout_s] {
            views::lower_thread_priority();
            return load_file(path, true, timeout_s);
        }));
    });
    const double timeout_s = timeout_s_;
    structure->setFuture(QtConcurrent::run(views::work_thread_pool(), [path, timeout_s] {
        views::lower_thread_priority();
        return load_file(path, false, timeout_s);
    }));
}

}  // namespace routescope::gui
