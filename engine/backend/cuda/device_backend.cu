// The CUDA backend (docs/engine.md, "The CUDA backend"): the Backend interface on device 0 with one
// stream. Memory is cudaMalloc'd in allocate(); prepare() runs an op through PlanExec and makes
// what it needs (scratch, cuFFT plans); forward/backward run the op table of dispatch.hpp with
// CudaExec; the flat-buffer operations and read-outs are flat.hpp's. float32 calls only.
//
// Determinism: no kernel uses atomics (exec.hpp), cuBLAS runs on one stream with a fixed
// workspace, cuFFT plans are fixed per shape, so the same inputs on the same GPU and toolkit give
// the same bits. TF32 stays off unless train.precision = tf32 (set_precision): the handle's math
// mode is CUBLAS_DEFAULT_MATH, which keeps SGEMM in FP32 unless the environment
// (NVIDIA_TF32_OVERRIDE=1) forces otherwise.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda/cuda_backend.hpp"
#include "engine/backend/cuda/cuda_exec.cuh"
#include "engine/backend/cuda/dispatch.hpp"
#include "engine/backend/cuda/flat.hpp"
#include "engine/backend/cuda/plan_exec.hpp"
#include "engine/core/error.hpp"

namespace routescope::cuda {

std::string missing_kernels() {
    std::string out;
    for (const ops::OpDef& def : ops::op_defs())
        if (!implements(def.id)) out += (out.empty() ? "" : ", ") + std::string(def.name);
    return out;
}

namespace {

/// cuBLAS's workspace, given to it once so it never allocates during a step (cuBLAS asks for
/// 32 MiB on Hopper for its best kernels).
constexpr std::size_t kBlasWorkspace = 32u << 20;

class CudaBackend final : public Backend {
public:
    CudaBackend() {
        check_cuda(cudaSetDevice(0), "cudaSetDevice");
        check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check_blas(cublasCreate(&blas_), "cublasCreate");
        check_blas(cublasSetStream(blas_, stream_), "cublasSetStream");
        check_blas(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
        check_cuda(cudaMalloc(&blas_workspace_, kBlasWorkspace), "cudaMalloc (cuBLAS workspace)");
        check_blas(cublasSetWorkspace(blas_, blas_workspace_, kBlasWorkspace),
                   "cublasSetWorkspace");
    }
    ~CudaBackend() override {
        cudaStreamSynchronize(stream_);
        for (auto& [shape, handle] : plans_)
            cufftDestroy(handle);
        cudaFree(scratch_);
        cudaFree(flat_scratch_);
        cublasDestroy(blas_);
        cudaFree(blas_workspace_);
        cudaStreamDestroy(stream_);
    }
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    const char* name() const override { return "cuda"; }
    Device device() const override { return Device::cuda; }
    /// tf32: cuBLAS's TF32 tensor-core math for the float32 GEMMs (dense, attention, spatial_mix);
    /// bf16-mixed: the same GEMMs with bfloat16 inputs (CudaExec: CUBLAS_COMPUTE_32F_FAST_16BF);
    /// in both the elementwise kernels, reductions, cuFFT, the loss and AdamW's fp32 master
    /// weights stay fp32 (docs/config.md, "Precision").
    void set_precision(Precision p) override {
        check_blas(cublasSetMathMode(blas_, p == Precision::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                 : CUBLAS_DEFAULT_MATH),
                   "cublasSetMathMode");
        precision_ = p;
    }
    bool supports(ops::OpId op, DType real) const override {
        return real == DType::f32 && implements(op);
    }

    // ------------------------------------------------------------ memory
    void* allocate(std::size_t bytes) override {
        void* p = nullptr;
        check_cuda(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
        return p;
    }
    void release(void* p) noexcept override {
        if (!p) return;
        cudaStreamSynchronize(stream_);
        cudaFree(p);
        // Neither result can be thrown from here; a failure left in the thread's last-error
        // slot would otherwise be reported by the next healthy launch as its own.
        (void)cudaGetLastError();
    }
    void zero(void* p, std::size_t bytes) override {
        if (p && bytes) check_cuda(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
    }
    void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
        count_copy(bytes, kind);
        if (!bytes) return;
        const cudaMemcpyKind k = kind == CopyKind::host_to_device   ? cudaMemcpyHostToDevice
                                 : kind == CopyKind::device_to_host ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
        check_cuda(cudaMemcpyAsync(dst, src, bytes, k, stream_), "cudaMemcpyAsync");
        // The caller may reuse (host → device) or read (device → host) its buffer on return.
        if (kind != CopyKind::device_to_device)
            check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }
    void synchronize() override {
        check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }

    // ------------------------------------------------------------ ops
    void prepare(const ops::OpCall& c) override {
        require_f32(c);
        PlanExec plan;
        run_op<float>(plan, c, false);
        plan.next_call();
        run_op<float>(plan, with_every_gradient(c), true);
        reserve_scratch(plan.scratch_bytes());
        for (const FftShape& s : plan.ffts())
            make_plan(s);
    }
    void forward(const ops::OpCall& c) override { run(c, false); }
    void backward(const ops::OpCall& c) override { run(c, true); }

    // ------------------------------------------------------------ flat buffers
    double sum_squares(const float* x, std::size_t n) override {
        const auto count = static_cast<std::int64_t>(n);
        PlanExec plan;
        flat::sum_squares(plan, x, count, nullptr);
        const std::size_t need = plan.scratch_bytes() + 256 + sizeof(double);
        if (need > flat_size_) {  // the first call of a store's size; steady steps reuse it
            synchronize();
            cudaFree(flat_scratch_);
            flat_scratch_ = nullptr;
            check_cuda(cudaMalloc(&flat_scratch_, need), "cudaMalloc (flat scratch)");
            flat_size_ = need;
        }
        auto* result = reinterpret_cast<double*>(flat_scratch_ + flat_size_ - sizeof(double));
        CudaExec e = exec(flat_scratch_, flat_size_ - sizeof(double));
        flat::sum_squares(e, x, count, result);
        double host = 0;
        copy(&host, result, sizeof(double), CopyKind::device_to_host);
        return host;
    }
    void scale(float* x, float a, std::size_t n) override {
        CudaExec e = exec(nullptr, 0);
        e.each(static_cast<std::int64_t>(n), flat::Scale{x, a});
    }
    void adamw(const AdamWSpan& span) override { adamw_spans(&span, 1); }
    void adamw_spans(const AdamWSpan* spans, std::size_t count) override {
        CudaExec e = exec(nullptr, 0);
        flat::adamw(e, spans, count);
    }
    void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                     std::int64_t width, std::int32_t* argmax, double* nll) override {
        CudaExec e = exec(nullptr, 0);
        flat::row_readout(e, logits, targets, rows, width, argmax, nll);
    }
    void to_half(const float* x, std::uint16_t* out, std::size_t n) override {
        CudaExec e = exec(nullptr, 0);
        e.each(static_cast<std::int64_t>(n), flat::ToHalf{x, out});
    }
    /// Page-locked, so a device → host copy into it is one DMA at the link's speed (a pageable
    /// destination is staged through the driver's own pinned buffer and a host memcpy).
    void* allocate_host(std::size_t bytes) override {
        void* p = nullptr;
        check_cuda(cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocDefault),
                   "cudaHostAlloc");
        return p;
    }
    void release_host(void* p) noexcept override {
        if (!p) return;
        cudaFreeHost(p);
        (void)cudaGetLastError();  // as release()
    }

private:
    static void require_f32(const ops::OpCall& c) {
        if (ops::call_real_type(c) != DType::f32)
            throw Error(std::string("the CUDA backend runs float32 calls only (op ") +
                        ops::op_def(c.op).name + ")");
    }
    CudaExec exec(std::byte* scratch, std::size_t bytes) {
        return CudaExec(stream_, blas_, plans_, scratch, bytes,
                        precision_ == Precision::bf16_mixed ? GemmInputs::bf16 : GemmInputs::fp32);
    }
    void reserve_scratch(std::size_t bytes) {
        if (bytes <= scratch_size_) return;
        synchronize();
        cudaFree(scratch_);
        scratch_ = nullptr;
        check_cuda(cudaMalloc(&scratch_, bytes), "cudaMalloc (op scratch)");
        scratch_size_ = bytes;
    }
    void make_plan(const FftShape& s) {
        for (const auto& [shape, handle] : plans_)
            if (shape == s) return;
        cufftHandle h = 0;
        int n = s.n;
        const cufftType type = s.real_bytes == 4 ? (s.forward ? CUFFT_R2C : CUFFT_C2R)
                                                 : (s.forward ? CUFFT_D2Z : CUFFT_Z2D);
        check_cufft(cufftPlanMany(&h, 1, &n, nullptr, 1, 0, nullptr, 1, 0, type, s.batch),
                    "cufftPlanMany");
        check_cufft(cufftSetStream(h, stream_), "cufftSetStream");
        plans_.emplace_back(s, h);
    }
    void run(const ops::OpCall& c, bool backward) {
        require_f32(c);
        // An op whose shape was not prepared (a caller without a planning pass) is prepared now:
        // the first call allocates, every later one of the same shape finds its plans.
        PlanExec plan;
        run_op<float>(plan, c, backward);
        bool planned = plan.scratch_bytes() <= scratch_size_;
        for (const FftShape& s : plan.ffts())
            planned = planned && std::any_of(plans_.begin(), plans_.end(),
                                             [&](const auto& p) { return p.first == s; });
        if (!planned) prepare(c);
        CudaExec x = exec(scratch_, scratch_size_);
        // A launch reports only its configuration's errors; a fault while a kernel runs surfaces
        // at the next synchronising call, which may be another op's. ROUTESCOPE_CUDA_SYNC=1
        // synchronises after every op so that the op named is the one that failed (slow: for
        // finding a fault, not for runs).
        try {
            run_op<float>(x, c, backward);
            if (sync_each_op_) check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        } catch (const CudaError& e) {
            throw CudaError(std::string(ops::op_def(c.op).name) +
                            (backward ? " backward: " : " forward: ") + e.what());
        }
    }
    const bool sync_each_op_ = [] {
        const char* v = std::getenv("ROUTESCOPE_CUDA_SYNC");
        return v && std::string(v) == "1";
    }();

    cudaStream_t stream_ = nullptr;
    cublasHandle_t blas_ = nullptr;
    void* blas_workspace_ = nullptr;
    FftPlans plans_;
    std::byte* scratch_ = nullptr;
    std::size_t scratch_size_ = 0;
    std::byte* flat_scratch_ = nullptr;
    std::size_t flat_size_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
    return std::make_unique<CudaBackend>();
}

}  // namespace routescope::cuda
