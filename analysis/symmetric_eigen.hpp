#pragma once
// Eigenvalues (and optionally eigenvectors) of one large real symmetric matrix through LAPACK's
// dsyevd (divide and conquer; Debian's liblapack, which resolves to OpenBLAS's LAPACK where that is
// installed; one thread, see blas_threads.hpp). The anisotropy spectrum (d × d with every
// eigenvector, d = 1024) spent most of its time in Eigen's SelfAdjointEigenSolver, whose
// tridiagonal QR with vectors is several times slower at that size. Not for many small problems
// solved in parallel threads (PCA's per-sentence spectra): OpenBLAS's own threads then fight the
// caller's, which measured 8× slower than Eigen.
#include <Eigen/Dense>

namespace routescope::analysis {

struct SymmetricEigen {
    Eigen::VectorXd values;   ///< ascending
    Eigen::MatrixXd vectors;  ///< column k belongs to values[k]; empty unless asked for
};

/// Reads only the lower triangle of `a` (n × n). Throws routescope::Error when LAPACK fails.
SymmetricEigen symmetric_eigen(Eigen::MatrixXd a, bool with_vectors);

/// The singular values of `a` (any shape), descending, through LAPACK's dgesdd on `a` itself:
/// accurate to about ε·σ_max each. The square roots of the eigenvalues of aᵀa lose half the digits
/// of every small one (an error of √ε·σ_max), which a sum of all of them (a nuclear norm: the
/// Procrustes distance) felt at rank-deficient or nearly so (session 32's probe: 2e-3 relative).
Eigen::VectorXd singular_values(Eigen::MatrixXd a);

}  // namespace routescope::analysis
