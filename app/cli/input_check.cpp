#include "app/cli/input_check.hpp"

#include <iostream>

#include "engine/io/contained_validation.hpp"
#include "engine/io/validation.hpp"

namespace routescope::cli {

void add_check_flag(CLI::App* cmd, bool& check) {
    cmd->add_flag("--check", check,
                  "Validate the input checkpoint (as `validate` does) in a child process before "
                  "opening it: an invalid file, or one on which the HDF5 library crashes, is "
                  "refused with validate's report and exit code (1 invalid, 2 unreadable)");
}

int check_input(const std::string& path) {
    const ValidationReport report = validate_file_contained(path);
    if (report.ok()) return 0;
    std::cerr << path << ": --check: " << (report.readable ? "invalid " : "unreadable ")
              << (report.readable ? file_kind_name(report.kind) : "file") << ", "
              << report.violations.size() << " violation(s)\n";
    for (const auto& v : report.violations)
        std::cerr << "  " << v.text() << "\n";
    return report.exit_code();
}

}  // namespace routescope::cli
