#pragma once
// The structure of one dump or checkpoint, with its validation result: what the researcher sees
// first after opening a file, and what an invalid file shows instead of crashing.
#include <QWidget>
#include <optional>

#include "engine/io/file_info.hpp"
#include "engine/io/validation.hpp"

class QTreeWidget;
class QLabel;

namespace routescope::views {

class FileSummaryView : public QWidget {
    Q_OBJECT
public:
    explicit FileSummaryView(QWidget* parent = nullptr);
    void show_file(const QString& path, const ValidationReport& report,
                   const std::optional<FileInfo>& info, const QString& error);
    QTreeWidget* tree() const { return tree_; }
    QString headline() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    /// The file's name in the title, elided in the middle to the title's width: a 240-character
    /// name made the label's minimum width, and with it the window's, wider than the screen.
    void elide_title();
    QString name_;
    QLabel* title_;
    QLabel* status_;
    QTreeWidget* tree_;
};

}  // namespace routescope::views
