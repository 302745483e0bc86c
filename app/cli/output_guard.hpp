#pragma once
// An output never overwrites an input: `dump --checkpoint m.ckpt.h5 --out m.ckpt.h5` replaced the
// checkpoint with its own dump, `analyze --dump d.dump.h5 --out d.dump.h5` the dump with a JSON
// file. Every command that writes a file checks its outputs against the files it reads first.
#include <string>
#include <utility>
#include <vector>

namespace routescope::cli {

/// ConfigError (exit 2) naming the option when the last component of `path` is longer than its
/// file system allows (NAME_MAX, 255 bytes on Linux file systems): found before any work instead
/// of as an HDF5 "File name too long" trace at the end of it. Empty paths pass.
void refuse_unnamable_output(const std::string& option, const std::string& path);

/// ConfigError (exit 2) naming the option when `path` is a directory (or a link to one) where a
/// file is to be written: said before any work, not as the rename's "Is a directory" after it.
void refuse_directory_output(const std::string& option, const std::string& path);

/// refuse_unnamable_output(out), refuse_directory_output(out), then ConfigError (exit 2) naming
/// both options when `out` (an option's value, e.g. "--out") is the same file as one of `inputs`
/// (option name, path): the same path, or another name of the same file (a link); or when `out`
/// lies inside a corpus folder (an input whose option name begins with --data or --corpus, such
/// as "--data (the checkpoint's data.train)", that is a directory: every file in it is read),
/// existing or not. Empty paths and
/// other outputs that do not exist yet pass.
void refuse_overwriting_inputs(const std::pair<std::string, std::string>& out,
                               const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace routescope::cli
