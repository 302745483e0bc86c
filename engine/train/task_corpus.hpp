#pragma once
// A built-in task (engine/data/task.hpp) as the data of the causal objectives (clm, prefix_lm,
// birdie; docs/decisions.md, "Phone book: causal objectives on a built-in task"). Tasks are written
// MLM style: the targets sit at positions the input shows as [MASK]. For a causal model every
// example is rendered complete (each [MASK] replaced by its target) and becomes one training
// sequence of its own, [CLS] … [SEP], padded to data.seq_len (no packing across examples: an
// example's answer must be read from its own phone book). The task's vocabulary is the tokenizer
// (a WordPiece vocab.txt of the task's pieces, as for fine-tuning); objective birdie appends its
// specials after it.
//
// A row of objective birdie is [paradigm] example-without-[CLS] [start] …: one position more than
// the example, so data.seq_len is the longest example of any split plus task_row_extra().
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/data/task.hpp"
#include "engine/train/packed_sequences.hpp"

namespace routescope::train {

/// `input` with every target position (targets[t] ≠ −100) holding its target.
std::vector<std::int32_t> completed_sequence(const std::vector<std::int32_t>& input,
                                             const std::vector<std::int32_t>& targets);

/// The first and the last target position of an example ({−1, −1} when it has none).
std::pair<std::int32_t, std::int32_t> answer_span(const std::vector<std::int32_t>& targets);

/// Positions a row of `objective` needs beyond the example's length: 1 for birdie, else 0.
int task_row_extra(const std::string& objective);

/// The longest example of the three splits plus task_row_extra(objective).
int task_sequence_length(const data::TaskData& task, const std::string& objective);

/// The train and valid splits, completed, one sequence per example, padded to seq_len
/// (valid_is_train when the task has no validation examples). ConfigError for a class-label task
/// (nothing to predict token by token) or an empty training split.
PackedCorpus task_corpus(const data::TaskData& task, int seq_len);

/// The task's pieces as a WordPiece vocab.txt: one piece per line, id = line.
std::string task_vocab_text(const std::vector<std::string>& pieces);

}  // namespace routescope::train
