#include "engine/ops/sequence_broadcast.hpp"

#include <algorithm>

namespace routescope::ops {

template <class T>
void sequence_broadcast_forward(T* y, const T* x, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b)
            for (int t = 0; t < L; ++t)
                std::copy_n(x + b * d, d, y + (b * L + t) * d);
    });
}

template <class T>
void sequence_broadcast_backward(T* dx, const T* dy, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b)
            for (int t = 0; t < L; ++t) {
                const T* g = dy + (b * L + t) * d;
                for (int j = 0; j < d; ++j)
                    dx[b * d + j] += g[j];
            }
    });
}

OpCost sequence_broadcast_cost(int B, int L, int d, int bytes_per_element) {
    return {0.0, bytes_per_element * (double(B) * L * d + double(B) * d)};
}

template void sequence_broadcast_forward<float>(float*, const float*, int, int, int, ThreadPool&);
template void sequence_broadcast_forward<double>(double*, const double*, int, int, int,
                                                 ThreadPool&);
template void sequence_broadcast_backward<float>(float*, const float*, int, int, int, ThreadPool&);
template void sequence_broadcast_backward<double>(double*, const double*, int, int, int,
                                                  ThreadPool&);

}  // namespace routescope::ops
