#pragma once
// CUDA backend op: layernorm (exec.hpp says how an op is written; the math is
// engine/ops/layernorm.hpp's): a warp per row computes μ, then r = 1/√(σ² + eps) (two passes, as
// the CPU), then one index per element the normalised value. The backward: a warp per row sums
// mean(g) and mean(g·x̂), one index per element writes dx; dweight and dbias are column sums in
// fixed chunks of rows (exec.hpp's column_chunks), then the chunks in order. Before the first GPU
// run these were one index per row (a strided walk) and one per feature (a serial walk over every
// row): 12.7% of a base-size BiGS step's time on an H100 (docs/benchmarks.md).
//
// Operands (op_defs.cpp): x = 0, weight = 1, bias = 2, y = 3, saved mean = 4, rstd = 5.
#include <cmath>
#include <cstdint>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// Row r's mean: mean[r] = Σ_c x[r, c] / d.
template <class T>
struct LayerNormMean {
    using Acc = T;
    T* mean;
    const T* x;
    std::int64_t d;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t c) const { return x[r * d + c]; }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { mean[r] = a / T(d); }
};

/// Row r's r = 1/√(σ² + eps), σ² = Σ_c (x − μ)² / d (the second pass, as the CPU).
template <class T>
struct LayerNormRstd {
    using Acc = T;
    T* rstd;
    const T* mean;
    const T* x;
    std::int64_t d;
    T eps;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t c) const {
        const T v = x[r * d + c] - mean[r];
        return v * v;
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const {
        rstd[r] = T(1) / std::sqrt(a / T(d) + eps);
    }
};

/// i runs over y [rows, d]: y = (x − μ)·r·w + b.
template <class T>
struct LayerNormApply {
    T* y;
    const T* x;
    const T* w;
    const T* b;
    const T* mean;
    const T* rstd;
    std::int64_t d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / d, c = i % d;
        y[i] = (x[i] - mean[r]) * rstd[r] * w[c] + b[c];
    }
};

/// Row r's mean(g) and mean(g·x̂), g = dy ⊙ w, into sums[2r], sums[2r + 1].
template <class T>
struct LayerNormRowGradSums {
    using Acc = Acc2<T>;
    T* sums;
    const T* dy;
    const T* x;
    const T* w;
    const T* mean;
    const T* rstd;
    std::int64_t d;
    ROUTESCOPE_HD Acc identity() const { return {T(0), T(0)}; }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t c) const {
        const T g = dy[r * d + c] * w[c];
        return {g, g * (x[r * d + c] - mean[r]) * rstd[r]};
    }
    ROUTESCOPE_HD Acc combine(Acc p, Acc q) const { return {p.a + q.a, p.b + q.b}; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const {
        sums[2 * r] = a.a / T(d);
        sums[2 * r + 1] = a.b / T(d);
    }
};

/// i runs over dx [rows, d]: dx += r·(g − mean(g) − x̂·mean(g·x̂)), g = dy ⊙ w.
template <class T>
struct LayerNormBackwardApply {
    T* dx;
    const T* dy;
    const T* x;
    const T* w;
    const T* mean;
    const T* rstd;
    const T* sums;
    std::int64_t d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / d, c = i % d;
        const T rs = rstd[r];
        const T xhat = (x[i] - mean[r]) * rs;
        dx[i] += rs * (dy[i] * w[c] - sums[2 * r] - xhat * sums[2 * r + 1]);
    }
};

/// i = (k, c): chunk k's Σ_r dy·x̂ and Σ_r dy of column c, rows of the chunk in order, into
/// part[2(k·d + c)], part[2(k·d + c) + 1] (exec.hpp's column_chunks).
template <class T>
struct LayerNormParamPartial {
    T* part;
    const T* dy;
    const T* x;
    const T* mean;
    const T* rstd;
    std::int64_t rows, d, per_chunk;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t k = i / d, c = i % d;
        const std::int64_t end = (k + 1) * per_chunk < rows ? (k + 1) * per_chunk : rows;
        T sw = 0, sb = 0;
        for (std::int64_t r = k * per_chunk; r < end; ++r) {
            const T g = dy[r * d + c];
            sw += g * (x[r * d + c] - mean[r]) * rstd[r];
            sb += g;
        }
        part[2 * i] = sw;
        part[2 * i + 1] = sb;
    }
};

/// c runs over the features: dw[c] += Σ_k part (dy·x̂), db[c] += Σ_k part (dy), chunks in order
/// (either may be null).
template <class T>
struct LayerNormParamFinish {
    T* dw;
    T* db;
    const T* part;
    std::int64_t chunks, d;
    ROUTESCOPE_HD void operator()(std::int64_t c) const {
        T sw = 0, sb = 0;
        for (std::int64_t k = 0; k < chunks; ++k) {
            sw += part[2 * (k * d + c)];
            sb += part[2 * (k * d + c) + 1];
        }
        if (dw) dw[c] += sw;
        if (db) db[c] += sb;
    }
};

/// Arguments: rows, d; eps = c.f.
template <class T, class X>
void layernorm_forward(X& x, const ops::OpCall& c) {
    const std::int64_t rows = c.i[0], d = c.i[1];
    T* mean = c.value<T>(4);
    T* rstd = c.value<T>(5);
    const T* in = c.value<T>(0);
    x.reduce_rows(rows, d, LayerNormMean<T>{mean, in, d});
    x.reduce_rows(rows, d, LayerNormRstd<T>{rstd, mean, in, d, static_cast<T>(c.f)});
    x.each(rows * d,
           LayerNormApply<T>{c.value<T>(3), in, c.value<T>(1), c.value<T>(2), mean, rstd, d});
}

template <class T, class X>
void layernorm_backward(X& x, const ops::OpCall& c) {
    const std::int64_t rows = c.i[0], d = c.i[1];
    const T* dy = c.gradient<T>(3);
    const T* in = c.value<T>(0);
    const T* mean = c.value<T>(4);
    const T* rstd = c.value<T>(5);
    if (T* dx = c.gradient<T>(0)) {
        T* sums = x.template scratch<T>(2 * rows);
        x.reduce_rows(rows, d, LayerNormRowGradSums<T>{sums, dy, in, c.value<T>(1), mean, rstd, d});
        x.each(rows * d, LayerNormBackwardApply<T>{dx, dy, in, c.value<T>(1), mean, rstd, sums, d});
    }
    if (c.gradient<T>(1) || c.gradient<T>(2)) {
        const std::int64_t chunks = column_chunks(rows, d);
        T* part = x.template scratch<T>(2 * chunks * d);
        x.each(chunks * d, LayerNormParamPartial<T>{part, dy, in, mean, rstd, rows, d,
                                                    chunk_rows(rows, chunks)});
        x.each(d, LayerNormParamFinish<T>{c.gradient<T>(1), c.gradient<T>(2), part, chunks, d});
    }
}

}  // namespace routescope::cuda::kernels
