#pragma once
// Small text outputs of the CLI (predictions, summaries, result tables) are written under a hidden
// temporary name in the target directory and renamed when complete, so a failure never leaves a
// partial file under the final name.
#include <string>

namespace routescope::cli {

/// Writes `text` to `path` through ".<name>.tmp-<pid>" beside it, renamed when complete. IoError
/// naming the file: its directory is not writable, a write error (disk full), the rename failed;
/// the temporary is removed in every case.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace routescope::cli
