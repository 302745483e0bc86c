#pragma once
// tanh as an op (the classification head's pooler, S-LSTM). The backward reads the forward's
// OUTPUT y: dtanh/dx = 1 − y².
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void tanh_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool = ThreadPool::serial());
/// dx += dout · (1 − out²)
template <class T>
void tanh_backward(T* dx, const T* dout, const T* out, std::int64_t n,
                   ThreadPool& pool = ThreadPool::serial());

OpCost tanh_cost(std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
