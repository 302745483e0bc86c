#pragma once
// The engine actions of the workbench (issue 18, "the workbench loop without a terminal"): dump
// activations, evaluate, import a model, run an experiment. Each is the settings its dialog edits,
// checked before launch (problems()), and the `routescope-cli` command it becomes (job()), run as
// a CliJob by the main window. The training run keeps its own RunSettings (run_settings.hpp).
#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>

#include "app/gui/cli_job.hpp"

namespace routescope::gui {

enum class EngineAction { Dump, Evaluate, Import, Experiment };

/// "dump", "eval", "import", "experiment": the subcommand.
QString engine_action_command(EngineAction action);
/// "Dump Activations", "Evaluate", ...: the dialog's and the menu's title.
QString engine_action_title(EngineAction action);

struct EngineActionSettings {
    EngineAction action = EngineAction::Dump;
    // dump, eval
    QString checkpoint;       ///< *.ckpt.h5
    QString source = "own";   ///< own (the checkpoint's task or held-out corpus) | task | data
    QString task;             ///< source = task: a built-in task
    QString data;             ///< source = data: a classification file (*.tsv, *.csv, *.jsonl)
    QString split = "valid";  ///< task split: valid | test | train
    QString layers = "all";   ///< dump: all, or 0,4,8
    bool gates = false;       ///< dump: also the gates
    QString dtype = "f32";    ///< dump: f32 | f16
    qint64 examples = 0;      ///< dump: 0 = the default (all; a task's 1000)
    // import
    QString import_source;  ///< a model directory or weights file
    QString import_format = "auto";
    // experiment
    QString experiment = "induction";
    qint64 steps = 0;  ///< 0: the experiment's default
    qint64 seed = 1;
    QStringList overrides;  ///< --set key=value of every run
    // every action
    QString out;             ///< dump file, predictions file, checkpoint or experiment directory
    int threads = 0;         ///< 0 = all cores
    QString device = "cpu";  ///< engine device: cpu (CUDA is not available yet)

    /// What is wrong, one sentence each naming the field; empty when the action can launch.
    QStringList problems() const;
    /// The child process: arguments, working directory and the outputs a cancel removes.
    CliJobSpec job() const;
    /// What the workspace calls the job ("dump · model.ckpt.h5").
    QString title() const;
};

/// What the action's dialog proposes for `input` (a checkpoint or dump of the workspace, may be
/// empty), outputs named so that its own check accepts them: for a checkpoint, its dump or
/// predictions beside it ("model.dump.h5", then "model-2.dump.h5", ... while one exists); an import
/// "imported.ckpt.h5" (-2, -3, ...) and an experiment "experiment-<yyyyMMdd-HHmmss of now>" in
/// `runs_dir` (the folder new runs go to) when there is no input.
EngineActionSettings proposed_action(EngineAction action, const QString& input,
                                     const QString& runs_dir, const QDateTime& now);

/// Built-in tasks of `dump --task` / `eval --task`.
QStringList builtin_tasks();
/// The experiments of `routescope-cli experiment`.
QStringList experiment_names();

/// Whether the CUDA engine can be offered, and why not: read from `routescope-cli --version`'s
/// "CUDA ..." line by a child process started once (asynchronously); until it answers, or when it
/// says nothing of CUDA, "the CUDA engine is not built yet".
class DeviceProbe : public QObject {
    Q_OBJECT
public:
    static DeviceProbe* instance();
    bool known() const { return known_; }
    /// Whether `routescope-cli --version` says `--device cuda` runs here ("CUDA engine: ready").
    bool cuda_available() const { return available_; }
    QString cuda_reason() const { return reason_; }
    /// "CUDA (not available: <reason>)".
    QString cuda_label() const;
    /// Reads `--version` output (the CUDA lines, if any) into a reason; empty when the CUDA
    /// engine is ready. For tests.
    static QString reason_from_version(const QString& version_text);

signals:
    void changed();

private:
    DeviceProbe();
    bool known_ = false;
    bool available_ = false;
    QString reason_;
};

}  // namespace routescope::gui
