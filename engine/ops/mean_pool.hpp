#pragma once
// Mean pooling over the non-pad tokens (the classification head's default pool, MODELS.md):
// out[b] = (1/len_b) Σ_{l < len_b} x[b, l]. A sequence with len_b = 0 pools to zero.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// x [B, L, d], lengths [B] (valid tokens, padding at the end), out [B, d].
/// Throws routescope::Error when a length is outside [0, L].
template <class T>
void mean_pool_forward(T* out, const T* x, const std::int32_t* lengths, int B, int L, int d,
                       ThreadPool& pool = ThreadPool::serial());
/// dx[b, l] += dout[b] / len_b for l < len_b.
template <class T>
void mean_pool_backward(T* dx, const T* dout, const std::int32_t* lengths, int B, int L, int d,
                        ThreadPool& pool = ThreadPool::serial());

OpCost mean_pool_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
