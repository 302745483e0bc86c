// routescope-cli inspect FILE: a readable summary of a dump or checkpoint (metadata only, fast on
// multi-GB files). A file with structural violations is summarised after its violations, exit 1.
// Both the structural check and the summary run in a child process (inspect_file_contained): a
// file on which libhdf5 crashes is "FILE: cannot summarise: corrupt HDF5 metadata while reading
// …", exit 1.
#include <iostream>

#include "app/cli/command.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/contained_validation.hpp"
#include "engine/io/file_info.hpp"
#include "engine/io/validation.hpp"

namespace routescope::cli {
namespace {

CommandRunner setup_inspect(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "inspect", "Summarise a dump or checkpoint: model, S, L, layers, gates, dtypes, sizes");
    auto file = std::make_shared<std::string>();
    cmd->add_option("file", *file, "*.dump.h5 or *.ckpt.h5")->required();
    return [file]() {
        ValidateOptions structure_only;
        structure_only.scan_values = false;
        // The check and the summary in a child process (issue 25): read_file_info can crash
        // libhdf5 where the check did not, and a crash of either is a verdict, never ours.
        const ContainedInspection inspection = inspect_file_contained(*file, structure_only);
        const ValidationReport& report = inspection.report;
        if (!report.readable) {
            std::cerr << *file
                      << ": cannot inspect: " << data::printable_text(report.violations.at(0).found)
                      << "\n";
            return kExitUsage;
        }
        if (!report.ok()) {
            std::cout << *file << ": does not follow its format (" << report.violations.size()
                      << " violation(s)):\n";
            for (const auto& v : report.violations)
                std::cout << "  " << data::printable_text(v.text()) << "\n";
        }
        if (!inspection.summary) {
            std::cout << std::flush;
            std::cerr << *file << ": cannot summarise: "
                      << (inspection.summary_error.empty()
                              ? "no summary"
                              : data::printable_text(inspection.summary_error, true))
                      << "\n";
            return kExitInvalid;
        }
        std::cout << *inspection.summary;
        return report.ok() ? kExitOk : kExitInvalid;
    };
}

const CommandRegistration registration{"inspect", setup_inspect};

}  // namespace
}  // namespace routescope::cli
