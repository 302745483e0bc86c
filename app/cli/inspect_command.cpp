// routescope-cli inspect FILE: a readable summary of a dump or checkpoint (metadata only, fast on
// multi-GB files). A file with structural violations is summarised after its violations, exit 1.
#include <iostream>

#include "app/cli/command.hpp"
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
        // In a child process first: a file that crashes libhdf5 is reported, never summarised.
        const ValidationReport report = validate_file_contained(*file, structure_only);
        if (!report.readable) {
            std::cerr << *file << ": cannot inspect: " << report.violations.at(0).found << "\n";
            return kExitUsage;
        }
        if (!report.ok()) {
            std::cout << *file << ": does not follow its format (" << report.violations.size()
                      << " violation(s)):\n";
            for (const auto& v : report.violations)
                std::cout << "  " << v.text() << "\n";
        }
        std::cout << summary_text(read_file_info(*file));
        return report.ok() ? kExitOk : kExitInvalid;
    };
}

const CommandRegistration registration{"inspect", setup_inspect};

}  // namespace
}  // namespace routescope::cli
