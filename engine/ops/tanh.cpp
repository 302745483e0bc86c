#include "engine/ops/tanh.hpp"

#include <cmath>

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 16384;  // elements below which threads do not pay off
}

template <class T>
void tanh_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            out[i] = std::tanh(x[i]);
    });
}

template <class T>
void tanh_backward(T* dx, const T* dout, const T* out, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
            dx[i] += dout[i] * (T(1) - out[i] * out[i]);
    });
}

OpCost tanh_cost(std::int64_t n, int bytes_per_element) {
    return {static_cast<double>(n), 2.0 * bytes_per_element * static_cast<double>(n)};
}

template void tanh_forward<float>(float*, const float*, std::int64_t, ThreadPool&);
template void tanh_forward<double>(double*, const double*, std::int64_t, ThreadPool&);
template void tanh_backward<float>(float*, const float*, const float*, std::int64_t, ThreadPool&);
template void tanh_backward<double>(double*, const double*, const double*, std::int64_t,
                                    ThreadPool&);

}  // namespace routescope::ops
