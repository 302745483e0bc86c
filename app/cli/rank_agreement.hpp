#pragma once
// The ranks of an MPI job agree after a phase of setup (train, dump; docs/scaling.md): every rank
// learns whether any failed, so none waits in a collective for a rank that has left, and each
// failure is printed once rather than once per rank.
#include <exception>
#include <string>

namespace routescope::dist {
class Communicator;
}

namespace routescope::cli {

/// Called by every rank with its phase's error (or null) and `report`, a failure that is not an
/// exception (an input check's verdict, app/cli/input_check.hpp), or empty. Rethrows this rank's
/// error, silenced (exit_codes.hpp, quiet_error_message) when the lowest failing rank failed with
/// the same message; prints the report to stderr unless that rank's is the same; returns the lowest
/// failing rank, or -1 when none failed. A healthy rank that gets a rank back throws its own "rank
/// N failed" error, which only the lowest healthy rank prints.
int agree_on_failure(dist::Communicator& w, std::exception_ptr error,
                     const std::string& report = {});

}  // namespace routescope::cli
