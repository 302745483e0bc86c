#include "app/cli/input_check.hpp"

#include <sstream>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "engine/data/utf8.hpp"
#include "engine/io/contained_validation.hpp"
#include "engine/io/validation.hpp"

namespace routescope::cli {

void add_check_flags(CLI::App* cmd, InputCheck& check, const std::string& what) {
    auto* values = cmd->add_flag(
        "--check", check.values,
        "Validate " + what +
            " fully (structure and values, as `validate` does) in a child process before opening "
            "it; the default checks its structure only (exit 1 invalid or the HDF5 library "
            "crashed on it, 2 unreadable)");
    auto* skip = cmd->add_flag("--no-check", check.skip,
                               "Skip the check of " + what +
                                   " in a child process (a file you trust; a crash of the HDF5 "
                                   "library on it then ends this command)");
    values->excludes(skip);
}

double check_timeout_s(const std::string& path, bool values) {
    if (const char* s = std::getenv("ROUTESCOPE_CHECK_TIMEOUT_S")) {
        const double v = std::atof(s);
        if (v > 0) return v;
    }
    // The structure takes milliseconds (docs/reliability.md, "Cost of the check"): 120 s is a
    // library that never returns, even on a slow filesystem. The value scan reads every byte: as
    // the GUI's loader, 1 s more per 20 MB.
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return 120.0 + (values && !ec ? static_cast<double>(size) / 20e6 : 0.0);
}

int check_input(const std::string& path, const InputCheck& check, std::string* report_text) {
    if (check.skip) return 0;
    ValidateOptions options;
    options.scan_values = check.values;
    const ValidationReport report =
        validate_file_contained(path, options, nullptr, check_timeout_s(path, check.values));
    if (report.ok()) return 0;
    if (!check.refuse_invalid && report.readable && !report.crashed) return 0;
    // One write: ranks of an MPI job that print at once do not interleave their lines.
    std::ostringstream text;
    text << path << ": " << (check.values ? "--check" : "input check (--no-check skips it)") << ": "
         << (report.readable ? "invalid " : "unreadable ")
         << (report.readable ? file_kind_name(report.kind) : "file") << ", "
         << report.violations.size() << " violation(s)\n";
    for (const auto& v : report.violations)
        text << "  " << data::printable_text(v.text()) << "\n";
    if (report_text)
        *report_text += text.str();
    else if (launcher_rank() == 0)
        std::cerr << text.str() << std::flush;
    return report.exit_code();
}

int launcher_rank() {
    // Open MPI's, PMIx's and MPICH's names for the process's rank in the job.
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if (const char* v = std::getenv(name)) return std::atoi(v);
    return 0;
}

int check_inputs(const std::vector<std::string>& paths, const InputCheck& check) {
    for (const auto& path : paths)
        if (const int verdict = check_input(path, check)) return verdict;
    return 0;
}

}  // namespace routescope::cli
