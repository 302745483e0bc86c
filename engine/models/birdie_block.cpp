#include "engine/models/birdie_block.hpp"

#include <cmath>

#include "engine/core/error.hpp"

namespace routescope::models {

BirdieLayerMode birdie_layer_mode(const ModelConfig& m, int index) {
    const BirdieLayerMode chosen = m.birdie.mode == "causal" ? BirdieLayerMode::causal
                                   : m.birdie.mode == "bidirectional"
                                       ? BirdieLayerMode::bidirectional
                                       : BirdieLayerMode::prefix;
    if (m.birdie.layer_pattern == "alternate" && index % 2 == 1) return BirdieLayerMode::causal;
    return chosen;
}

std::vector<float> birdie_forget_bias(const ModelConfig& m, int index) {
    const int N = m.inner();
    std::vector<float> bias(static_cast<std::size_t>(N), 0.0f);
    if (m.birdie.forget_init == "zero") return bias;
    if (m.birdie.forget_init != "spread")
        throw ConfigError("model.birdie.forget_init: '" + m.birdie.forget_init +
                          "' is not one of zero, spread");
    const bool split = birdie_layer_mode(m, index) != BirdieLayerMode::causal;
    const int groups = split ? 2 : 1;
    const int G = N / groups;
    for (int g = 0; g < groups; ++g)
        for (int k = 0; k < G; ++k) {
            const double e = G > 1 ? double(k) / double(G - 1) : 0.0;
            const double one_minus_a = 0.1 * std::pow(0.01, e);
            bias[static_cast<std::size_t>(g * G + k)] =
                static_cast<float>(std::log((1.0 - one_minus_a) / one_minus_a));
        }
    return bias;
}

BirdieBlock::BirdieBlock(const ModelConfig& m, int index)
    : norm_(layer_prefix(index) + "norm"),
      w_i_(layer_prefix(index) + "w_i"),
      w_z_(layer_prefix(index) + "w_z"),
      w_o_(layer_prefix(index) + "w_o"),
      w_f_(layer_prefix(index) + "w_f"),
      w_out_(layer_prefix(index) + "w_out"),
      N_(m.inner()),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)),
      mode_(birdie_layer_mode(m, index)) {
    if (mode_ != BirdieLayerMode::causal && N_ % 2 != 0)
        throw ConfigError("model.d_inner: Birdie's state size N = " + std::to_string(N_) +
                          " must be even for bidirectional and prefix layers (two halves)");
}

void BirdieBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, N = m.inner();
    declare_layernorm(store, p + "norm", d);
    declare_linear(store, p + "w_i", d, N);
    declare_linear(store, p + "w_z", d, N);
    declare_linear(store, p + "w_o", d, N);
    // The forget gate: its bias from model.birdie.forget_init, neither tensor decayed (MODELS.md).
    store.add(p + "w_f.weight", {N, d}, ParamInit::normal, ParamGroup::no_decay);
    store.add(p + "w_f.bias", {N}, ParamInit::forget_bias, ParamGroup::no_decay, index);
    declare_linear(store, p + "w_out", N, d);
}

void birdie_carry_masks(const std::int32_t* mask, int B, int L, std::int32_t* keep_forward,
                        std::int32_t* keep_reverse, std::int32_t* keep_reverse_prefix) {
    // Left to right: cut at sample starts. Right to left (position t receives from t + 1): cut
    // when t + 1 starts a new sample, and in prefix layers also when t or t + 1 lies in the
    // causal region, so no suffix token reaches the prefix and the suffix sees only itself.
    const std::int64_t rows = std::int64_t(B) * L;
    for (std::int64_t r = 0; r < rows; ++r) {
        keep_forward[r] = (mask[r] & kResetNewSample) ? 0 : 1;
        const int t = static_cast<int>(r % L);
        const std::int32_t here = mask[r], next = t + 1 < L ? mask[r + 1] : 0;
        const bool cut = t + 1 >= L || (next & kResetNewSample);
        keep_reverse[r] = cut ? 0 : 1;
        keep_reverse_prefix[r] = cut || ((here | next) & kResetCausal) ? 0 : 1;
    }
}

Act BirdieBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const Act X = g.layernorm(h, rows, norm_, eps_);
    const Act I = g.sigmoid(g.linear(X, rows, w_i_));
    const Act Z = g.linear(X, rows, w_z_);
    const Act O = g.gelu(g.linear(X, rows, w_o_), gelu_);
    const Act F = g.sigmoid(g.linear(X, rows, w_f_));
    const Act U = g.mul(I, Z);
    if (capture_ && !g.planning() && !g.training()) {
        capture_("f", F.v, N_);
        capture_("i", I.v, N_);
        capture_("z", Z.v, N_);
        capture_("o", O.v, N_);
    }

    // Carry masks (1 = the state flows into this position), made from the batch's reset mask by
    // Model::forward (birdie_carry_masks); null without one (nothing is cut).
    const int n_forward = mode_ == BirdieLayerMode::causal ? N_ : N_ / 2;
    const std::int32_t* keep_f = in.keep_forward;
    const std::int32_t* keep_r =
        mode_ == BirdieLayerMode::prefix ? in.keep_reverse_prefix : in.keep_reverse;
    const Act H = g.linear_scan(F, U, in.B, in.L, N_, n_forward, keep_f, keep_r);
    return g.add(h, g.linear(g.mul(O, H), rows, w_out_));
}

}  // namespace routescope::models
