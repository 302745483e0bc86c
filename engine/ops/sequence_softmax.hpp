#pragma once
// The S-LSTM sentence node's weights (MODELS.md "S-LSTM": "softmax over {f_1'..f_n', f_g} along
// the sequence (pads excluded)"): per sequence b and channel j, one softmax over the length_b
// token values x[b, t, j] (t < length_b) and the node's own value x_own[b, j]:
//
//   w[b, t, j]   = exp(x[b, t, j]) / Z        (t < length_b; 0 at pads)
//   w_own[b, j]  = exp(x_own[b, j]) / Z,      Z = Σ_{t < length_b} exp(x[b, t, j]) + exp(x_own[b,
//   j])
//
// (computed with the maximum subtracted). Backward, with S = Σ_t w dw + w_own dw_own:
// dx += w (dw − S), dx_own += w_own (dw_own − S); pads receive nothing.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// x, w [B, L, d]; x_own, w_own [B, d]; lengths [B] in [0, L] (else routescope::Error).
template <class T>
void sequence_softmax_forward(T* w, T* w_own, const T* x, const T* x_own,
                              const std::int32_t* lengths, int B, int L, int d,
                              ThreadPool& pool = ThreadPool::serial());
/// Reads the forward's outputs w, w_own.
template <class T>
void sequence_softmax_backward(T* dx, T* dx_own, const T* dw, const T* dw_own, const T* w,
                               const T* w_own, const std::int32_t* lengths, int B, int L, int d,
                               ThreadPool& pool = ThreadPool::serial());

/// Per element: a subtraction, an exp, a sum and a multiplication (4 flops).
OpCost sequence_softmax_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
