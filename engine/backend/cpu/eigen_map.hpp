#pragma once
// Row-major Eigen views over the engine's raw buffers: activations [rows, cols] and Linear weights
// [out, in] are row-major (PyTorch layout), so GEMMs run on the buffers without copies.
#include <Eigen/Core>

namespace routescope::cpu {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A [rows, cols] view of a buffer whose rows are `stride` elements apart (stride >= cols), e.g.
/// one attention head's columns inside a [L, d] activation.
template <class T>
using MatrixMap = Eigen::Map<RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <class T>
MatrixMap<T> matrix(T* p, Eigen::Index rows, Eigen::Index cols, Eigen::Index stride = -1) {
    return MatrixMap<T>(p, rows, cols, Eigen::OuterStride<>(stride < 0 ? cols : stride));
}

template <class T>
ConstMatrixMap<T> matrix(const T* p, Eigen::Index rows, Eigen::Index cols,
                         Eigen::Index stride = -1) {
    return ConstMatrixMap<T>(p, rows, cols, Eigen::OuterStride<>(stride < 0 ? cols : stride));
}

}  // namespace routescope::cpu
