#pragma once
// The CUDA executor (exec.hpp): runs an op's steps on the backend's one stream. A body becomes a
// grid-stride kernel over its indices; a GEMM becomes cublas<t>gemm(StridedBatched) on the
// backend's handle (its workspace set in the constructor, so cuBLAS allocates nothing in a step);
// an FFT runs with the plan prepare() made for its shape; scratch comes from the workspace
// prepare() sized with PlanExec. Nothing here allocates.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cuda/cuda_backend.hpp"
#include "engine/backend/cuda/exec.hpp"
#include "engine/backend/cuda/plan_exec.hpp"

namespace routescope::cuda {

inline void check_cuda(cudaError_t err, const char* what) {
    if (err != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(err));
}
inline void check_blas(cublasStatus_t st, const char* what) {
    if (st != CUBLAS_STATUS_SUCCESS)
        throw CudaError(std::string(what) + ": cuBLAS status " +
                        std::to_string(static_cast<int>(st)));
}
inline void check_cufft(cufftResult res, const char* what) {
    if (res != CUFFT_SUCCESS)
        throw CudaError(std::string(what) + ": cuFFT error " +
                        std::to_string(static_cast<int>(res)));
}

template <class Body>
__global__ void each_kernel(Body body, std::int64_t n) {
    const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride)
        body(i);
}

__device__ inline float shuffle_down(float v, int off) {
    return __shfl_down_sync(0xffffffffu, v, off);
}
__device__ inline double shuffle_down(double v, int off) {
    return __shfl_down_sync(0xffffffffu, v, off);
}
template <class T>
__device__ inline Acc2<T> shuffle_down(Acc2<T> v, int off) {
    return {shuffle_down(v.a, off), shuffle_down(v.b, off)};
}

/// One warp per row (exec.hpp: x.reduce_rows); the order is reduce_row_in_warp_order's.
template <class Body>
__global__ void reduce_rows_kernel(Body body, std::int64_t rows, std::int64_t width) {
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const std::int64_t warps = static_cast<std::int64_t>(blockDim.x / 32) * gridDim.x;
    for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
         r < rows; r += warps) {
        typename Body::Acc a = body.identity();
        for (std::int64_t c = lane; c < width; c += 32)
            a = body.combine(a, body.term(r, c));
        for (int off = 16; off > 0; off /= 2) {
            const typename Body::Acc other = shuffle_down(a, off);
            if (lane < off) a = body.combine(a, other);
        }
        if (lane == 0) body.finish(r, a);
        __syncwarp();
    }
}

/// The FFT plans prepare() made, by shape.
using FftPlans = std::vector<std::pair<FftShape, cufftHandle>>;

class CudaExec {
public:
    static constexpr unsigned kThreads = 256;
    static constexpr std::int64_t kMaxBlocks = 1 << 20;

    /// inputs: how the float GEMMs multiply. tf32 is the handle's math mode (set_precision sets
    /// it), so only bf16 changes the calls here: cublasGemm(StridedBatched)Ex on the float32
    /// matrices with CUBLAS_COMPUTE_32F_FAST_16BF (inputs converted to bfloat16 on the tensor
    /// cores, products summed in fp32, float32 out).
    CudaExec(cudaStream_t stream, cublasHandle_t blas, const FftPlans& plans, std::byte* scratch,
             std::size_t scratch_bytes, GemmInputs inputs = GemmInputs::fp32)
        : stream_(stream),
          blas_(blas),
          plans_(plans),
          scratch_(scratch),
          size_(scratch_bytes),
          bf16_(inputs == GemmInputs::bf16) {}

    template <class Body>
    void each(std::int64_t n, const Body& body) {
        if (n <= 0) return;
        std::int64_t blocks = (n + kThreads - 1) / kThreads;
        if (blocks > kMaxBlocks) blocks = kMaxBlocks;
        each_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream_>>>(body, n);
        check_cuda(cudaGetLastError(), "kernel launch");
    }

    template <class Body>
    void reduce_rows(std::int64_t rows, std::int64_t width, const Body& body) {
        if (rows <= 0) return;
        std::int64_t blocks = (rows * 32 + kThreads - 1) / kThreads;
        if (blocks > kMaxBlocks) blocks = kMaxBlocks;
        reduce_rows_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream_>>>(body, rows,
                                                                                    width);
        check_cuda(cudaGetLastError(), "kernel launch");
    }

    void gemm(const Gemm<float>& g) {
        if (g.batch <= 0 || g.m <= 0 || g.n <= 0) return;
        if (bf16_) {
            if (g.batch == 1)
                check_blas(cublasGemmEx(blas_, op(g.ta), op(g.tb), g.m, g.n, g.k, &g.alpha, g.A,
                                        CUDA_R_32F, g.lda, g.B, CUDA_R_32F, g.ldb, &g.beta, g.C,
                                        CUDA_R_32F, g.ldc, CUBLAS_COMPUTE_32F_FAST_16BF,
                                        CUBLAS_GEMM_DEFAULT),
                           "cublasGemmEx (bf16 inputs)");
            else
                check_blas(cublasGemmStridedBatchedEx(
                               blas_, op(g.ta), op(g.tb), g.m, g.n, g.k, &g.alpha, g.A, CUDA_R_32F,
                               g.lda, g.stride_a, g.B, CUDA_R_32F, g.ldb, g.stride_b, &g.beta, g.C,
                               CUDA_R_32F, g.ldc, g.stride_c, g.batch, CUBLAS_COMPUTE_32F_FAST_16BF,
                               CUBLAS_GEMM_DEFAULT),
                           "cublasGemmStridedBatchedEx (bf16 inputs)");
            return;
        }
        if (g.batch == 1)
            check_blas(cublasSgemm(blas_, op(g.ta), op(g.tb), g.m, g.n, g.k, &g.alpha, g.A, g.lda,
                                   g.B, g.ldb, &g.beta, g.C, g.ldc),
                       "cublasSgemm");
        else
            check_blas(cublasSgemmStridedBatched(blas_, op(g.ta), op(g.tb), g.m, g.n, g.k, &g.alpha,
                                                 g.A, g.lda, g.stride_a, g.B, g.ldb, g.stride_b,
                                                 &g.beta, g.C, g.ldc, g.stride_c, g.batch),
                       "cublasSgemmStridedBatched");
    }
    void gemm(const Gemm<double>& g) {
        if (g.batch <= 0 || g.m <= 0 || g.n <= 0) return;
        check_blas(cublasDgemmStridedBatched(blas_, op(g.ta), op(g.tb), g.m, g.n, g.k, &g.alpha,
                                             g.A, g.lda, g.stride_a, g.B, g.ldb, g.stride_b,
                                             &g.beta, g.C, g.ldc, g.stride_c, g.batch),
                   "cublasDgemmStridedBatched");
    }

    void rfft(const float* in, Complex<float>* out, int n, int batch) {
        check_cufft(cufftExecR2C(plan({n, batch, true, 4}), const_cast<float*>(in),
                                 reinterpret_cast<cufftComplex*>(out)),
                    "cufftExecR2C");
    }
    void irfft(Complex<float>* in, float* out, int n, int batch) {
        check_cufft(
            cufftExecC2R(plan({n, batch, false, 4}), reinterpret_cast<cufftComplex*>(in), out),
            "cufftExecC2R");
    }
    void rfft(const double* in, Complex<double>* out, int n, int batch) {
        check_cufft(cufftExecD2Z(plan({n, batch, true, 8}), const_cast<double*>(in),
                                 reinterpret_cast<cufftDoubleComplex*>(out)),
                    "cufftExecD2Z");
    }
    void irfft(Complex<double>* in, double* out, int n, int batch) {
        check_cufft(cufftExecZ2D(plan({n, batch, false, 8}),
                                 reinterpret_cast<cufftDoubleComplex*>(in), out),
                    "cufftExecZ2D");
    }

    template <class U>
    U* scratch(std::int64_t count) {
        const std::size_t at = scratch_bump(top_, static_cast<std::size_t>(count) * sizeof(U));
        if (top_ > size_)
            throw CudaError("CUDA backend: an op asked for more scratch than prepare() made (" +
                            std::to_string(top_) + " > " + std::to_string(size_) + " bytes)");
        return reinterpret_cast<U*>(scratch_ + at);
    }

private:
    static cublasOperation_t op(Trans t) { return t == Trans::n ? CUBLAS_OP_N : CUBLAS_OP_T; }
    cufftHandle plan(const FftShape& s) const {
        for (const auto& [shape, handle] : plans_)
            if (shape == s) return handle;
        throw CudaError("CUDA backend: no cuFFT plan prepared for size " + std::to_string(s.n) +
                        " × " + std::to_string(s.batch));
    }

    cudaStream_t stream_;
    cublasHandle_t blas_;
    const FftPlans& plans_;
    std::byte* scratch_;
    std::size_t size_;
    std::size_t top_ = 0;
    bool bf16_ = false;
};

}  // namespace routescope::cuda
