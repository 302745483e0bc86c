#pragma once
// The S-LSTM's sentence node seen by every token (MODELS.md "S-LSTM": g in W[h_i; h̄ᴸ_i; h̄ᴿ_i; g]
// and in W_f'[h_i; g], c_g in c_g ⊙ s): y[b, t] = x[b] for every t < L (pads too), x [B, d] →
// y [B, L, d]. Backward: dx[b] += Σ_t dy[b, t].
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void sequence_broadcast_forward(T* y, const T* x, int B, int L, int d,
                                ThreadPool& pool = ThreadPool::serial());
template <class T>
void sequence_broadcast_backward(T* dx, const T* dy, int B, int L, int d,
                                 ThreadPool& pool = ThreadPool::serial());

/// A copy: no flops; writes B·L·d elements, reads B·d.
OpCost sequence_broadcast_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
