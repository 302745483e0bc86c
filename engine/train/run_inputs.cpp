#include "engine/train/run_inputs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/sentencepiece_tokenizer.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/data/utf8.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/train/builtin_corpus.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::train {

namespace {

namespace fs = std::filesystem;

// The generated built-in corpus, from pretraining_inputs until keep_builtin_corpus or
// discard_builtin_corpus: registered with the stop-signal handler (stale_temporaries.hpp), so a
// Ctrl-C during the run's setup removes it (it outlives pretraining_inputs, whose own guards do
// not).
std::unique_ptr<TemporaryFileGuard>& generated_corpus_guard() {
    static std::unique_ptr<TemporaryFileGuard> guard;
    return guard;
}

// Where rank `rank`'s copy of a built-in corpus goes (ranks never write a file another reads).
std::string builtin_corpus_file(const std::string& out_dir, int rank) {
    return (fs::path(out_dir) / (rank == 0 ? std::string("builtin-corpus.txt")
                                           : "builtin-corpus.rank" + std::to_string(rank) + ".txt"))
        .string();
}

// Whether folder `inner` is `outer` or lies inside it: by their real paths (links followed), or
// as written (absolute, normalised).
bool same_or_inside(const fs::path& inner, const fs::path& outer) {
    const auto under = [](const fs::path& a, const fs::path& b) {
        return !a.empty() && !b.empty() &&
               std::mismatch(b.begin(), b.end(), a.begin(), a.end()).first == b.end();
    };
    std::error_code ec, ec2;
    const fs::path real_inner = fs::weakly_canonical(fs::absolute(inner), ec);
    const fs::path real_outer = fs::weakly_canonical(fs::absolute(outer), ec2);
    if (!ec && !ec2 && under(real_inner, real_outer)) return true;
    return under(fs::absolute(inner, ec).lexically_normal(),
                 fs::absolute(outer, ec2).lexically_normal());
}

// A run directory inside its own corpus folder (data.train = DIR, --out DIR/run): the run's
// checkpoints and log would be read as documents when it is resumed (refused there, "an HDF5
// file ... move it out of the corpus", so the run could never be continued). Refused before
// anything is written, naming both.
void refuse_output_in_corpus(const RunConfig& config, const std::string& out_dir) {
    for (const auto& [key, value] : {std::pair{"data.train", &config.data.train},
                                     std::pair{"data.valid", &config.data.valid}}) {
        std::error_code ec;
        if (!*value || !fs::is_directory(**value, ec) || !same_or_inside(out_dir, **value))
            continue;
        throw ConfigError(std::string(key) + ": the output directory " + out_dir +
                          " lies inside the corpus folder " + **value +
                          ", where the run's own checkpoints and log would be read as documents; "
                          "choose an --out outside it");
    }
}

// tokenizer.model with tokenizer.kind = bytes: the bytes tokenizer reads no file, and the path
// (even one that does not exist) was ignored while a byte model trained.
void refuse_model_for_bytes(const TokenizerConfig& t) {
    if (t.kind == "bytes" && t.model)
        throw ConfigError("tokenizer.model: " + data::printable_text(*t.model) +
                          " is given, but tokenizer.kind is 'bytes', which reads no file; set "
                          "tokenizer.kind to the file's kind (sentencepiece, wordpiece or "
                          "wordpiece_cased), or leave tokenizer.model null");
}

// A pretraining run's tokenizer from its configuration: bytes, tokenizer.model, or a SentencePiece
// model trained on the corpus at `corpus_path`.
std::unique_ptr<data::Tokenizer> corpus_tokenizer(const RunConfig& c,
                                                  const std::string& corpus_path) {
    const auto& t = c.tokenizer;
    refuse_model_for_bytes(t);
    if (t.kind == "bytes") return std::make_unique<data::ByteTokenizer>();
    if (t.model) return data::load_tokenizer_file(t.kind, *t.model);
    if (t.kind != "sentencepiece")
        throw ConfigError("tokenizer.model: a " + t.kind + " tokenizer needs its vocabulary file");
    data::TextCorpus corpus(corpus_path, data::parse_doc_separator(c.data.doc_sep));
    data::SentencePieceTraining options;
    options.vocab_size = t.vocab_size;
    options.model_type = t.model_type;
    options.threads = std::max(1, c.train.threads);
    return data::train_sentencepiece(corpus, options);
}

// A fine-tuning run's tokenizer when it does not resume: train.init_from's, or from scratch bytes
// or tokenizer.model.
std::unique_ptr<data::Tokenizer> finetuning_tokenizer(const RunConfig& c) {
    if (c.train.init_from) {
        const Checkpoint ck = read_checkpoint(*c.train.init_from);
        return data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
    }
    refuse_model_for_bytes(c.tokenizer);
    if (c.tokenizer.kind == "bytes") return std::make_unique<data::ByteTokenizer>();
    if (c.tokenizer.model) return data::load_tokenizer_file(c.tokenizer.kind, *c.tokenizer.model);
    throw ConfigError(
        "tokenizer.model: fine-tuning from scratch needs tokenizer.kind = "
        "bytes or a tokenizer file (or train.init_from a checkpoint)");
}

// `set` numbered with another label set (a classifier's, or the training file's), in its order.
void number_with(data::ClassificationSet& set, const std::vector<std::string>& labels) {
    data::assign_label_ids(set, labels);
    set.labels = labels;
}

}  // namespace

data::TaskData run_task(const RunConfig& config) {
    if (!config.data.task || config.data.task->empty())
        throw ConfigError("data.task: the run has no built-in task");
    // The task brings its own splits: a classification file beside it was ignored without a word
    // (`experiment gap-matching --set data.train=qnli.tsv` tabled synthetic data). A pretraining
    // corpus a shipped configuration names (builtin:grammar) is the pretraining's, not this run's.
    for (const auto& [key, value] :
         {std::pair{"data.train", &config.data.train}, std::pair{"data.valid", &config.data.valid}})
        if (*value && data::classification_format(**value))
            throw ConfigError(std::string(key) + ": give either a classification file (" + **value +
                              ") or data.task = " + *config.data.task +
                              ", not both: the task generates its own examples");
    // data.pair_gap fills between a classification file's sentence pairs; a task's examples are
    // used as generated (gap-matching's own gap is its number of passage sentences).
    if (config.data.pair_gap > 0)
        throw ConfigError("data.pair_gap: " + std::to_string(config.data.pair_gap) +
                          " applies to a classification file of sentence pairs, but data.task = " +
                          *config.data.task +
                          " generates its own examples; set data.pair_gap = 0 (gap-matching's "
                          "gap is data.task_params.min_entries / max_entries)");
    return data::generate_task(*config.data.task, task_params(config.data.task_params));
}

std::unique_ptr<data::Tokenizer> task_tokenizer(const data::TaskData& task) {
    return std::make_unique<data::WordPieceTokenizer>(task_vocab_text(task.vocab));
}

std::unique_ptr<data::Tokenizer> checkpoint_tokenizer(const Checkpoint& ck,
                                                      const std::string& checkpoint_path,
                                                      const std::string& tokenizer_file,
                                                      const RunConfig* run) {
    const bool file = !tokenizer_file.empty();
    // A vocab.txt given for a cased checkpoint is read cased, as the checkpoint's own; a file for
    // a SentencePiece checkpoint is a SentencePiece model whatever its name (sp.spm).
    const std::string kind = (tokenizer_file.size() >= 6 && tokenizer_file.ends_with(".model")) ||
                                     ck.tokenizer.kind == "sentencepiece"
                                 ? "sentencepiece"
                             : ck.tokenizer.kind == "wordpiece_cased" ? "wordpiece_cased"
                                                                      : "wordpiece";
    std::unique_ptr<data::Tokenizer> t =
        file ? data::load_tokenizer_file(kind, tokenizer_file)
             : data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
    const RunConfig& config = run ? *run : ck.config;
    const std::int32_t extra = data::objective_extra_ids(config.train.objective);
    if (t->vocab_size() + extra != config.model.vocab_size)
        throw ConfigError(
            "vocabulary mismatch: " + checkpoint_path +
            " has model.vocab_size = " + std::to_string(config.model.vocab_size) + " but the " +
            t->kind() + " tokenizer" + (file ? " " + tokenizer_file : " it stores") + " has " +
            std::to_string(t->vocab_size()) + " ids" +
            (extra > 0 ? " (+ " + std::to_string(extra) + " objective specials)" : ""));
    if (file) {
        // The model's ids are the stored tokenizer's pieces: a file of the same size with other
        // pieces (two swapped, one renamed) scored the checkpoint on ids that meant other text,
        // exit 0. Every piece is compared, and the first id where they part is named.
        const auto stored = data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
        const std::vector<std::string>& mine = t->vocabulary();
        const std::vector<std::string>& theirs = stored->vocabulary();
        if (mine != theirs) {
            std::size_t i = 0;
            while (i < mine.size() && i < theirs.size() && mine[i] == theirs[i])
                ++i;
            throw ConfigError(
                "vocabulary mismatch: " + tokenizer_file + " is not the vocabulary " +
                checkpoint_path + " was trained with: id " + std::to_string(i) + " is '" +
                (i < mine.size() ? data::printable_text(mine[i]) : std::string("(none)")) +
                "' in " + tokenizer_file + " and '" +
                (i < theirs.size() ? data::printable_text(theirs[i]) : std::string("(none)")) +
                "' in the checkpoint's " + stored->kind() + " tokenizer");
        }
    }
    return t;
}

TaskSplit task_split(const RunConfig& config, const data::Tokenizer& tokenizer,
                     const std::string& name, const std::string& split,
                     const std::string& checkpoint_path, std::optional<std::uint64_t> seed,
                     std::int64_t examples) {
    const int k = split_index(split, "--split");
    data::TaskParams p = task_params(config.data.task_params);
    if (seed) p.seed = *seed;  // 0 is a seed like any other (data.task_params.seed may be 0)
    std::int64_t* sizes[] = {&p.n_train, &p.n_valid, &p.n_test};
    for (int s = 0; s < 3; ++s)
        if (s != k) *sizes[s] = 0;
    if (examples > 0) *sizes[k] = examples;
    TaskSplit r{data::generate_task(name, p), {}};
    if (const auto& mine = tokenizer.vocabulary(); r.task.vocab != mine) {
        // Where they part: the first id whose piece differs (equal sizes said nothing: "its
        // vocabulary of 22 ids is not the task's 22"; format probe, session 31).
        std::string where;
        const std::size_t n = std::min(mine.size(), r.task.vocab.size());
        for (std::size_t i = 0; i < n; ++i)
            if (mine[i] != r.task.vocab[i]) {
                where = "; id " + std::to_string(i) + " is '" + data::printable_text(mine[i]) +
                        "' in the checkpoint and '" + data::printable_text(r.task.vocab[i]) +
                        "' in the task";
                break;
            }
        throw ConfigError("--task " + name + ": " + checkpoint_path +
                          " was not trained on this task (its vocabulary of " +
                          std::to_string(mine.size()) + " pieces is not the task's " +
                          std::to_string(r.task.vocab.size()) + where +
                          "; `routescope-cli train --set data.task=" + name +
                          "` writes a checkpoint with the task's vocabulary)");
    }
    r.set = task_examples(r.task, k);
    return r;
}

namespace {
// A checkpoint fine-tuned with train.objective = classify: its labels and a head for them.
bool is_classifier(const RunConfig& config) {
    return config.data.labels && config.model.n_labels > 0;
}
}  // namespace

namespace {
bool reads_padding(const ModelConfig& m) {
    // Only a block without a mask that reads later positions sees the padding: a bidirectional
    // SSM (bigs, stack_ssm), Birdie with a bidirectional layer, a gMLP whose W is not
    // triangular. Attention masks its pads, S-LSTM ignores them, a causal layer reads only
    // earlier positions (a prefix layer's pads sit in its causal region): padding those rows
    // further would cost time and dump size for nothing (an imported model's data.seq_len is its
    // max_len, often 512).
    return ((m.arch == "bigs" || m.arch == "stack_ssm") && !m.causal) ||
           (m.arch == "birdie" && m.birdie.mode == "bidirectional") ||
           (m.arch == "gmlp" && !m.gmlp.causal);
}
}  // namespace

bool row_length_matters(const ModelConfig& m) {
    return reads_padding(m) || m.pool == "mean_all";
}

int trained_row_length(const RunConfig& config) {
    if (!row_length_matters(config.model)) return 0;
    return std::min(config.data.seq_len, config.model.max_len);
}

LabelledSet classification_file(const RunConfig& config, const data::Tokenizer& tokenizer,
                                const std::string& path, int seq_len,
                                const std::string& checkpoint_path, bool require_classifier,
                                std::int64_t limit, std::string_view length_setting) {
    const bool classifier = is_classifier(config);
    if (require_classifier && !classifier)
        throw ConfigError(checkpoint_path +
                          " is not a classifier (no data.labels): --data FILE needs a checkpoint "
                          "fine-tuned with train.objective = classify");
    if (!data::classification_format(path)) {
        // A classifier's labels are scored only from a classification file, chosen by its name.
        // A table under another name (sst.tsv.utf8, GLUE's MRPC msr_paraphrase_train.txt) would
        // be read as a corpus, its header a document and no label scored, with exit 0.
        // Only a regular file is peeked at: opening a FIFO blocks until a writer comes (eval
        // --data FIFO hung); the corpus reader below refuses what is neither file nor folder.
        std::error_code ec;
        if (classifier && std::filesystem::is_regular_file(path, ec)) {
            std::ifstream in(path, std::ios::binary);
            std::string first;
            std::getline(in, first);
            if (first.find('\t') != std::string::npos)
                throw FormatError(path +
                                  ": its first line holds tabs, like a table's header, but the "
                                  "name does not end in .tsv, .csv, .jsonl or .json, so it would "
                                  "be read as a text corpus (each line a document, no label "
                                  "scored); give it a .tsv name to score " +
                                  checkpoint_path + "'s labels");
        }
        // A text corpus: each document one unlabelled single text (no file line: a document may
        // span lines, or be one record of JSON Lines).
        data::TextCorpus corpus(path, data::parse_doc_separator(config.data.doc_sep));
        data::ClassificationSet documents;
        documents.path = path;
        std::string doc;
        while ((limit <= 0 || static_cast<std::int64_t>(documents.examples.size()) < limit) &&
               corpus.next(doc))
            documents.examples.push_back({doc, std::nullopt, "", 0, -1});
        if (classifier) documents.labels = *config.data.labels;
        LabelledSet set = classification_examples(documents, tokenizer, seq_len, 0, length_setting);
        if (classifier) set.labels = *config.data.labels;
        return set;
    }
    // −1 is one of a signed classifier's classes ({−1, +1}): a file of its negatives alone is
    // scored, not read as a split without gold labels.
    const bool minus_one_is_class =
        classifier && std::find(config.data.labels->begin(), config.data.labels->end(), "-1") !=
                          config.data.labels->end();
    data::ClassificationSet set =
        data::read_classification(path, /*require_labels=*/false, minus_one_is_class);
    // As train refuses a validation file of the other kind: pairs framed as one text (or one
    // text as a pair) scored a checkpoint on inputs it never saw, with exit 0.
    if (classifier && config.data.pairs && set.pairs != *config.data.pairs)
        throw FormatError(path + ": " + (set.pairs ? "sentence pairs" : "single sentences") +
                          ", but " + checkpoint_path + " was fine-tuned on " +
                          (*config.data.pairs ? "sentence pairs" : "single sentences"));
    // GLUE's STS-B: its gold 'score' is a regression target. A classifier would predict classes
    // for it and score nothing ("scored 0", said nowhere); another model's dump reads the texts.
    if (classifier && !set.regression_column.empty())
        throw FormatError(path + ": its '" + set.regression_column +
                          "' column is a regression target (STS-B's similarity score), which " +
                          checkpoint_path +
                          ", a classifier, cannot score; Routescope fine-tunes classifiers only "
                          "(to predict the sentences alone, remove the '" +
                          set.regression_column + "' column)");
    if (classifier) number_with(set, *config.data.labels);
    // The gap the model was fine-tuned with (its data.pair_gap), so eval and dump frame the pairs
    // as training did.
    return classification_examples(set, tokenizer, seq_len, config.data.pair_gap, length_setting);
}

PretrainingInputs pretraining_inputs(const RunConfig& config, const std::string& out_dir, int rank,
                                     std::unique_ptr<data::Tokenizer> tokenizer,
                                     const data::TaskData* task) {
    PretrainingInputs r{std::move(tokenizer), {}, {}};
    if (config.data.pair_gap > 0 && !(config.data.task && !config.data.task->empty()))
        throw ConfigError("data.pair_gap: " + std::to_string(config.data.pair_gap) +
                          " applies to fine-tuning on a classification file of sentence pairs "
                          "(train.objective = classify), but this run pretrains (" +
                          config.train.objective + ") on a text corpus; set data.pair_gap = 0");
    if (config.data.task && !config.data.task->empty()) {
        std::optional<data::TaskData> generated;
        if (!task) task = &generated.emplace(run_task(config));
        if (!r.tokenizer)
            r.tokenizer = task_tokenizer(*task);
        else if (r.tokenizer->vocabulary() != task->vocab)
            throw ConfigError("data.task: the checkpoint's vocabulary is not task " + task->name +
                              "'s (data.task_params changed?)");
        r.corpus = task_corpus(*task, config.data.seq_len);
        r.task_valid = task_examples(*task, task->valid.empty() ? 0 : 1);
        return r;
    }
    refuse_output_in_corpus(config, out_dir);
    std::string train_path = *config.data.train;
    // builtin:grammar is generated under a temporary name, read from there, and becomes
    // builtin-corpus.txt only when the run is set up (keep_builtin_corpus): written under its own
    // name, a run refused during setup (a tokenizer that does not train, --overwrite of another
    // run) replaced the earlier run's copy, or left one in a folder that held no run.
    struct RemoveUnlessKept {
        std::string file;
        bool keep = false;
        ~RemoveUnlessKept() {
            std::error_code ec;
            if (!file.empty() && !keep) std::filesystem::remove(file, ec);
        }
    } generated;
    if (is_builtin_corpus(train_path)) {
        const std::string final_name = builtin_corpus_file(out_dir, rank);
        remove_stale_temporaries(final_name);  // a run killed during its setup
        generated.file = temporary_path_for(final_name);
        generated_corpus_guard() = std::make_unique<TemporaryFileGuard>(generated.file);
        try {
            write_builtin_corpus(train_path, generated.file,
                                 static_cast<std::uint64_t>(config.train.seed));
        } catch (const RuntimeFailure& e) {
            // A full disk names the file the user knows, not the hidden temporary
            // ("DIR/builtin-corpus.txt: cannot write the built-in corpus: No space left").
            std::string m = e.what();
            for (std::size_t at; (at = m.find(generated.file)) != std::string::npos;)
                m.replace(at, generated.file.size(), final_name);
            throw RuntimeFailure(m);
        }
        train_path = generated.file;
    }
    // An error about the generated corpus names builtin:grammar, not the temporary file it
    // names (removed as the error leaves: "sentencepiece training on DIR/.builtin-corpus.txt.tmp-
    // 4242 failed" named a file that was not there).
    const auto named = [&](const Error& e) {
        std::string m = e.what();
        const std::string& tmp = generated.file;
        for (std::size_t at; !tmp.empty() && (at = m.find(tmp)) != std::string::npos;)
            m.replace(at, tmp.size(), *config.data.train);
        return m;
    };
    try {
        if (!r.tokenizer) r.tokenizer = corpus_tokenizer(config, train_path);
        const std::string* valid = config.data.valid ? &*config.data.valid : nullptr;
        r.corpus =
            pack_corpus(train_path, valid, config.data.doc_sep, config.data.seq_len, *r.tokenizer);
    } catch (const ConfigError& e) {
        throw ConfigError(named(e));
    } catch (const FormatError& e) {
        throw FormatError(named(e));
    } catch (const IoError& e) {
        throw IoError(named(e));
    }
    // Rank 0's copy waits for keep_builtin_corpus; another rank's own copy is read and goes (N
    // ranks left builtin-corpus.rank1.txt … beside it; a resume writes them again).
    generated.keep = rank == 0;
    if (!generated.keep) generated_corpus_guard().reset();
    return r;
}

void keep_builtin_corpus(const std::string& out_dir) {
    const std::string final_name = builtin_corpus_file(out_dir, 0);
    const std::string generated = temporary_path_for(final_name);
    std::error_code ec;
    if (!std::filesystem::exists(generated, ec)) return;
    std::filesystem::rename(generated, final_name, ec);
    generated_corpus_guard().reset();
    if (ec) {
        const std::string why = ec.message();  // remove() below clears ec
        std::filesystem::remove(generated, ec);
        throw IoError(final_name + ": cannot write the built-in corpus's copy: " + why);
    }
}

void discard_builtin_corpus(const std::string& out_dir) {
    std::error_code ec;
    std::filesystem::remove(temporary_path_for(builtin_corpus_file(out_dir, 0)), ec);
    generated_corpus_guard().reset();
}

ClassificationInputs classification_inputs(const RunConfig& config,
                                           std::unique_ptr<data::Tokenizer> tokenizer) {
    if (!config.data.train || config.data.train->empty())
        throw ConfigError(
            "data.train: no classification file given (TSV with a header or JSON "
            "Lines; --set data.train=FILE), nor a built-in data.task");
    data::ClassificationSet train = data::read_classification(*config.data.train);
    if (train.labels.size() < 2)
        throw FormatError(train.path + ": a classifier needs at least 2 distinct labels, found " +
                          std::to_string(train.labels.size()));
    ClassificationInputs r;
    r.tokenizer = tokenizer ? std::move(tokenizer) : finetuning_tokenizer(config);
    r.labels = train.labels;
    r.pairs = train.pairs;
    r.no_consensus = train.no_consensus;
    r.train =
        classification_examples(train, *r.tokenizer, config.data.seq_len, config.data.pair_gap);
    if (config.data.valid && !config.data.valid->empty()) {
        data::ClassificationSet valid = data::read_classification(
            *config.data.valid, /*require_labels=*/true,
            std::find(train.labels.begin(), train.labels.end(), "-1") != train.labels.end());
        if (valid.pairs != train.pairs)
            throw FormatError(valid.path + ": " + (valid.pairs ? "pairs" : "single sentences") +
                              " but the training file " + train.path + " has " +
                              (train.pairs ? "pairs" : "single sentences"));
        r.no_consensus += valid.no_consensus;
        number_with(valid, train.labels);
        r.valid =
            classification_examples(valid, *r.tokenizer, config.data.seq_len, config.data.pair_gap);
    } else {
        r.valid = r.train;
        r.valid_is_train = true;
    }
    return r;
}

}  // namespace routescope::train
