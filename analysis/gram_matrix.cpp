#include "analysis/gram_matrix.hpp"

#include <cstddef>

#include "analysis/blas_threads.hpp"

// BLAS's Fortran interface; gfortran passes the length of each CHARACTER argument as a hidden
// trailing size_t.
extern "C" void ssyrk_(const char* uplo, const char* trans, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* beta,
                       float* c, const int* ldc, std::size_t uplo_len, std::size_t trans_len);

namespace routescope::analysis {

namespace {

// A row-major X (m × d) is, to column-major BLAS, the matrix A = Xᵀ (d × m, lda = d).
Eigen::MatrixXf lower_syrk(const RowMatrixF& x, bool rows) {
    const int m = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
    const int n = rows ? m : d, k = rows ? d : m, lda = d > 0 ? d : 1;
    Eigen::MatrixXf c = Eigen::MatrixXf::Zero(n, n);
    if (n == 0 || k == 0) return c;
    use_one_blas_thread();
    const char uplo = 'L', trans = rows ? 'T' : 'N';  // X Xᵀ = AᵀA; XᵀX = AAᵀ
    const float alpha = 1, beta = 0;
    ssyrk_(&uplo, &trans, &n, &k, &alpha, x.data(), &lda, &beta, c.data(), &n, 1, 1);
    return c;
}

}  // namespace

Eigen::MatrixXf lower_gram_of_rows(const RowMatrixF& x) {
    return lower_syrk(x, true);
}

Eigen::MatrixXf lower_gram_of_columns(const RowMatrixF& x) {
    return lower_syrk(x, false);
}

}  // namespace routescope::analysis
