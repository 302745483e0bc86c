#pragma once
// Columns [begin, begin + count) of x [rows, cols] as a contiguous y [rows, count]: gMLP's
// split(Z) into the bypass half Z1 and the gated half Z2 (MODELS.md "gMLP").
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

template <class T>
void column_slice_forward(T* y, const T* x, std::int64_t rows, int cols, int begin, int count,
                          ThreadPool& pool = ThreadPool::serial());

/// Accumulates dy into columns [begin, begin + count) of dx; the other columns are untouched.
template <class T>
void column_slice_backward(T* dx, const T* dy, std::int64_t rows, int cols, int begin, int count,
                           ThreadPool& pool = ThreadPool::serial());

/// A copy: no flops; reads and writes rows·count elements.
OpCost column_slice_cost(std::int64_t rows, int count, int bytes_per_element = 4);

}  // namespace routescope::ops
