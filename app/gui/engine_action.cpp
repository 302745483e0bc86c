#include "app/gui/engine_action.hpp"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>

namespace routescope::gui {
namespace {
QString tr(const char* text) {
    return QObject::tr(text);
}
/// The output's folder is missing and cannot be made: its nearest existing ancestor is not a
/// writable folder. A missing folder that can be made is made when the action starts.
bool parent_not_creatable(const QString& path) {
    QString dir = QFileInfo(path).absolutePath();
    while (!QFileInfo::exists(dir)) {
        const QString up = QFileInfo(dir).absolutePath();
        if (up == dir) return true;
        dir = up;
    }
    const QFileInfo existing(dir);
    return !existing.isDir() || !existing.isWritable();
}
}  // namespace

QString engine_action_command(EngineAction action) {
    switch (action) {
        case EngineAction::Dump:
            return "dump";
        case EngineAction::Evaluate:
            return "eval";
        case EngineAction::Import:
            return "import";
        case EngineAction::Experiment:
            return "experiment";
    }
    return {};
}

QString engine_action_title(EngineAction action) {
    switch (action) {
        case EngineAction::Dump:
            return tr("Dump Activations");
        case EngineAction::Evaluate:
            return tr("Evaluate");
        case EngineAction::Import:
            return tr("Import Model");
        case EngineAction::Experiment:
            return tr("Run Experiment");
    }
    return {};
}

EngineActionSettings proposed_action(EngineAction action, const QString& input,
                                     const QString& runs_dir, const QDateTime& now) {
    EngineActionSettings s;
    s.action = action;
    const QString base = input.isEmpty() ? runs_dir : QFileInfo(input).absolutePath();
    QString stem = QFileInfo(input).fileName();
    for (const QString suffix : {".ckpt.h5", ".dump.h5"})
        if (stem.endsWith(suffix)) stem.chop(suffix.size());
    // A name the dialog's own check accepts: not an existing file (-2, -3, ...).
    auto free_name = [&](const QString& name, const QString& suffix) {
        QString path = QDir(base).filePath(name + suffix);
        for (int i = 2; QFileInfo::exists(path); ++i)
            path = QDir(base).filePath(QStringLiteral("%1-%2%3").arg(name).arg(i).arg(suffix));
        return path;
    };
    if (input.endsWith(".ckpt.h5")) {
        s.checkpoint = input;
        // "run/model.ckpt.h5" → "run/model.dump.h5"
        s.out = action == EngineAction::Dump ? free_name(stem, ".dump.h5")
                                             : free_name(stem, ".preds.jsonl");
    } else if (action == EngineAction::Import) {
        s.out = free_name("imported", ".ckpt.h5");
    } else if (action == EngineAction::Experiment) {
        s.out = QDir(base).filePath(now.toString("'experiment-'yyyyMMdd-HHmmss"));
    }
    return s;
}

QStringList builtin_tasks() {
    return {"induction",         "phone-book",   "copying",
            "selective-copying", "gap-matching", "attractors"};
}

QStringList experiment_names() {
    return {"induction", "induction-bidirectional", "gap-matching", "phone-book", "slstm-vs-bert"};
}

QStringList EngineActionSettings::problems() const {
    QStringList found;
    const bool reads_checkpoint = action == EngineAction::Dump || action == EngineAction::Evaluate;
    if (reads_checkpoint) {
        if (checkpoint.trimmed().isEmpty())
            found << tr("Checkpoint is empty: choose a *.ckpt.h5 file.");
        else if (!QFileInfo(checkpoint).isFile())
            found << tr("Checkpoint %1 does not exist.").arg(checkpoint);
        if (source == "task" && !builtin_tasks().contains(task))
            found << tr("Task '%1' is not one of %2.").arg(task, builtin_tasks().join(", "));
        if (source == "data") {
            // A dump also reads a text corpus: a file of any other name, or a directory.
            const bool corpus = action == EngineAction::Dump;
            if (data.trimmed().isEmpty())
                found << (corpus
                              ? tr("Data file is empty: choose a *.tsv, *.csv or *.jsonl "
                                   "file, or a text corpus.")
                              : tr("Data file is empty: choose a *.tsv, *.csv or *.jsonl file."));
            else if (corpus ? !QFileInfo::exists(data) : !QFileInfo(data).isFile())
                found << tr("Data file %1 does not exist.").arg(data);
        }
        if (!QStringList{"own", "task", "data"}.contains(source))
            found << tr("Data source '%1' is not own, task or data.").arg(source);
        if (!QStringList{"valid", "test", "train"}.contains(split))
            found << tr("Split '%1' is not valid, test or train.").arg(split);
    }
    if (action == EngineAction::Dump) {
        static const QRegularExpression kLayers("^(all|\\d+(,\\d+)*)$");
        if (!kLayers.match(layers.trimmed()).hasMatch())
            found << tr("Layers '%1' is not 'all' or indices like 0,4,8.").arg(layers);
        if (dtype != "f32" && dtype != "f16")
            found << tr("Dtype '%1' is not f32 or f16.").arg(dtype);
        if (examples < 0) found << tr("Examples must be 0 (the default) or more.");
    }
    if (action == EngineAction::Import) {
        if (import_source.trimmed().isEmpty())
            found << tr("Source is empty: choose a model directory or weights file.");
        else if (!QFileInfo::exists(import_source))
            found << tr("Source %1 does not exist.").arg(import_source);
        if (!QStringList{"auto", "flax", "pytorch", "safetensors"}.contains(import_format))
            found
                << tr("Format '%1' is not auto, flax, pytorch or safetensors.").arg(import_format);
    }
    if (action == EngineAction::Experiment) {
        if (!experiment_names().contains(experiment))
            found << tr("Experiment '%1' is not one of %2.")
                         .arg(experiment, experiment_names().join(", "));
        if (steps < 0) found << tr("Steps must be 0 (the experiment's) or more.");
        static const QRegularExpression kOverride("^[A-Za-z_][A-Za-z0-9_.]*=.+$");
        for (const QString& o : overrides)
            if (!kOverride.match(o).hasMatch())
                found << tr("Override '%1' is not key=value (e.g. model.d_model=32).").arg(o);
    }
    {
        const QString suffix = action == EngineAction::Dump       ? ".dump.h5"
                               : action == EngineAction::Evaluate ? ".jsonl"
                               : action == EngineAction::Import   ? ".ckpt.h5"
                                                                  : QString();
        if (out.trimmed().isEmpty())
            found << tr("Output is empty.");
        else if (!suffix.isEmpty() && !out.endsWith(suffix))
            found << tr("Output %1 must end in %2.").arg(out, suffix);
        else if (action == EngineAction::Experiment && QFileInfo::exists(out) &&
                 !QDir(out).isEmpty())
            found << tr("Output directory %1 is not empty: choose a new one.").arg(out);
        else if (action != EngineAction::Experiment && QFileInfo::exists(out))
            found << tr("Output %1 already exists: choose a new name.").arg(out);
        else if (parent_not_creatable(out))
            found << tr("Output directory %1 cannot be created (no writable folder above it).")
                         .arg(QFileInfo(out).absolutePath());
    }
    if (threads < 0) found << tr("Threads must be 0 (all cores) or more.");
    if (device != "cpu" && device != "cuda")
        found << tr("Device '%1' is not cpu or cuda.").arg(device);
    else if (device == "cuda" && !DeviceProbe::instance()->cuda_available())
        found << tr("Device CUDA is not available here: %1.")
                     .arg(DeviceProbe::instance()->cuda_reason());
    return found;
}

CliJobSpec EngineActionSettings::job() const {
    CliJobSpec spec;
    spec.command = engine_action_command(action);
    spec.device = device;
    const QString o = QFileInfo(out).absoluteFilePath();
    QStringList& a = spec.arguments;
    a << spec.command;
    auto data_args = [&] {
        if (source == "task") a << "--task" << task;
        if (source == "data") a << "--data" << QFileInfo(data).absoluteFilePath();
        if (source != "data" && split != "valid") a << "--split" << split;
    };
    switch (action) {
        case EngineAction::Dump:
            a << "--checkpoint" << QFileInfo(checkpoint).absoluteFilePath() << "--out" << o;
            data_args();
            if (layers.trimmed() != "all") a << "--layers" << layers.trimmed();
            if (gates) a << "--gates";
            if (dtype != "f32") a << "--dtype" << dtype;
            if (examples > 0) a << "--examples" << QString::number(examples);
            spec.outputs << o;
            break;
        case EngineAction::Evaluate: {
            a << "--checkpoint" << QFileInfo(checkpoint).absoluteFilePath() << "--out" << o;
            data_args();
            QString summary = o;
            summary.replace(QRegularExpression("\\.jsonl$"), ".summary.json");
            spec.outputs << o << summary;
            break;
        }
        case EngineAction::Import:
            a << QFileInfo(import_source).absoluteFilePath() << "--out" << o;
            if (import_format != "auto") a << "--format" << import_format;
            spec.outputs << o;
            break;
        case EngineAction::Experiment:
            a << experiment << "--out" << o;
            if (steps > 0) a << "--steps" << QString::number(steps);
            if (seed != 1) a << "--seed" << QString::number(seed);
            for (const QString& s : overrides)
                a << "--set" << s;
            // A stopped experiment leaves no half-made directory (unless it was there before).
            spec.outputs << o;
            break;
    }
    if (threads > 0) a << "--threads" << QString::number(threads);
    // The dialog's device reaches every command that runs a model (import runs none).
    if (action != EngineAction::Import) a << "--device" << device;
    return spec;
}

QString EngineActionSettings::title() const {
    switch (action) {
        case EngineAction::Dump:
        case EngineAction::Evaluate:
            return QStringLiteral("%1 · %2").arg(engine_action_command(action),
                                                 QFileInfo(out).fileName());
        case EngineAction::Import:
            return QStringLiteral("import · %1").arg(QFileInfo(out).fileName());
        case EngineAction::Experiment:
            return QStringLiteral("experiment %1 · %2").arg(experiment, QFileInfo(out).fileName());
    }
    return {};
}

// ---- Device -------------------------------------------------------------------------------

DeviceProbe* DeviceProbe::instance() {
    static DeviceProbe* probe = new DeviceProbe;
    return probe;
}

QString DeviceProbe::reason_from_version(const QString& version_text) {
    for (const QString& line : version_text.split('\n')) {
        const QString l = line.trimmed();
        if (!l.startsWith("CUDA engine:")) continue;
        const QString state = l.mid(int(qstrlen("CUDA engine:"))).trimmed();
        if (state == "ready") return {};
        if (state.startsWith("unavailable (") && state.endsWith(')')) {
            QString why = state.mid(int(qstrlen("unavailable (")));
            why.chop(1);
            const int device = why.indexOf("no usable CUDA device:");
            if (device >= 0)
                why = why.mid(device + int(qstrlen("no usable CUDA device:"))).trimmed();
            return why;
        }
    }
    for (const QString& line : version_text.split('\n')) {
        const QString l = line.trimmed();
        if (!l.startsWith("CUDA", Qt::CaseInsensitive)) continue;
        // "CUDA backend: compiled in (runtime 13.0); no usable CUDA device: <why>"
        const int colon = l.indexOf(':');
        QString why = colon >= 0 ? l.mid(colon + 1).trimmed() : l;
        const int device = why.indexOf("no usable CUDA device:");
        if (device >= 0) why = why.mid(device + int(qstrlen("no usable CUDA device:"))).trimmed();
        return QObject::tr("%1; the engine actions run on the CPU only so far").arg(why);
    }
    return QObject::tr("the CUDA engine is not built yet");
}

DeviceProbe::DeviceProbe() : reason_(QObject::tr("checking…")) {
    auto* p = new QProcess(this);
    connect(p, &QProcess::finished, this, [this, p] {
        const QString text = QString::fromUtf8(p->readAllStandardOutput());
        reason_ = reason_from_version(text);
        available_ = text.contains(
            QRegularExpression("^CUDA engine: ready$", QRegularExpression::MultilineOption));
        known_ = true;
        p->deleteLater();
        emit changed();
    });
    connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;
        reason_ = QObject::tr("the CUDA engine is not built yet");
        known_ = true;
        p->deleteLater();
        emit changed();
    });
    p->start(routescope_cli_path(), {"--version"});
}

QString DeviceProbe::cuda_label() const {
    return QObject::tr("CUDA (not available: %1)").arg(reason_);
}

}  // namespace routescope::gui
