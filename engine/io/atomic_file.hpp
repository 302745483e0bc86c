#pragma once
// Small outputs (predictions, summaries, result tables, project files, a figure's CSV and
// provenance) are written under a hidden temporary name in the target directory, flushed to the
// disk and renamed when complete, so a failure never leaves a partial or empty file under the
// final name. (Qt 6.4's QSaveFile::commit returned true after a write that failed with "No space
// left on device" and renamed an empty file over the project: decisions.md, session 29.)
#include <string>
#include <utility>
#include <vector>

namespace routescope {

/// Writes `text` to `path` through ".<name>.tmp-<pid>" beside it, fsync'ed and renamed when
/// complete (a killed earlier writer's temporaries are swept first). RuntimeFailure naming the file
/// and the OS's reason: its directory is not writable, a write error (disk full), the rename
/// failed; the temporary is removed in every case.
void write_text_atomically(const std::string& path, const std::string& text);

/// The outputs of one command ({path, text} each) written together: every temporary is written
/// first, and only when all are complete are they renamed into place, so a failure on the second
/// (an unwritable directory, a full disk) leaves neither under its final name.
/// The renames are one step with respect to a stop signal whose handler consults
/// hold_signal_while_renaming: a signal arriving after the first rename is acted on after the last
/// (the new set complete), never between two.
void write_texts_atomically(const std::vector<std::pair<std::string, std::string>>& files);

/// For a handler of a signal that ends the process (routescope-cli's SIGINT / SIGTERM / SIGHUP /
/// SIGUSR1): true when write_texts_atomically is renaming a set of files in any thread, in which
/// case the signal is held and raised again in that thread once the set is in place (or put back
/// after a failed rename), and the handler should return without acting. Async-signal-safe (one
/// lock-free atomic word).
bool hold_signal_while_renaming(int signal);

}  // namespace routescope
