#pragma once
// The conformance suite's specs (ggml's test-backend-ops idea): for every op of the op table, the
// shapes it is run at — tiny and odd for the finite-difference check in double precision and the
// comparison of every backend against the CPU backend, larger for `routescope-cli bench ops` — and
// the inputs it is fed (normal values, except where the op needs a domain: A_re < 0, forget gates
// in (0, 1), ids below the vocabulary, lengths in [1, L], targets with ignored rows, 0/1 masks).
//
// An OpInstance owns the memory of one call on one backend: every operand and its gradient,
// allocated through the backend and filled on the host.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/ops/op.hpp"

namespace routescope {

struct OpSpec {
    ops::OpId op;
    std::vector<std::int64_t> args;  ///< OpCall::i
    double f = 0;                    ///< OpCall::f
    std::uint64_t seed = 0;          ///< OpCall::seed
    std::string label;               ///< the arguments as text, e.g. "rows=7, in=5, out=3"
};

/// tiny: every element perturbed by the finite-difference check; odd: a few hundred to a few
/// thousand elements with prime sizes (partial blocks, rows longer than a warp), the comparison of
/// backends; bench: a bigs-small step's sizes (`bench ops`).
enum class SpecSize { tiny, odd, bench };

/// The specs of one op: at least one for every op (a test fails for an op without one).
std::vector<OpSpec> op_specs(ops::OpId op, SpecSize size);

/// How closely a float32 backend must agree with the CPU backend on an op, for every output and
/// input gradient: normalised MSE (Σ(a − b)² / Σb²) and the largest absolute difference in units
/// of the compared tensor's scale, max(1, RMS of the CPU's values), with the inputs of op_specs
/// (unit normals). float32 rounding is relative: a GEMM output or a weight gradient summed over
/// 4096 rows has an RMS of 30–60, and the same relative agreement is a larger absolute difference
/// (first run on an H100: dense's weight gradient 1.1e-4 absolute at RMS 64, i.e. 1.7e-6 of it).
/// Every op has an entry (the suite fails for one without).
struct OpTolerance {
    double nmse = 0;
    double max_abs = 0;
};
OpTolerance op_tolerance(ops::OpId op);
/// The same for a backend computing in `p` (Backend::set_precision) against the CPU's fp32: tf32
/// rounds the GEMMs' inputs to a 10-bit mantissa (2⁻¹¹ relative), so dense, attention and
/// spatial_mix get nmse 1e-5 and a largest difference of 2e-2 of the scale; bf16-mixed rounds them
/// to 7 explicit bits (2⁻⁸ relative, 4× TF32's): nmse 2e-4 and 8e-2; other ops are fp32 and keep
/// op_tolerance(op).
OpTolerance op_tolerance(ops::OpId op, Precision p);

struct Agreement;
/// "WHAT: nmse N (tolerance T), max |Δ| M (tolerance U × scale S)": a conformance failure's text.
std::string agreement_text(const Agreement& a, const OpTolerance& t);

/// One compared tensor of a conformance run.
struct Agreement {
    std::string what;  ///< e.g. "output y", "gradient of weight"
    double nmse = 0;
    double max_abs = 0;
    double scale = 1;         ///< max(1, RMS of the reference values)
    std::int64_t worst = -1;  ///< element of the largest difference
    bool within(const OpTolerance& t) const {
        return nmse <= t.nmse && max_abs <= t.max_abs * scale;
    }
};
Agreement compare_values(std::string what, const std::vector<double>& got,
                         const std::vector<double>& want);

/// Runs a spec in float32 on `reference` (the CPU backend) and on `other` with the same inputs:
/// forward, then backward with the same random output gradients and the same nonzero prefilled
/// input gradients (so accumulation is checked). Compares every output, cross_entropy's loss and
/// every float input's gradient.
std::vector<Agreement> conformance_run(const OpSpec& spec, Backend& reference, Backend& other,
                                       std::uint64_t seed = 1234);

/// One call of a spec on a backend with its operands allocated there and its inputs filled from
/// `seed`; every float input and output also gets a gradient buffer (zeroed). Saved tensors have
/// none (cross_entropy's backward then seeds ∂loss/∂loss = 1).
class OpInstance {
public:
    OpInstance(const OpSpec& spec, DType real, Backend& backend, std::uint64_t seed);
    ~OpInstance();
    OpInstance(const OpInstance&) = delete;
    OpInstance& operator=(const OpInstance&) = delete;

    ops::OpCall& call() { return call_; }
    const ops::Layout& layout() const { return layout_; }
    /// Operand k's values / gradient as host doubles (converted from the call's float type).
    std::vector<double> values(int k) const;
    std::vector<double> gradient(int k) const;
    void set_values(int k, const std::vector<double>& v);
    void set_gradient(int k, const std::vector<double>& g);
    /// Zeroes every gradient buffer.
    void zero_gradients();
    std::int64_t numel(int k) const { return layout_[k].numel; }
    bool is_float(int k) const { return layout_[k].dtype != DType::i32; }

private:
    Backend& backend_;
    ops::Layout layout_;
    ops::OpCall call_;
    std::vector<void*> memory_;
};

}  // namespace routescope
