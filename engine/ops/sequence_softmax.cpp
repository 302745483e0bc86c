#include "engine/ops/sequence_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/core/error.hpp"

namespace routescope::ops {

namespace {
void check_lengths(const std::int32_t* lengths, int B, int L, const char* where) {
    for (int b = 0; b < B; ++b)
        if (lengths[b] < 0 || lengths[b] > L)
            throw Error(std::string(where) + ": length " + std::to_string(lengths[b]) +
                        " of sequence " + std::to_string(b) + " is outside [0, " +
                        std::to_string(L) + "]");
}
}  // namespace

template <class T>
void sequence_softmax_forward(T* w, T* w_own, const T* x, const T* x_own,
                              const std::int32_t* lengths, int B, int L, int d, ThreadPool& pool) {
    check_lengths(lengths, B, L, "sequence_softmax_forward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            const int n = lengths[b];
            const T* xb = x + b * L * d;
            T* wb = w + b * L * d;
            T* wo = w_own + b * d;
            const T* xo = x_own + b * d;
            // wo first holds the running maximum, then Z, then the own weight.
            for (int j = 0; j < d; ++j)
                wo[j] = xo[j];
            for (int t = 0; t < n; ++t)
                for (int j = 0; j < d; ++j)
                    wo[j] = std::max(wo[j], xb[t * d + j]);
            for (int t = 0; t < n; ++t)
                for (int j = 0; j < d; ++j)
                    wb[t * d + j] = std::exp(xb[t * d + j] - wo[j]);
            std::fill(wb + std::int64_t(n) * d, wb + std::int64_t(L) * d, T(0));
            for (int j = 0; j < d; ++j) {
                const T own = std::exp(xo[j] - wo[j]);
                T z = own;
                for (int t = 0; t < n; ++t)
                    z += wb[t * d + j];
                const T inv = T(1) / z;
                for (int t = 0; t < n; ++t)
                    wb[t * d + j] *= inv;
                wo[j] = own * inv;
            }
        }
    });
}

template <class T>
void sequence_softmax_backward(T* dx, T* dx_own, const T* dw, const T* dw_own, const T* w,
                               const T* w_own, const std::int32_t* lengths, int B, int L, int d,
                               ThreadPool& pool) {
    check_lengths(lengths, B, L, "sequence_softmax_backward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            const int n = lengths[b];
            const std::int64_t base = b * L * d;
            for (int j = 0; j < d; ++j) {
                T dot = w_own[b * d + j] * dw_own[b * d + j];
                for (int t = 0; t < n; ++t)
                    dot += w[base + t * d + j] * dw[base + t * d + j];
                for (int t = 0; t < n; ++t)
                    dx[base + t * d + j] += w[base + t * d + j] * (dw[base + t * d + j] - dot);
                dx_own[b * d + j] += w_own[b * d + j] * (dw_own[b * d + j] - dot);
            }
        }
    });
}

OpCost sequence_softmax_cost(int B, int L, int d, int bytes_per_element) {
    const double n = double(B) * (L + 1) * d;
    return {4.0 * n, 2.0 * bytes_per_element * n};
}

template void sequence_softmax_forward<float>(float*, float*, const float*, const float*,
                                              const std::int32_t*, int, int, int, ThreadPool&);
template void sequence_softmax_forward<double>(double*, double*, const double*, const double*,
                                               const std::int32_t*, int, int, int, ThreadPool&);
template void sequence_softmax_backward<float>(float*, float*, const float*, const float*,
                                               const float*, const float*, const std::int32_t*, int,
                                               int, int, ThreadPool&);
template void sequence_softmax_backward<double>(double*, double*, const double*, const double*,
                                                const double*, const double*, const std::int32_t*,
                                                int, int, int, ThreadPool&);

}  // namespace routescope::ops
