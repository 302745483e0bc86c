// routescope-cli eval --checkpoint F --data CORPUS [--tokenizer FILE] [--seq-len L]
//                     [--batch-size B] [--batches N] [--threads N] [--doc-sep line|blank]
// routescope-cli eval --checkpoint F (--task T | --data FILE) [--split valid|test|train]
//                     --out preds.jsonl [--batch-size B] [--threads N]
// Evaluates a checkpoint on a corpus and prints one JSON line. Per-example evaluation (a
// fine-tuned classifier on a classification file, or a built-in task) writes one JSON line per
// example to --out and the summary to stdout and to <out without .jsonl>.summary.json, both under
// a temporary name renamed when complete (docs/cli.md). The objective comes from the
// checkpoint's train.objective; each objective has its own evaluate_<objective> function below
// (MLM now; classification and the built-in tasks add theirs; a clm / prefix_lm / birdie checkpoint
// on a task is scored generatively, engine/train/answer_scoring.hpp), sharing the argument parsing
// and the checkpoint/tokenizer loading. Exit 0, 2 for a bad argument or unreadable input (a
// tokenizer whose vocabulary differs from the model's included), 3 for a failure at run time.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/atomic_text_file.hpp"
#include "app/cli/command.hpp"
#include "app/cli/device_option.hpp"
#include "app/cli/input_check.hpp"
#include "app/cli/output_guard.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/models/model.hpp"
#include "engine/train/answer_scoring.hpp"
#include "engine/train/birdie_arms.hpp"
#include "engine/train/causal_capability.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/mlm_evaluation.hpp"
#include "engine/train/packed_sequences.hpp"
#include "engine/train/row_evaluation.hpp"
#include "engine/train/run_inputs.hpp"
#include "engine/train/set_evaluation.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::cli {
namespace {

struct EvalArgs {
    std::string device = "cpu";
    std::string checkpoint;
    std::string data;
    std::string tokenizer;
    std::string doc_sep;
    std::string task;
    std::string split = "valid";
    bool split_given = false;  ///< --split on the command line (it selects a task's split only)
    std::string out;
    int seq_len = 0;
    int batch_size = 8;
    std::int64_t batches = 0;
    int threads = 0;
    std::string birdie_layout = "prefix_lm";  ///< --birdie-layout (birdie checkpoints on a task)
    /// --task-set KEY=VALUE: data.task_params of the evaluated split (longer phone books, …).
    std::vector<std::string> task_sets;
    InputCheck check;  ///< --check / --no-check: the contained check of --checkpoint
};

// What every objective's evaluation starts from.
struct EvalInputs {
    Checkpoint checkpoint;
    std::unique_ptr<data::Tokenizer> tokenizer;
};

EvalInputs load_inputs(const EvalArgs& a) {
    // Without its values: they go from the file into the model on its device (loaded_model).
    EvalInputs in{read_checkpoint(a.checkpoint, CheckpointRead::without_values), nullptr};
    in.tokenizer = train::checkpoint_tokenizer(in.checkpoint, a.checkpoint, a.tokenizer);
    return in;
}

// The --data corpus packed as in training, at --seq-len (default the checkpoint's data.seq_len).
train::SequenceSet packed_corpus(const EvalArgs& a, const EvalInputs& in) {
    const RunConfig& config = in.checkpoint.config;
    // The default is the checkpoint's data.seq_len, at most its positions: a converter's /config
    // that left data.seq_len at its default (128) beside max_len 32 was refused as "--seq-len:
    // 128", an option never given.
    const int L = a.seq_len > 0 ? a.seq_len : std::min(config.data.seq_len, config.model.max_len);
    if (L > config.model.max_len)
        throw ConfigError("--seq-len: " + std::to_string(L) + " is longer than model.max_len = " +
                          std::to_string(config.model.max_len));
    return train::pack_documents(a.data, a.doc_sep.empty() ? config.data.doc_sep : a.doc_sep, L,
                                 *in.tokenizer);
}

// The checkpoint's model for batches of L tokens on --device (an inference model), its parameters
// read from the file into it, one tensor at a time.
std::unique_ptr<models::Model> loaded_model(const EvalArgs& a, const EvalInputs& in, int L) {
    auto model =
        std::make_unique<models::Model>(in.checkpoint.config, a.batch_size, L, a.threads,
                                        checked_device(a.device), models::ModelUse::inference);
    read_params_into(a.checkpoint, in.checkpoint.layout, model->params());
    return model;
}

// A loss that is not finite over scored targets is a model whose forward pass overflows (a
// finite checkpoint can: huge weights), not a score: exit 3 naming the checkpoint, nothing written
// (it was reported as "loss": null with accuracy 0, every prediction the row of NaN's first id).
void refuse_overflowing_loss(const EvalArgs& a, double loss, std::int64_t targets,
                             const char* what) {
    if (targets <= 0 || std::isfinite(loss)) return;
    throw RuntimeFailure(a.checkpoint +
                         ": the model's forward pass overflows (Inf or NaN) on this checkpoint: "
                         "the loss over " +
                         std::to_string(targets) + " " + what +
                         " is not finite; nothing was written");
}

// The summary fields every corpus evaluation reports, after its own.
void add_corpus_score(nlohmann::ordered_json& r, const EvalArgs& a, const train::MlmScore& s) {
    refuse_overflowing_loss(a, s.loss, s.targets, "targets");
    r["checkpoint"] = a.checkpoint;
    r["device"] = device_name(checked_device(a.device));
    r["data"] = a.data;
    r["loss"] = s.loss;
    r["accuracy"] = s.accuracy;
    r["targets"] = s.targets;
    r["sequences"] = s.sequences;
}

nlohmann::ordered_json evaluate_mlm_command(const EvalArgs& a, EvalInputs& in) {
    const RunConfig& config = in.checkpoint.config;
    const train::SequenceSet set = packed_corpus(a, in);
    inputs_read();
    const auto loaded = loaded_model(a, in, set.seq_len());
    models::Model& model = *loaded;
    const data::MlmMasker masker(*in.tokenizer, {config.train.mask_prob, 0.8, 0.1});
    const train::MlmScore s = train::evaluate_mlm(
        model, set, masker, static_cast<std::uint64_t>(config.train.seed), a.batches);
    nlohmann::ordered_json r;
    r["objective"] = "mlm";
    add_corpus_score(r, a, s);
    return r;
}

// Next-token loss and accuracy of a clm / prefix_lm / birdie checkpoint on a corpus (packed as in
// training): every position predicts the token after it, so the three objectives give comparable
// numbers. clm: its own rows; prefix_lm: the prefix is [CLS] alone; birdie: the next-token arm's
// rows ([next_token paradigm] [start] sequence-without-[CLS], the last token cut for the two
// specials).
nlohmann::ordered_json evaluate_causal_corpus_command(const EvalArgs& a, EvalInputs& in) {
    const RunConfig& config = in.checkpoint.config;
    const std::string& objective = config.train.objective;
    const train::SequenceSet set = packed_corpus(a, in);
    inputs_read();
    const auto loaded = loaded_model(a, in, set.seq_len());
    models::Model& model = *loaded;
    const std::int32_t pad = std::max(0, in.tokenizer->specials().pad);
    const data::BirdieVocabulary vocab{in.tokenizer->vocab_size()};
    const auto& arms = train::birdie_arm_catalogue();
    const auto next_token_arm = std::find_if(arms.begin(), arms.end(), [](const auto& arm) {
        return arm.paradigm == data::Paradigm::next_token;
    });
    const train::MlmScore s = train::evaluate_rows(
        model, set.size(),
        [&](std::int64_t i, train::RowView row) {
            if (objective == "clm") return train::clm_row(set.ids(i), set.length(i), pad, row);
            if (objective == "prefix_lm")
                return train::prefix_lm_row(set.ids(i), set.length(i), 1, pad, row);
            data::RandomStream unused(0, 0, 0);  // the next-token arm draws nothing
            return train::birdie_arm_row(*next_token_arm, set.ids(i), set.length(i), vocab,
                                         config.train.prefix_fraction, pad, unused, row);
        },
        a.batches);
    nlohmann::ordered_json r;
    r["objective"] = objective;
    r["scoring"] = "next-token";
    add_corpus_score(r, a, s);
    return r;
}

namespace fs = std::filesystem;

std::string summary_path(const std::string& out) {
    const std::string stem = out.ends_with(".jsonl") ? out.substr(0, out.size() - 6) : out;
    return stem + ".summary.json";
}

// The examples a per-example evaluation scores: a built-in task split or a classification file.
train::LabelledSet eval_set(const EvalArgs& a, const EvalInputs& in) {
    const RunConfig& config = in.checkpoint.config;
    if (!a.task.empty() || a.data.empty()) {
        const std::string name = !a.task.empty() ? a.task : config.data.task.value_or("");
        if (name.empty())
            throw ConfigError("--task or --data: " + a.checkpoint +
                              " was not trained on a built-in task; give the examples to score");
        // --task-set: the checkpoint's task parameters with the user's changes (ConfigError
        // naming the key for a bad one).
        std::vector<std::string> sets;
        for (const auto& kv : a.task_sets) {
            // Named as the user gave it: the merge below names train's `--set
            // data.task_params.KEY`, an option eval does not have.
            const auto eq = kv.find('=');
            if (eq == std::string::npos || eq == 0)
                throw ConfigError("--task-set " + kv +
                                  ": expected KEY=VALUE, a data.task_params key and its value "
                                  "(e.g. n_test=1024)");
            sets.push_back("data.task_params." + kv);
        }
        RunConfig task_config = config;
        try {
            if (!sets.empty()) task_config = config.with_overrides(sets);
        } catch (const ConfigError& e) {
            const std::string what = e.what(), set = "--set data.task_params.";
            if (what.starts_with(set)) throw ConfigError("--task-set " + what.substr(set.size()));
            if (what.starts_with("--set:")) throw ConfigError("--task-set:" + what.substr(6));
            throw;
        }
        train::TaskSplit t =
            train::task_split(task_config, *in.tokenizer, name, a.split, a.checkpoint);
        if (t.task.n_classes != (config.data.task ? config.model.n_labels : t.task.n_classes))
            throw ConfigError("--task " + name + ": the checkpoint's head does not fit the task");
        return std::move(t.set);
    }
    train::LabelledSet set = train::classification_file(
        config, *in.tokenizer, a.data, std::min(config.data.seq_len, config.model.max_len),
        a.checkpoint, /*require_classifier=*/true);
    // A tokenizer that does not cover the text: refused as fine-tuning on it is.
    if (train::unknown_tokens(set, *in.tokenizer).all())
        throw ConfigError(set.source + ": every token is [UNK] under the " + in.tokenizer->kind() +
                          " tokenizer of " + a.checkpoint + " (" +
                          std::to_string(in.tokenizer->vocab_size()) +
                          " ids): the model cannot read this text");
    return set;
}

nlohmann::ordered_json attributes_json(const std::map<std::string, double>& attributes) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [k, v] : attributes)
        j[k] = v;
    return j;
}

nlohmann::ordered_json evaluate_examples_command(const EvalArgs& a, EvalInputs& in) {
    if (a.out.empty()) throw ConfigError("--out: per-example evaluation needs --out preds.jsonl");
    const RunConfig& config = in.checkpoint.config;
    const train::LabelledSet set = eval_set(a, in);
    inputs_read();
    // A causal checkpoint (clm, prefix_lm, birdie) writes the answer after the prompt
    // (answer_scoring.hpp); birdie's row is one position longer than the example.
    const std::string& objective = config.train.objective;
    const bool causal = train::is_causal_objective(objective);
    if (causal && !set.targets)
        throw ConfigError(set.source + ": " + a.checkpoint +
                          " was trained with train.objective = " + objective +
                          "; it scores tasks whose answer is a token sequence, not class labels");
    // Rows as long as the run trained and validated them (train::trained_row_length): padded
    // only to the longest example, a bidirectional SSM, Birdie or gMLP checkpoint scored
    // otherwise than its own log's evaluations.
    const int L =
        std::max(std::max(1, set.max_length()) + (causal ? train::task_row_extra(objective) : 0),
                 train::trained_row_length(config));
    if (L > config.model.max_len)
        throw ConfigError(
            set.source + ": rows of " + std::to_string(L) +
            " tokens are longer than model.max_len = " + std::to_string(config.model.max_len));
    const auto loaded = loaded_model(a, in, L);
    models::Model& model = *loaded;
    const auto predictions =
        causal ? train::predict_answers(model, set, objective,
                                        data::BirdieVocabulary{in.tokenizer->vocab_size()},
                                        a.birdie_layout == "next_token" ? data::Paradigm::next_token
                                                                        : data::Paradigm::prefix_lm)
               : train::predict_set(model, set);
    const train::SetScore s = train::score_set(set, predictions);
    refuse_overflowing_loss(a, s.loss, s.scored, "scored examples");

    // A birdie checkpoint may predict one of its specials ([start], a sentinel, …): named by
    // birdie_piece, after the tokenizer's ids.
    const data::BirdieVocabulary birdie{in.tokenizer->vocab_size()};
    const auto pieces = [&](const std::vector<std::int32_t>& ids) {
        std::string text;
        for (const auto id : ids)
            text += (text.empty() ? "" : " ") +
                    (id >= birdie.base ? data::birdie_piece(birdie, id) : in.tokenizer->piece(id));
        return text;
    };
    std::string lines;
    for (std::size_t i = 0; i < predictions.size(); ++i) {
        const auto& e = set.examples[i];
        const auto& p = predictions[i];
        nlohmann::ordered_json j;
        j["id"] = i;
        if (e.line > 0) j["line"] = e.line;
        j["length"] = e.tokens.size();
        if (set.targets) {
            j["label"] = pieces(p.expected);
            j["prediction"] = pieces(p.predicted);
        } else {
            j["label"] = e.label >= 0
                             ? nlohmann::ordered_json(set.labels[static_cast<std::size_t>(e.label)])
                             : nlohmann::ordered_json(nullptr);
            j["prediction"] = set.labels[static_cast<std::size_t>(p.prediction)];
        }
        j["correct"] = p.scored ? nlohmann::ordered_json(p.correct) : nullptr;
        j["attributes"] = attributes_json(e.attributes);
        lines += j.dump();
        lines += '\n';
    }
    nlohmann::ordered_json r;
    r["checkpoint"] = a.checkpoint;
    r["device"] = device_name(checked_device(a.device));
    r["data"] = set.source;
    r["examples"] = s.examples;
    r["scored"] = s.scored;
    r["metric"] = s.metric;
    // An unlabelled file (GLUE's test split) has predictions and no score: null, not 0.
    const auto score = [&](double v) {
        return s.scored > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
    };
    r[s.metric] = score(s.accuracy);
    // Class labels: macro F1 beside the metric, null like it when no row is labelled.
    if (s.macro_f1 >= 0 || (s.scored == 0 && !set.targets && !set.labels.empty()))
        r["macro_f1"] = score(s.macro_f1);
    r["loss"] = score(s.loss);
    if (causal)
        r["scoring"] = "answer after the prompt, teacher-forced argmax (= greedy exact match)";
    if (causal && objective == "birdie") r["birdie_layout"] = a.birdie_layout;
    if (!a.task_sets.empty()) r["task_sets"] = a.task_sets;
    r["predictions"] = a.out;
    write_texts_atomically({{a.out, lines}, {summary_path(a.out), r.dump(2) + "\n"}});
    return r;
}

int run_eval(const EvalArgs& a) {
    (void)checked_device(a.device);  // before any work: cuda is exit 2 with the reason
    // One source (docs/cli.md: --task T | --data FILE); given both, the file was dropped without
    // a word and the task scored, as dump refuses the pair.
    if (!a.task.empty() && !a.data.empty())
        throw ConfigError("--task and --data exclude each other: --task " + a.task +
                          " scores a built-in task's split, --data " + a.data + " a file");
    train::check_split_option(a.split_given, a.split, a.data, "scored whole");
    if (!a.task_sets.empty() && !a.data.empty())
        throw ConfigError("--task-set " + a.task_sets.front() +
                          ": it changes a built-in task's parameters (--task, or the "
                          "checkpoint's own task); --data " +
                          a.data + " is scored as it is");
    const std::vector<std::pair<std::string, std::string>> inputs = {
        {"--checkpoint", a.checkpoint}, {"--data", a.data}, {"--tokenizer", a.tokenizer}};
    refuse_overwriting_inputs({"--out", a.out}, inputs);
    refuse_overwriting_inputs({"--out (its summary)", summary_path(a.out)}, inputs);
    if (same_output_file(a.out, summary_path(a.out)))
        throw ConfigError("--out " + a.out + " and its summary " + summary_path(a.out) +
                          " name the same file (a link counts), and each needs its own");
    // Errors are thrown to main's handler (exit_codes.hpp); the inputs (checkpoint, tokenizer,
    // data) are read before inputs_read(), so an unreadable one is exit 2 and a failed write
    // exit 3.
    EvalInputs in = load_inputs(a);
    const std::string& objective = in.checkpoint.config.train.objective;
    nlohmann::ordered_json result;
    const bool per_example = !a.task.empty() || objective == "classify" ||
                             (in.checkpoint.config.data.task && a.data.empty());
    if (!per_example && !a.out.empty())
        // --out is the per-example form's (docs/cli.md): given a classification file, an MLM
        // checkpoint read its header and labels as text and wrote nothing at --out, exit 0.
        throw ConfigError("--out " + a.out + ": " + a.checkpoint + " has no classifier (train." +
                          "objective = " + objective +
                          "): per-example predictions need a fine-tuned classifier or a task "
                          "(train --init it on labelled data); without --out, eval --data gives "
                          "its loss on a corpus");
    if (per_example)
        result = evaluate_examples_command(a, in);
    else if (objective == "mlm" && a.data.empty())
        throw ConfigError("--data: the corpus to evaluate the MLM checkpoint on is required");
    else if (objective == "mlm")
        result = evaluate_mlm_command(a, in);
    else if (train::is_causal_objective(objective) && a.data.empty())
        throw ConfigError("--data: the corpus to evaluate the " + objective +
                          " checkpoint on is required (or --task for a task)");
    else if (train::is_causal_objective(objective))
        result = evaluate_causal_corpus_command(a, in);
    else
        throw ConfigError("train.objective: eval does not support '" + objective + "' yet");
    std::cout << result.dump() << std::endl;
    return kExitOk;
}

CommandRunner setup_eval(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "eval",
        "Evaluate a checkpoint: MLM on a corpus, or per example on a task / classification file");
    auto a = std::make_shared<EvalArgs>();
    add_device_option(cmd, a->device);
    cmd->add_option("--checkpoint", a->checkpoint, "Checkpoint (*.ckpt.h5)")->required();
    add_check_flags(cmd, a->check);
    cmd->add_option("--data", a->data,
                    "Corpus (MLM checkpoints) or classification file (TSV/CSV/JSONL, classifiers)");
    cmd->add_option("--task", a->task, "Built-in task to evaluate on (a task-trained checkpoint)");
    cmd->add_option("--split", a->split, "Task split: valid (default) | test | train");
    cmd->add_option("--out", a->out,
                    "Per-example predictions (JSON lines); the summary goes beside it as "
                    "<name>.summary.json");
    cmd->add_option(
        "--tokenizer", a->tokenizer,
        "Tokenizer file instead of the stored one: *.model (SentencePiece) or vocab.txt");
    cmd->add_option("--doc-sep", a->doc_sep,
                    "line | blank (default: the checkpoint's data.doc_sep)")
        ->check(CLI::IsMember({"line", "blank"}));
    cmd->add_option("--seq-len", a->seq_len, "Sequence length (default: the checkpoint's)")
        ->check(CLI::Range(2, 1 << 20));
    cmd->add_option("--batch-size", a->batch_size, "Sequences per batch")->check(kPositive);
    cmd->add_option("--batches", a->batches, "Evaluate only the first N batches (0 = all)")
        ->check(kNonNegative);
    cmd->add_option("--threads", a->threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    cmd->add_option("--birdie-layout", a->birdie_layout,
                    "Task scoring of a birdie checkpoint: the row layout of its prefix_lm arm "
                    "(default) or its next_token arm")
        ->check(CLI::IsMember({"prefix_lm", "next_token"}));
    cmd->add_option("--task-set", a->task_sets,
                    "KEY=VALUE: a data.task_params value of the split evaluated (repeatable), e.g. "
                    "min_entries=8 for longer phone books than training had");
    return [a, cmd]() {
        a->split_given = cmd->count("--split") > 0;
        // In a child process first (issue 25): a crash of libhdf5 on the file is a verdict.
        if (const int verdict = check_input(a->checkpoint, a->check)) return verdict;
        return run_eval(*a);
    };
}

const CommandRegistration registration{"eval", setup_eval};

}  // namespace
}  // namespace routescope::cli
