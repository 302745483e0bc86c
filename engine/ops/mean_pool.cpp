#include "engine/ops/mean_pool.hpp"

#include <string>

#include "engine/core/error.hpp"

namespace routescope::ops {

namespace {
void check_lengths(const std::int32_t* lengths, int B, int L, const char* where) {
    for (int b = 0; b < B; ++b) {
        if (lengths[b] < 0 || lengths[b] > L) {
            throw Error(std::string(where) + ": length " + std::to_string(lengths[b]) +
                        " of sequence " + std::to_string(b) + " is outside [0, " +
                        std::to_string(L) + "]");
        }
    }
}
}  // namespace

template <class T>
void mean_pool_forward(T* out, const T* x, const std::int32_t* lengths, int B, int L, int d,
                       ThreadPool& pool) {
    check_lengths(lengths, B, L, "mean_pool_forward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            T* o = out + b * d;
            for (int c = 0; c < d; ++c)
                o[c] = T(0);
            for (int l = 0; l < lengths[b]; ++l) {
                const T* xr = x + (b * L + l) * d;
                for (int c = 0; c < d; ++c)
                    o[c] += xr[c];
            }
            if (lengths[b] > 0) {
                const T inv = T(1) / T(lengths[b]);
                for (int c = 0; c < d; ++c)
                    o[c] *= inv;
            }
        }
    });
}

template <class T>
void mean_pool_backward(T* dx, const T* dout, const std::int32_t* lengths, int B, int L, int d,
                        ThreadPool& pool) {
    check_lengths(lengths, B, L, "mean_pool_backward");
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b) {
            if (lengths[b] == 0) continue;
            const T inv = T(1) / T(lengths[b]);
            const T* g = dout + b * d;
            for (int l = 0; l < lengths[b]; ++l) {
                T* dxr = dx + (b * L + l) * d;
                for (int c = 0; c < d; ++c)
                    dxr[c] += g[c] * inv;
            }
        }
    });
}

OpCost mean_pool_cost(int B, int L, int d, int bytes_per_element) {
    const double n = static_cast<double>(B) * L * d;
    return {n, bytes_per_element * (n + static_cast<double>(B) * d)};
}

template void mean_pool_forward<float>(float*, const float*, const std::int32_t*, int, int, int,
                                       ThreadPool&);
template void mean_pool_forward<double>(double*, const double*, const std::int32_t*, int, int, int,
                                        ThreadPool&);
template void mean_pool_backward<float>(float*, const float*, const std::int32_t*, int, int, int,
                                        ThreadPool&);
template void mean_pool_backward<double>(double*, const double*, const std::int32_t*, int, int, int,
                                         ThreadPool&);

}  // namespace routescope::ops
