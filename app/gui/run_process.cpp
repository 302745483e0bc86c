#include "app/gui/run_process.hpp"

#include <QDir>
#include <QFile>

#include "engine/core/error.hpp"

namespace routescope::gui {
namespace {
CliJobSpec train_spec(const RunSettings& s) {
    CliJobSpec spec;
    spec.command = "train";
    spec.arguments = s.cli_arguments(QDir(s.out_dir).filePath("run.json"));
    spec.working_dir = s.out_dir;
    spec.device = s.device;  // the workspace shows it under the run
    return spec;             // no outputs to remove: a stopped run keeps its checkpoint
}
}  // namespace

RunProcess::RunProcess(RunSettings settings, QObject* parent)
    : CliJob(train_spec(settings), parent), settings_(std::move(settings)) {
    set_total(settings_.steps);
}

QString RunProcess::config_path() const {
    return QDir(settings_.out_dir).filePath("run.json");
}
QString RunProcess::log_path() const {
    return QDir(settings_.out_dir).filePath("log.jsonl");
}
QString RunProcess::checkpoint_path() const {
    return QDir(settings_.out_dir).filePath("model.ckpt.h5");
}

void RunProcess::start() {
    if (!QDir().mkpath(settings_.out_dir))
        throw IoError("cannot create the run directory " + settings_.out_dir.toStdString());
    QFile f(config_path());
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(QByteArray::fromStdString(settings_.config().dump(2) + "\n")) < 0)
        throw IoError("cannot write the run configuration " + config_path().toStdString() + ": " +
                      f.errorString().toStdString());
    f.close();
    CliJob::start();
}

}  // namespace routescope::gui
