#include "engine/ops/dense.hpp"

#include "engine/backend/cpu/eigen_map.hpp"

namespace routescope::ops {

using cpu::matrix;

template <class T>
void dense_forward(T* y, const T* x, const T* weight, const std::type_identity_t<T>* bias,
                   std::int64_t rows, int in, int out, ThreadPool& pool) {
    const auto X = matrix(x, rows, in);
    const auto W = matrix(weight, out, in);
    auto Y = matrix(y, rows, out);
    const bool by_rows = rows >= out;
    pool.parallel_for(by_rows ? rows : out, [&](std::int64_t b, std::int64_t e) {
        const Eigen::Index n = e - b;
        if (by_rows) {
            auto Yb = Y.middleRows(b, n);
            if (bias) {
                Yb.rowwise() = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(bias, out);
            } else {
                Yb.setZero();
            }
            Yb.noalias() += X.middleRows(b, n) * W.transpose();
        } else {
            auto Yb = Y.middleCols(b, n);
            if (bias) {
                Yb.rowwise() = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(bias + b, n);
            } else {
                Yb.setZero();
            }
            Yb.noalias() += X * W.middleRows(b, n).transpose();
        }
    });
}

template <class T>
void dense_backward(std::type_identity_t<T>* dx, std::type_identity_t<T>* dweight,
                    std::type_identity_t<T>* dbias, const T* dy, const T* x, const T* weight,
                    std::int64_t rows, int in, int out, ThreadPool& pool) {
    const auto X = matrix(x, rows, in);
    const auto W = matrix(weight, out, in);
    const auto dY = matrix(dy, rows, out);
    if (dx) {
        auto dX = matrix(dx, rows, in);
        const bool by_rows = rows >= in;
        pool.parallel_for(by_rows ? rows : in, [&](std::int64_t b, std::int64_t e) {
            if (by_rows) {
                dX.middleRows(b, e - b).noalias() += dY.middleRows(b, e - b) * W;
            } else {
                dX.middleCols(b, e - b).noalias() += dY * W.middleCols(b, e - b);
            }
        });
    }
    if (dweight || dbias) {
        // Each worker owns a slice of output features, so every gradient element is one
        // sequential sum over rows: no cross-thread reduction, bit-identical per thread count.
        pool.parallel_for(out, [&](std::int64_t b, std::int64_t e) {
            const Eigen::Index n = e - b;
            if (dweight) {
                auto dW = matrix(dweight, out, in);
                dW.middleRows(b, n).noalias() += dY.middleCols(b, n).transpose() * X;
            }
            if (dbias) {
                for (std::int64_t r = 0; r < rows; ++r) {
                    const T* g = dy + r * out;
                    for (std::int64_t o = b; o < e; ++o)
                        dbias[o] += g[o];
                }
            }
        });
    }
}

OpCost dense_cost(std::int64_t rows, int in, int out, int bytes_per_element) {
    const double r = static_cast<double>(rows);
    return {2.0 * r * in * out, static_cast<double>(bytes_per_element) *
                                    (r * in + static_cast<double>(out) * in + out + r * out)};
}

template void dense_forward<float>(float*, const float*, const float*, const float*, std::int64_t,
                                   int, int, ThreadPool&);
template void dense_forward<double>(double*, const double*, const double*, const double*,
                                    std::int64_t, int, int, ThreadPool&);
template void dense_backward<float>(float*, float*, float*, const float*, const float*,
                                    const float*, std::int64_t, int, int, ThreadPool&);
template void dense_backward<double>(double*, double*, double*, const double*, const double*,
                                     const double*, std::int64_t, int, int, ThreadPool&);

}  // namespace routescope::ops
