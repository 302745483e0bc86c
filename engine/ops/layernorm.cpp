#include "engine/ops/layernorm.hpp"

#include <cmath>

namespace routescope::ops {

template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* x, const T* weight, const T* bias,
                       std::int64_t rows, int d, T eps, ThreadPool& pool) {
    pool.parallel_for(rows, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const T* xr = x + r * d;
            T sum = 0;
            for (int c = 0; c < d; ++c)
                sum += xr[c];
            const T mu = sum / T(d);
            T var = 0;  // two passes: stable when |μ| ≫ σ
            for (int c = 0; c < d; ++c)
                var += (xr[c] - mu) * (xr[c] - mu);
            var /= T(d);
            const T rs = T(1) / std::sqrt(var + eps);
            T* o = out + r * d;
            for (int c = 0; c < d; ++c)
                o[c] = (xr[c] - mu) * rs * weight[c] + bias[c];
            mean[r] = mu;
            rstd[r] = rs;
        }
    });
}

template <class T>
void layernorm_backward(T* dx, std::type_identity_t<T>* dweight, std::type_identity_t<T>* dbias,
                        const T* dout, const T* x, const T* weight, const T* mean, const T* rstd,
                        std::int64_t rows, int d, ThreadPool& pool) {
    // dx = r·(g − mean(g) − x̂·mean(g·x̂)) with g = dout ⊙ w, x̂ the normalised input.
    pool.parallel_for(rows, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const T* xr = x + r * d;
            const T* go = dout + r * d;
            const T mu = mean[r], rs = rstd[r];
            T g_mean = 0, gx_mean = 0;
            for (int c = 0; c < d; ++c) {
                const T g = go[c] * weight[c];
                g_mean += g;
                gx_mean += g * (xr[c] - mu) * rs;
            }
            g_mean /= T(d);
            gx_mean /= T(d);
            T* dxr = dx + r * d;
            for (int c = 0; c < d; ++c) {
                const T xhat = (xr[c] - mu) * rs;
                dxr[c] += rs * (go[c] * weight[c] - g_mean - xhat * gx_mean);
            }
        }
    });
    if (!dweight && !dbias) return;
    // Parameter gradients reduce over rows: each worker owns a slice of the d features and sums
    // all rows in order (deterministic for a given thread count).
    pool.parallel_for(d, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = 0; r < rows; ++r) {
            const T* xr = x + r * d;
            const T* go = dout + r * d;
            const T mu = mean[r], rs = rstd[r];
            for (std::int64_t c = s; c < e; ++c) {
                if (dweight) dweight[c] += go[c] * (xr[c] - mu) * rs;
                if (dbias) dbias[c] += go[c];
            }
        }
    });
}

OpCost layernorm_cost(std::int64_t rows, int d, int bytes_per_element) {
    const double n = static_cast<double>(rows) * d;
    return {8.0 * n, bytes_per_element * (2.0 * n + 2.0 * d)};
}

template void layernorm_forward<float>(float*, float*, float*, const float*, const float*,
                                       const float*, std::int64_t, int, float, ThreadPool&);
template void layernorm_forward<double>(double*, double*, double*, const double*, const double*,
                                        const double*, std::int64_t, int, double, ThreadPool&);
template void layernorm_backward<float>(float*, float*, float*, const float*, const float*,
                                        const float*, const float*, const float*, std::int64_t, int,
                                        ThreadPool&);
template void layernorm_backward<double>(double*, double*, double*, const double*, const double*,
                                         const double*, const double*, const double*, std::int64_t,
                                         int, ThreadPool&);

}  // namespace routescope::ops
