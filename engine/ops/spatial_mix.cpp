#include "engine/ops/spatial_mix.hpp"

#include <algorithm>

#include "engine/backend/cpu/eigen_map.hpp"

namespace routescope::ops {

using cpu::matrix;

namespace {
int n_blocks(int L) {
    return (L + kSpatialMixBlock - 1) / kSpatialMixBlock;
}
}  // namespace

template <class T>
void spatial_mix_forward(T* y, const T* x, const T* weight, const T* bias, int B, int L, int C,
                         int n, bool causal, ThreadPool& pool) {
    const int nb = n_blocks(L);
    const auto W = matrix(weight, L, L, n);
    pool.parallel_for(std::int64_t(B) * nb, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t item = begin; item < end; ++item) {
            const std::int64_t b = item / nb;
            const int i0 = static_cast<int>(item % nb) * kSpatialMixBlock;
            const int m = std::min(kSpatialMixBlock, L - i0);
            const auto X = matrix(x + b * L * C, L, C);
            auto Y = matrix(y + b * L * C, L, C).middleRows(i0, m);
            for (int r = 0; r < m; ++r)
                Y.row(r).setConstant(bias[i0 + r]);
            if (!causal) {
                Y.noalias() += W.block(i0, 0, m, L) * X;
                continue;
            }
            if (i0 > 0) Y.noalias() += W.block(i0, 0, m, i0) * X.topRows(i0);
            Y.noalias() +=
                W.block(i0, i0, m, m).template triangularView<Eigen::Lower>() * X.middleRows(i0, m);
        }
    });
}

template <class T>
void spatial_mix_backward(std::type_identity_t<T>* dx, std::type_identity_t<T>* dweight,
                          std::type_identity_t<T>* dbias, const T* dy, const T* x, const T* weight,
                          int B, int L, int C, int n, bool causal, ThreadPool& pool) {
    const int nb = n_blocks(L);
    const auto W = matrix(weight, L, L, n);
    if (dx) {
        // Work item (b, column block j0 of W) owns rows j0.. of dx[b].
        pool.parallel_for(std::int64_t(B) * nb, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t item = begin; item < end; ++item) {
                const std::int64_t b = item / nb;
                const int j0 = static_cast<int>(item % nb) * kSpatialMixBlock;
                const int m = std::min(kSpatialMixBlock, L - j0);
                const auto dY = matrix(dy + b * L * C, L, C);
                auto dX = matrix(dx + b * L * C, L, C).middleRows(j0, m);
                if (!causal) {
                    dX.noalias() += W.block(0, j0, L, m).transpose() * dY;
                    continue;
                }
                // Only rows i ≥ j of W reach x_j: the diagonal block's lower triangle and the
                // full blocks below it.
                dX.noalias() +=
                    W.block(j0, j0, m, m).template triangularView<Eigen::Lower>().transpose() *
                    dY.middleRows(j0, m);
                const int below = L - (j0 + m);
                if (below > 0)
                    dX.noalias() +=
                        W.block(j0 + m, j0, below, m).transpose() * dY.middleRows(j0 + m, below);
            }
        });
    }
    if (dweight || dbias) {
        // Work item = a row block of W: each element of dW and dbias is one sequential sum.
        pool.parallel_for(nb, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t blk = begin; blk < end; ++blk) {
                const int i0 = static_cast<int>(blk) * kSpatialMixBlock;
                const int m = std::min(kSpatialMixBlock, L - i0);
                for (int b = 0; b < B; ++b) {
                    const auto X = matrix(x + std::int64_t(b) * L * C, L, C);
                    const auto dY = matrix(dy + std::int64_t(b) * L * C, L, C).middleRows(i0, m);
                    if (dbias)
                        for (int r = 0; r < m; ++r)
                            dbias[i0 + r] += dY.row(r).sum();
                    if (!dweight) continue;
                    auto dW = matrix(dweight, L, L, n);
                    if (!causal) {
                        dW.block(i0, 0, m, L).noalias() += dY * X.transpose();
                        continue;
                    }
                    if (i0 > 0) dW.block(i0, 0, m, i0).noalias() += dY * X.topRows(i0).transpose();
                    dW.block(i0, i0, m, m).template triangularView<Eigen::Lower>() +=
                        dY * X.middleRows(i0, m).transpose();
                }
            }
        });
    }
}

OpCost spatial_mix_cost(int B, int L, int C, bool causal, int bytes_per_element) {
    const double l = L, mixed = causal ? l * (l + 1) / 2 : l * l;
    return {2.0 * B * mixed * C,
            static_cast<double>(bytes_per_element) * (2.0 * B * l * C + l * l + l)};
}

template void spatial_mix_forward<float>(float*, const float*, const float*, const float*, int, int,
                                         int, int, bool, ThreadPool&);
template void spatial_mix_forward<double>(double*, const double*, const double*, const double*, int,
                                          int, int, int, bool, ThreadPool&);
template void spatial_mix_backward<float>(float*, float*, float*, const float*, const float*,
                                          const float*, int, int, int, int, bool, ThreadPool&);
template void spatial_mix_backward<double>(double*, double*, double*, const double*, const double*,
                                           const double*, int, int, int, int, bool, ThreadPool&);

}  // namespace routescope::ops
