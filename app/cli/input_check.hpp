#pragma once
// Every command that opens a user's HDF5 file (eval, dump, train --init/--resume, export, analyze)
// first parses its structure in a child process (validate_file_contained; issue 17 class 2, issue
// 25 "Contained by default"): libhdf5 1.10 itself crashes on some corrupt metadata, and a crash in
// the child is a verdict ("corrupt HDF5 metadata while reading /model attr name: the HDF5 library
// crashed", exit 1), never a dead command. By default the check is structure-only (metadata; see
// docs/reliability.md for its cost); --check also scans the values (as `validate` does);
// --no-check skips it for a file the user trusts. An invalid file is refused with validate's
// report and exit code (1 invalid, 2 unreadable). A child that has not answered after 120 s (plus
// 1 s per 20 MB with --check; ROUTESCOPE_CHECK_TIMEOUT_S overrides) is stopped: exit 1, "the HDF5
// library did not finish reading …".
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace routescope::cli {

struct InputCheck {
    bool values = false;  ///< --check: structure and values (NaN/Inf, ranges)
    bool skip = false;    ///< --no-check: open the file in this process without a check
    /// false (analyze): refuse only a file the HDF5 library crashed or hung on, or one that is not
    /// HDF5 at all; format violations are left to the command's own readers, which use partial
    /// files (a checkpoint of parameters only) and refuse what they cannot use (exit 2).
    bool refuse_invalid = true;
};

/// Adds --check and --no-check (exclusive) to `cmd`; `what` names the inputs in the help text.
void add_check_flags(CLI::App* cmd, InputCheck& check,
                     const std::string& what = "the input checkpoint");

/// Checks `path` in a child process as `check` says (nothing with --no-check). 0 when it may be
/// opened (a file with violations too, when !check.refuse_invalid); otherwise writes the report to
/// stderr, naming the file, and returns validate's exit code: 1 invalid (a crash or hang of the
/// HDF5 library included), 2 unreadable.
/// With `report_text`, the report is appended there instead of written to stderr. In a job
/// launched by mpirun only rank 0 writes it: the check runs before MPI starts (its child process
/// is forked first), every rank checks the same file, and each printed the same report.
int check_input(const std::string& path, const InputCheck& check,
                std::string* report_text = nullptr);

/// The process's rank in an MPI job as its launcher sets it in the environment (Open MPI, PMIx,
/// MPICH), before MPI is initialised; 0 outside a job.
int launcher_rank();

/// check_input on each path in turn; the first non-zero verdict.
int check_inputs(const std::vector<std::string>& paths, const InputCheck& check);

}  // namespace routescope::cli
