#pragma once
// One training run as a child process (ARCHITECTURE.md, "The GUI"): `routescope-cli train --json`
// started with QProcess, its JSON-lines progress read as it arrives, cancel as SIGTERM (the run
// saves a checkpoint and exits 130), and a failing or crashing child reported with its last output.
// Everything is signal-driven: the GUI thread never waits on the child.
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QStringList>

class QTimer;

#include "app/gui/run_settings.hpp"

namespace routescope::gui {

/// The `routescope-cli` the workbench runs: $ROUTESCOPE_CLI when set, else the one beside the
/// workbench's own binary, else the one on PATH.
QString routescope_cli_path();

class RunProcess : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Finished, Cancelled, Failed };
    Q_ENUM(State)

    explicit RunProcess(RunSettings settings, QObject* parent = nullptr);
    ~RunProcess() override;

    /// Writes out_dir/run.json and starts the child; throws IoError when the directory or the
    /// configuration cannot be written.
    void start();
    /// Asks the run to stop (SIGTERM): it finishes its step, saves a checkpoint and exits.
    void cancel();

    const RunSettings& settings() const { return settings_; }
    State state() const { return state_; }
    bool running() const { return state_ == State::Running; }
    QString out_dir() const { return settings_.out_dir; }
    QString config_path() const;
    QString log_path() const;
    QString checkpoint_path() const;
    qint64 step() const { return step_; }
    qint64 steps() const { return steps_; }
    double eta_seconds() const { return eta_; }
    /// The last lines the child wrote (stdout and stderr, oldest first).
    QStringList last_output() const { return last_output_; }
    /// Why the run failed, with its exit code or crash (empty unless Failed).
    QString failure() const { return failure_; }
    /// Every JSON record read so far.
    const QList<QJsonObject>& records() const { return records_; }

signals:
    /// One JSON line of the run (a "start", "step", "eval", "checkpoint" or "diverged" record).
    void recordRead(const QJsonObject& record);
    void progressChanged(qint64 step, qint64 steps, double eta_seconds);
    /// The child ended: Finished, Cancelled or Failed.
    void ended(routescope::gui::RunProcess::State state);

private:
    RunSettings settings_;
    QProcess* process_;
    State state_ = State::Idle;
    bool cancel_requested_ = false;
    qint64 step_ = 0, steps_ = 0;
    double eta_ = 0;
    QByteArray stdout_buffer_, stderr_buffer_;
    QStringList last_output_;
    QString failure_;
    QList<QJsonObject> records_;
    QTimer* progress_timer_;  ///< progressChanged at most every kProgressMs (a step can take 1 ms)

    void read_stdout();
    void read_stderr();
    void keep_line(const QString& line);
    void on_finished(int code, QProcess::ExitStatus status);
    void on_error(QProcess::ProcessError error);
};

/// How often a running run reports progress to the window at most (its records all arrive).
constexpr int kProgressMs = 100;
/// The nice value a run's child process gets (Unix): training yields a core to the workbench's own
/// event loop on a loaded machine.
constexpr int kRunNice = 10;

/// "1:02:03" / "2:03" for a duration in seconds.
QString duration_text(double seconds);

}  // namespace routescope::gui
