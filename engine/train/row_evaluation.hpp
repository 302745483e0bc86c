#pragma once
// Evaluation of the causal objectives (clm, prefix_lm, birdie): loss and accuracy of the next-token
// targets of rows built by a RowBuilder (objective_rows.hpp) from held-out sequences, with the same
// definitions as evaluate_mlm (one mean over every target token; accuracy = argmax is the target).
// Builders draw from the evaluation seed and the sequence index only, so every evaluation of a
// run scores the same rows.
#include <cstdint>
#include <functional>

#include "engine/models/model.hpp"
#include "engine/train/mlm_evaluation.hpp"
#include "engine/train/objective_rows.hpp"

namespace routescope::train {

/// Fills `row` from held-out sequence `index` and returns its length (≥ 1).
using RowBuilder = std::function<std::int32_t(std::int64_t index, RowView row)>;

/// Evaluates sequences [0, n) (the first max_batches batches of the model's batch size; 0 = all);
/// a last partial batch is filled with unscored rows. With a communicator of N ranks a batch is
/// N · B rows, shared out and merged as in evaluate_mlm.
/// loss_only: no argmax read-out (the score's accuracy is then 0): Birdie's mixture update.
MlmScore evaluate_rows(models::Model& model, std::int64_t n, const RowBuilder& build,
                       std::int64_t max_batches = 0, dist::Communicator* comm = nullptr,
                       bool loss_only = false);

}  // namespace routescope::train
