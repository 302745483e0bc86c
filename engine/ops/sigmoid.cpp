#include "engine/ops/sigmoid.hpp"

#include <Eigen/Core>

namespace routescope::ops {

namespace {
constexpr std::int64_t kGrain = 16384;  // elements below which threads do not pay off

// Eigen array expressions: vectorised exp/tanh (see gelu.cpp).
template <class T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
}  // namespace

template <class T>
void sigmoid_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        const ConstArrayMap<T> v(x + b, e - b);
        ArrayMap<T> y(out + b, e - b);
        y = (T(1) + (-v).exp()).inverse();
    });
}

template <class T>
void sigmoid_backward(T* dx, const T* dout, const T* out, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        const ConstArrayMap<T> y(out + b, e - b), g(dout + b, e - b);
        ArrayMap<T> d(dx + b, e - b);
        d += g * y * (T(1) - y);
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
