#include "engine/models/gmlp_block.hpp"

#include "engine/core/error.hpp"

namespace routescope::models {

GmlpBlock::GmlpBlock(const ModelConfig& m, int index)
    : norm_(layer_prefix(index) + "norm"),
      u_(layer_prefix(index) + "u"),
      norm_spatial_(layer_prefix(index) + "norm_spatial"),
      spatial_(layer_prefix(index) + "spatial"),
      v_(layer_prefix(index) + "v"),
      inner_(m.inner()),
      causal_(m.gmlp.causal),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)) {
    if (inner_ % 2 != 0)
        throw ConfigError("model.d_inner: gmlp splits I in two halves, so I must be even, got " +
                          std::to_string(inner_));
}

void GmlpBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, I = m.inner(), n = m.max_len;
    declare_layernorm(store, p + "norm", d);
    declare_linear(store, p + "u", d, I);
    declare_layernorm(store, p + "norm_spatial", I / 2);
    store.add(p + "spatial.weight", {n, n}, ParamInit::spatial_weight, ParamGroup::decay);
    store.add(p + "spatial.bias", {n}, ParamInit::spatial_bias, ParamGroup::no_decay);
    declare_linear(store, p + "v", I / 2, d);
}

Act GmlpBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const int half = inner_ / 2;
    const Act Z = g.gelu(g.linear(g.layernorm(h, rows, norm_, eps_), rows, u_), gelu_);
    const Act Z1 = g.columns(Z, rows, inner_, 0, half);
    const Act Z2 = g.layernorm(g.columns(Z, rows, inner_, half, half), rows, norm_spatial_, eps_);
    const Act gate = g.spatial_mix(Z2, in.B, in.L, half, spatial_, causal_);
    if (capture_ && !g.planning() && !g.training()) capture_("spatial_gate", gate.v, half);
    return g.add(h, g.linear(g.mul(Z1, gate), rows, v_));
}

}  // namespace routescope::models
