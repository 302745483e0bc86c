#pragma once
// Eigenvalues (and optionally eigenvectors) of a real symmetric matrix through LAPACK's dsyevd
// (divide and conquer; Debian's liblapack, which resolves to OpenBLAS's threaded LAPACK where that
// is installed). The anisotropy spectrum (d × d with every eigenvector, d = 1024) and the PCA
// redundancy (one n × n eigenvalue problem per sentence) spent most of their time in Eigen's
// SelfAdjointEigenSolver, whose tridiagonal QR with vectors is several times slower at these sizes.
#include <Eigen/Dense>

namespace routescope::analysis {

struct SymmetricEigen {
    Eigen::VectorXd values;   ///< ascending
    Eigen::MatrixXd vectors;  ///< column k belongs to values[k]; empty unless asked for
};

/// Reads only the lower triangle of `a` (n × n). Throws routescope::Error when LAPACK fails.
SymmetricEigen symmetric_eigen(Eigen::MatrixXd a, bool with_vectors);

}  // namespace routescope::analysis
