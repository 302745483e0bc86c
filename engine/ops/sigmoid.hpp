#pragma once
// sigmoid σ(x) = 1/(1 + e^−x) as an op (Birdie and S-LSTM gates). The backward reads the forward's
// OUTPUT y: dσ/dx = y(1 − y).
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void sigmoid_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool = ThreadPool::serial());
/// dx += dout · out · (1 − out)
template <class T>
void sigmoid_backward(T* dx, const T* dout, const T* out, std::int64_t n,
                      ThreadPool& pool = ThreadPool::serial());

OpCost sigmoid_cost(std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
