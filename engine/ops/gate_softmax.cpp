#include "engine/ops/gate_softmax.hpp"

#include <algorithm>
#include <cmath>

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 8192;  // elements per chunk, as the elementwise ops
}  // namespace

template <class T>
void gate_softmax_forward(T* const* y, const T* const* x, int K, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t j = s; j < e; ++j) {
            T top = x[0][j];
            for (int k = 1; k < K; ++k)
                top = std::max(top, x[k][j]);
            T sum = 0;
            for (int k = 0; k < K; ++k) {
                y[k][j] = std::exp(x[k][j] - top);
                sum += y[k][j];
            }
            const T inv = T(1) / sum;
            for (int k = 0; k < K; ++k)
                y[k][j] *= inv;
        }
    });
}

template <class T>
void gate_softmax_backward(T* const* dx, const T* const* dy, const T* const* y, int K,
                           std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t j = s; j < e; ++j) {
            T dot = 0;
            for (int k = 0; k < K; ++k)
                dot += y[k][j] * dy[k][j];
            for (int k = 0; k < K; ++k)
                dx[k][j] += y[k][j] * (dy[k][j] - dot);
        }
    });
}

OpCost gate_softmax_cost(int K, std::int64_t n, int bytes_per_element) {
    const double elements = double(K) * n;
    return {4.0 * elements, 2.0 * bytes_per_element * elements};
}

template void gate_softmax_forward<float>(float* const*, const float* const*, int, std::int64_t,
                                          ThreadPool&);
template void gate_softmax_forward<double>(double* const*, const double* const*, int, std::int64_t,
                                           ThreadPool&);
template void gate_softmax_backward<float>(float* const*, const float* const*, const float* const*,
                                           int, std::int64_t, ThreadPool&);
template void gate_softmax_backward<double>(double* const*, const double* const*,
                                            const double* const*, int, std::int64_t, ThreadPool&);

}  // namespace routescope::ops
