#pragma once
// The causal long convolution of a BiGS SSM with its D skip (MODELS.md, "The SSM of BiGS"):
//
//   y = irfft( rfft(pad(u, 2L)) · rfft(pad(K, 2L)) )[0:L] + D·u
//
// u, y [B, L, d] row-major (channels last); K [H, L]; D [H]. Channel c uses kernel and skip
// g = c / (d/H): H = 1 shares one kernel over all d channels, H > 1 splits the channels into H
// contiguous groups. Real FFTW transforms of size 2L, batched over a block of channels.
//
// Backward (correlations, also by FFT):
//   du[t] += Σ_{s≥t} K[s−t]·dy[s] + D·dy[t]
//   dK[g][j] += Σ_{b, c∈g} Σ_t u[t]·dy[t+j]
//   dD[g] += Σ_{b, c∈g} Σ_t u[t]·dy[t]
//
// Work is split into fixed items (batch × channel block); every sum over items runs in item order
// after the threads finish, so results are bit-identical whatever the thread count. Plans use
// FFTW_ESTIMATE (deterministic, unlike FFTW_MEASURE which picks algorithms by timing).
#include <cstddef>
#include <memory>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// Plans and buffers of fft_conv for one shape and thread count; create once, reuse every step.
/// Not shared between concurrent calls.
template <typename T>
class FftConvWorkspace {
public:
    /// threads: the most workers a ThreadPool passed with this workspace may have.
    FftConvWorkspace(int B, int L, int d, int H, int threads);
    ~FftConvWorkspace();
    FftConvWorkspace(const FftConvWorkspace&) = delete;
    FftConvWorkspace& operator=(const FftConvWorkspace&) = delete;

    struct Impl;
    Impl& impl() { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

/// y [B, L, d] ← conv(u, K) + D·u (overwrites y).
template <typename T>
void fft_conv_forward(T* y, const T* u, const T* K, const T* D, int B, int L, int d, int H,
                      FftConvWorkspace<T>& ws, ThreadPool& pool);

/// ACCUMULATES (+=) into du [B, L, d], dK [H, L] and dD [H] from dy [B, L, d].
template <typename T>
void fft_conv_backward(T* du, T* dK, T* dD, const T* dy, const T* u, const T* K, const T* D, int B,
                       int L, int d, int H, FftConvWorkspace<T>& ws, ThreadPool& pool);

/// Cost of the forward pass, a real FFT of size n counted as 2.5·n·log2(n) flops.
OpCost fft_conv_cost(int B, int L, int d, int H, std::size_t scalar_bytes);

}  // namespace routescope::ops
