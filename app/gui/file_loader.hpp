#pragma once
// Opens dumps and checkpoints off the GUI thread: validation and the metadata summary run in a
// worker (QtConcurrent); the result arrives as a signal. The GUI thread never touches HDF5 here.
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
};

/// Validation + summary of one file; pure function, safe to run in any thread.
LoadedFile load_file(const QString& path, bool scan_values);

class FileLoader : public QObject {
    Q_OBJECT
public:
    explicit FileLoader(QObject* parent = nullptr);
    /// Starts loading; `loaded` follows. Several loads may run at once.
    void open(const QString& path);
    int pending() const { return pending_; }

signals:
    void started(const QString& path);
    void loaded(const routescope::gui::LoadedFile& file);

private:
    int pending_ = 0;
};

}  // namespace routescope::gui

Q_DECLARE_METATYPE(routescope::gui::LoadedFile)
