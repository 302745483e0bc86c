#pragma once
// One identity per model across the workbench (issue 26): the name a person gave a model or dump
// (workspace › Rename), else one derived from its run directory and configuration ("bigs ·
// induction · step 300"), and the model's colour, the same in every chart and view. A dump made
// from a checkpoint and a run directory that trains one belong to that checkpoint's model
// (set_model_source): they share its colour and, unless named themselves, its name.
// GUI thread only.
#include <QHash>
#include <QString>

namespace routescope::views {

/// The name of `path`: the one set for it, else the one set for its model, else its file name.
QString display_name(const QString& path);
/// The name of `path` for a legend: the one set for it or its model, else file_stem(path).
QString display_stem(const QString& path);
/// A file's name without its Routescope suffix (".dump.h5", ".ckpt.h5", ".h5", ".rsproj", else
/// its last suffix), whatever its folder: "model.dump.h5" → "model".
QString file_name_stem(const QString& path);
/// A file's name without its Routescope suffix (".dump.h5", ".ckpt.h5", ".h5", ".rsproj", else
/// its last suffix): "bert.seed1.dump.h5" → "bert.seed1" (QFileInfo::baseName cut at the first dot,
/// so seed1 and seed2 became one "bert"). A run's "RUN/model.dump.h5" or "RUN/model.ckpt.h5" is
/// named by its folder, "RUN": every run's files are called model.
QString file_stem(const QString& path);
/// Sets (or, with an empty name, forgets) the name of `path`.
void set_display_name(const QString& path, const QString& name);
/// Whether a name was set for `path` itself.
bool has_display_name(const QString& path);

/// Records that `path` (a dump, a run directory) belongs to the model of `checkpoint`.
void set_model_source(const QString& path, const QString& checkpoint);
/// The model `path` belongs to: its source checkpoint when one was recorded (absolute), else the
/// absolute path itself.
QString model_key(const QString& path);
/// The colour slot of the model of `path` (an index into model_colour's palette): the slot set or
/// assigned before, else the lowest slot no other model holds, assigned now and kept.
int model_colour_slot(const QString& path);
/// Gives the model of `path` the colour slot `slot` (≥ 0); the model holding it before keeps its
/// own, so two models may share a colour only when a person chooses so.
void set_model_colour_slot(const QString& path, int slot);
/// Forgets every name, source and colour (a new workspace).
void forget_model_identities();

}  // namespace routescope::views
