#include "app/gui/file_loader.hpp"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrent>

#include "analysis/hdf5_lock.hpp"
#include "engine/io/contained_validation.hpp"
#include "views/work_thread_pool.hpp"
#include "views/worker_errors.hpp"

namespace routescope::gui {
namespace {
QString reading(const QString& path) {
    return QObject::tr("while reading %1").arg(QFileInfo(path).fileName());
}
}  // namespace

LoadedFile load_file(const QString& path, bool scan_values, double timeout_s) {
    LoadedFile out;
    out.path = path;
    ValidateOptions options;
    options.scan_values = scan_values;
    out.values_scanned = scan_values;
    try {
        views::fault_throw_point(scan_values ? "scan" : "loader");  // tests only (issue 25)
        // The file is untrusted: libhdf5 itself may crash on its metadata (issue 17, class 2), so
        // this process never parses it. The structure pass reads it in a child process: the check
        // and the summary (read_file_info, handed back as a FileInfo: inspect_file_contained, the
        // code `routescope-cli inspect` runs); a child killed by a signal is an unreadable file
        // with the verdict. The value scan is a second child. The HDF5 lock is held across each
        // fork only. A library that never returns is stopped too: timeout_s (60 s) for the
        // structure, plus 1 s per 20 MB for the value scan (a 4 GB dump: 260 s; the scan reads far
        // faster than that).
        const double limit =
            timeout_s + (scan_values ? static_cast<double>(QFileInfo(path).size()) / 20e6 : 0.0);
        if (scan_values) {
            out.report = validate_file_contained(path.toStdString(), options,
                                                 &analysis::hdf5_mutex(), limit);
        } else {
            ContainedInspection inspection =
                inspect_file_contained(path.toStdString(), options, &analysis::hdf5_mutex(), limit);
            out.report = std::move(inspection.report);
            out.info = std::move(inspection.info);
            if (out.report.readable && !out.info) {
                // The check passed, the summary did not: a crash (report.crashed) or an exception
                // of read_file_info, in the child. Unreadable: the error dialog names the file.
                out.report.readable = false;
                out.error = QString::fromStdString(inspection.summary_error.empty()
                                                       ? std::string("no summary")
                                                       : inspection.summary_error);
            }
        }
        if (out.report.crashed)
            out.report.readable = false;  // cannot be opened: the error dialog, no value scan
        if (!out.report.readable && out.error.isEmpty() && !out.report.violations.empty())
            out.error = QString::fromStdString(out.report.violations.front().found);
    } catch (...) {
        // Anything: a std::exception, an H5::Exception (not a std::exception: h5::open_read's
        // H5::FileIException on a damaged file), or something else. The file cannot be read: the
        // error dialog names it (issue 25: before, a non-std exception escaped the worker and
        // QFuture::result() rethrew it on the GUI thread, which terminated).
        out.report.readable = false;
        out.error = views::current_exception_message(reading(path));
    }
    return out;
}

namespace {

// A pass that ended in an exception (inside a catch block) or without a result.
LoadedFile failed(const QString& path, bool scan_values, const QString& error) {
    LoadedFile out;
    out.path = path;
    out.values_scanned = scan_values;
    out.report.readable = false;
    out.error = error;
    return out;
}

// The worker task. load_file catches everything itself; this is the task's last guard, so that
// nothing (not even an exception from building a message) leaves it.
LoadedFile load_in_worker(const QString& path, bool scan_values, double timeout_s) {
    try {
        views::lower_thread_priority();
        return load_file(path, scan_values, timeout_s);
    } catch (...) {
        try {
            return failed(path, scan_values, views::current_exception_message(reading(path)));
        } catch (...) {
            LoadedFile out;
            out.path = path;
            out.values_scanned = scan_values;
            out.report.readable = false;
            return out;
        }
    }
}

// A finished pass's result, on the GUI thread; never rethrows there.
LoadedFile take_result(QFutureWatcher<LoadedFile>* watcher, const QString& path, bool scan_values) {
    try {
        if (watcher->future().resultCount() > 0) return watcher->result();
    } catch (...) {
        return failed(path, scan_values, views::current_exception_message(reading(path)));
    }
    return failed(
        path, scan_values,
        QObject::tr("reading %1 stopped without a result").arg(QFileInfo(path).fileName()));
}

}  // namespace

FileLoader::FileLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<LoadedFile>();
}

void FileLoader::open(const QString& path) {
    ++pending_;
    emit started(path);
    auto* structure = new QFutureWatcher<LoadedFile>(this);
    connect(structure, &QFutureWatcher<LoadedFile>::finished, this, [this, structure, path] {
        const LoadedFile first = take_result(structure, path, false);
        structure->deleteLater();
        emit loaded(first);
        if (!first.report.readable) {
            --pending_;
            return;
        }
        // The value scan DUMP_FORMAT.md asks for (NaN/Inf, lengths, ids): reads every byte.
        auto* scan = new QFutureWatcher<LoadedFile>(this);
        connect(scan, &QFutureWatcher<LoadedFile>::finished, this, [this, scan, first, path] {
            LoadedFile full = take_result(scan, path, true);
            scan->deleteLater();
            full.info = first.info;
            if (!full.report.readable && full.error.isEmpty()) full.error = first.error;
            --pending_;
            emit loaded(full);
        });
        const double timeout_s = timeout_s_;
        scan->setFuture(QtConcurrent::run(views::work_thread_pool(), [path, timeout_s] {
            return load_in_worker(path, true, timeout_s);
        }));
    });
    const double timeout_s = timeout_s_;
    structure->setFuture(QtConcurrent::run(views::work_thread_pool(), [path, timeout_s] {
        return load_in_worker(path, false, timeout_s);
    }));
}

}  // namespace routescope::gui
