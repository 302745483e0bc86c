// routescope-cli import SRC --out model.ckpt.h5 [--format auto|flax|pytorch|safetensors]
//                           [--arch auto|bigs|bert] [--config config.json] [--vocab vocab.txt]
// Imports a published model (engine/io/importers/model_import.hpp): SRC is a Hugging Face-style
// directory (config.json, flax_model.msgpack | model.safetensors | pytorch_model.bin or one of them
// sharded as <name>.index.json, vocab.txt or tokenizer.json) or one weights file or shard index
// (config and vocabulary from --config/--vocab or its directory). Writes an ordinary checkpoint
// with the weights file's SHA-256 as root attr import_sha256 (a sharded checkpoint: the index's,
// and each shard's in import_shards_sha256). Exit 0; 2 for bad arguments or bad input (the message
// names the file and the tensor or key; nothing is written under --out), an --out that is a
// directory, a device or a FIFO included (before anything is read); 3 when the checkpoint cannot
// be written.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <tuple>

#include "app/cli/command.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/importers/model_import.hpp"
#include "engine/io/sha256.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::cli {
namespace {

struct ImportArgs {
    std::string src, out, format = "auto", arch = "auto", config, vocab;
};

int run_import(const ImportArgs& a) {
    importers::ImportedModel model;
    importers::ImportSource source;
    std::string sha;
    std::vector<std::pair<std::string, std::string>> shards;  // a sharded checkpoint's files
    try {
        // The paths given, before anything is read (SRC may be no model at all) ...
        refuse_overwriting_inputs({"--out", a.out},
                                  {{"SRC", a.src}, {"--config", a.config}, {"--vocab", a.vocab}});
        // Not a device or a FIFO, as every writer refuses it before any work (it was exit 3 after
        // the whole model had been read and converted).
        (void)atomic_write_target(a.out);
        source = importers::locate_import_source(a.src, a.format, a.config, a.vocab);
        model = importers::import_model(source, a.arch);
        // ... and every file found in SRC's directory, before anything is written:
        // `--out DIR/config.json` or a shard's name replaced the published model.
        // The vocabulary's files are those it was read from: vocab.txt or tokenizer.json, the
        // tokenizer_config.json, special_tokens_map.json and added_tokens.json beside it, and
        // the tokenizer.json beside a vocab.txt (`--out DIR/tokenizer.json` replaced the file it
        // had just read).
        std::vector<std::pair<std::string, std::string>> read{
            {"import", source.weights}, {"import", source.config}, {"import", source.vocab}};
        for (const auto& file : model.vocab_files)
            read.emplace_back("import", file);
        for (const auto& shard : model.shards)
            read.emplace_back("import", shard);
        refuse_overwriting_inputs({"--out", a.out}, read);
        sha = sha256_file(source.weights);
        for (const auto& shard : model.shards)
            shards.emplace_back(std::filesystem::path(shard).filename().string(),
                                sha256_file(shard));
    } catch (const Error& e) {
        // A message quotes the files' own text (Flax keys, tensor names): control characters as
        // \xNN, as every command's errors (exit_codes.cpp); the lines of a problem list stay.
        std::cerr << "routescope-cli import: error: " << data::printable_text(e.what(), true)
                  << "\n";
        return kExitUsage;
    }
    const std::size_t n_params = model.params->size();
    try {
        importers::write_imported_checkpoint(a.out, model,
                                             {source.weights, model.source_format, sha, shards});
    } catch (const Error& e) {
        std::cerr << "routescope-cli import: error: " << data::printable_text(e.what(), true)
                  << "\n";
        return kExitFailure;
    }
    for (const auto& note : model.notes)
        std::cerr << "routescope-cli import: note: " << data::printable_text(note) << "\n";
    const auto& m = model.config.model;
    std::cout << a.out << ": " << m.arch << " d=" << m.d_model << " layers=" << m.n_layers
              << " I=" << m.inner()
              << (m.arch == "bigs" ? " N=" + std::to_string(m.ssm.n_modes) : "")
              << " V=" << m.vocab_size << " Lmax=" << m.max_len
              << (m.n_labels > 0 ? " labels=" : "")
              << (m.n_labels > 0 ? std::to_string(m.n_labels) : "")
              << (m.mlm_head       ? ""
                  : m.n_labels > 0 ? " (no MLM head)"
                                   : " (no head: an encoder)")
              << ", " << n_params << " parameters from " << source.weights
              << (shards.empty() ? "" : " (" + std::to_string(shards.size()) + " shards)") << " ("
              << model.source_format << ", sha256 " << sha << ")\n";
    return kExitOk;
}

CommandRunner setup_import(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "import",
        "Import a published model (Flax msgpack, PyTorch or safetensors) as a checkpoint");
    auto a = std::make_shared<ImportArgs>();
    cmd->add_option("src", a->src,
                    "Model directory (config.json + weights + vocab), weights file or shard "
                    "index (*.index.json)")
        ->required();
    cmd->add_option("--out", a->out, "The checkpoint to write (*.ckpt.h5)")->required();
    cmd->add_option("--format", a->format, "auto | flax | pytorch | safetensors")
        ->check(CLI::IsMember({"auto", "flax", "pytorch", "safetensors"}));
    cmd->add_option("--arch", a->arch, "auto (from config.json's model_type) | bigs | bert")
        ->check(CLI::IsMember({"auto", "bigs", "bert"}));
    cmd->add_option("--config", a->config, "config.json (default: beside the weights)");
    cmd->add_option("--vocab", a->vocab,
                    "vocab.txt or tokenizer.json (default: beside the weights)");
    return [a]() { return run_import(*a); };
}

const CommandRegistration registration("import", setup_import);

}  // namespace
}  // namespace routescope::cli
