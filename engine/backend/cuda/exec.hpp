#pragma once
// How the CUDA backend's ops are written: once, as function templates over an executor X, so that
// the host test suite runs the same code the GPU runs (docs/engine.md, "The CUDA backend").
//
// An op (engine/backend/cuda/ops/*.hpp) is a short host-side orchestration of three kinds of step:
//
//   x.each(n, body)          body(i) for every i in [0, n), in any order and concurrently: one
//                            GPU thread per index. A body is a small struct of pointers and sizes
//                            with `ROUTESCOPE_HD void operator()(std::int64_t i) const`; it writes
//                            only what index i owns, so no two indices write the same element and
//                            no atomics are needed (deterministic by construction). A reduction
//                            is owned by one index and runs in a fixed order.
//   x.reduce_rows(rows, w, body)
//                            for every row r < rows, body.finish(r, a) with a = the terms
//                            body.term(r, c), c < w, combined by body.combine in a fixed order:
//                            lane l = c mod 32 folds its columns in order, then the 32 lanes
//                            combine as a shuffle tree (l += l + 16, l + 8, …, l + 1; lane 0's is
//                            a). One warp per row on the GPU (coalesced, and a row of 30,522
//                            logits is 954 steps, not 30,522); the host runs the same order
//                            (reduce_row_in_warp_order below). Body: `using Acc` (float, double
//                            or Acc2<double>), identity(), term(r, c), combine(a, b), finish(r, a).
//   x.gemm(g)                a GEMM as cuBLAS takes it (Gemm below: column-major, strided batch).
//   x.rfft(in, out, n, b) /  batched real FFTs of size n as cuFFT computes them (unnormalised;
//   x.irfft(in, out, n, b)   irfft may overwrite its input, as cuFFT's C2R does).
//
// and device scratch from x.scratch<U>(count), valid until the op returns. The op never reads
// device memory on the host: its control flow depends only on the call's arguments.
//
// Executors:
//   CudaExec (cuda_exec.cuh)     launches the bodies as kernels on the backend's stream, cuBLAS,
//                                cuFFT with the plans made in prepare(), scratch from prepare().
//   PlanExec (plan_exec.hpp)     runs nothing; records the scratch bytes and FFT plans a call
//                                needs, so prepare() makes them (none are made inside a step).
//   HostExec (host_exec.hpp)     runs the bodies in a loop on the host, the GEMMs by cuBLAS's
//                                definition and the FFTs by the DFT's: the test suite checks every
//                                op's indexing, transposes and layouts against the CPU backend
//                                without a GPU. What only a GPU can show: launch limits, the
//                                libraries themselves, memory errors (compute-sanitizer).
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "engine/core/hd.hpp"

namespace routescope::cuda {

/// Interleaved complex, layout-compatible with cufftComplex / cufftDoubleComplex.
template <class T>
struct Complex {
    T re, im;
};

enum class Trans : std::uint8_t { n, t };

/// How an executor's float32 GEMMs multiply (train.precision, Backend::set_precision): fp32
/// products, or the inputs rounded to TF32 (10 explicit mantissa bits) or bfloat16 (7) with the
/// products summed in fp32 — cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 / _FAST_16BF on float32
/// matrices. Outputs stay float32 in every case; double GEMMs are never rounded.
enum class GemmInputs : std::uint8_t { fp32, tf32, bf16 };

/// Explicit mantissa bits a GemmInputs keeps (float32: 23).
constexpr int mantissa_bits(GemmInputs g) {
    return g == GemmInputs::tf32 ? 10 : g == GemmInputs::bf16 ? 7 : 23;
}

/// x rounded to nearest, ties to even, at `bits` explicit mantissa bits (as the conversion to
/// bfloat16 or TF32 rounds); infinities and NaN unchanged, a carry into the exponent as in IEEE.
inline float round_mantissa(float x, int bits) {
    if (bits >= 23 || !std::isfinite(x)) return x;
    auto u = std::bit_cast<std::uint32_t>(x);
    const int drop = 23 - bits;
    const std::uint32_t lsb = (u >> drop) & 1u;
    u += (1u << (drop - 1)) - 1u + lsb;
    u &= ~((1u << drop) - 1u);
    return std::bit_cast<float>(u);
}

/// For b < batch: C_b = alpha·op(A_b)·op(B_b) + beta·C_b in column-major storage, op(A) m×k,
/// op(B) k×n, C m×n; X_b = X + b·stride_x. Exactly cublas<t>gemmStridedBatched's arguments.
template <class T>
struct Gemm {
    Trans ta = Trans::n, tb = Trans::n;
    int m = 0, n = 0, k = 0;
    T alpha = 1;
    const T* A = nullptr;
    int lda = 0;
    long long stride_a = 0;
    const T* B = nullptr;
    int ldb = 0;
    long long stride_b = 0;
    T beta = 0;
    T* C = nullptr;
    int ldc = 0;
    long long stride_c = 0;
    int batch = 1;
};

/// The same GEMM for row-major matrices: C [M, N] = alpha·op(A)·op(B) + beta·C with op(A) [M, K],
/// op(B) [K, N]; lda, ldb, ldc are the row strides (elements) of A, B, C as stored. Row-major C is
/// column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a row-major matrix read column-major is its transpose, so
/// the column-major call takes B's memory first with B's flag and A's second with A's.
template <class T>
Gemm<T> row_major_gemm(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A, int lda,
                       const T* B, int ldb, T beta, T* C, int ldc) {
    Gemm<T> g;
    g.ta = tb;
    g.tb = ta;
    g.m = N;
    g.n = M;
    g.k = K;
    g.alpha = alpha;
    g.A = B;
    g.lda = ldb;
    g.B = A;
    g.ldb = lda;
    g.beta = beta;
    g.C = C;
    g.ldc = ldc;
    return g;
}

/// Batched row-major GEMM: the same with matrix b at A + b·stride_a (and so on) for b < batch.
template <class T>
Gemm<T> row_major_gemm_batched(Trans ta, Trans tb, int M, int N, int K, T alpha, const T* A,
                               int lda, long long stride_a, const T* B, int ldb, long long stride_b,
                               T beta, T* C, int ldc, long long stride_c, int batch) {
    Gemm<T> g = row_major_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    g.stride_a = stride_b;
    g.stride_b = stride_a;
    g.stride_c = stride_c;
    g.batch = batch;
    return g;
}

/// Two sums carried together through a row reduction (x.reduce_rows).
template <class T>
struct Acc2 {
    T a, b;
};

/// x.reduce_rows's order for one row, as the GPU's warp computes it (exec.hpp's file comment).
template <class Body>
ROUTESCOPE_HD typename Body::Acc reduce_row_in_warp_order(const Body& body, std::int64_t r,
                                                          std::int64_t width) {
    typename Body::Acc lane[32];
    for (int l = 0; l < 32; ++l)
        lane[l] = body.identity();
    for (std::int64_t c = 0; c < width; ++c)
        lane[c % 32] = body.combine(lane[c % 32], body.term(r, c));
    for (int off = 16; off > 0; off /= 2)
        for (int l = 0; l < off; ++l)
            lane[l] = body.combine(lane[l], lane[l + off]);
    return lane[0];
}

/// Chunks of a column reduction over many rows (dense's bias gradient, LayerNorm's parameter
/// gradients, fft_conv's kernel correlation): one index per (chunk, column) sums its rows in
/// order, then one index per column sums the chunks in order. A function of the shape only, so
/// the order (and the result) is the same on every run. Enough chunks that chunks·width is about
/// 64 Ki indices, each at least 32 rows.
inline std::int64_t column_chunks(std::int64_t rows, std::int64_t width) {
    const std::int64_t want = (65536 + width - 1) / (width > 0 ? width : 1);
    const std::int64_t most = (rows + 31) / 32;
    const std::int64_t n = want < most ? want : most;
    return n > 1 ? n : 1;
}
inline std::int64_t chunk_rows(std::int64_t rows, std::int64_t chunks) {
    return (rows + chunks - 1) / chunks;
}

/// Scratch is handed out by bumping an offset; every piece starts on a 256-byte boundary (what
/// cudaMalloc guarantees, and enough for any vector load).
inline std::size_t scratch_bump(std::size_t& top, std::size_t bytes) {
    const std::size_t at = (top + 255) / 256 * 256;
    top = at + bytes;
    return at;
}

/// Threads' share of a flat reduction: sum_squares sums chunks of this many elements (one index
/// each, in order), then one index sums the chunks in order.
inline constexpr std::int64_t kReduceChunk = 4096;

}  // namespace routescope::cuda
