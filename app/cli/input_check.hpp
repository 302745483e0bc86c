#pragma once
// --check of eval, dump and train (issue 17, class 2): the input checkpoint is validated in a child
// process (validate_file_contained) before the command opens it, so a file on which libhdf5
// crashes is a verdict ("corrupt HDF5 metadata while reading /model attr name: the HDF5 library
// crashed", exit 1), never a dead process; an invalid file is refused with validate's report.
#include <CLI/CLI.hpp>

#include <string>

namespace routescope::cli {

/// Adds --check to `cmd`.
void add_check_flag(CLI::App* cmd, bool& check);

/// Validates `path` (values included) in a child process. 0 when it is valid; otherwise writes
/// validate's report to stderr and returns validate's exit code: 1 invalid (a crash of the HDF5
/// library included), 2 unreadable.
int check_input(const std::string& path);

}  // namespace routescope::cli
