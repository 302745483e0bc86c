#pragma once
// The arms of the Birdie mixture (TASKS.md "Objectives"): each an objective of
// engine/data/objectives with its parameters. The catalogue (train.birdie.arms names a subset;
// null = all, in this order):
//
//   infilling            span corruption, r = 0.15, μ = 3 (T5's setting)
//   infilling_long       span corruption, r = 0.5, μ = 8
//   autoencoding         span corruption r = 0.15, μ = 3, target the whole original
//   deshuffling_50       50% of the positions permuted
//   deshuffling_100      every position permuted
//   copying
//   selective_copying    k = 1..3 queries (as the row allows), 3 tokens either side, spans 2..6
//   prefix_lm            split by train.prefix_fraction
//   next_token
//
// A row's original is its packed training sequence without the leading [CLS], cut so the row
// [paradigm] input [start] target fits in L = data.seq_len (room = L − 2): room/2 tokens when input
// and target both hold about the original (infilling, autoencoding, deshuffling, copying), room
// when they share it (prefix LM, next token), room minus the queries and the target for selective
// copying.
#include <optional>
#include <string>
#include <vector>

#include "engine/data/objectives/birdie_objectives.hpp"
#include "engine/train/objective_rows.hpp"

namespace routescope::train {

struct BirdieArm {
    std::string name;
    data::Paradigm paradigm = data::Paradigm::next_token;
    data::SpanParams spans;  ///< infilling, autoencoding
    double fraction = 1.0;   ///< deshuffling
};

const std::vector<BirdieArm>& birdie_arm_catalogue();
/// The arms train.birdie.arms names (null: the whole catalogue). ConfigError naming the key for
/// an unknown or repeated name or an empty list.
std::vector<BirdieArm> birdie_arms(const std::optional<std::vector<std::string>>& names);

/// The arm's sample of the packed sequence ids[0, length) laid out in `row` (objective_rows.hpp).
std::int32_t birdie_arm_row(const BirdieArm& arm, const std::int32_t* ids, std::int32_t length,
                            const data::BirdieVocabulary& vocab, double prefix_fraction,
                            std::int32_t pad, data::RandomStream& rng, RowView row);

}  // namespace routescope::train
