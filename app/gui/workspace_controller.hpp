#pragma once
// The workspace controller (ARCHITECTURE.md "The GUI"): what the workbench does to its workspace
// document, apart from any window. It opens files through the loader's child process and records
// each verdict in the document; it decides which files an analysis may read (go, wait for a
// verdict, refuse); it opens and saves projects (a project's views wait for the verdicts on their
// files); and it starts the training runs and engine actions and carries their results into the
// workspace (a run's checkpoint, a dump, an evaluation, an experiment's files).
//
// It holds no widget and shows nothing: the window (or a test, or a headless export) follows its
// signals — a file being opened or read, views a project asks for, a job added, an error to show,
// a status message — and draws them. One window, one controller, one document.
#include <QObject>
#include <QString>
#include <QStringList>

#include "app/gui/engine_action.hpp"
#include "app/gui/file_loader.hpp"
#include "app/gui/project_file.hpp"
#include "app/gui/run_settings.hpp"

namespace routescope::gui {

class CliJob;
class RunProcess;
class Workspace;

class WorkspaceController : public QObject {
    Q_OBJECT
public:
    /// Works on `document` (not owned); makes its own FileLoader.
    explicit WorkspaceController(Workspace* document, QObject* parent = nullptr);
    Workspace* document() const { return document_; }
    FileLoader* loader() const { return loader_; }

    // Files ------------------------------------------------------------------------------------
    /// Opens `path`: a dump or checkpoint through the loader (fileOpening, then fileRead with
    /// its structure and fileScanned with its values); a project (*.rsproj) as open_project does,
    /// `failed` when it cannot be read; evaluation predictions (*.jsonl) in the view that reads
    /// them (analysisRequested).
    void open_file(const QString& path);
    /// The same, for a file the person did not open by hand (a project's, a finished run's
    /// checkpoint, an analysis's input): fileRead says `behind`, so its summary does not take
    /// the front.
    void open_file_behind(const QString& path);
    /// The dumps and checkpoints among `paths` (absolute) whose verdicts an analysis of `kind`
    /// needs: not run directories, predictions or projects.
    static QStringList files_to_check(const QString& kind, const QStringList& paths);
    /// Why an analysis of `kind` must not read `paths` (the first refused file, named); empty
    /// when none is refused.
    QString refusal(const QString& kind, const QStringList& paths) const;
    /// The gate of an analysis (views::AnalysisView::set_input_gate): refuse a file the loader
    /// found unreadable, wait for one without a final verdict (opening it behind when the loader
    /// has not read it yet), else go.
    struct InputCheck {
        enum class State { go, wait, refuse } state = State::go;
        QString text;  ///< wait: the file names waited for; refuse: the message
    };
    InputCheck check_inputs(const QString& kind, const QStringList& paths);
    /// Whether a file is being read or a project's views wait for verdicts.
    bool loading() const;
    /// "bigs · induction · step 300": architecture, task (else the file's folder) and training
    /// step of a checkpoint; a dump's file stem first. The name a file has until a person gives
    /// it one (Workspace::name_of).
    static QString derived_name(const LoadedFile& file);

    // Projects ---------------------------------------------------------------------------------
    /// Opens the project's names, colours, files and runs; its views follow (viewsReady) once
    /// the loader has a final verdict on every file they read — at once when it has. Throws
    /// IoError / FormatError when the file is not a readable project.
    void open_project(const QString& path);
    /// Writes the document's project to `path` and marks it saved; throws IoError.
    void save_project(const QString& path);

    // Jobs -------------------------------------------------------------------------------------
    /// Starts `routescope-cli train` for `settings` (its run directory joins the workspace);
    /// its checkpoint joins the workspace, behind, when it ends or is stopped. Returns nullptr,
    /// with `failed` saying why, when it cannot start: a run directory that cannot be made or
    /// written (run_directory_problem) is refused before anything joins the workspace, and a
    /// start that fails anyway takes back what joined (its job, its live view: jobDiscarded;
    /// the run directory joins the document only once the run has started).
    RunProcess* launch_run(const RunSettings& settings);
    /// Why a training run cannot write `dir` (made with its missing parents, then written in),
    /// with the system's reason: "The run directory D cannot be created: P is not a folder (Not a
    /// directory)", "…: cannot write in P (Permission denied)"; empty when it can. Nothing is
    /// made.
    static QString run_directory_problem(const QString& dir);
    /// Starts an engine action; when it finishes, its result joins the workspace: a dump or an
    /// import opens, an evaluation opens in Accuracy by length, an experiment's checkpoints and
    /// dumps (its results.json) open.
    CliJob* launch_action(const EngineActionSettings& settings);

signals:
    /// The loader is reading `path` (a placeholder item until fileRead).
    void fileOpening(const QString& path);
    /// The loader's structure pass on a file (its summary; `behind`: not opened by hand).
    void fileRead(const routescope::gui::LoadedFile& file, bool behind);
    /// The loader's value scan on a file: the complete report replaces the structural one.
    void fileScanned(const routescope::gui::LoadedFile& file);
    /// New final verdicts: an analysis that waits for one may go (or fail) now.
    void verdictsChanged();
    /// A project's views, to be opened with their settings (the window makes their widgets and
    /// records them in the document); the project then counts as saved.
    void viewsReady(const routescope::gui::Project& project);
    /// A project's run directory joined the workspace.
    void runAdded(const QString& dir);
    /// An analysis view of `kind` on `paths` is wanted (predictions opened, an evaluation done).
    void analysisRequested(const QString& kind, const QStringList& paths);
    /// A job was added to the document (before it starts): `key` its output (a training run's
    /// directory), `title` what to call it.
    void jobAdded(routescope::gui::CliJob* job, const QString& key, const QString& title);
    /// A job that could not start left the document (it is deleted later): its item and, for a
    /// training run, its live view go with it.
    void jobDiscarded(routescope::gui::CliJob* job);
    /// Something failed that a person must be told of (a dialog): a file that cannot be read, a
    /// project, a job's failure with its last output.
    void failed(const QString& title, const QString& text);
    /// A passing status message (`ms` 0: until the next).
    void message(const QString& text, int ms);

private:
    Workspace* document_;
    FileLoader* loader_;
    QStringList behind_;  ///< files whose summary opens behind (not opened by hand)
    void on_loaded(const LoadedFile& file);
    /// The paths the workspace has (its files, read or refused, and its runs).
    QStringList known_paths() const;
    /// Gives `job` to the document and reports its end (a message; `failed` with its output).
    void add_job(CliJob* job, const QString& key, const QString& title);
    void open_action_result(const EngineActionSettings& settings);
    /// Emits viewsReady and records the project as opened (undo history cleared).
    void open_views(const Project& project);
};

}  // namespace routescope::gui
