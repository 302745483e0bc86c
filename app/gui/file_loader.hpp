#pragma once
// Opens dumps and checkpoints off the GUI thread: validation and the metadata summary run in a
// worker (QtConcurrent); the result arrives as a signal. The GUI thread never touches HDF5 here.
// Two passes, so that a multi-GB dump shows its structure at once (ISSUE 6: ≤ 1 s for 4 GB): the
// structure (validation without reading values, and the metadata summary), then the scan of every
// value for NaN/Inf and out-of-range ids, which reads the whole file and arrives as a second
// `loaded` with the complete report. Both passes read the file in a child process only — the
// structure pass validates and reads the summary there (inspect_file_contained, the FileInfo handed
// back serialised), the scan validates values (validate_file_contained): a file on which libhdf5
// crashes is an error, not a dead workbench, and this process never parses its metadata.
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <optional>

#include "engine/io/file_info.hpp"
#include "engine/io/validation.hpp"

namespace routescope::gui {

struct LoadedFile {
    QString path;
    ValidationReport report;
    std::optional<FileInfo> info;  ///< absent when the file could not be read
    QString error;                 ///< why `info` is absent
    bool values_scanned = false;   ///< false: `report` checked the structure only (so far)
};

/// Validation + summary of one file, both in a child process; safe to run in any thread. A child
/// that has not answered after `timeout_s` (the structure pass; the value scan gets 1 s more per 20
/// MB of file) is stopped and the file is unreadable with that verdict.
LoadedFile load_file(const QString& path, bool scan_values, double timeout_s = 60.0);

class FileLoader : public QObject {
    Q_OBJECT
public:
    explicit FileLoader(QObject* parent = nullptr);
    /// Starts loading; `loaded` follows with the structure, then (readable files) again with the
    /// report of the value scan. Several loads may run at once.
    void open(const QString& path);
    /// Files whose structure or value scan is still being read.
    int pending() const { return pending_; }
    /// How long the child may read a file's structure before it is stopped (default 60 s).
    void set_timeout(double seconds) { timeout_s_ = seconds; }

signals:
    void started(const QString& path);
    void loaded(const routescope::gui::LoadedFile& file);

private:
    int pending_ = 0;
    double timeout_s_ = 60.0;
};

}  // namespace routescope::gui

Q_DECLARE_METATYPE(routescope::gui::LoadedFile)
