#pragma once
#include <nlohmann/json.hpp>
#include <optional>
// The workbench's main window: workspace dock, one tab per view, menus and toolbar of QActions,
// recent files, drag-and-drop. Opening a file runs validation and reading in a worker thread.
#include <QHash>
#include <QMainWindow>
#include <QPointer>
#include <QSet>

#include "app/gui/engine_action.hpp"
#include "app/gui/file_loader.hpp"
#include "app/gui/project_file.hpp"
#include "app/gui/run_process.hpp"
#include "views/analysis_view.hpp"
#include "views/figure_export.hpp"

class QTabWidget;
class QMimeData;
class QMenu;
#include <QMessageBox>

class QProgressBar;
class QToolButton;
class QLabel;
class QTreeWidgetItem;
class QDockWidget;
class QStackedWidget;
class QUndoStack;

namespace routescope::views {
class FileSummaryView;
class AnalysisView;
class TrainingView;
}  // namespace routescope::views

namespace routescope::gui {

class Workspace;
class WorkspaceController;
class WorkspaceDock;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    /// Opens a dump or checkpoint in a worker; a project (*.rsproj) opens as open_project does,
    /// with an error dialog when it cannot be read.
    void open_file(const QString& path);
    /// The workspace dock (the document's files, names and colours as a tree).
    WorkspaceDock* workspace() const { return workspace_; }
    /// The workspace document: files, runs, names, colours, the project and its undo stack.
    Workspace* document() const { return document_; }
    /// What the window does to the document (opens files and projects, gates analyses, starts
    /// jobs); the window draws what it reports.
    WorkspaceController* controller() const { return controller_; }
    QTabWidget* tabs() const { return tabs_; }
    FileLoader* loader() const;
    /// The summary tab of `path`, if open.
    views::FileSummaryView* summary_for(const QString& path) const;
    /// Shows the summary of `path` (a file in the workspace) in the Inspector panel.
    void inspect(const QString& path);
    QDockWidget* inspector() const { return inspector_; }
    QStringList recent_files() const;
    /// Whether a file that opens joins File › Open Recent (the user's settings). The headless
    /// modes (--export, --screenshot) set false: a script's exports are not the person's files.
    void set_records_recent_files(bool on) { records_recent_ = on; }
    /// Opens every local file in `mime` (what a drop does); returns how many.
    int open_dropped(const QMimeData* mime);
    /// Opens the analysis view `kind` (an entry of analysis_kinds(), analysis_registry.hpp) on
    /// `paths` (two or more: compare mode where the view has one) and starts its analysis in a
    /// worker. Returns the view (its tab is current), or nullptr, with an error dialog naming the
    /// file, when the loader's child process found one of the files unreadable (the HDF5 library
    /// crashed on it, it is not HDF5, ...). A file the loader has not read through yet is opened by
    /// it first (in the background): the view waits for its verdict (AnalysisView::hold) and
    /// starts, or fails naming the file, when it comes.
    views::AnalysisView* open_analysis(const QString& kind, const QStringList& paths);
    /// Dumps/checkpoints the Analysis actions apply to: the workspace selection, else the current
    /// tab's file.
    QStringList selected_paths() const;
    QList<views::AnalysisView*> analysis_views() const;
    views::AnalysisView* current_analysis() const;
    /// Brings `view` to the front and lets it lay out (charts lay out only when shown), as an
    /// export does before drawing a view.
    void show_view(QWidget* view);
    /// Writes the current view to `path` (format from the suffix); throws routescope::Error.
    QStringList export_current(const QString& path, int dpi = 150);
    QStringList export_current(const QString& path, const views::FigureExportOptions& options);
    /// Writes every open view as PNG, SVG, PDF and CSV (each with provenance) into `dir`.
    QStringList export_all(const QString& dir, int dpi = 150);
    /// The files written, those of a view that failed partway too. `failures`, when given, gets
    /// each view's failure instead of one IoError at the end. The views in `leave_out` are not
    /// written (a headless export's views whose analysis failed or did not finish: their result,
    /// if any, is not of the settings they hold now).
    QStringList export_all(const QString& dir, const views::FigureExportOptions& options,
                           QStringList* failures = nullptr,
                           const QSet<const views::AnalysisView*>& leave_out = {});
    QProgressBar* progress_bar() const { return progress_; }
    /// The last error message box shown (non-modal), for tests and for closing it.
    QMessageBox* last_error() const { return last_error_; }
    /// Every error shown in a dialog since the window opened, "title: text" (a headless export
    /// reports them: a view that could not be opened leaves only its dialog behind).
    const QStringList& errors_shown() const { return errors_shown_; }

    // Training runs (run launcher): `routescope-cli train` as a child process.
    /// Starts a run (a Runs item, status-bar progress with ETA, a live Training view); its
    /// checkpoint joins the workspace when it ends or is cancelled; a failure shows an error
    /// dialog with the child's last output. Returns the run (owned by the window).
    RunProcess* launch_run(const RunSettings& settings);
    /// The document's training runs (Workspace::jobs()).
    QList<RunProcess*> training_runs() const;
    QProgressBar* run_progress_bar() const { return run_progress_; }
    QLabel* run_status_label() const { return run_status_; }
    /// The Training view showing the run in `dir`, if open.
    views::TrainingView* training_view_for(const QString& dir) const;

    // Engine actions (issue 18): dump, evaluate, import, experiment as `routescope-cli` children.
    /// Starts the action (no dialog; its settings are not re-checked): a Runs item with its
    /// state and device, the status-bar progress with ETA and Stop; when it finishes its result
    /// joins the workspace (a dump or checkpoint opens; evaluation predictions open in the
    /// Accuracy-by-length view; an experiment's dumps and checkpoints open); a cancel leaves no
    /// partial output, a failure shows an error dialog with the child's last output.
    CliJob* launch_action(const EngineActionSettings& settings);
    /// Opens the action's dialog (window-modal), prefilled for `input` (a checkpoint or dump of
    /// the workspace, may be empty); launches the action when it is accepted. Returns it.
    class EngineActionDialog* action_dialog(EngineAction action, const QString& input = {});
    /// Every child process started from the window (training runs included), oldest first.
    QList<CliJob*> jobs() const;
    /// The job's item under Runs (its first child is the state, its second the device).
    QTreeWidgetItem* job_item(const CliJob* job) const;
    /// The actions of a run's item in the workspace (or one of its rows): "Stop This Run" while
    /// it runs, which stops that run alone (Run › Cancel Runs stops them all).
    QList<QAction*> run_item_actions(QTreeWidgetItem* item);
    /// Whether the workspace differs from the project last saved or opened (files, names, views
    /// and their settings; not which tab is in front). Quitting with changes asks first.
    bool modified() const;
    /// Quitting (closeEvent) with changes not saved or jobs running asks first, in one dialog:
    /// "unsavedPrompt" (Save, Discard, Cancel) when there are changes, else "quitPrompt" (Stop
    /// Runs and Quit, Cancel); it names the running runs and commands. Cancel (Esc) stays; an
    /// answer that quits stops the jobs as Stop Run does (a run saves its checkpoint) and the
    /// window closes once they have ended (close() returns false meanwhile).
    static constexpr int kQuitWaitMs = 120'000;  ///< then it closes whatever is still running
    /// Help › User Guide: docs/user-guide.md in a browser dialog (installed copy, else the source
    /// tree's); empty when neither is found.
    static QString user_guide_path();
    void show_user_guide();
    /// Help › Keyboard Shortcuts: every action's shortcut and the keys of charts and tabs.
    void show_shortcuts();
    /// The actions the workspace's context menu offers for the item of `path`: its engine actions
    /// (dump, evaluate a checkpoint) and the analyses that take it (analysis_registry.hpp).
    QList<QAction*> workspace_actions(const QString& path);
    /// The analyses that take these files together (two dumps: compare modes, similarity).
    QList<QAction*> workspace_actions(const QStringList& paths);

    // Project files (*.rsproj) and undo of view settings.
    /// The open files, runs and analysis views (inputs and settings) as a project.
    Project project() const;
    /// Opens the project's files and runs and its views with their settings (their analyses
    /// start); throws IoError / FormatError when the file is not a readable project.
    void open_project(const QString& path);
    /// Writes project() to `path`; throws IoError.
    void save_project(const QString& path);
    /// Undo/redo of the analysis views' settings (Edit › Undo, Redo).
    QUndoStack* undo_stack() const;
    /// True once no file is loading and no analysis is running (headless export waits for it).
    bool idle() const;

public slots:
    void open_dialog();
    void open_project_dialog();
    void save_project_dialog(bool choose_path = false);
    void new_run_dialog();
    void show_about();
    void close_current();
    void export_dialog();
    void export_all_dialog();

protected:
    /// Ctrl+Tab / Ctrl+PgDown (next tab) and Ctrl+Shift+Tab / Ctrl+PgUp (previous) switch the
    /// window's tabs wherever the focus is: a combo box used to keep them (Ctrl+PgDown changed
    /// the gate instead). An application event filter, so it sees the keys first.
    bool eventFilter(QObject* watched, QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    /// Quitting: not asked; asked, jobs being stopped before the window closes; close now.
    enum class Quit { No, Stopping, Now } quit_ = Quit::No;
    Workspace* document_;
    WorkspaceController* controller_;
    WorkspaceDock* workspace_;
    QTabWidget* tabs_;
    QMenu* recent_menu_;
    bool records_recent_ = true;
    QPointer<QMessageBox> last_error_;
    QStringList errors_shown_;
    // While a project opens, its errors are gathered and shown in one dialog at the end (a
    // project of 100,000 views that cannot open made 100,000 dialogs, in quadratic time).
    int gathering_errors_ = 0;  // depth: the project's open and its views' restore nest
    QStringList gathered_errors_;
    QString gathering_for_;
    bool gathering_until_views_ = false;  // a project's files load before its views open
    void begin_gathering_errors(const QString& project);
    void end_gathering_errors();
    QProgressBar* progress_;
    QToolButton* cancel_button_;
    QMenu* analysis_menu_;
    QList<QPointer<QObject>> running_;  ///< analysis views whose work is under way
    void update_analysis_progress();
    /// Asks every view that waits for a verdict again (a verdict came in).
    void release_held_views();
    /// Opens a project's views (WorkspaceController::viewsReady) with their settings and charts;
    /// one that cannot be restored (a kind this version does not know, inputs that do not fit,
    /// a file refused, settings that cannot be applied) is said in a dialog and kept in the
    /// document as it was read (Workspace::keep_view), to be saved with the project.
    void restore_project_views(const Project& p);
    QDockWidget* inspector_ = nullptr;
    QStackedWidget* inspector_stack_ = nullptr;
    /// The property of a view's widget that holds its id in the document (Workspace::View).
    static constexpr const char* kViewId = "routescopeViewId";
    /// The widget (tab) of the document's view `id`, or nullptr.
    views::AnalysisView* view_widget(int id) const;
    /// Restarts every view that reads `path` or another file of its model (a rename, a colour).
    void redraw_views_of(const QString& path);
    /// Draws a job the controller added: its item, and for a training run its live curves.
    void show_job(CliJob* job, const QString& key, const QString& title);
    QProgressBar* run_progress_ = nullptr;
    QLabel* run_status_ = nullptr;
    QToolButton* run_cancel_ = nullptr;
    void create_run_actions();
    void create_project_actions();
    void update_run_status();

    void create_actions();
    /// Shows the summary of a file the loader read in the Inspector (brought to the front
    /// unless `behind`).
    void show_summary(const LoadedFile& file, bool behind);
    void add_recent(const QString& path);
    void rebuild_recent_menu();
    void show_error(const QString& title, const QString& text);
    void create_analysis_actions();
    void watch(views::AnalysisView* view);
};

}  // namespace routescope::gui
