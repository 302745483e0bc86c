#pragma once
// One training run as a child process (ARCHITECTURE.md, "The GUI"): `routescope-cli train --json`
// as a CliJob (progress, ETA, cancel and errors are its), with the run directory's configuration
// written before the start. Cancel is SIGTERM: the run saves a checkpoint and exits 130.
#include "app/gui/cli_job.hpp"
#include "app/gui/run_settings.hpp"

namespace routescope::gui {

class RunProcess : public CliJob {
    Q_OBJECT
public:
    explicit RunProcess(RunSettings settings, QObject* parent = nullptr);

    /// Writes out_dir/run.json and starts the child; throws IoError when the directory or the
    /// configuration cannot be written.
    void start() override;

    const RunSettings& settings() const { return settings_; }
    QString out_dir() const { return settings_.out_dir; }
    QString config_path() const;
    QString log_path() const;
    QString checkpoint_path() const;
    qint64 step() const { return done(); }
    qint64 steps() const { return total(); }

private:
    RunSettings settings_;
};

}  // namespace routescope::gui
