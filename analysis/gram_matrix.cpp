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
        // Rows [i0, i0 + h) against rows [0, i0 + h), copied column by column (contiguous in c)
        // without the block's strict upper part.
        Eigen::MatrixXf block(h, i0 + h);
        block.noalias() = x.middleRows(i0, h) * x.topRows(i0 + h).transpose();
        c.block(i0, 0, h, i0) = block.leftCols(i0);
        for (Eigen::Index j = 0; j < h; ++j)
            c.col(i0 + j).segment(i0 + j, h - j) = block.col(i0 + j).tail(h - j);
    }
    return c;
}

Eigen::MatrixXd gram_of_columns(const RowMatrixF& x) {
    const Eigen::Index d = x.cols();
    Eigen::MatrixXd c(d, d);
    if (d == 0) return c;
    // Row-major like x: the cast is then one contiguous pass.
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> xd =
        x.cast<double>();
    constexpr Eigen::Index kBlock = 128;
    const auto blocks = static_cast<std::ptrdiff_t>((d + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
        const Eigen::Index j0 = b * kBlock, w = std::min(kBlock, d - j0);
        c.middleCols(j0, w).noalias() = xd.transpose() * xd.middleCols(j0, w);
    }
    return c;
}

}  // namespace routescope::analysis
