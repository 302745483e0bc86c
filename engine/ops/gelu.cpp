#include "engine/ops/gelu.hpp"

#include <cmath>

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 16384;               // elements below which threads do not pay off
constexpr double kSqrt2OverPi = 0.7978845608028654;  // √(2/π)
constexpr double kGeluCubic = 0.044715;              // Hendrycks & Gimpel's tanh fit
constexpr double kInvSqrt2 = 0.7071067811865476;     // 1/√2
constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1/√(2π)
}  // namespace

template <class T>
void gelu_tanh_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            const T v = x[i];
            const T u = T(kSqrt2OverPi) * (v + T(kGeluCubic) * v * v * v);
            out[i] = T(0.5) * v * (T(1) + std::tanh(u));
        }
    });
}

template <class T>
void gelu_tanh_backward(T* dx, const T* dout, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            const T v = x[i];
            const T u = T(kSqrt2OverPi) * (v + T(kGeluCubic) * v * v * v);
            const T t = std::tanh(u);
            const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * v * v);
            const T grad = T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * du;
            dx[i] += dout[i] * grad;
        }
    });
}

template <class T>
void gelu_erf_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            const T v = x[i];
            out[i] = T(0.5) * v * (T(1) + std::erf(v * T(kInvSqrt2)));
        }
    });
}

template <class T>
void gelu_erf_backward(T* dx, const T* dout, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
            const T v = x[i];
            const T cdf = T(0.5) * (T(1) + std::erf(v * T(kInvSqrt2)));
            const T pdf = T(kInvSqrt2Pi) * std::exp(T(-0.5) * v * v);
            dx[i] += dout[i] * (cdf + v * pdf);
        }
    });
}

OpCost gelu_cost(std::int64_t n, int bytes_per_element) {
    return {10.0 * static_cast<double>(n), 2.0 * bytes_per_element * static_cast<double>(n)};
}

#define ROUTESCOPE_INSTANTIATE(T)                                                           \
    template void gelu_tanh_forward<T>(T*, const T*, std::int64_t, ThreadPool&);            \
    template void gelu_tanh_backward<T>(T*, const T*, const T*, std::int64_t, ThreadPool&); \
    template void gelu_erf_forward<T>(T*, const T*, std::int64_t, ThreadPool&);             \
    template void gelu_erf_backward<T>(T*, const T*, const T*, std::int64_t, ThreadPool&);
ROUTESCOPE_INSTANTIATE(float)
ROUTESCOPE_INSTANTIATE(double)
#undef ROUTESCOPE_INSTANTIATE

}  // namespace routescope::ops
