#pragma once
// Training rows of the causal objectives (TASKS.md "Objectives"; MODELS.md "Heads": the causal LM
// head is the MLM head with next-token targets). Each writes one row of a [B, L] batch: tokens,
// labels (the next token where the loss is taken, −100 elsewhere) and Birdie's reset mask (bit 1
// at position 0: a new sample; bit 2 on the causal region, MODELS.md), and returns the row's
// length. Labels and mask are what every model reads: non-Birdie models ignore the mask.
//
//   clm        tokens = the packed sequence; the loss on every position t < length − 1
//              (label = token t + 1); the whole row is causal region
//   prefix LM  the same tokens, split at p (prefix_split): positions [0, p) are the prefix
//              (bidirectional in Birdie's prefix layers), [p, L) the causal region; the loss
//              on t ≥ p − 1, i.e. on predicting every suffix token
//   Birdie     [paradigm] input [start] target, padded: the prefix is everything up to and
//              including [start], the loss on predicting each target token; a row longer than
//              L loses the end of its target (those tokens are not scored)
#include <cstdint>

#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::train {

struct RowView {
    std::int32_t* tokens;  ///< [L]
    std::int32_t* labels;  ///< [L]
    std::int32_t* reset;   ///< [L]
    int L;
};

/// Causal LM on ids[0, length), padded with `pad`.
std::int32_t clm_row(const std::int32_t* ids, std::int32_t length, std::int32_t pad, RowView row);
/// Prefix LM with the prefix [0, prefix) (1 ≤ prefix ≤ length; prefix = length scores nothing).
std::int32_t prefix_lm_row(const std::int32_t* ids, std::int32_t length, std::int32_t prefix,
                           std::int32_t pad, RowView row);
/// A Birdie sample laid out as [paradigm] input [start] target (truncated to L). Returns the
/// length; *target_start receives the position of [start] when not null.
std::int32_t birdie_row(const data::ObjectiveSample& sample, std::int32_t paradigm,
                        std::int32_t start, std::int32_t pad, RowView row,
                        std::int32_t* start_position = nullptr);

}  // namespace routescope::train
