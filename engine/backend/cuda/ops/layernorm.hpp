#pragma once
// CUDA backend op: layernorm (exec.hpp says how an op is written; the math is
// engine/ops/layernorm.hpp's): one index per row computes μ, r = 1/√(σ² + eps) (two passes, as the
// CPU) and the normalised row; the backward's dx is one index per row, dweight and dbias one index
// per feature summing the rows in order.
//
// Operands (op_defs.cpp): x = 0, weight = 1, bias = 2, y = 3, saved mean = 4, rstd = 5.
#include <cmath>
#include <cstdint>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

template <class T>
struct LayerNormForwardRow {
    T* y;
    T* mean;
    T* rstd;
    const T* x;
    const T* w;
    const T* b;
    std::int64_t d;
    T eps;
    ROUTESCOPE_HD void operator()(std::int64_t r) const {
        const T* xr = x + r * d;
        T sum = 0;
        for (std::int64_t c = 0; c < d; ++c)
            sum += xr[c];
        const T mu = sum / T(d);
        T var = 0;
        for (std::int64_t c = 0; c < d; ++c)
            var += (xr[c] - mu) * (xr[c] - mu);
        var /= T(d);
        const T rs = T(1) / std::sqrt(var + eps);
        T* o = y + r * d;
        for (std::int64_t c = 0; c < d; ++c)
            o[c] = (xr[c] - mu) * rs * w[c] + b[c];
        mean[r] = mu;
        rstd[r] = rs;
    }
};

/// dx = r·(g − mean(g) − x̂·mean(g·x̂)), g = dy ⊙ w.
template <class T>
struct LayerNormBackwardRow {
    T* dx;
    const T* dy;
    const T* x;
    const T* w;
    const T* mean;
    const T* rstd;
    std::int64_t d;
    ROUTESCOPE_HD void operator()(std::int64_t r) const {
        const T* xr = x + r * d;
        const T* go = dy + r * d;
        const T mu = mean[r], rs = rstd[r];
        T g_mean = 0, gx_mean = 0;
        for (std::int64_t c = 0; c < d; ++c) {
            const T g = go[c] * w[c];
            g_mean += g;
            gx_mean += g * (xr[c] - mu) * rs;
        }
        g_mean /= T(d);
        gx_mean /= T(d);
        T* dxr = dx + r * d;
        for (std::int64_t c = 0; c < d; ++c) {
            const T xhat = (xr[c] - mu) * rs;
            dxr[c] += rs * (go[c] * w[c] - g_mean - xhat * gx_mean);
        }
    }
};

/// dw[c] += Σ_r dy·x̂, db[c] += Σ_r dy (either may be null), rows in order.
template <class T>
struct LayerNormParamGrads {
    T* dw;
    T* db;
    const T* dy;
    const T* x;
    const T* mean;
    const T* rstd;
    std::int64_t rows, d;
    ROUTESCOPE_HD void operator()(std::int64_t c) const {
        T sw = 0, sb = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
            const T g = dy[r * d + c];
            sw += g * (x[r * d + c] - mean[r]) * rstd[r];
            sb += g;
        }
        if (dw) dw[c] += sw;
        if (db) db[c] += sb;
    }
};

/// Arguments: rows, d; eps = c.f.
template <class T, class X>
void layernorm_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0],
           LayerNormForwardRow<T>{c.value<T>(3), c.value<T>(4), c.value<T>(5), c.value<T>(0),
                                  c.value<T>(1), c.value<T>(2), c.i[1], static_cast<T>(c.f)});
}

template <class T, class X>
void layernorm_backward(X& x, const ops::OpCall& c) {
    if (T* dx = c.gradient<T>(0))
        x.each(c.i[0], LayerNormBackwardRow<T>{dx, c.gradient<T>(3), c.value<T>(0), c.value<T>(1),
                                               c.value<T>(4), c.value<T>(5), c.i[1]});
    if (c.gradient<T>(1) || c.gradient<T>(2))
        x.each(c.i[1],
               LayerNormParamGrads<T>{c.gradient<T>(1), c.gradient<T>(2), c.gradient<T>(3),
                                      c.value<T>(0), c.value<T>(4), c.value<T>(5), c.i[0], c.i[1]});
}

}  // namespace routescope::cuda::kernels
