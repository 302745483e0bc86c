#pragma once
// The S-LSTM's normalisation of its five token gates (MODELS.md "S-LSTM": "(i, l, r, f, s) ←
// softmax over the five gates of their sigmoids"): for K arrays x_0 … x_{K−1} of n elements each
// (the sigmoids), element-wise
//
//   y_k[j] = exp(x_k[j]) / Σ_m exp(x_m[j])
//
// (computed with the maximum over k subtracted). Backward: dx_k += y_k (dy_k − Σ_m y_m dy_m).
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// y[k], x[k] point to n elements each, k < K.
template <class T>
void gate_softmax_forward(T* const* y, const T* const* x, int K, std::int64_t n,
                          ThreadPool& pool = ThreadPool::serial());
/// Reads the forward's outputs y.
template <class T>
void gate_softmax_backward(T* const* dx, const T* const* dy, const T* const* y, int K,
                           std::int64_t n, ThreadPool& pool = ThreadPool::serial());

/// Per element and gate: a subtraction, an exp (counted as one flop, as in the other ops), a sum
/// and a division.
OpCost gate_softmax_cost(int K, std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
