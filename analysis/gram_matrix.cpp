#include "analysis/gram_matrix.hpp"

#include <algorithm>
#include <vector>

namespace routescope::analysis {

Eigen::MatrixXf lower_gram_of_rows(const RowMatrixF& x) {
    const Eigen::Index m = x.rows();
    Eigen::MatrixXf c = Eigen::MatrixXf::Zero(m, m);
    if (m == 0 || x.cols() == 0) return c;
    // Row blocks of the lower triangle, largest first so the dynamic schedule balances them.
    constexpr Eigen::Index kBlock = 256;
    std::vector<Eigen::Index> starts;
    for (Eigen::Index i0 = 0; i0 < m; i0 += kBlock)
        starts.push_back(i0);
    std::reverse(starts.begin(), starts.end());
    const auto n = static_cast<std::ptrdiff_t>(starts.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < n; ++b) {
        const Eigen::Index i0 = starts[static_cast<std::size_t>(b)];
        const Eigen::Index h = std::min(kBlock, m - i0);
        // Rows [i0, i0 + h) against the rows before them straight into c, then the diagonal
        // block's lower triangle through a small temporary.
        if (i0 > 0)
            c.block(i0, 0, h, i0).noalias() = x.middleRows(i0, h) * x.topRows(i0).transpose();
        Eigen::MatrixXf diagonal(h, h);
        diagonal.noalias() = x.middleRows(i0, h) * x.middleRows(i0, h).transpose();
        for (Eigen::Index j = 0; j < h; ++j)
            c.col(i0 + j).segment(i0 + j, h - j) = diagonal.col(j).tail(h - j);
    }
    return c;
}

Eigen::MatrixXd gram_of_columns(const RowMatrixF& x) {
    const Eigen::Index d = x.cols();
    Eigen::MatrixXf c(d, d);
    constexpr Eigen::Index kBlock = 128;
    const auto blocks = static_cast<std::ptrdiff_t>((d + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
        const Eigen::Index j0 = b * kBlock, w = std::min(kBlock, d - j0);
        c.middleCols(j0, w).noalias() = x.transpose() * x.middleCols(j0, w);
    }
    return c.cast<double>();
}

}  // namespace routescope::analysis
