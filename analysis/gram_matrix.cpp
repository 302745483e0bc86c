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

namespace {
template <typename Rows>
Eigen::MatrixXd gram_of_columns_of(const Rows& x) {
    // In double, by blocks of rows cast one at a time (memory: one block, not all of X): the
    // float product put λ₁/Σλ of a rank-one X at 0.99999992 where double gives 1 to 1e-16
    // (docs/analyses.md says pc1_variance and isotropy are computed in double).
    const Eigen::Index m = x.rows(), d = x.cols();
    Eigen::MatrixXd c = Eigen::MatrixXd::Zero(d, d);
    constexpr Eigen::Index kBlock = 1024;
    for (Eigen::Index i0 = 0; i0 < m; i0 += kBlock) {
        const Eigen::Index h = std::min(kBlock, m - i0);
        const Eigen::MatrixXd block = x.middleRows(i0, h).template cast<double>();
        c.selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
    }
    return c.selfadjointView<Eigen::Lower>();
}
}  // namespace

Eigen::MatrixXd gram_of_columns(const RowMatrixF& x) {
    return gram_of_columns_of(x);
}

Eigen::MatrixXd gram_of_columns(
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& x) {
    return gram_of_columns_of(x);
}

}  // namespace routescope::analysis
