#pragma once
// The engine's front door for a run's and a checkpoint's inputs: what training (Trainer,
// Finetuner), `eval` and `dump` resolve from a configuration or a checkpoint — a built-in task and
// its tokenizer, a checkpoint's tokenizer, a task's split, a classification file — written once
// here instead of in each of them.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/config.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/labelled_set.hpp"

namespace routescope::train {

/// The run's built-in task: data.task generated with data.task_params, every split.
data::TaskData run_task(const RunConfig& config);
/// The WordPiece tokenizer over a task's vocabulary (one piece per line, id = line; a task's
/// checkpoints store it, docs/decisions.md).
std::unique_ptr<data::Tokenizer> task_tokenizer(const data::TaskData& task);

/// The tokenizer a checkpoint was trained with (or `tokenizer_file` instead: a *.model is
/// SentencePiece, anything else a WordPiece vocab.txt), checked against model.vocab_size with the
/// objective's extra ids (birdie_vocabulary.hpp): ConfigError naming `checkpoint_path` otherwise.
std::unique_ptr<data::Tokenizer> checkpoint_tokenizer(const Checkpoint& checkpoint,
                                                      const std::string& checkpoint_path,
                                                      const std::string& tokenizer_file = {});

/// Split `split` (train | valid | test) of built-in task `name` as the checkpoint's run generated
/// it (data.task_params; `seed` > 0 and `examples` > 0 override the seed and the split's size;
/// example i of a split depends only on (seed, split, i), so only that split is generated).
/// ConfigError when the tokenizer is not the task's (the checkpoint was not trained on it).
struct TaskSplit {
    data::TaskData task;  ///< its vocabulary, metric and classes (the other splits empty)
    LabelledSet set;
};
TaskSplit task_split(const RunConfig& config, const data::Tokenizer& tokenizer,
                     const std::string& name, const std::string& split,
                     const std::string& checkpoint_path, std::uint64_t seed = 0,
                     std::int64_t examples = 0);

/// A classification file framed at `seq_len` tokens. A classifier's label ids are its data.labels
/// (in their order); another model's come from the file. `require_classifier`: ConfigError naming
/// `checkpoint_path` when it has no data.labels.
LabelledSet classification_file(const RunConfig& config, const data::Tokenizer& tokenizer,
                                const std::string& path, int seq_len,
                                const std::string& checkpoint_path, bool require_classifier);

}  // namespace routescope::train
