#pragma once
// GELU (Hendrycks & Gimpel 2016) in both forms MODELS.md uses:
//   gelu_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³)))   inside blocks (BiGS JAX parity)
//   gelu_erf(x)  = ½x(1 + erf(x/√2))                       heads (exact)
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void gelu_tanh_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool = ThreadPool::serial());
/// dx += dout · gelu_tanh'(x)
template <class T>
void gelu_tanh_backward(T* dx, const T* dout, const T* x, std::int64_t n,
                        ThreadPool& pool = ThreadPool::serial());

template <class T>
void gelu_erf_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool = ThreadPool::serial());
/// dx += dout · (Φ(x) + x·φ(x))
template <class T>
void gelu_erf_backward(T* dx, const T* dout, const T* x, std::int64_t n,
                       ThreadPool& pool = ThreadPool::serial());

/// About 10 flops per element (the tanh / erf counted as one).
OpCost gelu_cost(std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
