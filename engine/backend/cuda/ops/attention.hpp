#pragma once
// CUDA backend ops: attention and spatial_mix (exec.hpp says how an op is written; the math is
// engine/ops/attention.hpp's and engine/ops/spatial_mix.hpp's).
//
// attention: per (batch b, head h), with head h owning columns [h·dh, (h+1)·dh) of the [B, L, d]
// inputs (dh = d / heads) and nk = lengths[b] valid keys (L without lengths),
//   P = softmax(Q_h K_hᵀ / √dh) over the keys j < nk (P = 0 for j ≥ nk; all of P and out_h are 0
//   when nk = 0),  out_h = P V_h.
// causal (argument 4): query row i keeps only the keys j < min(nk, i + 1) (P = 0 beyond).
// Forward: (1) S = (1/√dh)·Q Kᵀ into probs by cuBLAS over all L keys (the lengths are device data,
// so the GEMM cannot be cut at nk); (2) a warp per row of probs takes the max and the sum of the
// exponentials over its kept keys (j < nk, and j ≤ i when causal; x.reduce_rows), then one index
// per element normalises and writes exact zeros beyond;
// (3) out = P V (beta = 0). The masked
// columns are zero, so the padded keys' rows of V contribute exactly nothing (as long as they are
// finite, which the padded positions of a projection are).
// Backward (accumulates): dV += Pᵀ dO; dP = dO Vᵀ into scratch; a warp per row sums P ⊙ dP and
// one index per element turns dP into dS = P ⊙ (dP − Σ_j P_j dP_j) / √dh over the row's kept keys
// (zero beyond); dQ += dS K,
// dK += dSᵀ Q.
// Heads are interleaved in [B, L, d], so no single stride walks every (b, h): per_head_gemm
// batches the longer of the two axes (stride L·d over b, or dh over h) and loops over the other.
// A length outside [0, L] (which the CPU rejects) is clamped to it: the host never reads lengths.
//
// spatial_mix: y[b] = W X_b + bias ⊗ 1 with W the top-left L×L block of weight [n, n] (leading
// dimension n), bias [n] using its first L; causal keeps only W[i, j] with j ≤ i.
// Forward: (1) causal only: the masked block (lower triangle of W, zeros above; the upper triangle
// is never read, whatever it holds) is copied into scratch, one index per element; (2) y = bias
// broadcast along C, one index per element; (3) one GEMM strided over B adds W X_b (beta = 1),
// W shared by the batch (stride 0).
// Backward (accumulates): dX_b += Wᵀ dY_b (the masked W when causal), one GEMM strided over B;
// G_b = dY_b X_bᵀ into scratch [B, L, L], one GEMM strided over B, then one index per (i, j) adds
// G_0 … G_{B−1} in order into dweight (only j ≤ i when causal); dbias[i] += Σ_b Σ_c dY[b, i, c],
// a warp per i (x.reduce_rows; not the CPU's order, within the tolerance).
//
// Operands (op_defs.cpp): attention q = 0, k = 1, v = 2, lengths = 3 (int32, optional), y = 4,
// saved probs = 5; spatial_mix x = 0, weight = 1, bias = 2, y = 3.
#include <cmath>
#include <cstdint>
#include <string>

#include "engine/backend/cuda/exec.hpp"
#include "engine/core/error.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool attention_implements(ops::OpId op) {
    return op == ops::OpId::attention || op == ops::OpId::spatial_mix;
}

// ---------------------------------------------------------------- attention

/// Valid keys of sequence b: lengths[b] clamped to [0, L], or L without lengths.
ROUTESCOPE_HD inline std::int64_t valid_keys(const std::int32_t* lengths, std::int64_t b,
                                             std::int64_t L) {
    if (!lengths) return L;
    const std::int64_t n = lengths[b];
    return n < 0 ? 0 : (n > L ? L : n);
}

/// Keys query row r of probs [B, heads, L, L] reads: the valid keys of its sequence, and only
/// j ≤ i (i = r mod L, the query's position) when causal.
ROUTESCOPE_HD inline std::int64_t kept_keys(const std::int32_t* lengths, std::int64_t r,
                                            std::int64_t heads, std::int64_t L, bool causal) {
    const std::int64_t nk = valid_keys(lengths, r / (heads * L), L), i = r % L;
    return causal && i + 1 < nk ? i + 1 : nk;
}

/// Softmax of row r of probs [B, heads, L, L] (scores on entry) over its kept keys, in three
/// steps: a warp per row finds the max (SoftmaxRowMax), a warp per row sums exp(s − max)
/// (SoftmaxRowSum), one index per element writes exp(s − max) / sum, 0 beyond the kept keys
/// (SoftmaxApply). One index walking each 512-wide row serially was 0.6 ms of attention's forward
/// at B 8, L 512 on an H100.
template <class T>
struct SoftmaxRowMax {
    using Acc = T;
    T* m;
    const T* p;
    const std::int32_t* lengths;
    std::int64_t heads, L;
    bool causal;
    ROUTESCOPE_HD Acc identity() const { return static_cast<T>(-INFINITY); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        return j < kept_keys(lengths, r, heads, L, causal) ? p[r * L + j]
                                                           : static_cast<T>(-INFINITY);
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return b > a ? b : a; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { m[r] = a; }
};

template <class T>
struct SoftmaxRowSum {
    using Acc = T;
    T* sum;
    const T* m;
    const T* p;
    const std::int32_t* lengths;
    std::int64_t heads, L;
    bool causal;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        return j < kept_keys(lengths, r, heads, L, causal) ? std::exp(p[r * L + j] - m[r]) : T(0);
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { sum[r] = a; }
};

template <class T>
struct SoftmaxApply {
    T* p;
    const T* m;
    const T* sum;
    const std::int32_t* lengths;
    std::int64_t heads, L;
    bool causal;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / L, j = i % L;
        p[i] = j < kept_keys(lengths, r, heads, L, causal) ? std::exp(p[i] - m[r]) / sum[r] : T(0);
    }
};

/// Row r of ds (dP on entry): dS = P ⊙ (dP − Σ_j P_j dP_j) · scale over the row's kept keys, 0
/// beyond: a warp per row sums P ⊙ dP (SoftmaxRowDot), one index per element writes dS
/// (SoftmaxBackwardApply).
template <class T>
struct SoftmaxRowDot {
    using Acc = T;
    T* dot;
    const T* ds;
    const T* p;
    const std::int32_t* lengths;
    std::int64_t heads, L;
    bool causal;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        return j < kept_keys(lengths, r, heads, L, causal) ? p[r * L + j] * ds[r * L + j] : T(0);
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { dot[r] = a; }
};

template <class T>
struct SoftmaxBackwardApply {
    T* ds;
    const T* p;
    const T* dot;
    const std::int32_t* lengths;
    std::int64_t heads, L;
    T scale;
    bool causal;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / L, j = i % L;
        ds[i] =
            j < kept_keys(lengths, r, heads, L, causal) ? p[i] * (ds[i] - dot[r]) * scale : T(0);
    }
};

/// Where the (b, h) matrix of an operand starts: base + b·per_b + h·per_h (elements).
struct HeadStrides {
    long long per_b, per_h;
};

/// The row-major GEMM (exec.hpp's row_major_gemm) once per (b, h), b < B, h < heads, each operand
/// offset by its HeadStrides: one strided batch over the longer axis, a host loop over the other.
template <class T, class X>
void per_head_gemm(X& x, int B, int heads, Trans ta, Trans tb, int M, int N, int K, T alpha,
                   const T* A, int lda, HeadStrides sa, const T* Bm, int ldb, HeadStrides sb,
                   T beta, T* C, int ldc, HeadStrides sc) {
    const bool batch_heads = heads >= B;
    const int outer = batch_heads ? B : heads, batch = batch_heads ? heads : B;
    const auto stride = [&](HeadStrides s) { return batch_heads ? s.per_h : s.per_b; };
    const auto at = [&](auto* p, HeadStrides s, int o) {
        return p ? p + (batch_heads ? o * s.per_b : o * s.per_h) : p;  // PlanExec: null
    };
    for (int o = 0; o < outer; ++o)
        x.gemm(row_major_gemm_batched<T>(ta, tb, M, N, K, alpha, at(A, sa, o), lda, stride(sa),
                                         at(Bm, sb, o), ldb, stride(sb), beta, at(C, sc, o), ldc,
                                         stride(sc), batch));
}

namespace detail {
inline void check_attention(const ops::OpCall& c) {
    if (c.i[3] < 1 || c.i[2] % c.i[3] != 0)
        throw Error("attention: width " + std::to_string(c.i[2]) +
                    " is not divisible by n_heads = " + std::to_string(c.i[3]));
    if (c.i[2] == 0 && c.i[0] * c.i[1] > 0)
        throw Error("attention: width 0 is not supported by the CUDA backend");
    if (c.i[4] != 0 && c.i[4] != 1) throw Error("attention: causal must be 0 or 1");
}
}  // namespace detail

/// Arguments: B, L, d, heads, causal.
template <class T, class X>
void attention_forward(X& x, const ops::OpCall& c) {
    detail::check_attention(c);
    if (c.i[0] * c.i[1] == 0) return;
    const auto B = static_cast<int>(c.i[0]), L = static_cast<int>(c.i[1]),
               d = static_cast<int>(c.i[2]), heads = static_cast<int>(c.i[3]);
    const int dh = d / heads;
    const T scale = T(1) / std::sqrt(T(dh));
    const HeadStrides act{static_cast<long long>(L) * d, dh},
        prob{static_cast<long long>(heads) * L * L, static_cast<long long>(L) * L};
    T* probs = c.value<T>(5);
    per_head_gemm<T>(x, B, heads, Trans::n, Trans::t, L, L, dh, scale, c.value<T>(0), d, act,
                     c.value<T>(1), d, act, T(0), probs, L, prob);
    {
        const std::int64_t rows = c.i[0] * c.i[3] * c.i[1];
        const std::int32_t* lengths = c.value<std::int32_t>(3);
        const bool causal = c.i[4] != 0;
        T* m = x.template scratch<T>(rows);
        T* sum = x.template scratch<T>(rows);
        x.reduce_rows(rows, c.i[1], SoftmaxRowMax<T>{m, probs, lengths, c.i[3], c.i[1], causal});
        x.reduce_rows(rows, c.i[1],
                      SoftmaxRowSum<T>{sum, m, probs, lengths, c.i[3], c.i[1], causal});
        x.each(rows * c.i[1], SoftmaxApply<T>{probs, m, sum, lengths, c.i[3], c.i[1], causal});
    }
    per_head_gemm<T>(x, B, heads, Trans::n, Trans::n, L, dh, L, T(1), probs, L, prob, c.value<T>(2),
                     d, act, T(0), c.value<T>(4), d, act);
}

template <class T, class X>
void attention_backward(X& x, const ops::OpCall& c) {
    detail::check_attention(c);
    if (c.i[0] * c.i[1] == 0) return;
    const auto B = static_cast<int>(c.i[0]), L = static_cast<int>(c.i[1]),
               d = static_cast<int>(c.i[2]), heads = static_cast<int>(c.i[3]);
    const int dh = d / heads;
    const T scale = T(1) / std::sqrt(T(dh));
    const HeadStrides act{static_cast<long long>(L) * d, dh},
        prob{static_cast<long long>(heads) * L * L, static_cast<long long>(L) * L};
    const T* dout = c.gradient<T>(4);
    const T* probs = c.value<T>(5);
    // Requested whatever the gradients: the plan and the run must ask for the same scratch.
    T* ds = x.template scratch<T>(c.i[0] * c.i[3] * c.i[1] * c.i[1]);
    T* dot = x.template scratch<T>(c.i[0] * c.i[3] * c.i[1]);
    if (T* dv = c.gradient<T>(2))
        per_head_gemm<T>(x, B, heads, Trans::t, Trans::n, L, dh, L, T(1), probs, L, prob, dout, d,
                         act, T(1), dv, d, act);
    T* dq = c.gradient<T>(0);
    T* dk = c.gradient<T>(1);
    if (!dq && !dk) return;
    per_head_gemm<T>(x, B, heads, Trans::n, Trans::t, L, L, dh, T(1), dout, d, act, c.value<T>(2),
                     d, act, T(0), ds, L, prob);
    {
        const std::int64_t rows = c.i[0] * c.i[3] * c.i[1];
        const std::int32_t* lengths = c.value<std::int32_t>(3);
        const bool causal = c.i[4] != 0;
        x.reduce_rows(rows, c.i[1],
                      SoftmaxRowDot<T>{dot, ds, probs, lengths, c.i[3], c.i[1], causal});
        x.each(rows * c.i[1],
               SoftmaxBackwardApply<T>{ds, probs, dot, lengths, c.i[3], c.i[1], scale, causal});
    }
    if (dq)
        per_head_gemm<T>(x, B, heads, Trans::n, Trans::n, L, dh, L, T(1), ds, L, prob,
                         c.value<T>(1), d, act, T(1), dq, d, act);
    if (dk)
        per_head_gemm<T>(x, B, heads, Trans::t, Trans::n, L, dh, L, T(1), ds, L, prob,
                         c.value<T>(0), d, act, T(1), dk, d, act);
}

// ---------------------------------------------------------------- spatial_mix

/// wm[i, j] = W[i, j] for j ≤ i, 0 above the diagonal (W read with leading dimension n).
template <class T>
struct CausalBlock {
    T* wm;
    const T* w;
    std::int64_t L, n;
    ROUTESCOPE_HD void operator()(std::int64_t e) const {
        const std::int64_t i = e / L, j = e % L;
        wm[e] = j <= i ? w[i * n + j] : T(0);
    }
};

/// y[b, i, c] = bias[i]
template <class T>
struct BroadcastPosition {
    T* y;
    const T* bias;
    std::int64_t L, C;
    ROUTESCOPE_HD void operator()(std::int64_t e) const { y[e] = bias[(e / C) % L]; }
};

/// dW[i, j] += G_0[i, j] + … + G_{B−1}[i, j] in order (only j ≤ i when causal); G [B, L, L].
template <class T>
struct SumIntoWeight {
    T* dw;
    const T* g;
    std::int64_t B, L, n;
    bool causal;
    ROUTESCOPE_HD void operator()(std::int64_t e) const {
        const std::int64_t i = e / L, j = e % L;
        if (causal && j > i) return;
        T acc = dw[i * n + j];
        for (std::int64_t b = 0; b < B; ++b)
            acc += g[b * L * L + e];
        dw[i * n + j] = acc;
    }
};

/// dbias[i] += Σ_b Σ_c dy[b, i, c]: a warp per position i (x.reduce_rows over the B·C values,
/// k = b·C + c; one index per position walking them serially was most of spatial_mix's backward).
template <class T>
struct PositionSum {
    using Acc = T;
    T* db;
    const T* dy;
    std::int64_t B, L, C;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t i, std::int64_t k) const {
        return dy[((k / C) * L + i) * C + k % C];
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t i, Acc a) const { db[i] += a; }
};

/// The mixing matrix the GEMMs use: weight's L×L block (leading dimension n), or its causal
/// masking in scratch (leading dimension L).
template <class T, class X>
const T* mixing_matrix(X& x, const ops::OpCall& c, int& ld) {
    const std::int64_t L = c.i[1], n = c.i[3];
    if (L > n) throw Error("spatial_mix: sequence length exceeds the mixing matrix size n");
    if (c.i[4] == 0) {
        ld = static_cast<int>(n);
        return c.value<T>(1);
    }
    T* wm = x.template scratch<T>(L * L);
    x.each(L * L, CausalBlock<T>{wm, c.value<T>(1), L, n});
    ld = static_cast<int>(L);
    return wm;
}

/// Arguments: B, L, C, n, causal.
template <class T, class X>
void spatial_mix_forward(X& x, const ops::OpCall& c) {
    const auto B = static_cast<int>(c.i[0]), L = static_cast<int>(c.i[1]),
               C = static_cast<int>(c.i[2]);
    if (c.i[0] * c.i[1] * c.i[2] == 0) return;
    int ld = 0;
    const T* w = mixing_matrix<T>(x, c, ld);
    T* y = c.value<T>(3);
    x.each(c.i[0] * c.i[1] * c.i[2], BroadcastPosition<T>{y, c.value<T>(2), c.i[1], c.i[2]});
    const long long seq = static_cast<long long>(L) * C;
    x.gemm(row_major_gemm_batched<T>(Trans::n, Trans::n, L, C, L, T(1), w, ld, 0, c.value<T>(0), C,
                                     seq, T(1), y, C, seq, B));
}

template <class T, class X>
void spatial_mix_backward(X& x, const ops::OpCall& c) {
    const auto B = static_cast<int>(c.i[0]), L = static_cast<int>(c.i[1]),
               C = static_cast<int>(c.i[2]);
    if (c.i[0] * c.i[1] * c.i[2] == 0) return;
    int ld = 0;
    const T* w = mixing_matrix<T>(x, c, ld);
    const T* dy = c.gradient<T>(3);
    const long long seq = static_cast<long long>(L) * C, block = static_cast<long long>(L) * L;
    // Requested whatever the gradients: the plan and the run must ask for the same scratch.
    T* g = x.template scratch<T>(c.i[0] * c.i[1] * c.i[1]);
    if (T* dx = c.gradient<T>(0))
        x.gemm(row_major_gemm_batched<T>(Trans::t, Trans::n, L, C, L, T(1), w, ld, 0, dy, C, seq,
                                         T(1), dx, C, seq, B));
    if (T* dw = c.gradient<T>(1)) {
        x.gemm(row_major_gemm_batched<T>(Trans::n, Trans::t, L, L, C, T(1), dy, C, seq,
                                         c.value<T>(0), C, seq, T(0), g, L, block, B));
        x.each(c.i[1] * c.i[1], SumIntoWeight<T>{dw, g, c.i[0], c.i[1], c.i[3], c.i[4] != 0});
    }
    if (T* db = c.gradient<T>(2))
        x.reduce_rows(c.i[1], c.i[0] * c.i[2], PositionSum<T>{db, dy, c.i[0], c.i[1], c.i[2]});
}

}  // namespace routescope::cuda::kernels
