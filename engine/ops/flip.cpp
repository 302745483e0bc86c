#include "engine/ops/flip.hpp"

#include <algorithm>

namespace routescope::ops {

template <class T>
void flip_forward(T* out, const T* x, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(static_cast<std::int64_t>(B) * L, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const std::int64_t b = r / L, l = r % L;
            const T* src = x + (b * L + (L - 1 - l)) * d;
            std::copy(src, src + d, out + r * d);
        }
    });
}

template <class T>
void flip_backward(T* dx, const T* dout, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(static_cast<std::int64_t>(B) * L, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const std::int64_t b = r / L, l = r % L;
            T* dst = dx + (b * L + (L - 1 - l)) * d;
            const T* g = dout + r * d;
            for (int c = 0; c < d; ++c)
                dst[c] += g[c];
        }
    });
}

OpCost flip_cost(int B, int L, int d, int bytes_per_element) {
    return {0.0, 2.0 * bytes_per_element * static_cast<double>(B) * L * d};
}

template void flip_forward<float>(float*, const float*, int, int, int, ThreadPool&);
template void flip_forward<double>(double*, const double*, int, int, int, ThreadPool&);
template void flip_backward<float>(float*, const float*, int, int, int, ThreadPool&);
template void flip_backward<double>(double*, const double*, int, int, int, ThreadPool&);

}  // namespace routescope::ops
