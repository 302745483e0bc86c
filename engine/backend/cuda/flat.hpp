#pragma once
// The CUDA backend's flat-buffer operations and read-outs (Backend's second half), for any
// executor (exec.hpp): Σx² in double in a fixed order, x ← a·x, AdamW over several spans in one
// launch, and the per-row read-outs of evaluation.
#include <cmath>
#include <cstdint>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda/exec.hpp"
#include "engine/core/half_bits.hpp"
#include "engine/ops/element_math.hpp"

namespace routescope::cuda::flat {

/// partial[j] = Σ x² over chunk j (kReduceChunk elements, in order, in double).
struct SquaresChunk {
    double* partial;
    const float* x;
    std::int64_t n;
    ROUTESCOPE_HD void operator()(std::int64_t j) const {
        const std::int64_t begin = j * kReduceChunk;
        const std::int64_t end = begin + kReduceChunk < n ? begin + kReduceChunk : n;
        double sum = 0;
        for (std::int64_t i = begin; i < end; ++i)
            sum += static_cast<double>(x[i]) * x[i];
        partial[j] = sum;
    }
};
/// out[0] = Σ partial, in order (one index).
struct SumPartials {
    double* out;
    const double* partial;
    std::int64_t chunks;
    ROUTESCOPE_HD void operator()(std::int64_t) const {
        double sum = 0;
        for (std::int64_t j = 0; j < chunks; ++j)
            sum += partial[j];
        out[0] = sum;
    }
};

inline std::int64_t chunks_of(std::int64_t n) {
    return (n + kReduceChunk - 1) / kReduceChunk;
}

/// Σ x² into result[0] (device memory); scratch from the executor (chunks_of(n) doubles).
template <class X>
void sum_squares(X& x, const float* data, std::int64_t n, double* result) {
    const std::int64_t chunks = chunks_of(n);
    double* partial = x.template scratch<double>(chunks);
    x.each(chunks, SquaresChunk{partial, data, n});
    x.each(1, SumPartials{result, partial, chunks});
}

struct Scale {
    float* x;
    float a;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { x[i] *= a; }
};

/// Up to this many AdamW spans go to one launch (by value, in the kernel's parameters).
inline constexpr int kAdamWSpans = 32;

/// One span's pointers and per-element coefficients (computed on the host in double, as the CPU).
struct AdamWPiece {
    float* p;
    const float* g;
    float* m;
    float* v;
    std::int64_t begin;  ///< first global index of the span in this launch
    ops::element::AdamWCoefficients c;
};
struct AdamWBody {
    AdamWPiece piece[kAdamWSpans];
    int count;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        int k = 0;
        while (k + 1 < count && i >= piece[k + 1].begin)
            ++k;
        const AdamWPiece& s = piece[k];
        const std::int64_t j = i - s.begin;
        ops::element::adamw_element(s.p[j], s.g[j], s.m[j], s.v[j], s.c);
    }
};
// A kernel's parameters are passed by value in at most 4 KB (CUDA before 12.1 and sm < 70).
static_assert(sizeof(AdamWBody) <= 4096, "AdamWBody must fit a kernel's 4 KB of parameters");

/// AdamW over all spans: one launch per kAdamWSpans spans.
template <class X>
void adamw(X& x, const AdamWSpan* spans, std::size_t count) {
    for (std::size_t first = 0; first < count; first += kAdamWSpans) {
        AdamWBody body{};
        std::int64_t total = 0;
        for (std::size_t k = first; k < count && k < first + kAdamWSpans; ++k) {
            const AdamWSpan& s = spans[k];
            body.piece[body.count++] = {s.params, s.grads, s.m,
                                        s.v,      total,   routescope::adamw_coefficients(s)};
            total += static_cast<std::int64_t>(s.n);
        }
        x.each(total, body);
    }
}

/// Backend::row_readout as two row reductions (x.reduce_rows: a warp per row, coalesced; a row of
/// 30,522 logits is 954 steps per lane, not one thread walking it twice):
///   RowArgmax  the first index of the row's maximum (engine/ops/row_readout.hpp: a NaN is never
///              the maximum; a row of NaN predicts 0), and the maximum into nll[r];
///   RowNll     nll[r] = log Σ_j exp(x_j − max) + max − x_target in double, NaN when the target
///              lies outside [0, width).
struct RowArgmax {
    using Acc = Acc2<double>;  ///< (value, index); index `width` is "none yet"
    const float* logits;
    std::int64_t width;
    std::int32_t* argmax;
    double* top;  ///< the maximum per row (nll's storage), or null
    ROUTESCOPE_HD Acc identity() const { return {-INFINITY, static_cast<double>(width)}; }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        const float v = logits[r * width + j];
        if (v != v) return identity();
        return {static_cast<double>(v), static_cast<double>(j)};
    }
    ROUTESCOPE_HD Acc combine(Acc p, Acc q) const {
        return (q.a > p.a || (q.a == p.a && q.b < p.b)) ? q : p;
    }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const {
        const bool found = a.b < static_cast<double>(width);
        argmax[r] = found ? static_cast<std::int32_t>(a.b) : 0;
        if (top) top[r] = found ? a.a : static_cast<double>(logits[r * width]);
    }
};

struct RowNll {
    using Acc = double;
    const float* logits;
    const std::int32_t* targets;
    std::int64_t width;
    double* nll;  ///< holds the row's maximum (RowArgmax) until finish
    ROUTESCOPE_HD Acc identity() const { return 0.0; }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        return std::exp(static_cast<double>(logits[r * width + j]) - nll[r]);
    }
    ROUTESCOPE_HD Acc combine(Acc p, Acc q) const { return p + q; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc sum) const {
        const std::int32_t t = targets[r];
        nll[r] = t < 0 || t >= width
                     ? static_cast<double>(NAN)
                     : std::log(sum) + nll[r] - static_cast<double>(logits[r * width + t]);
    }
};

template <class X>
void row_readout(X& x, const float* logits, const std::int32_t* targets, std::int64_t rows,
                 std::int64_t width, std::int32_t* argmax, double* nll) {
    if (rows <= 0 || width <= 0) return;
    const bool with_nll = targets && nll;
    x.reduce_rows(rows, width, RowArgmax{logits, width, argmax, with_nll ? nll : nullptr});
    if (with_nll) x.reduce_rows(rows, width, RowNll{logits, targets, width, nll});
}

/// A float16 dump's conversion (Backend::to_half): the bits of half_bits, the host's function.
struct ToHalf {
    const float* x;
    std::uint16_t* out;
    ROUTESCOPE_HD void operator()(std::int64_t i) const { out[i] = half_bits(x[i]); }
};

}  // namespace routescope::cuda::flat
