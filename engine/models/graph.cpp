#include "engine/models/graph.hpp"

#include <chrono>
#include <cstring>
#include <string>

#include "engine/core/error.hpp"

namespace routescope::models {

using ops::OpCall;
using ops::OpId;

Graph::Graph(ParamStore& params, Arena& arena, Tape& tape, Backend& backend, bool training)
    : params_(params), arena_(&arena), tape_(&tape), backend_(backend), training_(training) {
    tape.set_recording(training);
}

Graph::Graph(ParamStore& params, Backend& backend, bool training)
    : params_(params), backend_(backend), training_(training), planning_(true) {}

template <class T>
T* Graph::scratch(std::int64_t n, const char* what) {
    if (planning_) {
        planned_used_ += Arena::footprint<T>(static_cast<std::size_t>(n));
        if (planned_used_ > planned_) planned_ = planned_used_;
        return nullptr;
    }
    return arena_->alloc<T>(static_cast<std::size_t>(n), what);
}

void Graph::release_to(std::size_t mark) {
    if (training_)
        throw Error("Graph::release_to: a training step's tape still reads its activations");
    if (planning_) {
        if (mark > planned_used_) throw Error("Graph::release_to: a mark beyond the bytes in use");
        planned_used_ = mark;
        return;
    }
    arena_->rewind(mark);
}
template float* Graph::scratch<float>(std::int64_t, const char*);
template double* Graph::scratch<double>(std::int64_t, const char*);
template std::int32_t* Graph::scratch<std::int32_t>(std::int64_t, const char*);

Act Graph::alloc(std::int64_t n, const char* what) {
    Act a;
    a.n = n;
    a.v = scratch<float>(n, what);
    if (training_) {
        a.g = scratch<float>(n, what);
        backend_.zero(a.g, static_cast<std::size_t>(n) * sizeof(float));
    }
    return a;
}

// ---------------------------------------------------------------- the generic path
OpCall Graph::call(OpId op, std::initializer_list<std::int64_t> args) {
    OpCall c;
    c.op = op;
    std::size_t k = 0;
    for (std::int64_t a : args)
        c.i[k++] = a;
    return c;
}

void Graph::input(OpCall& c, const Act& x) const {
    const std::size_t k = c.n_inputs++;
    c.t[k] = Tensor(x.v, {x.n}, DType::f32, backend_.device());
    c.grad[k] = x.g;
}

void Graph::input(OpCall& c, const std::int32_t* data, std::int64_t n) const {
    const std::size_t k = c.n_inputs++;
    c.t[k] = Tensor(const_cast<std::int32_t*>(data), {n}, DType::i32, backend_.device());
    c.grad[k] = nullptr;
}

const ParamEntry& Graph::entry(std::string_view module, std::string_view leaf) const {
    if (leaf.empty()) return params_.entry(module);
    char name[256];
    if (module.size() + 1 + leaf.size() > sizeof name)
        throw Error("Graph: parameter name too long: " + std::string(module));
    std::memcpy(name, module.data(), module.size());
    name[module.size()] = '.';
    std::memcpy(name + module.size() + 1, leaf.data(), leaf.size());
    return params_.entry(std::string_view(name, module.size() + 1 + leaf.size()));
}

void Graph::input(OpCall& c, std::string_view module, std::string_view leaf) {
    const ParamEntry& e = entry(module, leaf);
    const std::size_t k = c.n_inputs++;
    Tensor& t = c.t[k];
    t = Tensor(planning_ ? nullptr : params_.data() + e.offset, {}, DType::f32, backend_.device());
    for (std::int64_t d : e.shape)
        if (t.rank < Tensor::kMaxRank) t.shape[static_cast<std::size_t>(t.rank++)] = d;
    if (t.rank == 0) t.shape[static_cast<std::size_t>(t.rank++)] = 1;
    c.grad[k] = training_ && !planning_ ? params_.grad_data() + e.offset : nullptr;
}

Pieces Graph::apply(OpCall& c) {
    const ops::Layout layout = ops::check_call(c, !planning_);
    const char* what = ops::op_def(c.op).name;
    Pieces out{};
    int n_out = 0;
    for (int k = c.n_inputs; k < layout.size(); ++k) {
        const ops::OperandSpec& s = layout[k];
        Tensor& t = c.t[static_cast<std::size_t>(k)];
        t.shape = s.shape;
        t.rank = s.rank;
        t.dtype = s.dtype;
        t.device = backend_.device();
        if (s.role == ops::Role::output) {
            const Act a = alloc(s.numel, what);
            t.data = a.v;
            c.grad[static_cast<std::size_t>(k)] = a.g;
            out[static_cast<std::size_t>(n_out++)] = a;
        } else {
            t.data = s.dtype == DType::f64 ? static_cast<void*>(scratch<double>(s.numel, what))
                                           : static_cast<void*>(scratch<float>(s.numel, what));
            c.grad[static_cast<std::size_t>(k)] = nullptr;
        }
    }
    c.n_operands = static_cast<std::uint8_t>(layout.size());
    if (planning_) {
        backend_.prepare(c);
        if (training_) ++planned_ops_;
        return out;
    }
    if (!profile_) {
        backend_.forward(c);
    } else {
        const auto start = std::chrono::steady_clock::now();
        backend_.forward(c);
        backend_.synchronize();
        profile_->record_phase(
            what, ops::OpProfile::Phase::forward,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            ops::call_cost(c));
    }
    if (training_) tape_->record(c);
    return out;
}

// ---------------------------------------------------------------- the ops, one call each
Act Graph::linear(const Act& x, std::int64_t rows, std::string_view name) {
    const ParamEntry& w = entry(name, "weight");
    OpCall c = call(OpId::dense, {rows, w.shape[1], w.shape[0]});
    input(c, x);
    input(c, name, "weight");
    input(c, name, "bias");
    return apply1(c);
}

Act Graph::linear(const Act& x, std::int64_t rows, std::string_view weight_name,
                  std::string_view bias_name) {
    const ParamEntry& w = entry(weight_name, {});
    OpCall c = call(OpId::dense, {rows, w.shape[1], w.shape[0]});
    input(c, x);
    input(c, weight_name, {});
    input(c, bias_name, {});
    return apply1(c);
}

Act Graph::linear_no_bias(const Act& x, std::int64_t rows, std::string_view weight_name) {
    const ParamEntry& w = entry(weight_name, {});
    OpCall c = call(OpId::dense, {rows, w.shape[1], w.shape[0]});
    input(c, x);
    input(c, weight_name, {});
    ++c.n_inputs;  // no bias
    return apply1(c);
}

Act Graph::layernorm(const Act& x, std::int64_t rows, std::string_view name, float eps) {
    OpCall c = call(OpId::layernorm, {rows, entry(name, "weight").shape[0]});
    c.f = eps;
    input(c, x);
    input(c, name, "weight");
    input(c, name, "bias");
    return apply1(c);
}

Act Graph::gelu(const Act& x, Gelu kind) {
    OpCall c = call(kind == Gelu::tanh ? OpId::gelu_tanh : OpId::gelu_erf, {x.n});
    input(c, x);
    return apply1(c);
}

Act Graph::tanh(const Act& x) {
    OpCall c = call(OpId::tanh, {x.n});
    input(c, x);
    return apply1(c);
}

Act Graph::sigmoid(const Act& x) {
    OpCall c = call(OpId::sigmoid, {x.n});
    input(c, x);
    return apply1(c);
}

Act Graph::add(const Act& a, const Act& b) {
    OpCall c = call(OpId::add, {a.n});
    input(c, a);
    input(c, b);
    return apply1(c);
}

Act Graph::mul(const Act& a, const Act& b) {
    OpCall c = call(OpId::mul, {a.n});
    input(c, a);
    input(c, b);
    return apply1(c);
}

Act Graph::flip(const Act& x, int B, int L, int d) {
    OpCall c = call(OpId::flip, {B, L, d});
    input(c, x);
    return apply1(c);
}

Act Graph::dropout(const Act& x, const ops::DropoutSite& site) {
    if (!training_ || site.p == 0.0f) return x;  // eval, or p = 0: the identity
    OpCall c =
        call(OpId::dropout, {x.n, site.step, site.stream, static_cast<std::int64_t>(site.offset)});
    c.f = site.p;
    c.seed = site.seed;
    input(c, x);
    return apply1(c);
}

Act Graph::embedding(const std::int32_t* ids, std::int64_t n, std::string_view table_name) {
    const ParamEntry& t = entry(table_name, {});
    OpCall c = call(OpId::embedding, {n, t.shape[1], t.shape[0]});
    input(c, ids, n);
    input(c, table_name, {});
    return apply1(c);
}

Act Graph::s4d_kernel(std::string_view name, int L) {
    const ParamEntry& a = entry(name, "A_re");
    const std::int64_t H = a.shape[0], N = a.shape[1];
    OpCall k = call(OpId::s4d_kernel, {H, N, L});
    for (const char* leaf : {"A_re", "A_im", "C", "log_step"})
        input(k, name, leaf);
    return apply1(k);
}

Act Graph::ssm(const Act& u, int B, int L, int d, std::string_view name) {
    const std::int64_t H = entry(name, "A_re").shape[0];
    const Act K = s4d_kernel(name, L);
    OpCall c = call(OpId::fft_conv, {B, L, d, H});
    input(c, u);
    input(c, K);
    input(c, name, "D");
    return apply1(c);
}

Act Graph::linear_scan(const Act& f, const Act& x, int B, int L, int N, int n_forward,
                       const std::int32_t* keep_forward, const std::int32_t* keep_reverse) {
    OpCall c = call(OpId::linear_scan, {B, L, N, n_forward});
    input(c, f);
    input(c, x);
    input(c, keep_forward, std::int64_t(B) * L);
    input(c, keep_reverse, std::int64_t(B) * L);
    return apply1(c);
}

Act Graph::attention(const Act& q, const Act& k, const Act& v, const std::int32_t* lengths, int B,
                     int L, int d, int heads, bool causal, const float** probs) {
    OpCall c = call(OpId::attention, {B, L, d, heads, causal ? 1 : 0});
    input(c, q);
    input(c, k);
    input(c, v);
    input(c, lengths, B);
    const Act out = apply1(c);
    // The saved probabilities follow the one output in the op's layout (op_defs.cpp: the
    // inputs q, k, v, lengths, then y, then probs).
    if (probs) *probs = static_cast<const float*>(c.t[c.n_inputs + 1u].data);
    return out;
}

Act Graph::spatial_mix(const Act& x, int B, int L, int C, std::string_view name, bool causal) {
    OpCall c = call(OpId::spatial_mix, {B, L, C, entry(name, "bias").shape[0], causal ? 1 : 0});
    input(c, x);
    input(c, name, "weight");
    input(c, name, "bias");
    return apply1(c);
}

Act Graph::columns(const Act& x, std::int64_t rows, int cols, int begin, int count) {
    OpCall c = call(OpId::column_slice, {rows, cols, begin, count});
    input(c, x);
    return apply1(c);
}

Act Graph::mean_pool(const Act& x, const std::int32_t* lengths, int B, int L, int d) {
    OpCall c = call(OpId::mean_pool, {B, L, d});
    input(c, x);
    input(c, lengths, B);
    return apply1(c);
}

Act Graph::first_token(const Act& x, int B, int L, int d) {
    OpCall c = call(OpId::first_token, {B, L, d});
    input(c, x);
    return apply1(c);
}

Act Graph::neighbour(const Act& x, const std::int32_t* lengths, int B, int L, int d, int offset) {
    OpCall c = call(OpId::neighbour_shift, {B, L, d, offset});
    input(c, x);
    input(c, lengths, B);
    return apply1(c);
}

Pieces Graph::gate_softmax(std::span<const Act> gates) {
    OpCall c = call(OpId::gate_softmax,
                    {static_cast<std::int64_t>(gates.size()), gates.empty() ? 0 : gates[0].n});
    for (const Act& x : gates)
        input(c, x);
    return apply(c);
}

std::pair<Act, Act> Graph::sequence_softmax(const Act& x, const Act& x_own,
                                            const std::int32_t* lengths, int B, int L, int d) {
    OpCall c = call(OpId::sequence_softmax, {B, L, d});
    input(c, x);
    input(c, x_own);
    input(c, lengths, B);
    const Pieces out = apply(c);
    return {out[0], out[1]};
}

Act Graph::weighted_sequence_sum(const Act& w, const Act& x, const std::int32_t* lengths, int B,
                                 int L, int d) {
    OpCall c = call(OpId::weighted_sequence_sum, {B, L, d});
    input(c, w);
    input(c, x);
    input(c, lengths, B);
    return apply1(c);
}

Act Graph::broadcast_sequence(const Act& x, int B, int L, int d) {
    OpCall c = call(OpId::sequence_broadcast, {B, L, d});
    input(c, x);
    return apply1(c);
}

Act Graph::concat_columns(std::initializer_list<Act> pieces, std::initializer_list<int> cols,
                          std::int64_t rows) {
    if (pieces.size() != cols.size() || cols.size() > ops::kMaxPieces)
        throw Error("Graph::concat_columns: " + std::to_string(pieces.size()) + " pieces, " +
                    std::to_string(cols.size()) + " widths");
    OpCall c = call(OpId::column_concat, {rows, 0, static_cast<std::int64_t>(cols.size())});
    std::size_t k = 3;
    for (int w : cols) {
        c.i[k++] = w;
        c.i[1] += w;
    }
    for (const Act& p : pieces)
        input(c, p);
    return apply1(c);
}

double Graph::cross_entropy(const Act& logits, const std::int32_t* targets, std::int64_t rows,
                            int V) {
    OpCall c = call(OpId::cross_entropy, {rows, V});
    input(c, logits);
    input(c, targets, rows);
    apply(c);
    if (planning_) return 0.0;
    double loss = 0;
    backend_.copy(&loss, c.t[2].data, sizeof loss, Backend::CopyKind::device_to_host);
    return loss;
}

}  // namespace routescope::models
