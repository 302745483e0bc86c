#pragma once
// The standard descriptors of a process started without them (`>&-`, `<&-`).

namespace routescope {

/// Takes each of descriptors 0, 1 and 2 that is closed with /dev/null, opened the other way round
/// (read-only for output, write-only for input), before anything else opens a file: otherwise the
/// next file opened got the lowest free number, and what was printed went into it (dump's summary
/// line into its lock file, exit 0; a figure's temporary under `routescope --export`). A write to
/// standard output or error (a read of standard input) still fails (EBADF) as on the closed
/// descriptor, so what is printed is lost as before ("cannot write to standard output", exit 3),
/// never written into a file. Call first in main.
void occupy_closed_standard_descriptors();

}  // namespace routescope
