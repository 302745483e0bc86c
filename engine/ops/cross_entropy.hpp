#pragma once
// Softmax cross-entropy over a vocabulary with an ignore index (PyTorch's CrossEntropyLoss with
// ignore_index = −100, reduction = mean): loss = (1/N) Σ_{r: t_r ≠ −100} (lse_r − logits[r, t_r]),
// N the number of non-ignored rows. With N = 0 the loss is 0 and there is no gradient.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

inline constexpr std::int32_t kIgnoreIndex = -100;  // PyTorch's default ignore_index

/// logits [rows, V], targets [rows]; writes lse [rows] (log Σ exp of each row, for the backward)
/// and returns the mean loss (summed in double). Throws routescope::Error naming the row when a
/// target is neither −100 nor in [0, V).
template <class T>
double cross_entropy_forward(T* lse, const T* logits, const std::int32_t* targets,
                             std::int64_t rows, int V, ThreadPool& pool = ThreadPool::serial());

/// dlogits += dloss · (softmax(logits) − onehot(t)) / N on non-ignored rows.
template <class T>
void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const std::int32_t* targets,
                            std::int64_t rows, int V, T dloss = T(1),
                            ThreadPool& pool = ThreadPool::serial());

/// Rows whose target is not the ignore index.
std::int64_t cross_entropy_count(const std::int32_t* targets, std::int64_t rows);

OpCost cross_entropy_cost(std::int64_t rows, int V, int bytes_per_element = 4);

}  // namespace routescope::ops
