#pragma once
// The guard backend (`--device guard`): the CPU backend's kernels over memory that host code cannot
// touch. Every allocation is its own mapping, kept PROT_NONE except while the backend itself runs
// one of its calls (an op, a copy, a zero, a flat-buffer update, a read-out); a read or write of
// that memory from anywhere else in the engine, the training loop, evaluation, dumps, checkpoints
// or the CLI faults, and the handler names the faulting address, the allocation it lies in and a
// backtrace, then lets the process die of the SIGSEGV. So a run that finishes on this device
// reached its tensors only through the Backend interface, as it must on a GPU; its results are
// bit-identical to the CPU backend's (same kernels, same order).
//
// A diagnostic and test device: slow (two mprotect sweeps per backend call), one process-wide
// registry of mappings, Linux only.
#include <cstdint>
#include <memory>

#include "engine/backend/backend.hpp"
#include "engine/core/thread_pool.hpp"

namespace routescope {

class CpuBackend;

class GuardBackend final : public Backend {
public:
    explicit GuardBackend(ThreadPool& pool);
    ~GuardBackend() override;
    GuardBackend(const GuardBackend&) = delete;
    GuardBackend& operator=(const GuardBackend&) = delete;

    const char* name() const override { return "guard"; }
    Device device() const override { return Device::guard; }
    bool supports(ops::OpId op, DType real) const override;

    void* allocate(std::size_t bytes) override;
    void release(void* p) noexcept override;
    void zero(void* p, std::size_t bytes) override;
    void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) override;
    void synchronize() override {}

    void prepare(const ops::OpCall& call) override;
    void forward(const ops::OpCall& call) override;
    void backward(const ops::OpCall& call) override;

    double sum_squares(const float* x, std::size_t n) override;
    void scale(float* x, float a, std::size_t n) override;
    void adamw(const AdamWSpan& span) override;
    void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                     std::int64_t width, std::int32_t* argmax, double* nll) override;
    void to_half(const float* x, std::uint16_t* out, std::size_t n) override;

    /// Whether `p` lies in memory of a live guard backend (for tests).
    static bool owns(const void* p);

private:
    class Open;  // the memory is accessible while one lives (nested calls count)
    void protect(bool accessible);

    std::unique_ptr<CpuBackend> cpu_;
    int depth_ = 0;
};

}  // namespace routescope
