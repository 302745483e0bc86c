// cuBLAS and cuFFT loaded when the CUDA backend first calls them, not when a binary starts.
//
// Linked as ordinary shared libraries, libcublas, libcublasLt and libcufft were mapped, relocated
// (400,000 relocations) and initialised by every process: 0.4 s and 225 MB before main, in every
// `routescope-cli` call — the CPU-only ones, the workbench's child processes and each test — for
// libraries that only `--device cuda` uses. Here each function the backend calls is defined with
// the prototype its header declares (a C function: a different parameter list does not compile)
// and forwards to the library's own, found with dlopen/dlsym on its first call. The sonames are the
// toolkit's the build found (ROUTESCOPE_CUBLAS_SONAME, ROUTESCOPE_CUFFT_SONAME, from CMake),
// searched as the loader searches (LD_LIBRARY_PATH, the binary's RUNPATH, the system's), then under
// $CUDA_HOME and in the build's toolkit directory (ROUTESCOPE_CUDA_LIBRARY_DIR). A library that
// cannot be loaded is an Error naming it and the loader's reason.
#include <cublas_v2.h>
#include <cufft.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/core/error.hpp"

namespace {

void* library(const char* soname) {
    // dlopen is reference-counted and returns the same handle for a library already loaded. The
    // loader's search first; then $CUDA_HOME's and the build's toolkit directories (a toolkit
    // outside the loader's paths, as /usr/local/cuda/lib may be). The reason given is the first
    // search's (the others' are about paths the user did not name).
    void* handle = ::dlopen(soname, RTLD_NOW);
    std::vector<std::string> folders;
    if (const char* home = std::getenv("CUDA_HOME"); home && *home)
        folders = {std::string(home) + "/lib64", std::string(home) + "/lib"};
    folders.push_back(ROUTESCOPE_CUDA_LIBRARY_DIR);
    for (const auto& folder : folders)
        if (!handle) handle = ::dlopen((folder + "/" + soname).c_str(), RTLD_NOW);
    if (!handle) {
        ::dlopen(soname, RTLD_NOW);
        const char* why = ::dlerror();
        throw routescope::Error(std::string("the CUDA backend cannot load ") + soname + ": " +
                                (why ? why : "no reason given") +
                                " (install the CUDA toolkit's libraries, or set LD_LIBRARY_PATH)");
    }
    return handle;
}

void* symbol(const char* soname, const char* name) {
    void* f = ::dlsym(library(soname), name);
    if (!f)
        throw routescope::Error(std::string(soname) + " has no function " + name +
                                " (a toolkit older than the one Routescope was built with?)");
    return f;
}

}  // namespace

#define ROUTESCOPE_STR2(x) #x
#define ROUTESCOPE_STR(x) ROUTESCOPE_STR2(x)
// The real function, resolved once (a function-local static: thread-safe).
#define ROUTESCOPE_REAL(soname, name, type) \
    static const auto real = reinterpret_cast<type>(symbol(soname, ROUTESCOPE_STR(name)))

extern "C" {

// ---- cuBLAS (cublas_v2.h maps cublasCreate to cublasCreate_v2 and so on: the names below are
// the exported ones after that mapping).
cublasStatus_t CUBLASWINAPI cublasCreate(cublasHandle_t* handle) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasCreate, cublasStatus_t(*)(cublasHandle_t*));
    return real(handle);
}

cublasStatus_t CUBLASWINAPI cublasDestroy(cublasHandle_t handle) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasDestroy, cublasStatus_t(*)(cublasHandle_t));
    return real(handle);
}

cublasStatus_t CUBLASWINAPI cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasSetStream,
                    cublasStatus_t(*)(cublasHandle_t, cudaStream_t));
    return real(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasSetMathMode,
                    cublasStatus_t(*)(cublasHandle_t, cublasMath_t));
    return real(handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace(cublasHandle_t handle, void* workspace,
                                               size_t bytes) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasSetWorkspace,
                    cublasStatus_t(*)(cublasHandle_t, void*, size_t));
    return real(handle, workspace, bytes);
}

cublasStatus_t CUBLASWINAPI cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const float* alpha, const float* A, int lda, const float* B,
                                        int ldb, const float* beta, float* C, int ldc) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasSgemm,
                    cublasStatus_t(*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const float*, const float*, int, const float*, int,
                                      const float*, float*, int));
    return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
    ROUTESCOPE_REAL(
        ROUTESCOPE_CUBLAS_SONAME, cublasSgemmStridedBatched,
        cublasStatus_t(*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const float*, const float*, int, long long int, const float*, int,
                          long long int, const float*, float*, int, long long int, int));
    return real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                ldc, strideC, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const double* alpha, const double* A, int lda, long long int strideA, const double* B, int ldb,
    long long int strideB, const double* beta, double* C, int ldc, long long int strideC,
    int batchCount) {
    ROUTESCOPE_REAL(
        ROUTESCOPE_CUBLAS_SONAME, cublasDgemmStridedBatched,
        cublasStatus_t(*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const double*, const double*, int, long long int, const double*, int,
                          long long int, const double*, double*, int, long long int, int));
    return real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                ldc, strideC, batchCount);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* A, cudaDataType Atype,
                                         int lda, const void* B, cudaDataType Btype, int ldb,
                                         const void* beta, void* C, cudaDataType Ctype, int ldc,
                                         cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUBLAS_SONAME, cublasGemmEx,
                    cublasStatus_t(*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void*, const void*, cudaDataType, int,
                                      const void*, cudaDataType, int, const void*, void*,
                                      cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t));
    return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                Ctype, ldc, computeType, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    ROUTESCOPE_REAL(
        ROUTESCOPE_CUBLAS_SONAME, cublasGemmStridedBatchedEx,
        cublasStatus_t(*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const void*, const void*, cudaDataType, int, long long int, const void*,
                          cudaDataType, int, long long int, const void*, void*, cudaDataType, int,
                          long long int, int, cublasComputeType_t, cublasGemmAlgo_t));
    return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
                strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

// ---- cuFFT
cufftResult CUFFTAPI cufftPlan1d(cufftHandle* plan, int nx, cufftType type, int batch) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftPlan1d,
                    cufftResult(*)(cufftHandle*, int, cufftType, int));
    return real(plan, nx, type, batch);
}

cufftResult CUFFTAPI cufftPlanMany(cufftHandle* plan, int rank, int* n, int* inembed, int istride,
                                   int idist, int* onembed, int ostride, int odist, cufftType type,
                                   int batch) {
    ROUTESCOPE_REAL(
        ROUTESCOPE_CUFFT_SONAME, cufftPlanMany,
        cufftResult(*)(cufftHandle*, int, int*, int*, int, int, int*, int, int, cufftType, int));
    return real(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch);
}

cufftResult CUFFTAPI cufftExecR2C(cufftHandle plan, cufftReal* idata, cufftComplex* odata) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftExecR2C,
                    cufftResult(*)(cufftHandle, cufftReal*, cufftComplex*));
    return real(plan, idata, odata);
}

cufftResult CUFFTAPI cufftExecC2R(cufftHandle plan, cufftComplex* idata, cufftReal* odata) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftExecC2R,
                    cufftResult(*)(cufftHandle, cufftComplex*, cufftReal*));
    return real(plan, idata, odata);
}

cufftResult CUFFTAPI cufftExecD2Z(cufftHandle plan, cufftDoubleReal* idata,
                                  cufftDoubleComplex* odata) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftExecD2Z,
                    cufftResult(*)(cufftHandle, cufftDoubleReal*, cufftDoubleComplex*));
    return real(plan, idata, odata);
}

cufftResult CUFFTAPI cufftExecZ2D(cufftHandle plan, cufftDoubleComplex* idata,
                                  cufftDoubleReal* odata) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftExecZ2D,
                    cufftResult(*)(cufftHandle, cufftDoubleComplex*, cufftDoubleReal*));
    return real(plan, idata, odata);
}

cufftResult CUFFTAPI cufftSetStream(cufftHandle plan, cudaStream_t stream) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftSetStream,
                    cufftResult(*)(cufftHandle, cudaStream_t));
    return real(plan, stream);
}

cufftResult CUFFTAPI cufftDestroy(cufftHandle plan) {
    ROUTESCOPE_REAL(ROUTESCOPE_CUFFT_SONAME, cufftDestroy, cufftResult(*)(cufftHandle));
    return real(plan);
}

}  // extern "C"
