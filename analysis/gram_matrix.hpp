#pragma once
// Gram matrices of a sample of vectors through BLAS ssyrk (Debian's libblas, OpenBLAS's threaded
// kernels where installed): only the lower triangle is computed, half the flops of a full product.
// Eigen's own triangular rank update runs on one thread, which made the 5000 × 5000 cosine matrix
// of the anisotropy analysis the slowest step on two cores.
#include <Eigen/Dense>

#include "analysis/dump_reader.hpp"

namespace routescope::analysis {

/// Lower triangle of X Xᵀ (rows × rows); the strict upper triangle is left 0.
Eigen::MatrixXf lower_gram_of_rows(const RowMatrixF& x);
/// Lower triangle of Xᵀ X (columns × columns); the strict upper triangle is left 0.
Eigen::MatrixXf lower_gram_of_columns(const RowMatrixF& x);

}  // namespace routescope::analysis
