#pragma once
// flip along the sequence axis over the FULL padded length L (MODELS.md): out[b, l] = x[b, L−1−l].
// Pads therefore come first in the flipped sequence, as in the BiGS code.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// out must not alias x.
template <class T>
void flip_forward(T* out, const T* x, int B, int L, int d, ThreadPool& pool = ThreadPool::serial());
/// dx[b, L−1−l] += dout[b, l]
template <class T>
void flip_backward(T* dx, const T* dout, int B, int L, int d,
                   ThreadPool& pool = ThreadPool::serial());

OpCost flip_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
