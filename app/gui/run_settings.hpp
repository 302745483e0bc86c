#pragma once
// What the run launcher configures: a small pretraining run of `routescope-cli train`. The dialog
// edits one of these; it becomes the run's configuration JSON (docs/config.md) plus `--set`
// overrides, so that the run can be repeated from a terminal or on another machine.
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

namespace routescope::gui {

struct RunSettings {
    QString arch = "bigs";             ///< model.arch (docs/config.md)
    QString size = "tiny";             ///< a size preset: size_presets()
    QString data = "builtin:grammar";  ///< data.train: a corpus path or builtin:grammar
    qint64 steps = 400;                ///< train.steps
    double lr = 2e-3;                  ///< train.lr
    QString out_dir;                   ///< the run directory: run.json, log.jsonl, model.ckpt.h5
    QStringList overrides;             ///< extra `key=value` passed as --set (advanced)
    int threads = 0;                   ///< --threads; 0 = the configuration's
    QString device = "cpu";            ///< --device: cpu | cuda (offered when DeviceProbe allows)
    /// A causal language model: each position reads only the ones before it (bigs, stack_ssm:
    /// model.causal, the forward SSM only; bert, gated_att: a causal mask; birdie: mode causal;
    /// gmlp: gmlp.causal), trained with the next-token loss (train.objective clm). S-LSTM has no
    /// causal variant.
    bool causal = false;

    /// The configuration JSON written to out_dir/run.json.
    nlohmann::json config() const;
    /// The arguments of `routescope-cli` for this run (config at `config_path`).
    QStringList cli_arguments(const QString& config_path) const;
    /// What is wrong with the settings, one sentence each naming the field; empty when they can
    /// be launched.
    QStringList problems() const;
};

/// Architectures the launcher offers (model.arch values of docs/config.md).
QStringList run_architectures();
/// Size presets: "tiny" (d 128, L 128: resources/configs/<arch>-tiny.json, bigs-tiny.json for the
/// architectures without one) and "small" (d 256, L 512: <arch>-small.json).
QStringList size_presets();

}  // namespace routescope::gui
