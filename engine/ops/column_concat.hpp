#pragma once
// Side-by-side concatenation of K row-aligned pieces x_k [rows, cols_k] into y [rows, Σ cols_k]:
// the inputs [h_i ; h̄ᴸ_i ; h̄ᴿ_i ; g], [g ; h̄] and [h_i ; g] of the S-LSTM's W, W_g and W_f'
// (MODELS.md "S-LSTM"). The inverse of column_slice; backward: dx_k += the columns of dy it filled.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// x[k] points to rows·cols[k] elements, k < K.
template <class T>
void column_concat_forward(T* y, const T* const* x, const int* cols, int K, std::int64_t rows,
                           ThreadPool& pool = ThreadPool::serial());
/// dx[k] may be null (that piece needs no gradient).
template <class T>
void column_concat_backward(T* const* dx, const T* dy, const int* cols, int K, std::int64_t rows,
                            ThreadPool& pool = ThreadPool::serial());

/// A copy: no flops; reads and writes rows·total_cols elements.
OpCost column_concat_cost(std::int64_t rows, int total_cols, int bytes_per_element = 4);

}  // namespace routescope::ops
