#include "engine/ops/weighted_sequence_sum.hpp"

#include <algorithm>
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
void weighted_sequence_sum_forward(T* y, const T* w, const T* x, const std::int32_t* lengths, int B,
                                   int L, int d, ThreadPool& pool) {
    check_lengths(lengths, B, L, "weighted_sequence_sum_forward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            T* out = y + b * d;
            std::fill(out, out + d, T(0));
            for (int t = 0; t < lengths[b]; ++t) {
                const std::int64_t r = (b * L + t) * d;
                for (int j = 0; j < d; ++j)
                    out[j] += w[r + j] * x[r + j];
            }
        }
    });
}

template <class T>
void weighted_sequence_sum_backward(T* dw, T* dx, const T* dy, const T* w, const T* x,
                                    const std::int32_t* lengths, int B, int L, int d,
                                    ThreadPool& pool) {
    check_lengths(lengths, B, L, "weighted_sequence_sum_backward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            const T* g = dy + b * d;
            for (int t = 0; t < lengths[b]; ++t) {
                const std::int64_t r = (b * L + t) * d;
                for (int j = 0; j < d; ++j) {
                    if (dw) dw[r + j] += g[j] * x[r + j];
                    if (dx) dx[r + j] += g[j] * w[r + j];
                }
            }
        }
    });
}

OpCost weighted_sequence_sum_cost(int B, int L, int d, int bytes_per_element) {
    const double n = double(B) * L * d;
    return {2.0 * n, bytes_per_element * (2.0 * n + double(B) * d)};
}

template void weighted_sequence_sum_forward<float>(float*, const float*, const float*,
                                                   const std::int32_t*, int, int, int, ThreadPool&);
template void weighted_sequence_sum_forward<double>(double*, const double*, const double*,
                                                    const std::int32_t*, int, int, int,
                                                    ThreadPool&);
template void weighted_sequence_sum_backward<float>(float*, float*, const float*, const float*,
                                                    const float*, const std::int32_t*, int, int,
                                                    int, ThreadPool&);
template void weighted_sequence_sum_backward<double>(double*, double*, const double*, const double*,
                                                     const double*, const std::int32_t*, int, int,
                                                     int, ThreadPool&);

}  // namespace routescope::ops
