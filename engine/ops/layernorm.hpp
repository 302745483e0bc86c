#pragma once
// LayerNorm over the last axis (Ba, Kiros & Hinton 2016): for each row x of width d,
//   μ = mean(x), σ² = mean((x − μ)²) (biased, as PyTorch), out = (x − μ)/√(σ² + eps) · w + b.
// The forward caches μ and r = 1/√(σ² + eps) per row for the backward (llm.c).
#include <cstdint>
#include <type_traits>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// x, out [rows, d]; weight, bias [d]; mean, rstd [rows] (written, for the backward).
template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                       std::int64_t rows, int d, T eps, ThreadPool& pool = ThreadPool::serial());

/// Accumulates into dx, dweight, dbias (dweight/dbias may be null).
template <class T>
void layernorm_backward(T* dx, std::type_identity_t<T>* dweight, std::type_identity_t<T>* dbias,
                        const T* dout, const T* x, const T* weight, const T* mean, const T* rstd,
                        std::int64_t rows, int d, ThreadPool& pool = ThreadPool::serial());

OpCost layernorm_cost(std::int64_t rows, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
