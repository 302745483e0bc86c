#pragma once
// The CPU backend's GEMM: OpenBLAS's sgemm/dgemm on row-major buffers, always single-threaded in
// the calling thread. The engine's own pool splits a product into row or column blocks and each
// worker calls this on its block, so the thread count is the pool's (--threads) and OpenBLAS never
// starts a second set of threads under it (docs/decisions.md, "The CPU GEMM is OpenBLAS").
#include <cstdint>
#include <string>

namespace routescope::cpu {

enum class Trans : bool { no = false, yes = true };

/// C[m, n] = alpha · op(A) · op(B) + beta · C, every matrix row-major with its leading dimension
/// (elements between rows); op(A) is [m, k], op(B) is [k, n]. Explicit instantiations for float and
/// double.
template <class T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
          std::int64_t ldc);

/// The BLAS library the GEMM runs on, with its build configuration (for bench and provenance).
const char* blas_config();

/// One line for `--version` and every benchmark's header: the library and its configuration, the
/// kernels it chose for this CPU, and, when the environment chose them (OPENBLAS_CORETYPE, read
/// once when the library loads), that it did. The kernels decide the GEMM's speed: on the 2-core
/// AMD machine of docs/benchmarks.md, Haswell's (AVX2) run dgemm at 0.6x and sgemm at 0.55x of
/// the AVX-512 ones OpenBLAS picks by itself.
std::string blas_description();

}  // namespace routescope::cpu
