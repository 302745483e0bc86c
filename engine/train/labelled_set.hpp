#pragma once
// Examples ready for the model, whatever their source: a classification file (TASKS.md: TSV or
// JSON Lines, single sentences or pairs) or a split of a built-in task (engine/data/task.hpp).
// Fine-tuning trains on them, validation and `routescope-cli eval` score them (set_evaluation.hpp).
//
// A classification example becomes [CLS] a [SEP] or [CLS] a [SEP] b [SEP] (BERT's framing), cut to
// the sequence length by taking tokens from the longer sentence first (BERT's "longest first"),
// segment 1 from b on. With data.pair_gap = g > 0 a pair becomes [CLS] a [SEP] f₁ … f_g b [SEP]:
// g filler tokens between the two sentences (the BiGS talk's "matching across gaps"), segment 1,
// each drawn uniformly from the tokenizer's ordinary pieces (not special) by a Philox stream keyed
// by the pair's text, so an example has the same filler every epoch, in validation and in eval.
// The gap is kept whole: only the sentences are cut (longest first) to seq_len − 3 − g. A task
// example is used as generated: its class label (gap-matching) or its
// targets at [MASK] positions, predicted through the MLM head.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"

namespace routescope::train {

struct LabelledExample {
    std::vector<std::int32_t> tokens;  ///< framed: [CLS] … [SEP]
    std::vector<std::int32_t> types;   ///< segment ids, same size as tokens
    std::int32_t label = -1;           ///< class id; −1 unlabelled or a target example
    /// Same size as tokens: the target id at target positions, −100 elsewhere. Empty for class
    /// examples.
    std::vector<std::int32_t> targets;
    std::map<std::string, double> attributes;  ///< task difficulty attributes
    std::int64_t line = 0;                     ///< 1-based line of a file example, 0 for a task
};

struct LabelledSet {
    std::string source;  ///< the file, or "task <name> (<split>)"
    std::vector<LabelledExample> examples;
    bool targets = false;  ///< per-position targets (MLM head) instead of class labels
    data::TaskMetric metric = data::TaskMetric::Accuracy;
    std::vector<std::string> labels;  ///< class names in id order (class sets)
    /// Filler tokens after the first [SEP] of every example (data.pair_gap; 0 for none).
    int pair_gap = 0;
    /// The id a row of these examples is padded with: the tokenizer's [PAD] (0 when it has
    /// none, as pretraining pads), kPadId for a task's (its vocabulary's specials come first).
    std::int32_t pad = data::kPadId;

    /// The longest example's token count (0 for an empty set).
    int max_length() const;
};

/// The examples of a classification file, ids from `tokenizer`, at most `seq_len` tokens each
/// (seq_len ≥ 3 for single sentences, ≥ 5 + `pair_gap` for pairs: ConfigError naming
/// `length_setting`, the option or key the length came from, and data.pair_gap when it takes the
/// room, otherwise). `pair_gap` filler tokens
/// go between a pair's sentences (above); a set of single sentences with `pair_gap` > 0 is a
/// ConfigError naming data.pair_gap and the file.
LabelledSet classification_examples(const data::ClassificationSet& set,
                                    const data::Tokenizer& tokenizer, int seq_len, int pair_gap = 0,
                                    std::string_view length_setting = "data.seq_len");

/// The tokens of a set (not [CLS], [SEP], [PAD] or data.pair_gap's filler) and how many of them the
/// tokenizer read as [UNK]: a tokenizer that does not cover the text (a task's symbols, another
/// language) reads it as [UNK]s only, and a classifier then sees lengths alone (fine-tuning and
/// eval refuse it).
struct UnknownTokens {
    std::int64_t words = 0, unknown = 0;
    double fraction() const {
        return words > 0 ? static_cast<double>(unknown) / static_cast<double>(words) : 0.0;
    }
    bool all() const { return words > 0 && unknown == words; }
};
UnknownTokens unknown_tokens(const LabelledSet& set, const data::Tokenizer& tokenizer);

/// Split 0 (train), 1 (valid) or 2 (test) of a generated task. Class tasks get labels "0", "1", ….
LabelledSet task_examples(const data::TaskData& task, int split);

/// The generator's parameters from data.task_params (docs/config.md).
data::TaskParams task_params(const TaskParamsConfig& config);

/// "train" → 0, "valid" → 1, "test" → 2; ConfigError naming `what` otherwise.
int split_index(const std::string& name, const std::string& what);

/// dump's and eval's --split (given: `given`) beside --data `data`: a value that names no split, or
/// any --split beside a file (read whole: `whole`, "dumped whole"), is a ConfigError naming it
/// (both were ignored without a word).
void check_split_option(bool given, const std::string& split, const std::string& data,
                        const std::string& whole);

}  // namespace routescope::train
