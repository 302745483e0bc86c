#pragma once
// What evaluation reads from logits [rows, width], per row: the prediction (the first index of the
// row's maximum; a NaN is never the maximum, and a row of NaN predicts 0) and the negative
// log-likelihood at the row's target,
//
//   nll = log Σ_i exp(x_i − max) + max − x_target      (the sum in double)
//
// NaN where the target lies outside [0, width) (an ignored position, −100). Not an op of the op
// table: nothing differentiates through it; a backend runs it where the logits live
// (Backend::row_readout), so an evaluation batch moves 12 bytes per row to the host, not 4·width.
#include <cstdint>

#include "engine/core/thread_pool.hpp"

namespace routescope::ops {

/// targets may be null (nll then untouched, and may be null too).
void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                 std::int64_t width, std::int32_t* argmax, double* nll,
                 ThreadPool& pool = ThreadPool::serial());

}  // namespace routescope::ops
