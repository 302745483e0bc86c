#pragma once
// The emulated CUDA device (`--device cuda-emulated`, diagnostic): the CUDA backend's op table and
// flat-buffer operations (engine/backend/cuda/dispatch.hpp, flat.hpp) run on the host through
// HostExec — the code the GPU runs, minus the launches and the libraries (GEMMs by cuBLAS's
// definition, FFTs as DFTs) — behind the Backend interface. test_cuda_emulation compares it with
// the CPU backend op by op, and the device suite (tests/cli/guard_suite.py --device cuda-emulated)
// runs every command on it, so the CUDA backend's indexing, layouts, scratch plans and its
// integration with the engine are checked on any machine. Memory is plain host memory (fresh
// allocations are NaN bytes, as uninitialised device memory may hold anything); float32 only, as
// the CUDA backend. train.precision tf32 and bf16-mixed round the float GEMMs' inputs as the
// tensor cores do (HostExec::set_gemm_inputs), so a reduced-precision run can be tried on the
// host. Slow: naive GEMMs and O(n²) DFTs — for tests with small models.
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda/dispatch.hpp"
#include "engine/backend/cuda/flat.hpp"
#include "engine/backend/cuda/host_exec.hpp"
#include "engine/backend/cuda/plan_exec.hpp"

namespace routescope {

class EmulatedCudaBackend final : public Backend {
public:
    const char* name() const override { return "cuda (emulated on the host)"; }
    Device device() const override { return Device::cuda_emulated; }
    bool supports(ops::OpId op, DType real) const override {
        return real == DType::f32 && cuda::implements(op);
    }

    void set_precision(Precision p) override {
        host_.set_gemm_inputs(p == Precision::tf32         ? cuda::GemmInputs::tf32
                              : p == Precision::bf16_mixed ? cuda::GemmInputs::bf16
                                                           : cuda::GemmInputs::fp32);
        precision_ = p;
    }

    /// Visits each launch's indices scattered (HostExec::Order), not in memory order, so that
    /// every comparison with the CPU backend (conformance, model parity, the device suite) also
    /// shows that no op's body depends on the order its launch's indices run in — a race on the
    /// GPU. set_index_order changes it.
    EmulatedCudaBackend() { host_.set_order(cuda::HostExec::Order::scattered); }
    void set_index_order(cuda::HostExec::Order o) { host_.set_order(o); }

    void* allocate(std::size_t bytes) override {
        void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
        if (!p) throw std::bad_alloc();
        std::memset(p, 0xFF, (bytes + 255) / 256 * 256 + 256);  // uninitialised: NaN bytes
        return p;
    }
    void release(void* p) noexcept override { std::free(p); }
    void zero(void* p, std::size_t bytes) override {
        if (p && bytes) std::memset(p, 0, bytes);
    }
    void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
        if (bytes) std::memmove(dst, src, bytes);
        count_copy(bytes, kind);
    }
    void synchronize() override {}

    void prepare(const ops::OpCall& c) override { plan(c); }
    void forward(const ops::OpCall& c) override { run(c, false); }
    void backward(const ops::OpCall& c) override { run(c, true); }

    double sum_squares(const float* x, std::size_t n) override {
        cuda::PlanExec p;
        double result = 0;
        cuda::flat::sum_squares(p, x, static_cast<std::int64_t>(n), &result);
        host_.reserve(p.scratch_bytes());
        host_.begin_op();
        cuda::flat::sum_squares(host_, x, static_cast<std::int64_t>(n), &result);
        return result;
    }
    void scale(float* x, float a, std::size_t n) override {
        host_.each(static_cast<std::int64_t>(n), cuda::flat::Scale{x, a});
    }
    void adamw(const AdamWSpan& span) override { cuda::flat::adamw(host_, &span, 1); }
    void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                     std::int64_t width, std::int32_t* argmax, double* nll) override {
        host_.each(rows, cuda::flat::RowReadout{logits, targets, width, argmax, nll});
    }
    void to_half(const float* x, std::uint16_t* out, std::size_t n) override {
        host_.each(static_cast<std::int64_t>(n), cuda::flat::ToHalf{x, out});
    }

private:
    void plan(const ops::OpCall& c) {
        cuda::PlanExec p;
        cuda::run_op<float>(p, c, false);
        cuda::run_op<float>(p, c, true);
        host_.reserve(p.scratch_bytes());
    }
    void run(const ops::OpCall& c, bool backward) {
        if (ops::call_real_type(c) != DType::f32)
            throw Error("the CUDA backend runs float32 calls only");
        plan(c);
        host_.begin_op();
        cuda::run_op<float>(host_, c, backward);
    }
    cuda::HostExec host_;
};

}  // namespace routescope
