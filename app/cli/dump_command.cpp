// routescope-cli dump --checkpoint F (--task T | --data FILE) --out X.dump.h5 [--layers all|0,4,8]
//                     [--examples N] [--dtype f16|f32] [--gates] [--batch B] [--threads N]
//                     [--split test|validation|train] [--seed S] [--length L]
// Writes the activation dump (DUMP_FORMAT.md v1) of a checkpoint over
//   --task T     a built-in task's split (TASKS.md; its vocabulary, attributes, targets),
//   --data FILE  classification data (TSV / JSON Lines; labels optional), tokenized with the
//                checkpoint's tokenizer as [CLS] a [SEP] (b [SEP]),
//   neither      the checkpoint's held-out corpus (data.valid, or the held-out part of data.train
//                as training split it; builtin: corpora are regenerated from the run's seed).
// The engine (engine/io/activation_dump.hpp) streams batch by batch under a temporary name; this
// file gathers the examples, hashes the checkpoint and reports progress: a bar when stderr is a
// terminal, JSON lines {"event":"progress","done":n,"total":N} otherwise. Exit 0; 2 for a bad
// argument or unreadable input; 3 when writing fails (nothing is left under the --out name).
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "analysis/sha256.hpp"
#include "app/cli/command.hpp"
#include "engine/core/error.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/activation_dump.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "engine/train/builtin_corpus.hpp"
#include "engine/train/packed_sequences.hpp"

namespace routescope::cli {
namespace {

namespace fs = std::filesystem;

struct DumpArgs {
    std::string checkpoint, task, data, out, layers = "all", dtype = "f32", split = "test";
    std::int64_t examples = 0;
    std::uint64_t seed = 1;
    int length = 0;
    int batch = 8;
    int threads = 0;
    bool gates = false;
};

std::string file_sha256(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot read to hash");
    analysis::Sha256 h;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    return h.hex_digest();
}

std::int64_t limit(std::int64_t available, std::int64_t wanted) {
    return wanted > 0 ? std::min(available, wanted) : available;
}

// Everything a source needs to outlive the dump call.
struct PreparedSource {
    DumpSource source;
    std::shared_ptr<void> keep;
    std::string description;
};

PreparedSource task_source(const DumpArgs& a, const RunConfig& config) {
    data::TaskParams p;
    p.seed = a.seed;
    p.n_train = p.n_valid = p.n_test = 0;
    const std::int64_t n = a.examples > 0 ? a.examples : 1000;
    if (a.split == "train")
        p.n_train = n;
    else if (a.split == "validation")
        p.n_valid = n;
    else
        p.n_test = n;
    auto task = std::make_shared<data::TaskData>(data::generate_task(a.task, p));
    const auto& split = a.split == "train"        ? task->train
                        : a.split == "validation" ? task->valid
                                                  : task->test;
    if (static_cast<int>(task->vocab.size()) > config.model.vocab_size)
        throw ConfigError("--task " + a.task + ": the task's vocabulary has " +
                          std::to_string(task->vocab.size()) +
                          " ids, the checkpoint's model only " +
                          std::to_string(config.model.vocab_size));
    PreparedSource r;
    DumpSource& s = r.source;
    s.count = static_cast<std::int64_t>(split.size());
    for (const auto& e : split)
        s.length = std::max(s.length, static_cast<int>(e.input.size()));
    s.pad_id = data::kPadId;
    s.vocab = task->vocab;
    s.text = true;
    if (!split.empty())
        for (const auto& [name, value] : split.front().attributes)
            s.attributes.push_back(name);
    s.class_labels = task->n_classes > 0;
    s.token_targets = task->n_classes == 0;
    s.single_target = s.token_targets && task->metric == data::TaskMetric::Accuracy;
    const auto* examples = &split;
    const auto names = s.attributes;
    s.example = [task, examples, names](std::int64_t i) {
        const data::TaskExample& t = (*examples)[static_cast<std::size_t>(i)];
        DumpExample e;
        e.tokens = t.input;
        e.targets = t.targets;
        e.label = t.label;
        for (std::size_t k = 0; k < t.input.size(); ++k)
            e.text += (k ? " " : "") + task->vocab[static_cast<std::size_t>(t.input[k])];
        for (const auto& name : names) {
            const auto it = t.attributes.find(name);
            e.attributes.push_back(it == t.attributes.end() ? std::nan("") : it->second);
        }
        return e;
    };
    r.keep = task;
    r.description = "task " + a.task + " (" + a.split + ", seed " + std::to_string(a.seed) + ")";
    return r;
}

PreparedSource data_source(const DumpArgs& a, const RunConfig& config,
                           std::shared_ptr<data::Tokenizer> tokenizer) {
    auto set = std::make_shared<data::ClassificationSet>(
        data::read_classification(a.data, /*require_labels=*/false));
    const int L = std::min(a.length > 0 ? a.length : config.data.seq_len, config.model.max_len);
    const data::SpecialIds sp = tokenizer->specials();
    if (sp.cls < 0 || sp.sep < 0 || sp.pad < 0)
        throw ConfigError("--data: the checkpoint's tokenizer has no [CLS]/[SEP]/[PAD]");
    // Tokenized once up front (ids are small next to activations: 4 bytes per token).
    struct Encoded {
        std::vector<std::vector<std::int32_t>> ids, types;
    };
    auto enc = std::make_shared<Encoded>();
    const std::int64_t n = limit(static_cast<std::int64_t>(set->examples.size()), a.examples);
    int longest = 1;
    for (std::int64_t i = 0; i < n; ++i) {
        const auto& ex = set->examples[static_cast<std::size_t>(i)];
        std::vector<std::int32_t> ids{sp.cls}, types{0};
        for (auto id : tokenizer->encode(ex.text_a))
            ids.push_back(id), types.push_back(0);
        ids.push_back(sp.sep), types.push_back(0);
        if (ex.text_b) {
            for (auto id : tokenizer->encode(*ex.text_b))
                ids.push_back(id), types.push_back(1);
            ids.push_back(sp.sep), types.push_back(1);
        }
        if (static_cast<int>(ids.size()) > L) {  // truncated: keep the closing [SEP]
            ids.resize(static_cast<std::size_t>(L)), types.resize(static_cast<std::size_t>(L));
            ids.back() = sp.sep;
        }
        longest = std::max(longest, static_cast<int>(ids.size()));
        enc->ids.push_back(std::move(ids));
        enc->types.push_back(std::move(types));
    }
    PreparedSource r;
    DumpSource& s = r.source;
    s.count = n;
    s.length = longest;
    s.pad_id = sp.pad;
    s.vocab = tokenizer->vocabulary();
    s.text = true;
    s.attributes = {"line"};
    bool labelled = false;
    for (std::int64_t i = 0; i < n; ++i)
        labelled = labelled || set->examples[static_cast<std::size_t>(i)].label_id >= 0;
    s.class_labels = labelled;
    s.example = [set, enc](std::int64_t i) {
        const auto& ex = set->examples[static_cast<std::size_t>(i)];
        DumpExample e;
        e.tokens = enc->ids[static_cast<std::size_t>(i)];
        e.types = enc->types[static_cast<std::size_t>(i)];
        e.label = ex.label_id;
        e.text = ex.text_a + (ex.text_b ? " [SEP] " + *ex.text_b : "");
        e.attributes = {static_cast<double>(ex.line)};
        return e;
    };
    r.keep = set;
    r.description = a.data;
    return r;
}

PreparedSource corpus_source(const DumpArgs& a, const RunConfig& config,
                             std::shared_ptr<data::Tokenizer> tokenizer) {
    const int L = std::min(config.data.seq_len, config.model.max_len);
    auto set = std::make_shared<train::SequenceSet>();
    std::string description;
    std::error_code ec;
    if (config.data.valid && fs::exists(*config.data.valid, ec)) {
        *set = train::pack_documents(*config.data.valid, config.data.doc_sep, L, *tokenizer);
        description = *config.data.valid;
    } else {
        std::string train_path = config.data.train.value_or("builtin:grammar");
        std::string temp;
        if (train::is_builtin_corpus(train_path) || !fs::exists(train_path, ec)) {
            // The trainer writes builtin corpora from train.seed (engine/train/trainer.cpp); a
            // missing corpus falls back to the built-in grammar so a dump always has data.
            const std::string spec =
                train::is_builtin_corpus(train_path) ? train_path : "builtin:grammar";
            temp = (fs::temp_directory_path() /
                    ("routescope-dump-corpus-" + std::to_string(::getpid()) + ".txt"))
                       .string();
            train::write_builtin_corpus(spec, temp, static_cast<std::uint64_t>(config.train.seed));
            description = spec + " (held-out part)";
            train_path = temp;
        } else {
            description = train_path + " (held-out part)";
        }
        train::PackedCorpus packed =
            train::pack_corpus(train_path, nullptr, config.data.doc_sep, L, *tokenizer);
        if (!temp.empty()) fs::remove(temp, ec);
        *set = std::move(packed.valid);
    }
    PreparedSource r;
    DumpSource& s = r.source;
    s.count = limit(set->size(), a.examples);
    s.length = L;
    s.pad_id = tokenizer->specials().pad;
    s.vocab = tokenizer->vocabulary();
    s.text = true;
    s.example = [set, tokenizer](std::int64_t i) {
        DumpExample e;
        const std::int32_t* ids = set->ids(i);
        e.tokens.assign(ids, ids + set->length(i));
        e.text = tokenizer->decode(e.tokens);
        return e;
    };
    r.keep = set;
    r.description = description;
    return r;
}

// A bar on a terminal, JSON lines (at most one per percent) otherwise.
std::function<void(std::int64_t, std::int64_t)> progress_reporter() {
    const bool tty = ::isatty(STDERR_FILENO) == 1;
    auto last = std::make_shared<std::int64_t>(-1);
    return [tty, last](std::int64_t done, std::int64_t total) {
        const std::int64_t percent = 100 * done / total;
        if (percent == *last && done != total) return;
        *last = percent;
        if (tty) {
            const int width = 40, filled = static_cast<int>(width * done / total);
            std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, ' ')
                      << "] " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
        } else {
            std::cerr
                << nlohmann::json{{"event", "progress"}, {"done", done}, {"total", total}}.dump()
                << std::endl;
        }
    };
}

int run_dump(const DumpArgs& a) {
    const auto fail = [](int code, const std::string& what) {
        std::cerr << "routescope-cli dump: error: " << what << "\n";
        return code;
    };
    if (!a.task.empty() && !a.data.empty())
        return fail(kExitUsage, "--task and --data exclude each other");
    if (a.dtype != "f16" && a.dtype != "f32")
        return fail(kExitUsage, "--dtype: '" + a.dtype + "' is not f16 or f32");
    if (a.split != "test" && a.split != "validation" && a.split != "train")
        return fail(kExitUsage, "--split: '" + a.split + "' is not test, validation or train");
    Checkpoint ck;
    PreparedSource src;
    ActivationDumpOptions o;
    try {
        ck = read_checkpoint(a.checkpoint);
        const RunConfig& config = ck.config;
        // Checked before any data is prepared: the answer does not depend on it.
        if (a.gates && !models::Model::has_gates(config.model))
            throw ConfigError("--gates: " + a.checkpoint + " is a '" + config.model.arch +
                              "' model, which has no gates to dump (gates exist for bigs: u_f, "
                              "u_b, v)");
        o.layers = parse_dump_layers(a.layers, config.model.n_layers);
        std::shared_ptr<data::Tokenizer> tokenizer =
            data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
        if (!a.task.empty())
            src = task_source(a, config);
        else if (!a.data.empty())
            src = data_source(a, config, tokenizer);
        else
            src = corpus_source(a, config, tokenizer);
        if (src.source.count < 1) throw ConfigError("dump: the data has no examples");
        o.checkpoint_sha256 = file_sha256(a.checkpoint);
    } catch (const Error& e) {
        return fail(kExitUsage, e.what());
    }
    o.checkpoint = fs::absolute(a.checkpoint).lexically_normal().string();
    o.name = fs::path(a.checkpoint).filename().string() + " on " + src.description;
    o.producer = "routescope-cli dump";
    o.float16 = a.dtype == "f16";
    o.gates = a.gates;
    o.batch = a.batch;
    o.threads = a.threads;
    o.progress = progress_reporter();
    ActivationDumpSummary s;
    try {
        s = write_activation_dump(ck.config, ck.params, src.source, a.out, o);
    } catch (const ConfigError& e) {
        return fail(kExitUsage, e.what());
    } catch (const FormatError& e) {
        return fail(kExitUsage, e.what());
    } catch (const Error& e) {
        return fail(kExitFailure, e.what());
    }
    nlohmann::ordered_json r;
    r["event"] = "done";
    r["out"] = a.out;
    r["examples"] = s.examples;
    r["length"] = src.source.length;
    r["layers"] = o.layers;
    r["bytes"] = s.file_bytes;
    r["seconds"] = s.seconds;
    r["checkpoint_sha256"] = o.checkpoint_sha256;
    std::cout << r.dump() << std::endl;
    return kExitOk;
}

CommandRunner setup_dump(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "dump", "Write the activation dump (hidden states, gates, kernels) of a checkpoint");
    auto a = std::make_shared<DumpArgs>();
    cmd->add_option("--checkpoint", a->checkpoint, "Checkpoint (*.ckpt.h5)")->required();
    cmd->add_option("--out", a->out, "Output dump (*.dump.h5)")->required();
    cmd->add_option("--task", a->task,
                    "Built-in task: induction, phone-book, copying, selective-copying, "
                    "gap-matching, attractors");
    cmd->add_option("--data", a->data, "Classification data (*.tsv, *.jsonl)");
    cmd->add_option("--layers", a->layers, "all, or layer indices 0,4,8 (0 = embeddings)");
    cmd->add_option("--examples", a->examples,
                    "Number of examples (0 = all; a task generates 1000 by default)");
    cmd->add_option("--dtype", a->dtype, "f32 or f16 for the float datasets");
    cmd->add_flag("--gates", a->gates, "Also write the blocks' gates (bigs: u_f, u_b, v)");
    cmd->add_option("--batch", a->batch, "Examples per forward")->check(CLI::Range(1, 4096));
    cmd->add_option("--threads", a->threads, "Threads (0 = all cores)");
    cmd->add_option("--split", a->split, "Task split: test (default), validation, train");
    cmd->add_option("--seed", a->seed, "Task seed");
    cmd->add_option("--length", a->length,
                    "--data: truncate examples to this many tokens (default data.seq_len)");
    return [a]() { return run_dump(*a); };
}

const CommandRegistration registration{"dump", setup_dump};

}  // namespace
}  // namespace routescope::cli
