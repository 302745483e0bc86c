// routescope-cli validate FILE...: checks files against DUMP_FORMAT.md / CHECKPOINT_FORMAT.md.
// Exit 0 when every file is valid, 1 when one is invalid, 2 when one cannot be read at all.
#include <iostream>

#include "app/cli/command.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/contained_validation.hpp"
#include "engine/io/validation.hpp"

namespace routescope::cli {
namespace {

CommandRunner setup_validate(CLI::App& app) {
    auto* cmd = app.add_subcommand("validate",
                                   "Check dumps or checkpoints against their format (version 1)");
    auto files = std::make_shared<std::vector<std::string>>();
    auto quick = std::make_shared<bool>(false);
    auto quiet = std::make_shared<bool>(false);
    cmd->add_option("files", *files, "*.dump.h5 or *.ckpt.h5 files")->required();
    cmd->add_flag("--quick", *quick,
                  "Check structure only; skip scanning values for NaN/Inf and ranges");
    cmd->add_flag("-q,--quiet", *quiet, "Print nothing for valid files");
    return [files, quick, quiet]() {
        int worst = kExitOk;
        for (const auto& file : *files) {
            ValidateOptions options;
            options.scan_values = !*quick;
            // In a child process: a crash of libhdf5 on corrupt metadata is a verdict, not ours.
            const ValidationReport report = validate_file_contained(file, options);
            if (report.ok()) {
                if (!*quiet)
                    std::cout << file << ": valid " << file_kind_name(report.kind)
                              << " (format version 1)\n";
            } else {
                std::cout << file << ": " << (report.readable ? "invalid " : "unreadable ")
                          << (report.readable ? file_kind_name(report.kind) : "file") << ", "
                          << report.violations.size() << " violation(s)\n";
                for (const auto& v : report.violations)
                    std::cout << "  " << data::printable_text(v.text()) << "\n";
            }
            worst = std::max(worst, report.exit_code());
        }
        return worst;
    };
}

const CommandRegistration registration{"validate", setup_validate};

}  // namespace
}  // namespace routescope::cli
