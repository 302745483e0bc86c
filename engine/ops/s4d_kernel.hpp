#pragma once
// The S4D convolution kernel of a BiGS SSM from its parameters (MODELS.md, "The SSM of BiGS"):
//
//   A_n = min(A_re_n, −1e−4) + i·A_im_n          Δ = exp(log_step)
//   K[l] = Re( Σ_n C_n · (exp(Δ·A_n) − 1) / A_n · exp(l·Δ·A_n) ),   l = 0..L−1
//
// zero-order hold, no factor 2, exp(l·Δ·A_n) evaluated directly for every l (not by powers).
// Shapes (row-major): A_re, A_im [H, N]; C [H, N, 2] (real, imag); log_step [H]; K [H, L].
// The D skip of the SSM is applied by fft_conv, not here.
//
// Whatever T, the complex arithmetic and the sums run in double: the phase l·Δ·A_im reaches
// 512 · 1 · 1303 ≈ 6.7e5 rad at L = 512 and the largest HiPPO mode, where one float ulp is
// 0.06 rad (docs/decisions.md, "S4D kernel math in double"). Results do not depend on the
// thread count: every output element is reduced in a fixed order inside one work item.
#include <cstddef>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// A_re is clipped at this value from above (MODELS.md); the gradient to A_re is zero there.
inline constexpr double kS4dAReMax = -1e-4;

/// K [H, L] ← the kernel of the parameters (overwrites K).
template <typename T>
void s4d_kernel_forward(T* K, const T* A_re, const T* A_im, const T* C, const T* log_step, int H,
                        int N, int L, ThreadPool& pool);

/// Doubles of caller-provided scratch that s4d_kernel_backward needs (one per mode).
inline std::size_t s4d_kernel_scratch_size(int H, int N) {
    return static_cast<std::size_t>(H) * static_cast<std::size_t>(N);
}

/// Given dK [H, L], ACCUMULATES (+=) into dA_re (zero where A_re is clipped), dA_im, dC [H, N, 2]
/// and dlog_step [H]. `scratch` holds s4d_kernel_scratch_size(H, N) doubles.
template <typename T>
void s4d_kernel_backward(T* dA_re, T* dA_im, T* dC, T* dlog_step, const T* dK, const T* A_re,
                         const T* A_im, const T* C, const T* log_step, int H, int N, int L,
                         double* scratch, ThreadPool& pool);

/// Cost of the forward pass; a transcendental (exp, sin, cos) counts as one flop.
OpCost s4d_kernel_cost(int H, int N, int L, std::size_t scalar_bytes);

}  // namespace routescope::ops
