#include "engine/models/slstm_recurrence.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace routescope::models {

namespace {
// The seven pre-activations in W's (and U's) gate-major output order.
constexpr std::array<const char*, 7> kGates = {"i", "l", "r", "f", "s", "o", "u"};
constexpr int kSoftmaxed = 5;  // i, l, r, f, s
constexpr int kO = 5, kU = 6;
}  // namespace

SlstmRecurrence::SlstmRecurrence(const ModelConfig& m)
    : d_(m.d_model), eps_(static_cast<float>(m.ln_eps)), gate_norm_(m.slstm.gate_norm) {
    for (std::size_t k = 0; k < kGates.size(); ++k)
        norm_names_[k] = std::string("slstm.norm_") + kGates[k];
}

void SlstmRecurrence::declare(ParamStore& store, const ModelConfig& m) {
    const int d = m.d_model;
    declare_linear(store, "slstm.W", 4 * d, 7 * d);
    store.add("slstm.U.weight", {7 * d, d});
    declare_linear(store, "slstm.W_g", 2 * d, 2 * d);
    declare_linear(store, "slstm.W_f", 2 * d, d);
    if (m.slstm.gate_norm)
        for (const char* gate : kGates)
            declare_layernorm(store, std::string("slstm.norm_") + gate, d);
}

Act SlstmRecurrence::input_projection(Graph& g, const Act& x, const BlockInput& in) {
    return g.linear_no_bias(x, std::int64_t(in.B) * in.L, "slstm.U.weight");
}

SlstmState SlstmRecurrence::start(Graph& g, const Act& x, const BlockInput& in) {
    const Act mean = g.mean_pool(x, in.lengths, in.B, in.L, d_);
    return {x, x, mean, mean};
}

SlstmState SlstmRecurrence::step(Graph& g, const SlstmState& s, const Act& Ux, const BlockInput& in,
                                 int index) {
    const int B = in.B, L = in.L, d = d_;
    const std::int64_t rows = std::int64_t(B) * L;
    const std::int32_t* len = in.lengths;

    // Token nodes.
    const Act hL = g.neighbour(s.h, len, B, L, d, -1);
    const Act hR = g.neighbour(s.h, len, B, L, d, +1);
    const Act g_tok = g.broadcast_sequence(s.g, B, L, d);
    const Act cat = g.concat_columns({s.h, hL, hR, g_tok}, {d, d, d, d}, rows);
    const Act pre = g.add(g.linear(cat, rows, "slstm.W"), Ux);
    std::array<Act, 7> v;
    for (int k = 0; k < 7; ++k) {
        v[k] = g.columns(pre, rows, 7 * d, k * d, d);
        if (gate_norm_) v[k] = g.layernorm(v[k], rows, norm_names_[k], eps_);
    }
    std::array<Act, kSoftmaxed> sig;
    for (int k = 0; k < kSoftmaxed; ++k)
        sig[k] = g.sigmoid(v[k]);
    const Pieces gate = g.gate_softmax(sig);  // i, l, r, f, s
    const Act o = g.sigmoid(v[kO]);
    const Act u = g.tanh(v[kU]);
    const Act cL = g.neighbour(s.c, len, B, L, d, -1);
    const Act cR = g.neighbour(s.c, len, B, L, d, +1);
    const Act cg_tok = g.broadcast_sequence(s.c_g, B, L, d);
    Act c = g.mul(u, gate[0]);
    c = g.add(c, g.mul(cL, gate[1]));
    c = g.add(c, g.mul(cR, gate[2]));
    c = g.add(c, g.mul(s.c, gate[3]));
    c = g.add(c, g.mul(cg_tok, gate[4]));
    const Act h = g.mul(o, g.tanh(c));

    // Sentence node: the new h, c; the old g, c_g.
    const Act h_mean = g.mean_pool(h, len, B, L, d);
    const Act fo = g.sigmoid(g.linear(g.concat_columns({s.g, h_mean}, {d, d}, B), B, "slstm.W_g"));
    const Act f_g = g.columns(fo, B, 2 * d, 0, d);
    const Act o_g = g.columns(fo, B, 2 * d, d, d);
    const Act f_tok =
        g.sigmoid(g.linear(g.concat_columns({h, g_tok}, {d, d}, rows), rows, "slstm.W_f"));
    const auto [w_tok, w_own] = g.sequence_softmax(f_tok, f_g, len, B, L, d);
    const Act c_g = g.add(g.weighted_sequence_sum(w_tok, c, len, B, L, d), g.mul(w_own, s.c_g));
    const Act g_new = g.mul(o_g, g.tanh(c_g));

    if (capture_ && !g.planning() && !g.training()) {
        for (int k = 0; k < kSoftmaxed; ++k)
            capture_(index, kGates[k], gate[k].v, d, nullptr);
        capture_(index, "o", o.v, d, nullptr);
        capture_(index, "sentence_weight", w_tok.v, d, w_own.v);
    }
    return {h, c, g_new, c_g};
}

}  // namespace routescope::models
