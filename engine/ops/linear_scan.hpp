#pragma once
// Birdie's gated linear recurrence (MODELS.md "Birdie"), as a scan over the sequence axis of
// [B, L, N] activations, channel by channel:
//
//   forward  (left to right):  h_t = keep_t · f_t ⊙ h_{t−1} + x_t      h_{−1} = 0
//   reverse  (right to left):  h_t = keep_t · f_t ⊙ h_{t+1} + x_t      h_L    = 0
//
// with x_t = i_t ⊙ z_t formed by the caller. keep [B, L] (nonzero: the carry passes into position
// t; 0: it is cut, as if f_t were 0) implements the reset mask of packed samples and the prefix
// LM's causal region; null means the carry always passes.
//
// The backward is the same recurrence run in the opposite time order (g the total gradient of h_t,
// "next" the position the carry flows to, "prev" the one it comes from):
//
//   g_t = dh_t + keep_next · f_next ⊙ g_next      dx_t += g_t      df_t += keep_t · g_t ⊙ h_prev
//
// Both directions are sequential running sums; no cumulative product of f over the length is ever
// formed, so nothing underflows at long L however small f is. The recurrence runs in the precision
// of T (MODELS.md: fp32 for the model; the tests use double).
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

enum class ScanDirection { forward, reverse };

/// Writes h[b, t, c] for channels c in [c0, c1) (other channels untouched), from f and x
/// [B, L, N]. h must not alias f or x.
template <class T>
void linear_scan_forward(T* h, const T* f, const T* x, const std::int32_t* keep, int B, int L,
                         int N, int c0, int c1, ScanDirection direction,
                         ThreadPool& pool = ThreadPool::serial());

/// Given dh (the whole gradient of h) and the forward's h, ACCUMULATES df and dx on the channels
/// [c0, c1).
template <class T>
void linear_scan_backward(T* df, T* dx, const T* dh, const T* h, const T* f,
                          const std::int32_t* keep, int B, int L, int N, int c0, int c1,
                          ScanDirection direction, ThreadPool& pool = ThreadPool::serial());

/// Forward cost of a scan over `channels` channels of [B, L, ·].
OpCost linear_scan_cost(int B, int L, int channels, int bytes_per_element = 4);

}  // namespace routescope::ops
