#pragma once
// One definition per op (ggml's op table): every differentiable op the models use is an OpId with
// one OpDef — its name, the meaning of its integer arguments, the layout of its operands (which is
// at once the shape check and the allocation plan of its outputs and saved tensors) and its cost.
// The kernels live in the backends (engine/backend/): the CPU backend calls the templates of
// engine/ops/<op>.hpp, the CUDA backend its own kernels; both are checked against this table by
// the conformance suite (tests/engine/test_op_conformance.cpp).
//
// An op is applied as an OpCall: a plain record of tensors and scalars, with no pointer to code and
// nothing on the heap. The Graph fills the inputs, the layout appends outputs and saved tensors,
// the backend runs the forward, and the tape keeps the same record to run the backward.
//
//   operands [0, n_inputs)            inputs in the order the layout declares them
//   operands [n_inputs, n_operands)   outputs (with gradients when training), then saved tensors
//   grad[k]                           ∂loss/∂operand k (same shape and dtype), or null
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "engine/core/tensor.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

enum class OpId : std::uint8_t {
    dense,
    embedding,
    layernorm,
    gelu_tanh,
    gelu_erf,
    tanh,
    sigmoid,
    add,
    mul,
    flip,
    dropout,
    s4d_kernel,
    fft_conv,
    attention,
    spatial_mix,
    column_slice,
    column_concat,
    mean_pool,
    first_token,
    neighbour_shift,
    gate_softmax,
    sequence_softmax,
    weighted_sequence_sum,
    sequence_broadcast,
    linear_scan,
    cross_entropy,
    count
};
inline constexpr int kOpCount = static_cast<int>(OpId::count);

inline constexpr int kMaxOperands = 12;
inline constexpr int kMaxArgs = 8;
/// The most tensors gate_softmax and column_concat take (the S-LSTM uses 5 and 4).
inline constexpr int kMaxPieces = 5;

struct OpCall {
    OpId op = OpId::count;
    std::uint8_t n_inputs = 0;
    std::uint8_t n_operands = 0;
    std::array<Tensor, kMaxOperands> t{};
    std::array<void*, kMaxOperands> grad{};
    std::array<std::int64_t, kMaxArgs> i{};  ///< integer arguments, as OpDef::args names them
    double f = 0;                            ///< a real argument: LayerNorm's eps, dropout's p
    std::uint64_t seed = 0;                  ///< dropout's run seed

    template <class T = float>
    T* value(int k) const {
        return t[static_cast<std::size_t>(k)].template as<T>();
    }
    template <class T = float>
    T* gradient(int k) const {
        return static_cast<T*>(grad[static_cast<std::size_t>(k)]);
    }
};

enum class Role : std::uint8_t {
    input,          ///< a float tensor that must be present (activation or parameter)
    optional,       ///< a float tensor that may be absent (a bias): data null
    data,           ///< int32 data (ids, lengths, targets), never differentiated; must be present
    optional_data,  ///< int32 data that may be absent (Birdie's keep masks)
    output,         ///< allocated by the graph, with a gradient when training
    saved,          ///< allocated by the graph, no gradient: what the backward needs besides inputs
};

struct OperandSpec {
    const char* name = "";
    Role role = Role::input;
    DType dtype = DType::f32;  ///< for float roles: the call's float type (f32 or f64)
    std::int64_t numel = 0;
    std::array<std::int64_t, Tensor::kMaxRank> shape{};
    std::int8_t rank = 0;
};

/// An op's operands in order, as its layout function declares them from the call's arguments.
class Layout {
public:
    explicit Layout(DType real) : real_(real) {}
    void input(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::input, real_, shape);
    }
    void optional(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::optional, real_, shape);
    }
    void data(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::data, DType::i32, shape);
    }
    void optional_data(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::optional_data, DType::i32, shape);
    }
    void output(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::output, real_, shape);
    }
    void saved(const char* name, std::initializer_list<std::int64_t> shape, DType t) {
        add(name, Role::saved, t, shape);
    }
    void saved(const char* name, std::initializer_list<std::int64_t> shape) {
        add(name, Role::saved, real_, shape);
    }
    int size() const { return n_; }
    const OperandSpec& operator[](int k) const { return specs_[static_cast<std::size_t>(k)]; }
    DType real() const { return real_; }

private:
    void add(const char* name, Role role, DType dtype, std::initializer_list<std::int64_t> shape);
    DType real_;
    int n_ = 0;
    std::array<OperandSpec, kMaxOperands> specs_{};
};

struct OpDef {
    OpId id;
    const char* name;
    /// What OpCall::i holds, in order; the first `cost_args` of them determine the cost.
    const char* args;
    int cost_args;
    /// Declares the operands of a call from its arguments (inputs first).
    void (*layout)(const OpCall& call, Layout& out);
    /// Forward cost (FLOPs, bytes) of a call with these arguments, in the call's float type.
    OpCost (*cost)(std::span<const std::int64_t> args, int bytes_per_element);
};

const OpDef& op_def(OpId id);
/// Every op, in OpId order.
std::span<const OpDef> op_defs();
std::optional<OpId> find_op(std::string_view name);

/// The float type of a call: that of its first float operand (f32 unless a test runs f64).
DType call_real_type(const OpCall& call);
/// Checks the call's inputs against its layout (count, dtype, element count) and that its
/// arguments are in range; throws routescope::Error naming the op and the operand. A planning
/// pass (no memory yet) passes require_data = false.
Layout check_call(const OpCall& call, bool require_data = true);
/// Cost of a call (its arguments through OpDef::cost).
OpCost call_cost(const OpCall& call);

}  // namespace routescope::ops
