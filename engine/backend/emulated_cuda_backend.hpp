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
// Every pointer is checked as the GPU would fault on it: an op's operands and gradients, the flat
// operations' buffers and zero()'s target must lie inside one allocate() block, and a copy's
// kind must match where its two ends live (a host pointer handed to a kernel, or a host → device
// copy from device memory, passes every host loop and faults on a device; the guard backend sees
// only the opposite direction, host code reading device memory).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <string>
#include <vector>

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
        blocks_[static_cast<const char*>(p)] = bytes;
        return p;
    }
    void release(void* p) noexcept override {
        blocks_.erase(static_cast<const char*>(p));
        std::free(p);
    }
    void zero(void* p, std::size_t bytes) override {
        if (!p || !bytes) return;  // nothing to zero (the device backend's rule too)
        on_device(p, bytes, "zero()");
        std::memset(p, 0, bytes);
    }
    void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override {
        if (bytes) {
            const bool dst_device = kind != CopyKind::device_to_host;
            const bool src_device = kind != CopyKind::host_to_device;
            const char* what = kind == CopyKind::host_to_device   ? "a host → device copy"
                               : kind == CopyKind::device_to_host ? "a device → host copy"
                                                                  : "a device → device copy";
            if (dst_device)
                on_device(dst, bytes, what, "destination");
            else
                off_device(dst, what, "destination");
            if (src_device)
                on_device(src, bytes, what, "source");
            else
                off_device(src, what, "source");
            std::memmove(dst, src, bytes);
        }
        count_copy(bytes, kind);
    }
    void synchronize() override {}

    void prepare(const ops::OpCall& c) override { plan(c); }
    void forward(const ops::OpCall& c) override { run(c, false); }
    void backward(const ops::OpCall& c) override { run(c, true); }

    double sum_squares(const float* x, std::size_t n) override {
        on_device(x, n * sizeof(float), "sum_squares()");
        cuda::PlanExec p;
        double result = 0;
        cuda::flat::sum_squares(p, x, static_cast<std::int64_t>(n), &result);
        host_.reserve(p.scratch_bytes());
        host_.begin_op();
        cuda::flat::sum_squares(host_, x, static_cast<std::int64_t>(n), &result);
        return result;
    }
    void scale(float* x, float a, std::size_t n) override {
        on_device(x, n * sizeof(float), "scale()");
        host_.each(static_cast<std::int64_t>(n), cuda::flat::Scale{x, a});
    }
    void adamw(const AdamWSpan& span) override {
        const std::size_t bytes = span.n * sizeof(float);
        on_device(span.params, bytes, "adamw()", "parameters");
        on_device(span.grads, bytes, "adamw()", "gradients");
        on_device(span.m, bytes, "adamw()", "first moments");
        on_device(span.v, bytes, "adamw()", "second moments");
        cuda::flat::adamw(host_, &span, 1);
    }
    void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                     std::int64_t width, std::int32_t* argmax, double* nll) override {
        const auto r = static_cast<std::size_t>(std::max<std::int64_t>(rows, 0));
        on_device(logits,
                  r * static_cast<std::size_t>(std::max<std::int64_t>(width, 0)) * sizeof(float),
                  "row_readout()", "logits");
        on_device(targets, r * sizeof(std::int32_t), "row_readout()", "targets");
        on_device(argmax, r * sizeof(std::int32_t), "row_readout()", "argmax");
        on_device(nll, r * sizeof(double), "row_readout()", "nll");
        cuda::flat::row_readout(host_, logits, targets, rows, width, argmax, nll);
    }
    void to_half(const float* x, std::uint16_t* out, std::size_t n) override {
        on_device(x, n * sizeof(float), "to_half()", "input");
        on_device(out, n * sizeof(std::uint16_t), "to_half()", "output");
        host_.each(static_cast<std::int64_t>(n), cuda::flat::ToHalf{x, out});
    }

private:
    /// Whether one allocate() block holds [p, p + bytes).
    bool inside_a_block(const void* p, std::size_t bytes) const {
        const auto* c = static_cast<const char*>(p);
        auto it = blocks_.upper_bound(c);
        if (it == blocks_.begin()) return false;
        --it;
        return c >= it->first && static_cast<std::size_t>(c - it->first) <= it->second &&
               bytes <= it->second - static_cast<std::size_t>(c - it->first);
    }
    void on_device(const void* p, std::size_t bytes, const std::string& what,
                   const char* operand = nullptr) const {
        if (bytes == 0 || inside_a_block(p, bytes)) return;
        throw Error(what + (operand ? std::string(": the ") + operand : std::string()) + " (" +
                    std::to_string(bytes) + " bytes at " + pointer_text(p) +
                    (p && inside_a_block(p, 1) ? ") runs past the end of its device allocation"
                                               : ") is not device memory") +
                    ": a kernel would fault on it on a GPU");
    }
    void off_device(const void* p, const std::string& what, const char* operand) const {
        if (inside_a_block(p, 1))
            throw Error(what + ": the " + operand + " (" + pointer_text(p) +
                        ") is device memory: the copy's kind does not match its pointers");
    }
    static std::string pointer_text(const void* p) {
        char text[32];
        std::snprintf(text, sizeof text, "%p", p);
        return text;
    }
    /// Checks the call's operands and gradients as the device would use them.
    void check_operands(const ops::OpCall& c, bool backward) const {
        const std::string what =
            std::string(ops::op_def(c.op).name) + (backward ? " backward" : " forward");
        ops::Layout layout(ops::call_real_type(c));
        ops::op_def(c.op).layout(c, layout);
        for (std::size_t k = 0; k < c.n_operands; ++k) {
            const Tensor& t = c.t[k];
            const char* name =
                static_cast<int>(k) < layout.size() ? layout[static_cast<int>(k)].name : "operand";
            if (t.data) on_device(t.data, t.bytes(), what, name);
            if (c.grad[k])
                on_device(c.grad[k], t.bytes(), what, (std::string(name) + "'s gradient").c_str());
        }
    }
    /// What a call of this shape was planned with in prepare() — the planning graph's call, whose
    /// operands have no memory and no gradients, as the device's prepare() sees it.
    struct Prepared {
        std::size_t scratch[2] = {0, 0};  ///< planned per direction: [0] forward, [1] backward
        std::vector<cuda::FftShape> ffts;
    };
    static std::vector<std::int64_t> shape_key(const ops::OpCall& c) {
        std::vector<std::int64_t> key{static_cast<std::int64_t>(c.op)};
        key.insert(key.end(), c.i.begin(), c.i.end());
        for (std::size_t k = 0; k < c.n_operands; ++k) {
            key.push_back(static_cast<std::int64_t>(c.t[k].dtype));
            key.insert(key.end(), c.t[k].shape.begin(), c.t[k].shape.begin() + c.t[k].rank);
        }
        return key;
    }
    void plan(const ops::OpCall& c) {
        // As the device's prepare(): one executor, each direction from offset 0, the larger
        // reserved; each direction's own need is kept, so that a backward planning less than it
        // uses is caught even when its forward needs more.
        cuda::PlanExec p;
        Prepared& at = prepared_[shape_key(c)];
        cuda::run_op<float>(p, c, false);
        at.scratch[0] = std::max(at.scratch[0], p.scratch_bytes());
        p.next_call();
        const std::size_t forward_bytes = p.scratch_bytes();
        cuda::PlanExec backward_alone;
        cuda::run_op<float>(p, cuda::with_every_gradient(c), true);
        cuda::run_op<float>(backward_alone, cuda::with_every_gradient(c), true);
        at.scratch[1] = std::max(at.scratch[1], backward_alone.scratch_bytes());
        if (p.scratch_bytes() != std::max(forward_bytes, backward_alone.scratch_bytes()))
            throw Error("PlanExec: the plan of two calls is not the larger of the two");
        host_.reserve(p.scratch_bytes());
        for (const cuda::FftShape& f : p.ffts())
            if (std::find(at.ffts.begin(), at.ffts.end(), f) == at.ffts.end()) at.ffts.push_back(f);
    }
    void run(const ops::OpCall& c, bool backward) {
        if (ops::call_real_type(c) != DType::f32)
            throw Error("the CUDA backend runs float32 calls only");
        // The device makes in prepare() what a planned call needs and would make the rest inside
        // the step (device_backend.cu's run(): correct, but an allocation mid-step); here such a
        // call is an error, so a backward that plans less from the planning graph's call than it
        // uses fails the host tests.
        cuda::PlanExec p;
        cuda::run_op<float>(p, c, backward);
        const auto it = prepared_.find(shape_key(c));
        if (it != prepared_.end()) {
            for (const cuda::FftShape& f : p.ffts())
                if (std::find(it->second.ffts.begin(), it->second.ffts.end(), f) ==
                    it->second.ffts.end())
                    throw Error(std::string(ops::op_def(c.op).name) +
                                (backward ? " backward" : " forward") + ": an FFT of size " +
                                std::to_string(f.n) + " × " + std::to_string(f.batch) +
                                " that prepare() did not plan");
            if (p.scratch_bytes() > it->second.scratch[backward ? 1 : 0])
                throw Error(std::string(ops::op_def(c.op).name) +
                            (backward ? " backward" : " forward") + ": " +
                            std::to_string(p.scratch_bytes()) + " bytes of scratch, prepare() " +
                            "planned " + std::to_string(it->second.scratch[backward ? 1 : 0]));
        } else {
            plan(c);  // no planning pass for this call (a caller without a graph)
        }
        check_operands(c, backward);
        host_.reserve(p.scratch_bytes());
        host_.begin_op();
        cuda::run_op<float>(host_, c, backward);
    }
    std::map<const char*, std::size_t> blocks_;  ///< allocate()'s blocks: start → bytes asked
    cuda::HostExec host_;
    std::map<std::vector<std::int64_t>, Prepared> prepared_;
};

}  // namespace routescope
