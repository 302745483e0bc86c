#pragma once
// The CPU backend: the engine's reference kernels (engine/ops/*.cpp: Eigen GEMMs, FFTW, plain
// loops over a ThreadPool) behind the Backend interface, with their numerics unchanged. Runs f32
// (models) and f64 (the finite-difference and conformance tests) calls alike.
//
// Workspaces it owns: the FFT convolution's plans and buffers (one per shape, made in prepare())
// and the attention backward's per-thread scratch.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/core/thread_pool.hpp"

namespace routescope {

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(ThreadPool& pool);
    ~CpuBackend() override;
    CpuBackend(const CpuBackend&) = delete;
    CpuBackend& operator=(const CpuBackend&) = delete;

    const char* name() const override { return "cpu"; }
    Device device() const override { return Device::cpu; }
    bool supports(ops::OpId op, DType real) const override;
    ThreadPool& pool() { return pool_; }

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

private:
    template <class T>
    void forward_as(const ops::OpCall& call);
    template <class T>
    void backward_as(const ops::OpCall& call);
    template <class T>
    T* attention_scratch(int L);
    template <class T>
    void* fft_workspace(const ops::OpCall& call);

    struct FftEntry;
    ThreadPool& pool_;
    std::vector<std::unique_ptr<FftEntry>> fft_;
    std::vector<float> attention_scratch_f32_;
    std::vector<double> attention_scratch_f64_;
};

}  // namespace routescope
