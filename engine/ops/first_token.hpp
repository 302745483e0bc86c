#pragma once
// Row select of the first position (the classification head's `first` pool, BERT's [CLS]):
// y[b] = x[b, 0] for x [B, L, d], y [B, d]; the backward adds dy[b] into dx[b, 0].
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void first_token_forward(T* y, const T* x, int B, int L, int d,
                         ThreadPool& pool = ThreadPool::serial());
/// Accumulates: dx[b, 0] += dy[b].
template <class T>
void first_token_backward(T* dx, const T* dy, int B, int L, int d,
                          ThreadPool& pool = ThreadPool::serial());

/// Forward cost: B·d elements read and written, no arithmetic.
OpCost first_token_cost(int B, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
