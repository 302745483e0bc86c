#include "app/gui/job_list.hpp"

#include <algorithm>

#include "app/gui/cli_job.hpp"
#include "app/gui/run_process.hpp"

namespace routescope::gui {

JobList::JobList(QObject* parent) : QObject(parent) {}

void JobList::add(CliJob* job) {
    job->setParent(this);
    jobs_ << job;
    connect(job, &CliJob::progressChanged, this, &JobList::changed);
    connect(job, &CliJob::ended, this, &JobList::changed);
    emit changed();
}

void JobList::discard(CliJob* job) {
    jobs_.removeAll(job);
    job->disconnect(this);
    job->deleteLater();
    emit changed();
}

QList<RunProcess*> JobList::training_runs() const {
    QList<RunProcess*> out;
    for (CliJob* j : jobs_)
        if (auto* run = qobject_cast<RunProcess*>(j)) out << run;
    return out;
}

void JobList::cancel_all() {
    for (CliJob* j : jobs_)
        j->cancel();
}

JobList::Totals JobList::totals() const {
    Totals t;
    for (const CliJob* j : jobs_)
        if (j->running()) {
            ++t.active;
            t.done += j->done();
            t.total += j->total();
            t.eta = std::max(t.eta, j->eta_seconds());
            t.all_train = t.all_train && j->spec().command == "train";
        }
    return t;
}

}  // namespace routescope::gui
