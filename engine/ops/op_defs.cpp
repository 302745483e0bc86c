// The op table: one OpDef per op (engine/ops/op.hpp). Each layout reads like the op's signature:
// inputs, then outputs, then what the forward saves for the backward, every shape in terms of the
// call's integer arguments.
#include <algorithm>
#include <string>

#include "engine/core/error.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/column_concat.hpp"
#include "engine/ops/column_slice.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/fft_conv.hpp"
#include "engine/ops/first_token.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gate_softmax.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/linear_scan.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/neighbour_shift.hpp"
#include "engine/ops/op.hpp"
#include "engine/ops/s4d_kernel.hpp"
#include "engine/ops/sequence_broadcast.hpp"
#include "engine/ops/sequence_softmax.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/spatial_mix.hpp"
#include "engine/ops/tanh.hpp"
#include "engine/ops/weighted_sequence_sum.hpp"

namespace routescope::ops {

void Layout::add(const char* name, Role role, DType dtype,
                 std::initializer_list<std::int64_t> shape) {
    if (n_ >= kMaxOperands) throw Error(std::string("op layout: too many operands at ") + name);
    OperandSpec& s = specs_[static_cast<std::size_t>(n_++)];
    s.name = name;
    s.role = role;
    s.dtype = dtype;
    s.rank = 0;
    s.numel = 1;
    for (std::int64_t d : shape) {
        if (s.rank < Tensor::kMaxRank) s.shape[static_cast<std::size_t>(s.rank++)] = d;
        s.numel *= d;
    }
}

namespace {

using Args = std::span<const std::int64_t>;
int i32(std::int64_t v) {
    return static_cast<int>(v);
}
const std::int64_t* a(const OpCall& c) {
    return c.i.data();
}
void require(bool ok, const OpCall& c, const char* what) {
    if (!ok) throw Error(std::string("op ") + op_def(c.op).name + ": " + what);
}

// ---------------------------------------------------------------- layouts
void unary(const OpCall& c, Layout& l) {  // n
    l.input("x", {a(c)[0]});
    l.output("y", {a(c)[0]});
}
void binary(const OpCall& c, Layout& l) {  // n
    l.input("a", {a(c)[0]});
    l.input("b", {a(c)[0]});
    l.output("y", {a(c)[0]});
}
void sequence_map(const OpCall& c, Layout& l) {  // B, L, d
    const auto* s = a(c);
    l.input("x", {s[0], s[1], s[2]});
    l.output("y", {s[0], s[1], s[2]});
}

void dense_layout(const OpCall& c, Layout& l) {  // rows, in, out
    const auto* s = a(c);
    l.input("x", {s[0], s[1]});
    l.input("weight", {s[2], s[1]});
    l.optional("bias", {s[2]});
    l.output("y", {s[0], s[2]});
}
void embedding_layout(const OpCall& c, Layout& l) {  // tokens, d, vocab
    const auto* s = a(c);
    l.data("ids", {s[0]});
    l.input("table", {s[2], s[1]});
    l.output("y", {s[0], s[1]});
}
void layernorm_layout(const OpCall& c, Layout& l) {  // rows, d
    const auto* s = a(c);
    l.input("x", {s[0], s[1]});
    l.input("weight", {s[1]});
    l.input("bias", {s[1]});
    l.output("y", {s[0], s[1]});
    l.saved("mean", {s[0]});
    l.saved("rstd", {s[0]});
}
void s4d_kernel_layout(const OpCall& c, Layout& l) {  // H, N, L
    const auto* s = a(c);
    l.input("A_re", {s[0], s[1]});
    l.input("A_im", {s[0], s[1]});
    l.input("C", {s[0], s[1], 2});
    l.input("log_step", {s[0]});
    l.output("K", {s[0], s[2]});
    l.saved("scratch", {s[0], s[1]}, DType::f64);
}
void fft_conv_layout(const OpCall& c, Layout& l) {  // B, L, d, H
    const auto* s = a(c);
    require(s[3] >= 1 && s[2] % s[3] == 0, c, "d must be a multiple of H");
    l.input("u", {s[0], s[1], s[2]});
    l.input("K", {s[3], s[1]});
    l.input("D", {s[3]});
    l.output("y", {s[0], s[1], s[2]});
}
void attention_layout(const OpCall& c, Layout& l) {  // B, L, d, heads, causal
    const auto* s = a(c);
    require(s[3] >= 1 && s[2] % s[3] == 0, c, "d must be a multiple of heads");
    require(s[4] == 0 || s[4] == 1, c, "causal must be 0 or 1");
    l.input("q", {s[0], s[1], s[2]});
    l.input("k", {s[0], s[1], s[2]});
    l.input("v", {s[0], s[1], s[2]});
    l.data("lengths", {s[0]});
    l.output("y", {s[0], s[1], s[2]});
    l.saved("probs", {s[0], s[3], s[1], s[1]});
}
void spatial_mix_layout(const OpCall& c, Layout& l) {  // B, L, C, n, causal
    const auto* s = a(c);
    require(s[1] <= s[3], c, "sequence length exceeds the mixing matrix size n");
    l.input("x", {s[0], s[1], s[2]});
    l.input("weight", {s[3], s[3]});
    l.input("bias", {s[3]});
    l.output("y", {s[0], s[1], s[2]});
}
void column_slice_layout(const OpCall& c, Layout& l) {  // rows, cols, begin, count
    const auto* s = a(c);
    require(s[2] >= 0 && s[3] >= 0 && s[2] + s[3] <= s[1], c, "columns outside the input");
    l.input("x", {s[0], s[1]});
    l.output("y", {s[0], s[3]});
}
void column_concat_layout(const OpCall& c, Layout& l) {  // rows, total_cols, K, cols_0..cols_K−1
    const auto* s = a(c);
    require(s[2] >= 1 && s[2] <= kMaxPieces, c, "K must lie in [1, 5]");
    static constexpr const char* names[kMaxPieces] = {"x0", "x1", "x2", "x3", "x4"};
    std::int64_t total = 0;
    for (int k = 0; k < s[2]; ++k) {
        l.input(names[k], {s[0], s[3 + k]});
        total += s[3 + k];
    }
    require(total == s[1], c, "total_cols is not the sum of the pieces' widths");
    l.output("y", {s[0], s[1]});
}
void pool_layout(const OpCall& c, Layout& l) {  // B, L, d (mean_pool)
    const auto* s = a(c);
    l.input("x", {s[0], s[1], s[2]});
    l.data("lengths", {s[0]});
    l.output("y", {s[0], s[2]});
}
void first_token_layout(const OpCall& c, Layout& l) {  // B, L, d
    const auto* s = a(c);
    l.input("x", {s[0], s[1], s[2]});
    l.output("y", {s[0], s[2]});
}
void neighbour_shift_layout(const OpCall& c, Layout& l) {  // B, L, d, offset
    const auto* s = a(c);
    require(s[3] == -1 || s[3] == 1, c, "offset must be −1 or +1");
    l.input("x", {s[0], s[1], s[2]});
    l.data("lengths", {s[0]});
    l.output("y", {s[0], s[1], s[2]});
}
void gate_softmax_layout(const OpCall& c, Layout& l) {  // K, n
    const auto* s = a(c);
    require(s[0] >= 1 && s[0] <= kMaxPieces, c, "K must lie in [1, 5]");
    static constexpr const char* xs[kMaxPieces] = {"x0", "x1", "x2", "x3", "x4"};
    static constexpr const char* ys[kMaxPieces] = {"y0", "y1", "y2", "y3", "y4"};
    for (int k = 0; k < s[0]; ++k)
        l.input(xs[k], {s[1]});
    for (int k = 0; k < s[0]; ++k)
        l.output(ys[k], {s[1]});
}
void sequence_softmax_layout(const OpCall& c, Layout& l) {  // B, L, d
    const auto* s = a(c);
    l.input("x", {s[0], s[1], s[2]});
    l.input("x_own", {s[0], s[2]});
    l.data("lengths", {s[0]});
    l.output("w", {s[0], s[1], s[2]});
    l.output("w_own", {s[0], s[2]});
}
void weighted_sequence_sum_layout(const OpCall& c, Layout& l) {  // B, L, d
    const auto* s = a(c);
    l.input("w", {s[0], s[1], s[2]});
    l.input("x", {s[0], s[1], s[2]});
    l.data("lengths", {s[0]});
    l.output("y", {s[0], s[2]});
}
void sequence_broadcast_layout(const OpCall& c, Layout& l) {  // B, L, d
    const auto* s = a(c);
    l.input("x", {s[0], s[2]});
    l.output("y", {s[0], s[1], s[2]});
}
void linear_scan_layout(const OpCall& c, Layout& l) {  // B, L, N, n_forward
    const auto* s = a(c);
    require(s[3] >= 0 && s[3] <= s[2], c, "n_forward outside [0, N]");
    l.input("f", {s[0], s[1], s[2]});
    l.input("x", {s[0], s[1], s[2]});
    l.optional_data("keep_forward", {s[0], s[1]});
    l.optional_data("keep_reverse", {s[0], s[1]});
    l.output("h", {s[0], s[1], s[2]});
}
void cross_entropy_layout(const OpCall& c, Layout& l) {  // rows, V
    const auto* s = a(c);
    l.input("logits", {s[0], s[1]});
    l.data("targets", {s[0]});
    l.saved("loss", {1}, DType::f64);
    l.saved("lse", {s[0]});
}

// ---------------------------------------------------------------- costs
OpCost n_cost(OpCost (*f)(std::int64_t, int), Args s, int e) {
    return f(s[0], e);
}

constexpr OpDef kTable[] = {
    {OpId::dense, "dense", "rows, in, out", 3, dense_layout,
     [](Args s, int e) { return dense_cost(s[0], i32(s[1]), i32(s[2]), e); }},
    {OpId::embedding, "embedding", "tokens, d, vocab", 2, embedding_layout,
     [](Args s, int e) { return embedding_cost(s[0], i32(s[1]), e); }},
    {OpId::layernorm, "layernorm", "rows, d", 2, layernorm_layout,
     [](Args s, int e) { return layernorm_cost(s[0], i32(s[1]), e); }},
    {OpId::gelu_tanh, "gelu_tanh", "n", 1, unary, [](Args s, int e) { return gelu_cost(s[0], e); }},
    {OpId::gelu_erf, "gelu_erf", "n", 1, unary, [](Args s, int e) { return gelu_cost(s[0], e); }},
    {OpId::tanh, "tanh", "n", 1, unary, [](Args s, int e) { return n_cost(tanh_cost, s, e); }},
    {OpId::sigmoid, "sigmoid", "n", 1, unary,
     [](Args s, int e) { return n_cost(sigmoid_cost, s, e); }},
    {OpId::add, "add", "n", 1, binary, [](Args s, int e) { return n_cost(add_cost, s, e); }},
    {OpId::mul, "mul", "n", 1, binary, [](Args s, int e) { return n_cost(mul_cost, s, e); }},
    {OpId::flip, "flip", "B, L, d", 3, sequence_map,
     [](Args s, int e) { return flip_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::dropout, "dropout", "n, step, stream, offset", 1, unary,
     [](Args s, int e) { return n_cost(dropout_cost, s, e); }},
    {OpId::s4d_kernel, "s4d_kernel", "H, N, L", 3, s4d_kernel_layout,
     [](Args s, int e) {
         return s4d_kernel_cost(i32(s[0]), i32(s[1]), i32(s[2]), static_cast<std::size_t>(e));
     }},
    {OpId::fft_conv, "fft_conv", "B, L, d, H", 4, fft_conv_layout,
     [](Args s, int e) {
         return fft_conv_cost(i32(s[0]), i32(s[1]), i32(s[2]), i32(s[3]),
                              static_cast<std::size_t>(e));
     }},
    {OpId::attention, "attention", "B, L, d, n_heads, causal", 4, attention_layout,
     [](Args s, int e) { return attention_cost(i32(s[0]), i32(s[1]), i32(s[2]), i32(s[3]), e); }},
    {OpId::spatial_mix, "spatial_mix", "B, L, C, n, causal", 5, spatial_mix_layout,
     [](Args s, int e) { return spatial_mix_cost(i32(s[0]), i32(s[1]), i32(s[2]), s[4] != 0, e); }},
    {OpId::column_slice, "column_slice", "rows, cols, begin, count", 4, column_slice_layout,
     [](Args s, int e) { return column_slice_cost(s[0], i32(s[3]), e); }},
    {OpId::column_concat, "column_concat", "rows, total_cols, K, cols_0, ..., cols_K-1", 2,
     column_concat_layout, [](Args s, int e) { return column_concat_cost(s[0], i32(s[1]), e); }},
    {OpId::mean_pool, "mean_pool", "B, L, d", 3, pool_layout,
     [](Args s, int e) { return mean_pool_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::first_token, "first_token", "B, L, d", 3, first_token_layout,
     [](Args s, int e) { return first_token_cost(i32(s[0]), i32(s[2]), e); }},
    {OpId::neighbour_shift, "neighbour_shift", "B, L, d, offset", 3, neighbour_shift_layout,
     [](Args s, int e) { return neighbour_shift_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::gate_softmax, "gate_softmax", "K, n", 2, gate_softmax_layout,
     [](Args s, int e) { return gate_softmax_cost(i32(s[0]), s[1], e); }},
    {OpId::sequence_softmax, "sequence_softmax", "B, L, d", 3, sequence_softmax_layout,
     [](Args s, int e) { return sequence_softmax_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::weighted_sequence_sum, "weighted_sequence_sum", "B, L, d", 3,
     weighted_sequence_sum_layout,
     [](Args s, int e) { return weighted_sequence_sum_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::sequence_broadcast, "sequence_broadcast", "B, L, d", 3, sequence_broadcast_layout,
     [](Args s, int e) { return sequence_broadcast_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::linear_scan, "linear_scan", "B, L, N, n_forward", 3, linear_scan_layout,
     [](Args s, int e) { return linear_scan_cost(i32(s[0]), i32(s[1]), i32(s[2]), e); }},
    {OpId::cross_entropy, "cross_entropy", "rows, V", 2, cross_entropy_layout,
     [](Args s, int e) { return cross_entropy_cost(s[0], i32(s[1]), e); }},
};
static_assert(std::size(kTable) == static_cast<std::size_t>(kOpCount),
              "every OpId needs exactly one OpDef");

constexpr bool in_id_order() {
    for (std::size_t k = 0; k < std::size(kTable); ++k)
        if (static_cast<std::size_t>(kTable[k].id) != k) return false;
    return true;
}
static_assert(in_id_order(), "kTable must list the ops in OpId order");

}  // namespace

const OpDef& op_def(OpId id) {
    const auto k = static_cast<std::size_t>(id);
    if (k >= std::size(kTable)) throw Error("op_def: no op with id " + std::to_string(k));
    return kTable[k];
}

std::span<const OpDef> op_defs() {
    return kTable;
}

std::optional<OpId> find_op(std::string_view name) {
    for (const OpDef& d : kTable)
        if (name == d.name) return d.id;
    return std::nullopt;
}

DType call_real_type(const OpCall& call) {
    for (int k = 0; k < call.n_inputs; ++k) {
        const Tensor& t = call.t[static_cast<std::size_t>(k)];
        if (t.data && t.dtype != DType::i32) return t.dtype;
    }
    return DType::f32;
}

Layout check_call(const OpCall& call, bool require_data) {
    const OpDef& def = op_def(call.op);
    for (int k = 0; k < kMaxArgs; ++k)
        if (call.i[static_cast<std::size_t>(k)] < -1)
            throw Error(std::string("op ") + def.name + ": argument " + std::to_string(k) +
                        " is negative (" + def.args + ")");
    Layout layout(call_real_type(call));
    def.layout(call, layout);
    int inputs = 0;
    while (inputs < layout.size() && layout[inputs].role != Role::output &&
           layout[inputs].role != Role::saved)
        ++inputs;
    if (call.n_inputs != inputs)
        throw Error(std::string("op ") + def.name + ": " + std::to_string(call.n_inputs) +
                    " inputs given, the op takes " + std::to_string(inputs));
    for (int k = 0; k < inputs; ++k) {
        const OperandSpec& s = layout[k];
        const Tensor& t = call.t[static_cast<std::size_t>(k)];
        const bool may_be_absent = s.role == Role::optional || s.role == Role::optional_data;
        // Absent: no memory (a planning pass has none yet, but its tensors carry their shapes).
        if (!t.data && (require_data || t.rank == 0)) {
            if (may_be_absent) continue;
            throw Error(std::string("op ") + def.name + ": input '" + s.name + "' is missing");
        }
        if (t.dtype != s.dtype)
            throw Error(std::string("op ") + def.name + ": input '" + s.name + "' is " +
                        dtype_name(t.dtype) + ", expected " + dtype_name(s.dtype));
        if (t.numel() != s.numel)
            throw Error(std::string("op ") + def.name + ": input '" + s.name + "' has " +
                        std::to_string(t.numel()) + " elements, expected " +
                        std::to_string(s.numel) + " (" + def.args + " = " +
                        std::to_string(call.i[0]) + ", ...)");
    }
    return layout;
}

OpCost call_cost(const OpCall& call) {
    const OpDef& def = op_def(call.op);
    const auto e = static_cast<int>(dtype_size(call_real_type(call)));
    return def.cost(Args(call.i.data(), static_cast<std::size_t>(def.cost_args)), e);
}

}  // namespace routescope::ops
