#pragma once
// The planning executor (exec.hpp): an op run through it executes nothing and records what its
// call needs — scratch bytes and FFT plans — so CudaBackend::prepare() makes them before a step.
// Pointers it hands out are null; no body ever runs.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda {

/// One cuFFT plan: `batch` transforms of size n, real→complex (forward) or complex→real, in the
/// float type of `real_bytes` (4 or 8).
struct FftShape {
    int n = 0;
    int batch = 0;
    bool forward = true;
    int real_bytes = 4;
    bool operator==(const FftShape&) const = default;
};

class PlanExec {
public:
    template <class Body>
    void each(std::int64_t, const Body&) {}
    template <class Body>
    void reduce_rows(std::int64_t, std::int64_t, const Body&) {}
    template <class T>
    void gemm(const Gemm<T>&) {}
    template <class T>
    void rfft(const T*, Complex<T>*, int n, int batch) {
        add({n, batch, true, static_cast<int>(sizeof(T))});
    }
    template <class T>
    void irfft(Complex<T>*, T*, int n, int batch) {
        add({n, batch, false, static_cast<int>(sizeof(T))});
    }
    template <class U>
    U* scratch(std::int64_t count) {
        scratch_bump(top_, static_cast<std::size_t>(count) * sizeof(U));
        return nullptr;
    }

    /// A further call planned with this executor (prepare()'s backward after its forward): each
    /// call starts its scratch at offset 0 on the device (run() makes a new executor per call),
    /// so the plan needs the largest call's scratch, not their sum (at L 16384, d 1024, B 32 the
    /// sum was 21.5 GB where fft_conv's backward alone needs 12.9 GB).
    void next_call() {
        peak_ = top_ > peak_ ? top_ : peak_;
        top_ = 0;
    }
    /// The scratch the largest call planned so far needs.
    std::size_t scratch_bytes() const { return top_ > peak_ ? top_ : peak_; }
    const std::vector<FftShape>& ffts() const { return ffts_; }

private:
    void add(const FftShape& s) {
        for (const FftShape& f : ffts_)
            if (f == s) return;
        ffts_.push_back(s);
    }
    std::size_t top_ = 0;
    std::size_t peak_ = 0;
    std::vector<FftShape> ffts_;
};

/// The call as a training step's backward may see it, for planning: the planning graph gives no
/// operand a gradient (it holds no memory), and an op's backward requests only the transforms and
/// scratch of the gradients it is asked for (fft_conv's dK transform only when dK is wanted), so
/// a backward planned from the bare call planned nothing and its plans were made inside the
/// first step. Every floating operand without a gradient is given a stand-in one: PlanExec never
/// dereferences a pointer, and the plan covers whichever gradients a step asks for.
inline ops::OpCall with_every_gradient(const ops::OpCall& c) {
    alignas(256) static std::byte stand_in[256];
    ops::OpCall all = c;
    for (std::size_t k = 0; k < c.n_operands; ++k)
        if (!all.grad[k] && (c.t[k].dtype == DType::f32 || c.t[k].dtype == DType::f64))
            all.grad[k] = stand_in;
    return all;
}

}  // namespace routescope::cuda
