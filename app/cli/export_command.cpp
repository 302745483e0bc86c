// routescope-cli export CKPT --to safetensors|pytorch --out DIR
// Exports a checkpoint as a published-model directory (engine/io/importers/model_export.hpp):
// config.json, vocab.txt and model.safetensors or pytorch_model.bin, the weights named as the
// official BiGS PyTorch port (bigs) or Hugging Face BERT (post-LN bert) names them — the inverse of
// `import`. Exit 0; 2 for bad arguments, an unreadable checkpoint, a model without a published
// layout (the message names the checkpoint and the config key) or an --out that exists and is not
// an empty directory (nothing is written under --out); 3 when the files cannot be written. The
// checkpoint is checked in a child process first (input_check.hpp): 1 when it is invalid or crashes
// the HDF5 library.
#include <filesystem>
#include <iostream>

#include "app/cli/command.hpp"
#include "app/cli/input_check.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/core/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/importers/model_export.hpp"

namespace routescope::cli {
namespace {

struct ExportArgs {
    std::string checkpoint, to, out;
    InputCheck check;
};

int run_export(const ExportArgs& a) {
    refuse_unnamable_output("--out", a.out);
    std::error_code ec;
    // An empty directory a killed export (kill -9) left its staging in reads as empty again.
    importers::remove_stale_export_staging(a.out);
    if (std::filesystem::exists(a.out, ec) &&
        (!std::filesystem::is_directory(a.out, ec) || !std::filesystem::is_empty(a.out, ec)))
        throw ConfigError("--out: " + a.out +
                          " exists and is not an empty directory (nothing overwritten)");
    // In a child process first (issue 25): a crash of libhdf5 on the file is a verdict, exit 1.
    if (const int verdict = check_input(a.checkpoint, a.check)) return verdict;
    const Checkpoint ck = read_checkpoint(a.checkpoint);
    inputs_read();
    importers::export_model(ck, a.to, a.out, a.checkpoint);
    std::cout << a.out << ": " << ck.config.model.arch << " as "
              << (a.to == "pytorch" ? "pytorch_model.bin" : "model.safetensors") << ", "
              << ck.params.size() << " parameters, config.json, vocab.txt\n";
    return kExitOk;
}

CommandRunner setup_export(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "export", "Export a checkpoint as a published model directory (safetensors or PyTorch)");
    auto a = std::make_shared<ExportArgs>();
    cmd->add_option("checkpoint", a->checkpoint, "The checkpoint (*.ckpt.h5)")->required();
    add_check_flags(cmd, a->check, "the checkpoint");
    cmd->add_option("--to", a->to, "safetensors | pytorch")
        ->required()
        ->check(CLI::IsMember({"safetensors", "pytorch"}));
    cmd->add_option("--out", a->out, "The directory to write (must not exist, or be empty)")
        ->required();
    return [a]() { return run_export(*a); };
}

const CommandRegistration registration("export", setup_export);

}  // namespace
}  // namespace routescope::cli
