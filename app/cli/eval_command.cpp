// routescope-cli eval --checkpoint F --data CORPUS [--tokenizer FILE] [--seq-len L]
//                     [--batch-size B] [--batches N] [--threads N] [--doc-sep line|blank]
// Evaluates a checkpoint on a corpus and prints one JSON line. The objective comes from the
// checkpoint's train.objective; each objective has its own evaluate_<objective> function below
// (MLM now; classification and the built-in tasks add theirs), sharing the argument parsing and
// the checkpoint/tokenizer loading. Exit 0, 2 for a bad argument or unreadable input (a tokenizer
// whose vocabulary differs from the model's included), 3 for a failure at run time.
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/command.hpp"
#include "engine/core/error.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "engine/train/mlm_evaluation.hpp"
#include "engine/train/packed_sequences.hpp"

namespace routescope::cli {
namespace {

struct EvalArgs {
    std::string checkpoint;
    std::string data;
    std::string tokenizer;
    std::string doc_sep;
    int seq_len = 0;
    int batch_size = 8;
    std::int64_t batches = 0;
    int threads = 0;
};

// What every objective's evaluation starts from.
struct EvalInputs {
    Checkpoint checkpoint;
    std::unique_ptr<data::Tokenizer> tokenizer;
};

// A tokenizer file's kind by its name: *.model SentencePiece, anything else a WordPiece vocab.txt.
std::string tokenizer_kind_of(const std::string& path) {
    return path.size() >= 6 && path.ends_with(".model") ? "sentencepiece" : "wordpiece";
}

EvalInputs load_inputs(const EvalArgs& a) {
    EvalInputs in{read_checkpoint(a.checkpoint), nullptr};
    const auto& ck = in.checkpoint;
    in.tokenizer = a.tokenizer.empty()
                       ? data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model)
                       : data::load_tokenizer_file(tokenizer_kind_of(a.tokenizer), a.tokenizer);
    if (in.tokenizer->vocab_size() != ck.config.model.vocab_size)
        throw ConfigError("vocabulary mismatch: " + a.checkpoint +
                          " has model.vocab_size = " + std::to_string(ck.config.model.vocab_size) +
                          " but the " + in.tokenizer->kind() + " tokenizer" +
                          (a.tokenizer.empty() ? " it stores" : " " + a.tokenizer) + " has " +
                          std::to_string(in.tokenizer->vocab_size()) + " ids");
    return in;
}

nlohmann::ordered_json evaluate_mlm_command(const EvalArgs& a, EvalInputs& in) {
    const RunConfig& config = in.checkpoint.config;
    const int L = a.seq_len > 0 ? a.seq_len : config.data.seq_len;
    if (L > config.model.max_len)
        throw ConfigError("--seq-len: " + std::to_string(L) + " is longer than model.max_len = " +
                          std::to_string(config.model.max_len));
    const train::SequenceSet set = train::pack_documents(
        a.data, a.doc_sep.empty() ? config.data.doc_sep : a.doc_sep, L, *in.tokenizer);
    models::Model model(config, a.batch_size, L, a.threads);
    load_params(in.checkpoint, model.params());
    const data::MlmMasker masker(*in.tokenizer, {config.train.mask_prob, 0.8, 0.1});
    const train::MlmScore s = train::evaluate_mlm(
        model, set, masker, static_cast<std::uint64_t>(config.train.seed), a.batches);
    nlohmann::ordered_json r;
    r["objective"] = "mlm";
    r["checkpoint"] = a.checkpoint;
    r["data"] = a.data;
    r["loss"] = s.loss;
    r["accuracy"] = s.accuracy;
    r["targets"] = s.targets;
    r["sequences"] = s.sequences;
    return r;
}

int run_eval(const EvalArgs& a) {
    EvalInputs in;
    try {
        in = load_inputs(a);
    } catch (const Error& e) {
        std::cerr << "routescope-cli eval: error: " << e.what() << "\n";
        return kExitUsage;
    }
    const std::string& objective = in.checkpoint.config.train.objective;
    nlohmann::ordered_json result;
    try {
        if (objective == "mlm")
            result = evaluate_mlm_command(a, in);
        else
            throw ConfigError("train.objective: eval does not support '" + objective + "' yet");
    } catch (const ConfigError& e) {
        std::cerr << "routescope-cli eval: error: " << e.what() << "\n";
        return kExitUsage;
    } catch (const IoError& e) {
        std::cerr << "routescope-cli eval: error: " << e.what() << "\n";
        return kExitUsage;
    } catch (const FormatError& e) {
        std::cerr << "routescope-cli eval: error: " << e.what() << "\n";
        return kExitUsage;
    }
    std::cout << result.dump() << std::endl;
    return kExitOk;
}

CommandRunner setup_eval(CLI::App& app) {
    auto* cmd =
        app.add_subcommand("eval", "Evaluate a checkpoint on a corpus (MLM loss, accuracy)");
    auto a = std::make_shared<EvalArgs>();
    cmd->add_option("--checkpoint", a->checkpoint, "Checkpoint (*.ckpt.h5)")->required();
    cmd->add_option("--data", a->data, "Corpus: a text file or a directory of them")->required();
    cmd->add_option(
        "--tokenizer", a->tokenizer,
        "Tokenizer file instead of the stored one: *.model (SentencePiece) or vocab.txt");
    cmd->add_option("--doc-sep", a->doc_sep,
                    "line | blank (default: the checkpoint's data.doc_sep)");
    cmd->add_option("--seq-len", a->seq_len, "Sequence length (default: the checkpoint's)");
    cmd->add_option("--batch-size", a->batch_size, "Sequences per batch")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--batches", a->batches, "Evaluate only the first N batches (0 = all)");
    cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
    return [a]() { return run_eval(*a); };
}

const CommandRegistration registration{"eval", setup_eval};

}  // namespace
}  // namespace routescope::cli
