#pragma once
// The S-LSTM sentence node's gathering of the token cells (MODELS.md "S-LSTM": Σ_i f̂_i ⊙ c_i):
//
//   y[b, j] = Σ_{t < length_b} w[b, t, j] · x[b, t, j]
//
// over w, x [B, L, d] → y [B, d]. Backward: dw += dy ⊙ x, dx += dy ⊙ w, at t < length_b only.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// lengths [B] in [0, L], else routescope::Error.
template <class T>
void weighted_sequence_sum_forward(T* y, const T* w, const T* x, const std::int32_t* lengths, int B,
                                   int L, int d, ThreadPool& pool = ThreadPool::serial());
/// dw, dx may be null (not needed).
template <class T>
void weighted_sequence_sum_backward(T* dw, T* dx, const T* dy, const T* w, const T* x,
                                    const std::int32_t* lengths, int B, int L, int d,
                                    ThreadPool& pool = ThreadPool::serial());

/// One multiply-add per token element (2 flops); reads w and x, writes y.
OpCost weighted_sequence_sum_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
