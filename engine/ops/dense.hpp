#pragma once
// Dense (Linear) layer: y = x Wᵀ + b, x [rows, in] (rows = B·L), W [out, in] (PyTorch layout),
// b [out] or null. The GEMM is OpenBLAS (cpu::gemm, engine/backend/cpu/blas.hpp) on the
// row-major buffers, split across the pool by rows (or by output features when there are fewer
// rows than features); OpenBLAS itself runs single-threaded in each worker.
// Pointers that may be null are declared std::type_identity_t<T>* (here and in every op) so a
// caller can pass nullptr without spelling out T: T is deduced from the other arguments.
#include <cstdint>
#include <type_traits>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void dense_forward(T* y, const T* x, const T* weight, const std::type_identity_t<T>* bias,
                   std::int64_t rows, int in, int out, ThreadPool& pool = ThreadPool::serial());

/// Accumulates: dx += dy W, dweight += dyᵀ x, dbias += Σ_rows dy. Any of dx, dweight, dbias may
/// be null (not needed, e.g. the input is token data or the layer has no bias).
template <class T>
void dense_backward(std::type_identity_t<T>* dx, std::type_identity_t<T>* dweight,
                    std::type_identity_t<T>* dbias, const T* dy, const T* x, const T* weight,
                    std::int64_t rows, int in, int out, ThreadPool& pool = ThreadPool::serial());

/// Forward cost: the GEMM's 2·rows·in·out (the bias's rows·out adds are not counted: < 1/in of it).
OpCost dense_cost(std::int64_t rows, int in, int out, int bytes_per_element = 4);

}  // namespace routescope::ops
