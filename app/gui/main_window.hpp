#pragma once
// The workbench's main window: workspace dock, one tab per view, menus and toolbar of QActions,
// recent files, drag-and-drop. Opening a file runs validation and reading in a worker thread.
#include <QMainWindow>
#include <QPointer>

#include "app/gui/file_loader.hpp"

class QTabWidget;
class QMimeData;
class QMenu;
#include <QMessageBox>

namespace routescope::views {
class FileSummaryView;
}

namespace routescope::gui {

class WorkspaceDock;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    void open_file(const QString& path);
    WorkspaceDock* workspace() const { return workspace_; }
    QTabWidget* tabs() const { return tabs_; }
    FileLoader* loader() const { return loader_; }
    /// The summary tab of `path`, if open.
    views::FileSummaryView* summary_for(const QString& path) const;
    QStringList recent_files() const;
    /// Opens every local file in `mime` (what a drop does); returns how many.
    int open_dropped(const QMimeData* mime);
    /// The last error message box shown (non-modal), for tests and for closing it.
    QMessageBox* last_error() const { return last_error_; }

public slots:
    void open_dialog();
    void show_about();
    void close_current();

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    WorkspaceDock* workspace_;
    QTabWidget* tabs_;
    FileLoader* loader_;
    QMenu* recent_menu_;
    QPointer<QMessageBox> last_error_;

    void create_actions();
    void on_loaded(const LoadedFile& file);
    void show_summary(const LoadedFile& file);
    void add_recent(const QString& path);
    void rebuild_recent_menu();
    void show_error(const QString& title, const QString& text);
};

}  // namespace routescope::gui
