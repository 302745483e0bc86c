#pragma once
// gMLP's token mixing (MODELS.md "gMLP (spatial gating unit)"): a learned matrix over positions,
// applied to every channel of every sequence,
//
//   y[b, i, c] = Σ_j W[i, j] · x[b, j, c] + bias[i]        i, j < L
//
// x, y [B, L, C] row-major; W [n, n] row-major and bias [n] are sized by n = model.max_len and only
// their leading [L, L] / [L] part is used (equivalent to padding the sequence to n with zeros, see
// docs/decisions.md). causal = true uses only j ≤ i (MODELS.md: "zero W's strict upper
// triangle"): the upper triangle is never read and gets no gradient, whatever it holds.
//
// GEMMs are Eigen on row-major maps over blocks of kSpatialMixBlock rows, split across the pool;
// every output element (and every gradient element) is owned by one worker, so results are
// bit-identical for a fixed thread count.
#include <cstdint>
#include <type_traits>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// Rows of W per work item: large enough for the GEMM to run near peak, small enough that the
/// causal diagonal blocks (triangular products) stay a small share of the work.
inline constexpr int kSpatialMixBlock = 64;

template <class T>
void spatial_mix_forward(T* y, const T* x, const T* weight, const T* bias, int B, int L, int C,
                         int n, bool causal, ThreadPool& pool = ThreadPool::serial());

/// Accumulates: dx += Wᵀ dy (per sequence), dweight[i, j] += Σ_b,c dy[b, i, c] x[b, j, c] (only
/// j ≤ i when causal), dbias[i] += Σ_b,c dy[b, i, c]. Any of dx, dweight, dbias may be null.
template <class T>
void spatial_mix_backward(std::type_identity_t<T>* dx, std::type_identity_t<T>* dweight,
                          std::type_identity_t<T>* dbias, const T* dy, const T* x, const T* weight,
                          int B, int L, int C, int n, bool causal,
                          ThreadPool& pool = ThreadPool::serial());

/// Forward cost: 2·B·L²·C for the full matrix (half of it when causal), reading W's [L, L] part.
OpCost spatial_mix_cost(int B, int L, int C, bool causal, int bytes_per_element = 4);

}  // namespace routescope::ops
