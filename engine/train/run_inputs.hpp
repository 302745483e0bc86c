#pragma once
// The engine's front door for a run's and a checkpoint's inputs: what training (Trainer,
// Finetuner), `eval` and `dump` resolve from a configuration or a checkpoint — a built-in task and
// its tokenizer, a checkpoint's tokenizer, a task's split, a classification file, pretraining's
// tokenizer and packed corpus, fine-tuning's labelled classification sets — written once here
// instead of in each of them.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/packed_sequences.hpp"

namespace routescope::train {

/// The run's built-in task: data.task generated with data.task_params, every split.
data::TaskData run_task(const RunConfig& config);
/// The WordPiece tokenizer over a task's vocabulary (one piece per line, id = line; a task's
/// checkpoints store it, docs/decisions.md).
std::unique_ptr<data::Tokenizer> task_tokenizer(const data::TaskData& task);

/// The tokenizer a checkpoint was trained with (or `tokenizer_file` instead: a *.model is
/// SentencePiece, anything else a WordPiece vocab.txt), checked against model.vocab_size with the
/// objective's extra ids (birdie_vocabulary.hpp) of `run` — the configuration the model is built
/// from (a resumed run's, with its overrides), the checkpoint's own when null: ConfigError naming
/// `checkpoint_path` otherwise. A `tokenizer_file` must hold the stored tokenizer's pieces, id for
/// id: ConfigError naming the first id where they differ.
std::unique_ptr<data::Tokenizer> checkpoint_tokenizer(const Checkpoint& checkpoint,
                                                      const std::string& checkpoint_path,
                                                      const std::string& tokenizer_file = {},
                                                      const RunConfig* run = nullptr);

/// Split `split` (train | valid | test) of built-in task `name` as the checkpoint's run generated
/// it (data.task_params; a `seed` given (0 included) and `examples` > 0 override the seed and the
/// split's size;
/// example i of a split depends only on (seed, split, i), so only that split is generated).
/// ConfigError when the tokenizer is not the task's (the checkpoint was not trained on it).
struct TaskSplit {
    data::TaskData task;  ///< its vocabulary, metric and classes (the other splits empty)
    LabelledSet set;
};
TaskSplit task_split(const RunConfig& config, const data::Tokenizer& tokenizer,
                     const std::string& name, const std::string& split,
                     const std::string& checkpoint_path,
                     std::optional<std::uint64_t> seed = std::nullopt, std::int64_t examples = 0);

/// A classification file framed at `seq_len` tokens. A classifier's label ids are its data.labels
/// (in their order); another model's come from the file. `require_classifier`: ConfigError naming
/// `checkpoint_path` when it has no data.labels. A path that is not a classification file
/// (data::classification_format) is a text corpus (TextCorpus, data.doc_sep): each document an
/// unlabelled single text, [CLS] document [SEP] cut to `seq_len`, at most `limit` of them (0: all).
LabelledSet classification_file(const RunConfig& config, const data::Tokenizer& tokenizer,
                                const std::string& path, int seq_len,
                                const std::string& checkpoint_path, bool require_classifier,
                                std::int64_t limit = 0,
                                std::string_view length_setting = "data.seq_len");

/// Whether a row's length changes what the model computes for its real positions or its pooled
/// vector: blocks that read the padding of a row (no mask: a bidirectional bigs or stack_ssm,
/// Birdie with bidirectional layers, a non-causal gMLP), or model.pool = mean_all (the mean over
/// every position of the row).
bool row_length_matters(const ModelConfig& m);

/// The row length a checkpoint was trained and validated at, when the row's length matters
/// (row_length_matters): min(data.seq_len, model.max_len) — a classifier's or task checkpoint's
/// rows the Finetuner / Trainer padded to data.seq_len, a pretrained model's packed corpus rows, an
/// imported BiGS's Lmax (the release runs only rows of Lmax); 0 for anything else (attention
/// masks its pads, a causal block never reads them). Scoring or dumping examples pads them as
/// far, so that an example's states do not depend on the longest example beside it in the file
/// or the batch, and a fine-tuned checkpoint scores as its run's own evaluations did
/// (docs/cli.md, eval and dump).
int trained_row_length(const RunConfig& config);

/// Pretraining's data: the tokenizer and the corpus packed into sequences of data.seq_len.
struct PretrainingInputs {
    std::unique_ptr<data::Tokenizer> tokenizer;
    PackedCorpus corpus;
    LabelledSet task_valid;  ///< data.task: the validation examples, as generated (exact match)
};
/// What a pretraining run of `config` (check_training_config'd, paths absolute) reads. data.task:
/// the task's train split completed (task_corpus.hpp), one example per sequence, and its
/// vocabulary as the tokenizer (`task`: the task already generated, else generated here).
/// Otherwise data.train and data.valid, with tokenizer.kind = bytes, tokenizer.model, or a
/// SentencePiece model trained on the corpus. builtin:grammar is generated into a temporary in
/// `out_dir` and read from there: rank 0's becomes `out_dir`/builtin-corpus.txt at
/// keep_builtin_corpus (once the run is set up), another rank's is removed once read, and any is
/// removed when this throws. `tokenizer`: a resumed run's (its checkpoint's), kept: ConfigError
/// when it is not data.task's vocabulary. ConfigError when `out_dir` is data.train's or
/// data.valid's folder or lies inside it (the run's files would be read as documents). IoError /
/// FormatError naming the corpus or tokenizer file.
PretrainingInputs pretraining_inputs(const RunConfig& config, const std::string& out_dir, int rank,
                                     std::unique_ptr<data::Tokenizer> tokenizer = nullptr,
                                     const data::TaskData* task = nullptr);
/// The built-in corpus this process generated for `out_dir` (pretraining_inputs on rank 0)
/// renamed to `out_dir`/builtin-corpus.txt, replacing an earlier run's; nothing when none was
/// generated. Called once the run is set up, so a run refused before leaves the folder's copy as
/// it was. IoError when the rename fails.
void keep_builtin_corpus(const std::string& out_dir);
/// Removes that generated corpus when it was not kept (a run refused during setup).
void discard_builtin_corpus(const std::string& out_dir);

/// Classification fine-tuning's data: the tokenizer, the labelled training and validation sets.
struct ClassificationInputs {
    std::unique_ptr<data::Tokenizer> tokenizer;
    LabelledSet train, valid;
    bool valid_is_train = false;      ///< no data.valid: validation reuses the training set
    std::vector<std::string> labels;  ///< the training file's label set, in id order
    bool pairs = false;               ///< the training file holds sentence pairs
    /// Rows left out of the training and validation files for a gold_label "-" (no annotator
    /// consensus, SNLI's convention; data::ClassificationSet::no_consensus).
    std::int64_t no_consensus = 0;
};
/// What a fine-tuning run of `config` on classification files (data.train, optional data.valid;
/// the label set is the training file's, at least 2 labels) reads, framed at data.seq_len. The
/// tokenizer: `tokenizer` when given (a resumed run's), else train.init_from's checkpoint's, else
/// tokenizer.kind = bytes or tokenizer.model (ConfigError otherwise). FormatError naming the file
/// for bad data, a validation file of pairs where the training file has single sentences (or the
/// reverse), or a validation label the training file lacks.
ClassificationInputs classification_inputs(const RunConfig& config,
                                           std::unique_ptr<data::Tokenizer> tokenizer = nullptr);

}  // namespace routescope::train
