// routescope-cli dump --checkpoint F (--task T | --data FILE) --out X.dump.h5 [--layers all|0,4,8]
//                     [--examples N] [--dtype f16|f32] [--gates] [--attention] [--batch B]
//                     [--threads N]
//                     [--split valid|test|train] [--seed S] [--length L] [--prefix-fraction F]
// Writes the activation dump (DUMP_FORMAT.md v1) of a checkpoint over
//   --task T     a built-in task's split (TASKS.md) from the checkpoint's data.task_params, for a
//                checkpoint trained on that task (its vocabulary is the task's), as eval does,
//   --data FILE  classification data (TSV / JSON Lines; labels optional), framed as fine-tuning
//                frames it ([CLS] a [SEP] (b [SEP]), longest sentence cut first),
//   neither      the checkpoint's own task (data.task), else its held-out corpus (data.valid, or
//                the held-out part of data.train as training split it; builtin: corpora are
//                regenerated from the run's seed).
// The engine (engine/io/activation_dump.hpp) streams batch by batch under a temporary name; this
// file gathers the examples, hashes the checkpoint and reports progress: a bar when stderr is a
// terminal, JSON lines {"event":"progress","done":n,"total":N} otherwise. Exit 0; 2 for a bad
// argument or unreadable input; 3 when writing fails (nothing is left under the --out name).
//
// Under mpirun / srun with N ranks (docs/scaling.md): every rank reads the checkpoint and the data,
// rank r writes examples [S·r/N, S·(r+1)/N) into its shard X.rank<r>.dump.h5, and rank 0 then
// writes X.dump.h5 as HDF5 virtual datasets over the shards (engine/io/sharded_dump.hpp), which
// every reader takes as one dump. A rank that fails makes all exit with an error.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/command.hpp"
#include "app/cli/device_option.hpp"
#include "app/cli/input_check.hpp"
#include "app/cli/output_guard.hpp"
#include "app/cli/rank_agreement.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/dist/communicator.hpp"
#include "engine/io/activation_dump.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/output_lock.hpp"
#include "engine/io/sha256.hpp"
#include "engine/io/sharded_dump.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/models/model.hpp"
#include "engine/train/answer_scoring.hpp"
#include "engine/train/builtin_corpus.hpp"
#include "engine/train/causal_capability.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/packed_sequences.hpp"
#include "engine/train/run_inputs.hpp"
#include "engine/train/stop_signal.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::cli {
namespace {

namespace fs = std::filesystem;

struct DumpArgs {
    std::string device = "cpu";
    std::string checkpoint, task, data, out, layers = "all", dtype = "f32", split = "valid";
    std::string birdie_layout = "prefix_lm";  ///< --birdie-layout (birdie checkpoints on a task)
    std::int64_t examples = 0;
    std::optional<std::uint64_t> seed;  ///< --seed; unset: the checkpoint's
    int length = 0;
    double prefix_fraction = -1;
    int batch = 8;
    int threads = 0;
    bool gates = false;
    bool attention = false;
    bool split_given = false;  ///< --split on the command line (its default chooses nothing)
    InputCheck check;          ///< --check / --no-check: the contained check of --checkpoint
};

std::int64_t limit(std::int64_t available, std::int64_t wanted) {
    return wanted > 0 ? std::min(available, wanted) : available;
}

// The id a dump pads its rows with: the tokenizer's [PAD], as training padded them (pretraining's
// packed sequences, fine-tuning's batches); 0 for a tokenizer without one, as training uses. Rows
// of --data were padded with 0 whatever the tokenizer: with a SentencePiece model whose [PAD] is
// 3 (0 its <unk>), a model that reads the padding (gMLP) gave other states than for the same row
// of the held-out dump.
std::int32_t trained_pad(const data::Tokenizer& tokenizer) {
    return std::max(0, tokenizer.specials().pad);
}

// Everything a source needs to outlive the dump call.
struct PreparedSource {
    DumpSource source;
    std::shared_ptr<void> keep;
    std::string description;
};

// A labelled set (a task split or a classification file, framed as fine-tuning and eval frame
// them: engine/train/labelled_set.hpp) as a dump source, its rows padded with `pad`.
// `resets`: each example's reset flags (DumpExample::reset), or none.
PreparedSource labelled_source(train::LabelledSet set, std::int64_t examples,
                               std::vector<std::string> vocab, bool class_labels, bool file_lines,
                               int pad_to, std::int32_t pad,
                               std::vector<std::vector<std::int32_t>> row_resets = {}) {
    auto keep = std::make_shared<train::LabelledSet>(std::move(set));
    auto resets =
        row_resets.empty()
            ? nullptr
            : std::make_shared<std::vector<std::vector<std::int32_t>>>(std::move(row_resets));
    if (examples > 0 && static_cast<std::int64_t>(keep->examples.size()) > examples)
        keep->examples.resize(static_cast<std::size_t>(examples));
    PreparedSource r;
    DumpSource& s = r.source;
    s.count = static_cast<std::int64_t>(keep->examples.size());
    s.length = std::max({1, keep->max_length(), pad_to});
    s.pad_id = pad;
    s.text = true;
    if (!keep->examples.empty())
        for (const auto& [name, value] : keep->examples.front().attributes)
            s.attributes.push_back(name);
    if (file_lines) s.attributes.push_back("line");
    s.class_labels = class_labels;
    s.token_targets = keep->targets;
    s.single_target = keep->targets && keep->metric == data::TaskMetric::Accuracy;
    auto pieces = std::make_shared<std::vector<std::string>>(std::move(vocab));
    s.vocab = *pieces;
    const auto names = s.attributes;
    s.example = [keep, pieces, names, file_lines, resets](std::int64_t i) {
        const train::LabelledExample& x = keep->examples[static_cast<std::size_t>(i)];
        DumpExample e;
        e.tokens = x.tokens;
        e.types = x.types;
        e.targets = x.targets;
        if (resets) e.reset = (*resets)[static_cast<std::size_t>(i)];
        e.label = x.label;
        for (std::size_t k = 0; k < x.tokens.size(); ++k) {
            const auto id = static_cast<std::size_t>(x.tokens[k]);
            e.text += (k ? " " : "") + (id < pieces->size() ? (*pieces)[id] : "?");
        }
        for (std::size_t k = 0; k + (file_lines ? 1 : 0) < names.size(); ++k) {
            const auto it = x.attributes.find(names[k]);
            e.attributes.push_back(it == x.attributes.end() ? std::nan("") : it->second);
        }
        if (file_lines) e.attributes.push_back(static_cast<double>(x.line));
        return e;
    };
    r.description = keep->source;
    return r;
}

// A causal checkpoint (train.objective clm, prefix_lm or birdie) writes a task's answer after
// its prompt; it never saw the [MASK] an MLM row puts there. Each example becomes the row eval
// scores (engine/train/answer_scoring.hpp): the completed example (for birdie, the layout of the
// arm `layout` names, one position longer), its targets at the positions whose next-token logits
// predict the answer; returns each row's reset flags. `vocab` gains Birdie's pieces for its extra
// ids.
std::vector<std::vector<std::int32_t>> as_answer_rows(train::LabelledSet& set,
                                                      const std::string& objective,
                                                      const std::string& layout,
                                                      const data::BirdieVocabulary& birdie,
                                                      std::vector<std::string>& vocab) {
    std::vector<std::vector<std::int32_t>> resets;
    if (objective == "birdie" && static_cast<std::int32_t>(vocab.size()) == birdie.base)
        for (std::int32_t id = birdie.base; id < birdie.size(); ++id)
            vocab.push_back(data::birdie_piece(birdie, id));
    for (train::LabelledExample& e : set.examples) {
        const auto [first, last] = train::answer_span(e.targets);
        if (first < 1) {  // no answer: the example stays as it is, unscored
            resets.emplace_back();
            continue;
        }
        const std::vector<std::int32_t> sequence = train::completed_sequence(e.tokens, e.targets);
        const int L = static_cast<int>(sequence.size()) + 1;
        std::vector<std::int32_t> tokens(L), labels(L), reset(L);
        const std::int32_t n = train::answer_row(
            objective, sequence, first, last, birdie,
            {tokens.data(), labels.data(), reset.data(), L}, nullptr,
            layout == "next_token" ? data::Paradigm::next_token : data::Paradigm::prefix_lm);
        e.tokens.assign(tokens.begin(), tokens.begin() + n);
        e.targets.assign(labels.begin(), labels.begin() + n);
        e.types.assign(static_cast<std::size_t>(n), 0);
        resets.emplace_back(reset.begin(), reset.begin() + n);
    }
    return resets;
}

// --task T (or the checkpoint's own data.task): the split regenerated from the checkpoint's
// data.task_params (example i of a split depends only on (seed, split, i), so --examples only
// sizes the split), as `routescope-cli eval` does, and scored as eval scores it: a causal
// checkpoint's rows are its answer rows.
PreparedSource task_source(const DumpArgs& a, const RunConfig& config,
                           const data::Tokenizer& tokenizer) {
    const std::string name = !a.task.empty() ? a.task : config.data.task.value_or("");
    train::TaskSplit t =
        train::task_split(config, tokenizer, name, a.split, a.checkpoint, a.seed, a.examples);
    std::vector<std::string> vocab = t.task.vocab;
    std::vector<std::vector<std::int32_t>> resets;
    if (t.set.targets && train::is_causal_objective(config.train.objective))
        resets = as_answer_rows(t.set, config.train.objective, a.birdie_layout,
                                data::BirdieVocabulary{tokenizer.vocab_size()}, vocab);
    PreparedSource r = labelled_source(
        std::move(t.set), a.examples, std::move(vocab), t.task.n_classes > 0, /*file_lines=*/false,
        train::trained_row_length(config), trained_pad(tokenizer), std::move(resets));
    // --seed drew other examples than the checkpoint's data.task_params.seed (its /model/config):
    // the dump's name says which seed made them.
    if (a.seed) r.description += " seed " + std::to_string(*a.seed);
    return r;
}

// --data FILE: a classifier's labels are its data.labels; another model's come from the file.
// A text corpus (a .txt file or a directory, TextCorpus's formats: a line per document, blank-line
// separated as the checkpoint's data.doc_sep says, WikiExtractor's articles) gives one example
// per document, [CLS] document [SEP] cut to the length: sentences from Wikipedia for an
// anisotropy or PCA study of a pretrained model.
PreparedSource data_source(const DumpArgs& a, const RunConfig& config,
                           const data::Tokenizer& tokenizer) {
    const int wanted = a.length > 0 ? a.length : config.data.seq_len;
    const int L = std::min(wanted, config.model.max_len);
    // A length too short for the file's examples is said of what set it (--length was said to be
    // data.seq_len, a key the person never gave).
    const char* setting = wanted > config.model.max_len ? "model.max_len"
                          : a.length > 0                ? "--length"
                                                        : "data.seq_len";
    train::LabelledSet set =
        train::classification_file(config, tokenizer, a.data, L, a.checkpoint,
                                   /*require_classifier=*/false, a.examples, setting);
    bool labelled = false;
    for (const auto& e : set.examples)
        labelled = labelled || e.label >= 0;
    // Rows padded as the checkpoint's run padded them (train::trained_row_length), or to
    // --length, for a model whose blocks read the padding: its states at the real positions
    // depend on the row's length, which must not be the longest document's of the file.
    const int rows = a.length > 0 ? (train::row_length_matters(config.model) ? L : 0)
                                  : train::trained_row_length(config);
    return labelled_source(std::move(set), a.examples, tokenizer.vocabulary(), labelled,
                           /*file_lines=*/data::classification_format(a.data).has_value(), rows,
                           trained_pad(tokenizer));
}

PreparedSource corpus_source(const DumpArgs& a, const RunConfig& config,
                             std::shared_ptr<data::Tokenizer> tokenizer) {
    const int L = std::min(config.data.seq_len, config.model.max_len);
    auto set = std::make_shared<train::SequenceSet>();
    std::string description;
    std::error_code ec;
    // The checkpoint's own corpus, which a run may have moved or deleted since: said, naming the
    // key and the file (a missing data.valid fell back to data.train's held-out part, a missing
    // data.train to the built-in grammar, exit 0, with nothing on stderr).
    const auto need = [&](const std::string& key, const std::string& path) {
        if (!fs::exists(path, ec))
            throw ConfigError("the checkpoint's " + key + " " + path +
                              " (its held-out corpus, what dump reads without --data or --task) "
                              "does not exist: give --data FILE or --task NAME");
    };
    if (config.data.valid) need("data.valid", *config.data.valid);
    // The checkpoint's corpus is an input as --data is: an output inside its folder would be
    // read as part of it by the run's next resume (an HDF5 dump read as text).
    for (const auto& [key, path] :
         {std::pair{"data.valid", config.data.valid}, std::pair{"data.train", config.data.train}})
        if (path && !train::is_builtin_corpus(*path))
            refuse_overwriting_inputs(
                {"--out", a.out}, {{std::string("--data (the checkpoint's ") + key + ")", *path}});
    if (config.data.valid) {
        *set = train::pack_documents(*config.data.valid, config.data.doc_sep, L, *tokenizer);
        description = *config.data.valid;
    } else {
        // A checkpoint without a corpus (an imported model, a task run's) dumps the built-in
        // grammar (docs/cli.md).
        std::string train_path = config.data.train.value_or("builtin:grammar");
        std::string temp;
        if (!train::is_builtin_corpus(train_path)) need("data.train", train_path);
        if (train::is_builtin_corpus(train_path)) {
            // The trainer writes builtin corpora from train.seed (engine/train/trainer.cpp).
            const std::string spec = train_path;
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
    s.pad_id = trained_pad(*tokenizer);
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
            std::cerr << nlohmann::ordered_json{{"event", "progress"},
                                                {"done", done},
                                                {"total", total}}
                             .dump()
                      << std::endl;
        }
    };
}

// The ranks of a sharded dump agree after each phase: a failing rank rethrows its error, the others
// stop with one naming it (every rank then exits through main's handler, none waits).
void agree(std::exception_ptr error, const char* phase, bool setup = false) {
    dist::Communicator& w = dist::world();
    if (w.size() == 1) {
        if (error) std::rethrow_exception(error);
        return;
    }
    const int failed = agree_on_failure(w, error);
    if (failed < 0) return;
    const std::string what = "rank " + std::to_string(failed) + " of " + std::to_string(w.size()) +
                             " failed " + phase + " (its message says why); every rank stops";
    // While the inputs are read, a rank fails on a bad input or option (exit 2), and every rank
    // exits as it does, as train's setup does (rank 0 exited 3 while rank 1 exited 2, so the
    // job's status depended on which rank ended first); later failures are run-time ones (3).
    if (setup) throw ConfigError(what);
    throw RuntimeFailure(what);
}

int run_dump(const DumpArgs& a);

// `verdict` and `report`: the input check of --checkpoint, made before MPI starts (its child is
// forked first). Under mpirun the ranks agree on it, as train's do: a rank whose file failed the
// check exited 2 with no word (only rank 0 prints a report) and left the others waiting in the
// dump's first collective.
int run_dump_on_ranks(const DumpArgs& a, int verdict, const std::string& report) {
    dist::WorldScope world_scope;
    dist::Communicator& w = dist::world();
    if (w.size() == 1) {
        std::cerr << report << std::flush;
        return verdict ? verdict : run_dump(a);
    }
    const int failed = agree_on_failure(w, nullptr, report);
    if (verdict) return verdict;
    if (failed >= 0)
        throw ConfigError("rank " + std::to_string(failed) + " of " + std::to_string(w.size()) +
                          " could not open its --checkpoint (its message says why); every rank "
                          "stops");
    return run_dump(a);
}

int run_dump(const DumpArgs& a) {
    const Device device = checked_device(a.device);  // cuda: exit 2 with the reason
    // Errors are thrown to main's handler (exit_codes.hpp).
    std::exception_ptr setup_error;
    std::optional<Checkpoint> ck_read;
    PreparedSource src;
    ActivationDumpOptions o;
    std::unique_ptr<OutputFileLock> out_lock;  // rank 0's, until the dump is in place
    std::optional<TemporaryFileGuard> unlink_lock_on_signal;  // main's handler, before ours
    try {
        if (!a.task.empty() && !a.data.empty())
            throw ConfigError("--task and --data exclude each other");
        train::check_split_option(a.split_given, a.split, a.data, "dumped whole");
        // data.task_params.seed's range (docs/config.md), as train --set and eval --task-set
        // check it: -1 was read as 2^64 − 1, a split eval cannot regenerate.
        if (a.seed &&
            *a.seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            throw ConfigError(
                "--seed: must lie in [0, 9223372036854775807] (data.task_params.seed)");
        refuse_overwriting_inputs({"--out", a.out},
                                  {{"--checkpoint", a.checkpoint}, {"--data", a.data}});
        // One dump of a name at a time: two sharded dumps of one --out replaced each other's
        // shards under their masters (one job's file held the other's examples, or zeros).
        (void)atomic_write_target(a.out);  // not a device or a FIFO (before its lock beside it)
        if (dist::world().rank() == 0) {
            bool held = false;
            try {
                out_lock = OutputFileLock::try_take(a.out);
                held = !out_lock;
                if (out_lock) unlink_lock_on_signal.emplace(OutputFileLock::path_for(a.out));
            } catch (const IoError&) {  // no directory to write in: the writer says so below
            }
            if (held)
                throw ConfigError("--out " + a.out +
                                  ": another dump is writing this file (it holds " +
                                  OutputFileLock::path_for(a.out) +
                                  "); wait for it to end, or choose another --out");
        }
        if (a.dtype != "f16" && a.dtype != "f32")
            throw ConfigError("--dtype: '" + a.dtype + "' is not f16 or f32");
        ck_read = read_checkpoint(a.checkpoint, CheckpointRead::without_values);
        const RunConfig& config = ck_read->config;
        // Checked before any data is prepared: the answer does not depend on it.
        if (a.gates && !models::Model::has_gates(config.model))
            throw ConfigError("--gates: " + a.checkpoint + " is a '" + config.model.arch +
                              "' model, which has no gates to dump (gates exist for bigs: u_f, "
                              "u_b, v; birdie: f, i, z, o; gmlp: spatial_gate; slstm: i, l, r, "
                              "f, s, o, sentence_weight)");
        if (a.attention && config.model.arch != "bert" && config.model.arch != "gated_att")
            throw ConfigError("--attention: " + a.checkpoint + " is a '" + config.model.arch +
                              "' model, which has no attention probabilities to dump (bert and "
                              "gated_att have; an SSM layer's implicit attention comes from "
                              "`analyze implicit-attention` on a dump with --gates)");
        o.layers = parse_dump_layers(a.layers, config.model.n_layers);
        // --length cuts a --data file's examples; longer than the model's positions it was cut
        // to model.max_len without a word, and with a task or a corpus it did nothing.
        if (a.length > config.model.max_len)
            throw ConfigError("--length " + std::to_string(a.length) + ": " + a.checkpoint +
                              " reads at most model.max_len = " +
                              std::to_string(config.model.max_len) + " tokens");
        if (a.length > 0 && a.data.empty())
            throw ConfigError(
                "--length cuts the examples of a --data file; a task's examples "
                "have the task's lengths, a corpus's data.seq_len");
        std::shared_ptr<data::Tokenizer> tokenizer =
            train::checkpoint_tokenizer(*ck_read, a.checkpoint);
        if (a.split_given && a.task.empty() && a.data.empty() && !config.data.task)
            throw ConfigError("--split " + a.split +
                              ": it chooses a built-in task's split (--task, or the checkpoint's "
                              "own task); " +
                              a.checkpoint +
                              " was not trained on a task, and its held-out corpus is dumped "
                              "whole");
        if (!a.task.empty() || (a.data.empty() && config.data.task))
            src = task_source(a, config, *tokenizer);
        else if (!a.data.empty())
            src = data_source(a, config, *tokenizer);
        else
            src = corpus_source(a, config, tokenizer);
        if (src.source.count < 1) throw ConfigError("dump: the data has no examples");
    } catch (...) {
        setup_error = std::current_exception();
    }
    agree(setup_error, "while reading the inputs", /*setup=*/true);
    // Read without its values: they go straight from the file into the dump's model, one tensor at
    // a time (a published-size checkpoint is never held in host memory beside the model).
    const Checkpoint& ck = *ck_read;
    const auto load = [&](ParamStore& store) { read_params_into(a.checkpoint, ck.layout, store); };
    dist::Communicator& w = dist::world();
    const int ranks = w.size(), rank = w.rank();
    o.checkpoint_sha256 = sha256_file(a.checkpoint);
    if (ranks > 1) {
        // Every rank must read the same checkpoint and data, as train's ranks must (docs/
        // scaling.md): a node with a stale copy wrote its block from another model, and the
        // master, naming rank 0's checkpoint alone, mixed two models' activations.
        const std::vector<std::pair<std::string, std::string>> parts{
            {"checkpoint " + a.checkpoint, o.checkpoint_sha256},
            {"--data " + a.data, a.data.empty() ? std::string() : sha256_file(a.data)},
            {"examples (their number and length)",
             std::to_string(src.source.count) + "x" + std::to_string(src.source.length)}};
        for (const auto& [what, value] : parts) {
            const auto all = dist::gather_all<std::uint64_t>(w, dist::fnv1a(value));
            for (std::size_t r = 1; r < all.size(); ++r)
                if (all[r] != all[0]) {
                    if (rank != 0) quiet_error_message();
                    throw ConfigError("dump: rank " + std::to_string(r) + "'s " + what +
                                      " differs from rank 0's (every rank must read the same "
                                      "checkpoint and data files)");
                }
        }
    }
    // After the ranks compared their counts: a rank that left here alone (a node's shorter file)
    // left the others waiting in the comparison for ever, with nothing printed.
    if (src.source.count < ranks) {
        if (rank != 0) quiet_error_message();  // every rank stops; rank 0 says why, once
        throw ConfigError("dump: " + std::to_string(src.source.count) + " examples for " +
                          std::to_string(ranks) + " ranks (each rank writes at least one)");
    }
    inputs_read();
    o.checkpoint = fs::absolute(a.checkpoint).lexically_normal().string();
    o.name = fs::path(a.checkpoint).filename().string() + " on " + src.description;
    o.producer = "routescope-cli dump";
    o.float16 = a.dtype == "f16";
    o.gates = a.gates;
    o.attention = a.attention;
    o.batch = a.batch;
    o.prefix_fraction = a.prefix_fraction;
    o.threads = a.threads;
    o.device = device;
    // Ctrl-C / SIGTERM (even when the shell started us with SIGINT ignored): the next batch
    // boundary throws Interrupted; DumpWriter removes its temporary; exit 130, nothing under --out.
    std::optional<train::StopSignal> signals(std::in_place);
    train::StopSignal::reset();
    // Under N ranks the progress printed is rank 0's, of its own block, scaled to the whole dump
    // (the blocks differ by one example at most): it said "done 3, total 3" of a 7-example dump.
    o.progress = [report = rank == 0 ? progress_reporter() : decltype(progress_reporter())(),
                  out = a.out, all = src.source.count,
                  ranks](std::int64_t done, std::int64_t total) {
        if (report) {
            if (ranks > 1 && total > 0)
                report(done == total ? all : std::min(all, done * all / total), all);
            else
                report(done, total);
        }
        if (train::StopSignal::requested())
            throw Interrupted("dump interrupted after " + std::to_string(done) + " of " +
                              std::to_string(total) + " examples; nothing written to " + out);
    };
    const std::int64_t total = src.source.count;
    std::vector<std::int64_t> counts;
    std::vector<std::string> shards;
    for (int r = 0; r < ranks; ++r) {
        counts.push_back(total * (r + 1) / ranks - total * r / ranks);
        shards.push_back(dump_shard_path(a.out, r));
        if (ranks > 1)  // the same on every rank: each refuses before writing anything
            refuse_overwriting_inputs(
                {"--out (its shard for rank " + std::to_string(r) + ")", shards.back()},
                {{"--checkpoint", a.checkpoint}, {"--data", a.data}});
    }
    ActivationDumpSummary s;
    if (ranks == 1) {
        s = write_activation_dump(ck.config, load, src.source, a.out, o);
    } else {
        // This rank's block of examples, written as a complete dump of its own.
        const std::int64_t first = total * rank / ranks;
        DumpSource mine = src.source;
        mine.count = counts[static_cast<std::size_t>(rank)];
        const auto all = src.source.example;
        mine.example = [all, first](std::int64_t i) { return all(first + i); };
        // Every file is written under a staged name first and renamed into place only once all
        // are written: a rerun that fails (a rank's disk full, a signal) leaves the previous
        // dump of this --out, master and shards, as it was. Renaming each shard as it was done
        // replaced rank 0's old shard, and the failure then removed the new ones: the old master
        // read zeros.
        std::vector<std::string> staged;
        for (const auto& shard : shards)
            staged.push_back(staged_shard_path(shard));
        const std::string& my_stage = staged[static_cast<std::size_t>(rank)];
        const TemporaryFileGuard unlink_stage_on_signal(my_stage);
        std::optional<TemporaryFileGuard> unlink_master_on_signal;
        std::string master_temp;
        std::error_code ec;
        std::exception_ptr error;
        try {
            s = write_activation_dump(ck.config, load, mine, my_stage, o);
        } catch (...) {
            // Said of the shard and --out: the staged name is hidden and not the user's (a full
            // disk named ".X.rank0.dump.h5.staged").
            error = name_shard_in_error(std::current_exception(), a.out, rank);
        }
        std::exception_ptr master_error, commit_error;
        try {
            // Waiting for the other ranks to finish their shards, a signal ends this rank at once
            // through main's handler (its staged shard and the lock are registered and go): a
            // rank killed meanwhile leaves the others in this collective until the launcher's
            // SIGTERM, and then its SIGKILL a second later, which left the finished staged shard
            // and the lock behind. The flag is read again for the renames that follow.
            const bool stop_asked = train::StopSignal::requested();
            signals.reset();
            if (stop_asked && !error)
                error = std::make_exception_ptr(
                    Interrupted("dump interrupted; nothing written to " + a.out));
            agree(error, "while writing its shard");
            signals.emplace();
            if (rank == 0) try {
                    master_temp = write_staged_dump_master(a.out, shards, staged, counts);
                    unlink_master_on_signal.emplace(master_temp);
                } catch (...) {
                    master_error = std::current_exception();
                }
            agree(master_error, "while writing the master file");
            // All written: each rank's shard, then the master, into place.
            fs::rename(my_stage, shards[static_cast<std::size_t>(rank)], ec);
            if (ec)
                commit_error = std::make_exception_ptr(IoError(
                    shards[static_cast<std::size_t>(rank)] +
                    ": cannot rename the finished shard into place (" + ec.message() + ")"));
            agree(commit_error, "while renaming its shard into place");
            if (rank == 0) {
                fs::rename(master_temp, a.out, ec);
                if (ec)
                    throw IoError(a.out + ": cannot rename the finished dump into place (" +
                                  ec.message() + ")");
            }
        } catch (...) {  // nothing of this job's is left: its staged shard and master go
            fs::remove(my_stage, ec);
            if (!master_temp.empty()) fs::remove(master_temp, ec);
            throw;
        }
        if (rank != 0) return kExitOk;
        s.examples = total;
        s.file_bytes = 0;
        for (const auto& f : shards)
            s.file_bytes += fs::file_size(f, ec);
        s.file_bytes += fs::file_size(a.out, ec);
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
    if (ranks > 1) r["shards"] = shards;
    std::cout << r.dump() << std::endl;
    return kExitOk;
}

CommandRunner setup_dump(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "dump", "Write the activation dump (hidden states, gates, kernels) of a checkpoint");
    auto a = std::make_shared<DumpArgs>();
    add_device_option(cmd, a->device);
    cmd->add_option("--checkpoint", a->checkpoint, "Checkpoint (*.ckpt.h5)")->required();
    add_check_flags(cmd, a->check);
    cmd->add_option("--out", a->out, "Output dump (*.dump.h5)")->required();
    cmd->add_option("--task", a->task,
                    "Built-in task: induction, phone-book, copying, selective-copying, "
                    "gap-matching, attractors");
    cmd->add_option("--data", a->data,
                    "Classification data (*.tsv, *.csv, *.jsonl) or a text corpus (a file or "
                    "directory: one example per document, cut to --length)");
    cmd->add_option("--layers", a->layers, "all, or layer indices 0,4,8 (0 = embeddings)");
    cmd->add_option("--examples", a->examples,
                    "Number of examples (0 = all of the corpus, file or task split; a task's "
                    "split holds its data.task_params size: 200 valid or test, 1000 train by "
                    "default)")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                long long v = 0;  // -2 was taken as "all"
                return CLI::detail::lexical_cast(text, v) && v >= 0 ? std::string()
                                                                    : "0 (all) or more";
            },
            ">= 0"));
    cmd->add_option("--dtype", a->dtype, "f32 or f16 for the float datasets");
    cmd->add_flag("--gates", a->gates,
                  "Also write the blocks' gates (bigs: u_f, u_b, v; birdie: f, i, z, o; gmlp: "
                  "spatial_gate; slstm: i, l, r, f, s, o, sentence_weight)");
    cmd->add_flag("--attention", a->attention,
                  "Also write each attention block's probabilities, /layers/<l>/attention "
                  "[S, heads, L, L] (bert, gated_att; S·heads·L² values per layer)");
    cmd->add_option("--batch", a->batch, "Examples per forward")->check(CLI::Range(1, 4096));
    cmd->add_option("--threads", a->threads, "Threads (0 = all cores)")
        ->check(CLI::Range(0, kMaxThreads));
    cmd->add_option("--split", a->split, "Task split: valid (default), test, train");
    cmd->add_option("--seed", a->seed, "Task seed (default: the checkpoint's data.task_params)");
    cmd->add_option("--length", a->length,
                    "--data: truncate examples to this many tokens (default data.seq_len)")
        ->check(CLI::Range(1, std::numeric_limits<int>::max()));
    cmd->add_option("--birdie-layout", a->birdie_layout,
                    "Task rows of a birdie checkpoint: the layout of its prefix_lm arm (default) "
                    "or its next_token arm, as eval scores them")
        ->check(CLI::IsMember({"prefix_lm", "next_token"}));
    cmd->add_option("--prefix-fraction", a->prefix_fraction,
                    "Birdie prefix mode: the fraction of each example before the prefix split "
                    "(default: the checkpoint's train.prefix_fraction)")
        ->check(CLI::Validator(
            [](std::string& text) -> std::string {
                // NaN passed CLI::Range (every comparison with it is false), and the dump then
                // ran with the checkpoint's fraction instead.
                double v = 0;
                return CLI::detail::lexical_cast(text, v) && v >= 0 && v <= 1
                           ? std::string()
                           : "a number in [0, 1] (the share of each example before the split)";
            },
            "[0, 1]"));
    return [a, cmd]() {
        a->split_given = cmd->count("--split") > 0;
        // In a child process first (issue 25): a crash of libhdf5 on the file is a verdict.
        std::string report;
        const int verdict = check_input(a->checkpoint, a->check, &report);
        return run_dump_on_ranks(*a, verdict, report);
    };
}

const CommandRegistration registration{"dump", setup_dump};

}  // namespace
}  // namespace routescope::cli
