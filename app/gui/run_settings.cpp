#include "app/gui/run_settings.hpp"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <cmath>

#include "app/gui/engine_action.hpp"

namespace routescope::gui {

QStringList run_architectures() {
    return {"bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp"};
}

QStringList size_presets() {
    return {"tiny", "small"};
}

namespace {

// The model of a preset: resources/configs/<arch>-<size>.json's "model" for the architectures
// that have their own (birdie, slstm, gmlp; test_run_launcher compares them), else bigs-<size>.json
// with the architecture replaced.
nlohmann::json preset_model(const QString& arch, bool small) {
    const std::string a = arch.toStdString();
    nlohmann::json model = {
        {"arch", a}, {"d_model", small ? 256 : 128}, {"max_len", small ? 512 : 128}};
    if (arch == "birdie") {
        model["n_layers"] = small ? 4 : 2;
        model["ln_eps"] = 1e-5;
        model["dropout"] = 0.1;
        model["birdie"] = {{"mode", "bidirectional"}, {"layer_pattern", "alternate"}};
    } else if (arch == "slstm") {
        model["n_layers"] = small ? 7 : 3;  // recurrent steps
        model["ln_eps"] = 1e-5;
        model["dropout"] = 0.1;
        model["slstm"] = {{"gate_norm", true}};
    } else if (arch == "gmlp") {
        model["n_layers"] = small ? 6 : 2;
        model["ln_eps"] = 1e-5;
        model["dropout"] = 0.1;
    } else {
        model["n_layers"] = small ? 4 : 2;
        model["dropout"] = 0.1;
        model["ssm"] = {{"n_modes", small ? 64 : 32}};
    }
    return model;
}

}  // namespace

nlohmann::json RunSettings::config() const {
    // The presets are resources/configs/<arch>-tiny.json and -small.json (bigs' for the
    // architectures without their own); the byte tokenizer keeps a run free of a tokenizer
    // training step.
    const bool small = size == "small";
    nlohmann::json model = preset_model(arch, small);
    if (causal) {  // the key each architecture's causal variant has (docs/config.md)
        if (arch == "birdie")
            model["birdie"]["mode"] = "causal";
        else if (arch == "gmlp")
            model["gmlp"] = {{"causal", true}};
        else
            model["causal"] = true;
    }
    const qint64 warmup = std::min<qint64>(small ? 500 : 50, std::max<qint64>(1, steps / 10));
    const qint64 every = std::max<qint64>(1, steps / 4);
    nlohmann::json config = {
        {"model", model},
        {"tokenizer", {{"kind", "bytes"}}},
        {"data", {{"train", data.toStdString()}, {"seq_len", small ? 512 : 128}}},
        {"train",
         {{"batch_size", 8},
          {"steps", steps},
          {"lr", lr},
          {"warmup_steps", warmup},
          {"schedule", "cosine"},
          {"eval_every", every},
          {"eval_batches", 4},
          {"checkpoint_every", every}}}};
    if (causal) config["train"]["objective"] = "clm";  // the next-token loss
    return config;
}

QStringList RunSettings::cli_arguments(const QString& config_path) const {
    QStringList args{"train", "--config", config_path, "--out", out_dir, "--json"};
    for (const QString& o : overrides)
        args << "--set" << o;
    if (threads > 0) args << "--threads" << QString::number(threads);
    args << "--device" << device;
    return args;
}

QStringList RunSettings::problems() const {
    QStringList out;
    if (!run_architectures().contains(arch))
        out << QObject::tr("Architecture '%1' is not one of %2.")
                   .arg(arch, run_architectures().join(", "));
    if (!size_presets().contains(size))
        out << QObject::tr("Size '%1' is not one of %2.").arg(size, size_presets().join(", "));
    if (causal && arch == "slstm")
        out << QObject::tr(
            "Causal: S-LSTM has no causal variant (each step reads the right neighbours and the "
            "sentence node); choose another architecture or leave Causal off.");
    if (steps < 1) out << QObject::tr("Steps must be at least 1, got %1.").arg(steps);
    if (!(std::isfinite(lr) && lr > 0 && lr <= 1))
        out << QObject::tr("Learning rate must be in (0, 1], got %1.").arg(lr);
    if (data.trimmed().isEmpty())
        out << QObject::tr("Training data is empty: give a corpus file or builtin:grammar.");
    else if (!data.startsWith("builtin:") && !QFileInfo::exists(data))
        out << QObject::tr("Training data %1 does not exist.").arg(data);
    if (out_dir.trimmed().isEmpty())
        out << QObject::tr("The run directory is empty.");
    else if (const QStringList held = QDir(out_dir).entryList(
                 {"model.ckpt.h5", "best.ckpt.h5", "log.jsonl", "step-*.ckpt.h5"},
                 QDir::Files | QDir::System | QDir::Hidden, QDir::Name);
             !held.isEmpty())
        // Every file a run writes, as `train` checks (a kept best.ckpt.h5 or log.jsonl would be
        // replaced by the new run's).
        out << QObject::tr(
                   "The run directory %1 already holds a run (%2); choose a new one, or continue "
                   "it with routescope-cli train --resume.")
                   .arg(out_dir, held.join(", "));
    static const QRegularExpression kOverride("^[A-Za-z_][A-Za-z0-9_.]*=.+$");
    for (const QString& o : overrides)
        if (!kOverride.match(o).hasMatch())
            out << QObject::tr("Override '%1' is not key=value (e.g. train.batch_size=4).").arg(o);
    if (threads < 0) out << QObject::tr("Threads must be 0 (the default) or more.");
    if (device != "cpu" && device != "cuda")
        out << QObject::tr("Device '%1' is not cpu or cuda.").arg(device);
    else if (device == "cuda" && !DeviceProbe::instance()->cuda_available())
        out << QObject::tr("Device CUDA is not available: %1.")
                   .arg(DeviceProbe::instance()->cuda_reason());
    return out;
}

}  // namespace routescope::gui
