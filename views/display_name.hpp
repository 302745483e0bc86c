#pragma once
// The names a person gave the models and dumps (workspace › Rename), or names derived from their
// run directory and configuration ("bigs · induction · step 300"): what view titles, compare
// panels and legends show instead of the file name (two runs' "model.ckpt.h5" look alike).
// GUI thread only.
#include <QString>

namespace routescope::views {

/// The name of `path`: the one set, else its file name.
QString display_name(const QString& path);
/// The name of `path` for a legend: the one set, else the file's base name.
QString display_stem(const QString& path);
/// Sets (or, with an empty name, forgets) the name of `path`.
void set_display_name(const QString& path, const QString& name);
/// Whether a name was set for `path`.
bool has_display_name(const QString& path);

}  // namespace routescope::views
