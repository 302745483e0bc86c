#pragma once
// Generative scoring of a built-in task's examples by a causal checkpoint (train.objective clm,
// prefix_lm or birdie; docs/decisions.md, "Phone book: scoring a causal checkpoint on a task").
//
// The prompt is every token before the example's first target position (for the phone book: the
// book and the query name); the answer is the span from the first to the last target position,
// the tokens between targets included (the phone number's dashes), so "correct" means the model
// writes the whole answer string. The answer is scored by teacher forcing: one forward of the
// completed example, argmax of the next-token logits at every answer position. Exact match under
// teacher forcing equals exact match of greedy decoding: both are true exactly when every answer
// token is the argmax given the gold tokens before it (greedy decoding then feeds back those same
// tokens). The row per objective (objective_rows.hpp):
//
//   clm        the completed example, the whole row causal (as in training)
//   prefix_lm  the same tokens; the prompt [0, first) is the bidirectional prefix
//   birdie     by default the prefix-LM arm's layout: [prefix_lm paradigm] prompt-without-[CLS]
//              [start] answer …; the prefix is everything up to and including [start].
//              With layout next_token, the next-token arm's: [next_token paradigm] [start]
//              prompt-without-[CLS] answer …; the prefix is the paradigm and [start] alone.
//              Which arm's layout reaches the answer is an empirical question (docs/experiments.md,
//              phone book), so `eval --birdie-layout` chooses.
//
// Tokens after the answer (the closing [SEP]) are in the row; a causal model cannot read them,
// which test_answer_scoring checks.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/models/model.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/objective_rows.hpp"
#include "engine/train/set_evaluation.hpp"

namespace routescope::train {

/// Lays out the completed example `sequence` with answer span [first, last] (1 ≤ first ≤ last <
/// size) for `objective` in `row`: labels at the answer positions only. Returns the length;
/// *answer_at receives the row position whose logits predict sequence[first]. `layout` is the
/// Birdie arm whose row layout a birdie checkpoint is scored in: prefix_lm or next_token (else
/// ConfigError); other objectives ignore it.
std::int32_t answer_row(const std::string& objective, const std::vector<std::int32_t>& sequence,
                        std::int32_t first, std::int32_t last, const data::BirdieVocabulary& vocab,
                        RowView row, std::int32_t* answer_at = nullptr,
                        data::Paradigm layout = data::Paradigm::prefix_lm);

/// Scores every example of a target set (set.targets) generatively: predicted / expected hold the
/// answer span's tokens, correct = all equal, loss = mean −log softmax over the span. Examples
/// without targets are not scored. Error when a row does not fit the model's length.
std::vector<ExamplePrediction> predict_answers(models::Model& model, const LabelledSet& set,
                                               const std::string& objective,
                                               const data::BirdieVocabulary& vocab,
                                               data::Paradigm layout = data::Paradigm::prefix_lm);

}  // namespace routescope::train
