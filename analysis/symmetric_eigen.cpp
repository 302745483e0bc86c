#include "analysis/symmetric_eigen.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/blas_threads.hpp"
#include "engine/core/error.hpp"

// LAPACK's Fortran interface; gfortran passes the length of each CHARACTER argument as a hidden
// trailing size_t.
extern "C" void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                        double* w, double* work, const int* lwork, int* iwork, const int* liwork,
                        int* info, std::size_t jobz_len, std::size_t uplo_len);
extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                        double* work, const int* lwork, int* iwork, int* info,
                        std::size_t jobz_len);

namespace routescope::analysis {

SymmetricEigen symmetric_eigen(Eigen::MatrixXd a, bool with_vectors) {
    const int n = static_cast<int>(a.rows());
    SymmetricEigen out;
    out.values.resize(n);
    if (n == 0) return out;
    use_one_blas_thread();
    const char jobz = with_vectors ? 'V' : 'N', uplo = 'L';  // Eigen is column-major, as Fortran
    int info = 0, lwork = -1, liwork = -1, iwork_size = 0;
    double work_size = 0;
    dsyevd_(&jobz, &uplo, &n, a.data(), &n, out.values.data(), &work_size, &lwork, &iwork_size,
            &liwork, &info, 1, 1);  // workspace query
    if (info != 0)
        throw Error("LAPACK dsyevd workspace query failed (info " + std::to_string(info) + ")");
    lwork = static_cast<int>(work_size);
    liwork = iwork_size;
    std::vector<double> work(static_cast<std::size_t>(lwork));
    std::vector<int> iwork(static_cast<std::size_t>(std::max(liwork, 1)));
    dsyevd_(&jobz, &uplo, &n, a.data(), &n, out.values.data(), work.data(), &lwork, iwork.data(),
            &liwork, &info, 1, 1);
    if (info != 0)
        throw Error("LAPACK dsyevd did not converge on a " + std::to_string(n) + " × " +
                    std::to_string(n) + " matrix (info " + std::to_string(info) + ")");
    if (with_vectors) out.vectors = std::move(a);
    return out;
}

Eigen::VectorXd singular_values(Eigen::MatrixXd a) {
    const int m = static_cast<int>(a.rows()), n = static_cast<int>(a.cols());
    Eigen::VectorXd s(std::min(m, n));
    if (s.size() == 0) return s;
    // dgesdd answers a NaN with info -4 ("illegal argument"); say what it is.
    if (!a.allFinite())
        throw Error("singular values of a " + std::to_string(m) + " × " + std::to_string(n) +
                    " matrix with a non-finite entry (NaN or infinity)");
    use_one_blas_thread();
    const char jobz = 'N';
    const int lda = std::max(1, m), one = 1;
    double unused = 0, work_size = 0;
    int lwork = -1, info = 0;
    std::vector<int> iwork(static_cast<std::size_t>(8 * s.size()));
    dgesdd_(&jobz, &m, &n, a.data(), &lda, s.data(), &unused, &one, &unused, &one, &work_size,
            &lwork, iwork.data(), &info, 1);  // workspace query
    if (info != 0)
        throw Error("LAPACK dgesdd workspace query failed (info " + std::to_string(info) + ")");
    lwork = static_cast<int>(work_size);
    std::vector<double> work(static_cast<std::size_t>(std::max(lwork, 1)));
    dgesdd_(&jobz, &m, &n, a.data(), &lda, s.data(), &unused, &one, &unused, &one, work.data(),
            &lwork, iwork.data(), &info, 1);
    if (info != 0)
        throw Error("LAPACK dgesdd did not converge on a " + std::to_string(m) + " × " +
                    std::to_string(n) + " matrix (info " + std::to_string(info) + ")");
    return s;
}

}  // namespace routescope::analysis
