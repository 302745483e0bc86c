#include "engine/ops/cross_entropy.hpp"

#include <cmath>
#include <string>

#include <Eigen/Core>

#include "engine/core/error.hpp"

namespace routescope::ops {

std::int64_t cross_entropy_count(const std::int32_t* targets, std::int64_t rows) {
    std::int64_t n = 0;
    for (std::int64_t r = 0; r < rows; ++r)
        n += targets[r] != kIgnoreIndex;
    return n;
}

template <class T>
double cross_entropy_forward(T* lse, const T* logits, const std::int32_t* targets,
                             std::int64_t rows, int V, ThreadPool& pool) {
    for (std::int64_t r = 0; r < rows; ++r) {
        if (targets[r] != kIgnoreIndex && (targets[r] < 0 || targets[r] >= V)) {
            throw Error("cross_entropy: target " + std::to_string(targets[r]) + " of row " +
                        std::to_string(r) + " is outside [0, " + std::to_string(V) +
                        ") and is not the ignore index -100");
        }
    }
    pool.parallel_for(rows, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> z(logits + r * V, V);
            const T zmax = z.maxCoeff();
            lse[r] = zmax + std::log((z - zmax).exp().sum());  // Eigen's vectorised exp
        }
    });
    // The mean is one serial pass over rows in double, so the loss is bit-identical for any
    // thread count (and costs O(rows) against the O(rows·V) above).
    const std::int64_t count = cross_entropy_count(targets, rows);
    if (count == 0) return 0.0;
    double total = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        if (targets[r] != kIgnoreIndex)
            total += static_cast<double>(lse[r] - logits[r * V + targets[r]]);
    }
    return total / static_cast<double>(count);
}

template <class T>
void cross_entropy_backward(T* dlogits, const T* logits, const T* lse, const std::int32_t* targets,
                            std::int64_t rows, int V, T dloss, ThreadPool& pool) {
    const std::int64_t count = cross_entropy_count(targets, rows);
    if (count == 0) return;
    const T scale = dloss / T(count);
    pool.parallel_for(rows, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t r = s; r < e; ++r) {
            if (targets[r] == kIgnoreIndex) continue;
            const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> z(logits + r * V, V);
            Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> g(dlogits + r * V, V);
            g += scale * (z - lse[r]).exp();
            g[targets[r]] -= scale;
        }
    });
}

OpCost cross_entropy_cost(std::int64_t rows, int V, int bytes_per_element) {
    const double n = static_cast<double>(rows) * V;
    return {4.0 * n, bytes_per_element * (n + 2.0 * static_cast<double>(rows)) + 4.0 * rows};
}

template double cross_entropy_forward<float>(float*, const float*, const std::int32_t*,
                                             std::int64_t, int, ThreadPool&);
template double cross_entropy_forward<double>(double*, const double*, const std::int32_t*,
                                              std::int64_t, int, ThreadPool&);
template void cross_entropy_backward<float>(float*, const float*, const float*, const std::int32_t*,
                                            std::int64_t, int, float, ThreadPool&);
template void cross_entropy_backward<double>(double*, const double*, const double*,
                                             const std::int32_t*, std::int64_t, int, double,
                                             ThreadPool&);

}  // namespace routescope::ops
