#include "engine/backend/cpu/blas.hpp"

#include <cblas.h>

#include <cstdlib>
#include <mutex>

namespace routescope::cpu {
namespace {

// OpenBLAS's pthread build runs a product on all cores by default. The engine calls it from its
// own workers, so one BLAS thread per call; set once, before the first product.
void one_blas_thread() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

CBLAS_TRANSPOSE op(Trans t) {
    return t == Trans::yes ? CblasTrans : CblasNoTrans;
}

}  // namespace

template <>
void gemm<float>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                 float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                 float beta, float* c, std::int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    one_blas_thread();
    cblas_sgemm(CblasRowMajor, op(trans_a), op(trans_b), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
}

template <>
void gemm<double>(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  double alpha, const double* a, std::int64_t lda, const double* b,
                  std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    one_blas_thread();
    cblas_dgemm(CblasRowMajor, op(trans_a), op(trans_b), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
}

const char* blas_config() {
    return openblas_get_config();
}

std::string blas_description() {
    std::string s = openblas_get_config();
    s += "; kernels: ";
    s += openblas_get_corename();
    if (const char* env = std::getenv("OPENBLAS_CORETYPE"); env && *env)
        s += std::string(" (chosen by OPENBLAS_CORETYPE=") + env + " in the environment)";
    else
        s += " (chosen by OpenBLAS for this CPU)";
    return s;
}

}  // namespace routescope::cpu
