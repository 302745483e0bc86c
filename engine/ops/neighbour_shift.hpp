#pragma once
// The S-LSTM's window-1 neighbours (MODELS.md "S-LSTM"): h̄ᴸ_i = h_{i−1}, h̄ᴿ_i = h_{i+1}, zero where
// the neighbour lies outside the sequence or is a pad. With offset −1 (left) or +1 (right):
//
//   y[b, t] = x[b, t + offset]   if 0 ≤ t + offset < length_b,   else 0
//
// over x, y [B, L, d]. A pad position t ≥ length_b still gets its real neighbour t − 1 = length_b −
// 1 (it is never read by a real position, and the reference computes it the same way).
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// offset is −1 (left neighbour) or +1 (right neighbour); anything else throws routescope::Error,
/// as does a length outside [0, L].
template <class T>
void neighbour_shift_forward(T* y, const T* x, const std::int32_t* lengths, int B, int L, int d,
                             int offset, ThreadPool& pool = ThreadPool::serial());
/// dx[b, t + offset] += dy[b, t] where the forward copied.
template <class T>
void neighbour_shift_backward(T* dx, const T* dy, const std::int32_t* lengths, int B, int L, int d,
                              int offset, ThreadPool& pool = ThreadPool::serial());

/// A copy: no flops; reads and writes B·L·d elements.
OpCost neighbour_shift_cost(int B, int L, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
