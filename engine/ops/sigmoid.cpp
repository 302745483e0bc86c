#include "engine/ops/sigmoid.hpp"

#include <cmath>

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 16384;  // elements below which threads do not pay off
}

template <class T>
void sigmoid_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            out[i] = T(1) / (T(1) + std::exp(-x[i]));
    });
}

template <class T>
void sigmoid_backward(T* dx, const T* dout, const T* out, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            dx[i] += dout[i] * out[i] * (T(1) - out[i]);
    });
}

OpCost sigmoid_cost(std::int64_t n, int bytes_per_element) {
    return {4.0 * static_cast<double>(n), 2.0 * bytes_per_element * static_cast<double>(n)};
}

template void sigmoid_forward<float>(float*, const float*, std::int64_t, ThreadPool&);
template void sigmoid_forward<double>(double*, const double*, std::int64_t, ThreadPool&);
template void sigmoid_backward<float>(float*, const float*, const float*, std::int64_t,
                                      ThreadPool&);
template void sigmoid_backward<double>(double*, const double*, const double*, std::int64_t,
                                       ThreadPool&);

}  // namespace routescope::ops
