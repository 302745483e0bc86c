#include "engine/ops/first_token.hpp"

namespace routescope::ops {

template <class T>
void first_token_forward(T* y, const T* x, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b)
            for (int c = 0; c < d; ++c)
                y[b * d + c] = x[b * L * d + c];
    });
}

template <class T>
void first_token_backward(T* dx, const T* dy, int B, int L, int d, ThreadPool& pool) {
    pool.parallel_for(B, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t b = s; b < e; ++b)
            for (int c = 0; c < d; ++c)
                dx[b * L * d + c] += dy[b * d + c];
    });
}

OpCost first_token_cost(int B, int d, int bytes_per_element) {
    return {0.0, 2.0 * B * d * bytes_per_element};
}

template void first_token_forward<float>(float*, const float*, int, int, int, ThreadPool&);
template void first_token_forward<double>(double*, const double*, int, int, int, ThreadPool&);
template void first_token_backward<float>(float*, const float*, int, int, int, ThreadPool&);
template void first_token_backward<double>(double*, const double*, int, int, int, ThreadPool&);

}  // namespace routescope::ops
