#include "engine/ops/tanh.hpp"

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
void tanh_forward(T* out, const T* x, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        const ConstArrayMap<T> v(x + b, e - b);
        ArrayMap<T> y(out + b, e - b);
        y = v.tanh();
    });
}

template <class T>
void tanh_backward(T* dx, const T* dout, const T* out, std::int64_t n, ThreadPool& pool) {
    pool.parallel_for(n, kGrain, [&](std::int64_t b, std::int64_t e) {
        const ConstArrayMap<T> y(out + b, e - b), g(dout + b, e - b);
        ArrayMap<T> d(dx + b, e - b);
        d += g * (T(1) - y.square());
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
