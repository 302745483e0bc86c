#pragma once
// The learning-rate schedule of docs/config.md: linear warmup, then cosine, linear or constant.
// s counts optimizer updates from 0:
//
//   factor(s) = (s + 1)/warmup                         s < warmup
//             = ½(1 + cos πt) | 1 − t | 1               otherwise (cosine | linear | constant),
//   t = min(1, (s − warmup) / max(1, steps − warmup))
//
// Each AdamW group's rate is its base rate (train.lr, or train.ssm_lr for the SSM group) × factor.
// t is clamped to 1 past train.steps so the rate stays 0 there (docs/decisions.md).
#include <cstdint>

#include "engine/core/config.hpp"

namespace routescope::train {

double lr_factor(std::int64_t step, const TrainConfig& t);

}  // namespace routescope::train
