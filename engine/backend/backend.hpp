#pragma once
// The backend interface (ARCHITECTURE.md "Engine design"): what a model needs from the hardware it
// runs on. A backend owns device memory and workspaces (FFT plans, scratch) and runs every op of
// the op table (engine/ops/op.hpp) forward and backward, plus the few operations a training step
// does on the flat parameter and gradient buffers (norm, scaling, the AdamW update).
//
// The CPU backend (engine/backend/cpu/) is the reference: today's Eigen/FFTW kernels behind this
// interface, unchanged in numerics. The CUDA backend (engine/backend/cuda/) is a second
// implementation, checked op by op against it by the conformance suite.
//
// A backend allocates only in allocate() and prepare(): a Graph prepares every op of a step in its
// planning pass, so the steps themselves allocate nothing.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/tensor.hpp"
#include "engine/ops/element_math.hpp"
#include "engine/ops/op.hpp"

namespace routescope {

/// One AdamW update (torch.optim.AdamW's formula, engine/train/adamw.hpp) over a contiguous span
/// of the flat buffers, all of its elements with the same rate and decay.
struct AdamWSpan {
    float* params = nullptr;
    const float* grads = nullptr;
    float* m = nullptr;
    float* v = nullptr;
    std::size_t n = 0;
    double lr = 0;
    double weight_decay = 0;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    std::int64_t update = 1;  ///< k ≥ 1: the bias corrections use β^k
};

/// A span's per-element coefficients, as torch computes them for float32 tensors: the scalars
/// in double (Python floats), then float for the element updates (ops::element::adamw_element).
/// Every backend's AdamW uses these.
inline ops::element::AdamWCoefficients adamw_coefficients(const AdamWSpan& s) {
    const auto k = static_cast<double>(s.update);
    ops::element::AdamWCoefficients c{};
    c.decay = static_cast<float>(1.0 - s.lr * s.weight_decay);
    c.step_size = static_cast<float>(s.lr / (1.0 - std::pow(s.beta1, k)));
    c.denom_scale = static_cast<float>(std::sqrt(1.0 - std::pow(s.beta2, k)));
    c.beta1 = static_cast<float>(s.beta1);
    c.beta2 = static_cast<float>(s.beta2);
    c.one_minus_beta1 = static_cast<float>(1.0 - s.beta1);
    c.one_minus_beta2 = static_cast<float>(1.0 - s.beta2);
    c.eps = static_cast<float>(s.eps);
    c.decays = s.weight_decay != 0.0;
    return c;
}

/// A training run's arithmetic (train.precision, docs/config.md): fp32 everywhere (the default
/// and the parity reference); tf32: the float32 GEMMs on TF32 tensor cores (10-bit mantissa
/// products, fp32 sums), everything else fp32; bf16-mixed: the same GEMMs with bfloat16 inputs
/// (8-bit mantissa products, fp32 sums), everything else fp32 (fp32 master weights and FFTs).
enum class Precision : std::uint8_t { fp32, tf32, bf16_mixed };

/// "fp32" | "tf32" | "bf16-mixed"; throws ConfigError for anything else.
Precision parse_precision(const std::string& name);
const char* precision_name(Precision p);

class Backend {
public:
    virtual ~Backend() = default;

    virtual const char* name() const = 0;
    virtual Device device() const = 0;
    /// Sets the arithmetic of the ops that follow (the trainer calls it once, before the first
    /// step). A backend computes in fp32 unless it overrides this: it throws ConfigError naming
    /// the precision and the backend for anything else (the CPU has no TF32 or bf16 GEMMs).
    virtual void set_precision(Precision p);
    Precision precision() const { return precision_; }
    /// Whether forward/backward of `op` run on this backend for float type `real` (f32 or f64).
    virtual bool supports(ops::OpId op, DType real) const = 0;

    // ------------------------------------------------------------ memory
    /// `bytes` of device memory, 64-byte aligned, uninitialised. Throws on failure.
    virtual void* allocate(std::size_t bytes) = 0;
    virtual void release(void* p) noexcept = 0;
    virtual void zero(void* p, std::size_t bytes) = 0;
    enum class CopyKind { host_to_device, device_to_host, device_to_device };
    /// Copies `bytes`; synchronous for device → host and for host → device from pageable memory
    /// (the caller may read or reuse its host buffer on return). Counts host ↔ device bytes
    /// (bytes_to_device / bytes_to_host); device → device moves are not counted.
    virtual void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) = 0;
    /// Waits until every operation issued so far has finished.
    virtual void synchronize() = 0;
    /// `bytes` of host memory that device → host copies fill at the link's full speed (page-locked
    /// on a GPU; ordinary 64-byte aligned memory elsewhere, the default), for buffers that take
    /// many copies: a dump's rows (WriteQueue). Throws on failure.
    virtual void* allocate_host(std::size_t bytes);
    virtual void release_host(void* p) noexcept;
    /// Bytes copied host → device and device → host since construction (a resident training step
    /// copies only its batch up and a few scalars down).
    std::uint64_t bytes_to_device() const { return to_device_; }
    std::uint64_t bytes_to_host() const { return to_host_; }

    // ------------------------------------------------------------ ops
    /// Creates what a call of this shape needs (plans, scratch) ahead of the step; data pointers
    /// may be null (a planning pass). Idempotent for the same shape.
    virtual void prepare(const ops::OpCall& call) = 0;
    /// Runs the op: reads the inputs, writes the outputs and saved tensors.
    virtual void forward(const ops::OpCall& call) = 0;
    /// Accumulates (+=) into every non-null input gradient from the outputs' gradients.
    virtual void backward(const ops::OpCall& call) = 0;

    // ------------------------------------------------------------ flat buffers
    /// Σ x², accumulated in double in a fixed order (the gradient norm).
    virtual double sum_squares(const float* x, std::size_t n) = 0;
    /// x ← a·x.
    virtual void scale(float* x, float a, std::size_t n) = 0;
    /// One AdamW update of a span (moments updated in place).
    virtual void adamw(const AdamWSpan& span) = 0;
    /// The updates of several spans (a step's parameter groups): by default one adamw() each; a
    /// GPU backend fuses them into one launch.
    virtual void adamw_spans(const AdamWSpan* spans, std::size_t count) {
        for (std::size_t k = 0; k < count; ++k)
            adamw(spans[k]);
    }

    // ------------------------------------------------------------ read-outs
    /// Per row of logits [rows, width] (device memory): argmax[r] = the first index of the
    /// row's maximum, and, with targets (device, [rows]), nll[r] = −log softmax(row)[targets[r]]
    /// (log Σ exp(x − max) in double, + max − x[target]); NaN where targets[r] is outside
    /// [0, width) (an ignored position). argmax [rows] and nll [rows] are device memory; nll may be
    /// null. What evaluation needs from logits, so a batch moves O(rows) bytes to the host.
    virtual void row_readout(const float* logits, const std::int32_t* targets, std::int64_t rows,
                             std::int64_t width, std::int32_t* argmax, double* nll) = 0;

    /// out[i] = half_bits(x[i]) for i < n (engine/core/half_bits.hpp: binary16 bits, ties to
    /// even), device memory in and out: a float16 dump's conversion made where the activations
    /// are, so half the bytes cross to the host and the host converts nothing.
    virtual void to_half(const float* x, std::uint16_t* out, std::size_t n) = 0;

protected:
    /// For copy(): adds a host ↔ device move to the byte counters.
    void count_copy(std::size_t bytes, CopyKind kind) {
        if (kind == CopyKind::host_to_device) to_device_ += bytes;
        if (kind == CopyKind::device_to_host) to_host_ += bytes;
    }

    std::uint64_t to_device_ = 0;
    std::uint64_t to_host_ = 0;
    Precision precision_ = Precision::fp32;
};

}  // namespace routescope
