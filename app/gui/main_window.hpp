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

class QProgressBar;
class QToolButton;

namespace routescope::views {
class FileSummaryView;
class AnalysisView;
}  // namespace routescope::views

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
    /// Opens the analysis view `kind` ("kernels", "gates", "anisotropy", "pca", "transitions",
    /// "length_accuracy", "efficiency") on `paths` (two or more: compare mode where the view has
    /// one) and starts its analysis in a worker. Returns the view (its tab is current).
    views::AnalysisView* open_analysis(const QString& kind, const QStringList& paths);
    /// Dumps/checkpoints the Analysis actions apply to: the workspace selection, else the current
    /// tab's file.
    QStringList selected_paths() const;
    QList<views::AnalysisView*> analysis_views() const;
    views::AnalysisView* current_analysis() const;
    /// Writes the current view to `path` (format from the suffix); throws routescope::Error.
    QStringList export_current(const QString& path, int dpi = 150);
    /// Writes every open view as PNG, SVG, PDF and CSV (each with provenance) into `dir`.
    QStringList export_all(const QString& dir, int dpi = 150);
    QProgressBar* progress_bar() const { return progress_; }
    /// The last error message box shown (non-modal), for tests and for closing it.
    QMessageBox* last_error() const { return last_error_; }

public slots:
    void open_dialog();
    void show_about();
    void close_current();
    void export_dialog();
    void export_all_dialog();

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
    QProgressBar* progress_;
    QToolButton* cancel_button_;
    QMenu* analysis_menu_;
    int running_ = 0;

    void create_actions();
    void on_loaded(const LoadedFile& file);
    void show_summary(const LoadedFile& file);
    void add_recent(const QString& path);
    void rebuild_recent_menu();
    void show_error(const QString& title, const QString& text);
    void create_analysis_actions();
    void watch(views::AnalysisView* view);
};

}  // namespace routescope::gui
