#pragma once
// The workspace's child processes (issue 26; ARCHITECTURE.md "The GUI"): every `routescope-cli`
// command started from the workbench — training runs and engine actions — running or ended, oldest
// first. Part of the workspace document, not of a window: the window shows the totals in its status
// bar, the workspace dock one item per job, and both ask this list to start and stop them.
#include <QList>
#include <QObject>

namespace routescope::gui {

class CliJob;
class RunProcess;

class JobList : public QObject {
    Q_OBJECT
public:
    explicit JobList(QObject* parent = nullptr);

    /// Takes `job` (it becomes the list's child) before it starts; `changed` follows its progress
    /// and its end.
    void add(CliJob* job);
    /// Drops a job that could not start (and deletes it later).
    void discard(CliJob* job);
    QList<CliJob*> jobs() const { return jobs_; }
    /// The training runs among them.
    QList<RunProcess*> training_runs() const;
    /// Stops every running job (a training run saves a checkpoint first).
    void cancel_all();

    /// What the status bar shows: the running jobs, their units done of the total and the
    /// longest ETA (seconds); `all_train` when every running job is a training run (units: steps).
    struct Totals {
        int active = 0;
        qint64 done = 0, total = 0;
        double eta = 0;
        bool all_train = true;
    };
    Totals totals() const;

signals:
    /// A job was added, made progress or ended.
    void changed();

private:
    QList<CliJob*> jobs_;
};

}  // namespace routescope::gui
