#pragma once
// One `routescope-cli` command as a child process (ARCHITECTURE.md, "The GUI"): started with
// QProcess, its JSON-lines (or "[i/n]") progress read as it arrives, cancel as SIGTERM, and a
// failing or crashing child reported with its last output. Every engine action of the workbench
// (train, dump, eval, import, experiment) is one of these: the progress, ETA, cancel and error
// logic is written here once. Everything is signal-driven: the GUI thread never waits on the child.
#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QStringList>

class QTimer;

namespace routescope::gui {

/// The `routescope-cli` the workbench runs: $ROUTESCOPE_CLI when set, else the one beside the
/// workbench's own binary, else the one on PATH.
QString routescope_cli_path();

/// What a job runs: the subcommand's arguments and the files it writes.
struct CliJobSpec {
    QString command;        ///< the subcommand ("train", "dump", ...): names the job in messages
    QStringList arguments;  ///< everything after the program name
    QString working_dir;    ///< empty: the workbench's
    /// Files (or directories) the job creates: what a cancelled or failed job leaves of them is
    /// removed (with the hidden temporary files the CLI writes beside them), unless they existed
    /// before the job started.
    QStringList outputs;
    QString device = "cpu";  ///< the engine device the job runs on (shown in the workspace)
};

class CliJob : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Finished, Cancelled, Failed };
    Q_ENUM(State)

    explicit CliJob(CliJobSpec spec, QObject* parent = nullptr);
    ~CliJob() override;

    /// Starts the child (a start failure arrives as `ended(Failed)`).
    virtual void start();
    /// Asks the child to stop (SIGTERM).
    void cancel();

    const CliJobSpec& spec() const { return spec_; }
    State state() const { return state_; }
    bool running() const { return state_ == State::Running; }
    /// Progress: units done of `total()` (train: steps; dump: examples; experiment: models).
    qint64 done() const { return done_; }
    qint64 total() const { return total_; }
    /// Seconds left (the child's own estimate, else from the elapsed time); -1 unknown.
    double eta_seconds() const { return eta_; }
    /// The last lines the child wrote (stdout and stderr, oldest first).
    QStringList last_output() const { return last_output_; }
    /// Why the job failed, with its exit code or crash (empty unless Failed).
    QString failure() const { return failure_; }
    /// Every JSON record read so far (stdout and stderr).
    const QList<QJsonObject>& records() const { return records_; }

signals:
    /// One JSON line of the child.
    void recordRead(const QJsonObject& record);
    void progressChanged(qint64 done, qint64 total, double eta_seconds);
    /// The child ended: Finished, Cancelled or Failed.
    void ended(routescope::gui::CliJob::State state);

protected:
    CliJobSpec spec_;
    void set_total(qint64 total) { total_ = total; }
    /// The cancel signal (and its ending in `Cancelled`) also removes partial outputs.
    bool cancel_requested_ = false;

private:
    QProcess* process_;
    State state_ = State::Idle;
    qint64 done_ = 0, total_ = 0;
    double eta_ = -1;
    QElapsedTimer clock_;
    QByteArray stdout_buffer_, stderr_buffer_;
    QStringList last_output_;
    QString failure_;
    QList<QJsonObject> records_;
    QStringList existed_;     ///< outputs present before the start: never removed
    QTimer* progress_timer_;  ///< progressChanged at most every kProgressMs (a step can take 1 ms)

    void read(QProcess::ProcessChannel channel);
    void read_line(const QByteArray& line);
    void set_progress(qint64 done, qint64 total, double eta, bool now);
    void keep_line(const QString& line);
    void remove_partial_outputs();
    /// SIGTERM to the child's process group (the child and the commands it runs).
    void terminate_group();
    void on_finished(int code, QProcess::ExitStatus status);
    void on_error(QProcess::ProcessError error);
};

/// How often a running job reports progress to the window at most (its records all arrive).
constexpr int kProgressMs = 100;
/// The nice value a job's child process gets (Unix): it yields a core to the workbench's own
/// event loop on a loaded machine.
constexpr int kRunNice = 10;

/// "1:02:03" / "2:03" for a duration in seconds.
QString duration_text(double seconds);

}  // namespace routescope::gui
