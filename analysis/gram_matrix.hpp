#pragma once
// Gram matrices of a sample of vectors. X Xᵀ (lower triangle only) is built from blocks of rows:
// the block of rows [i0, i0 + h) of the lower triangle needs columns [0, i0 + h), one Eigen
// product each, the blocks spread over OpenMP threads (Eigen single-threaded inside). Each entry
// is one single-threaded product's dot product, so the result does not depend on the thread count
// (Eigen's own parallel product chooses its blocking by the thread count, and its last digits
// moved with OMP_NUM_THREADS). Xᵀ X is built the same way from blocks of columns. With
// -march=native Eigen's kernels were 2–5× Debian's OpenBLAS ssyrk here (docs/benchmarks.md).
#include <Eigen/Dense>

#include "analysis/dump_reader.hpp"

namespace routescope::analysis {

/// Lower triangle of X Xᵀ (rows × rows); the strict upper triangle is left 0.
Eigen::MatrixXf lower_gram_of_rows(const RowMatrixF& x);
/// Xᵀ X (columns × columns), both triangles, accumulated in double.
Eigen::MatrixXd gram_of_columns(const RowMatrixF& x);
/// The same of double rows (anisotropy's centred vectors, which may exceed the float range).
Eigen::MatrixXd gram_of_columns(
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& x);

}  // namespace routescope::analysis
