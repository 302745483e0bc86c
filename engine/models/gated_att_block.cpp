#include "engine/models/gated_att_block.hpp"

namespace routescope::models {

GatedAttBlock::GatedAttBlock(const ModelConfig& m, int index)
    : norm_(layer_prefix(index) + "norm"),
      dv_(layer_prefix(index) + "dv"),
      du_(layer_prefix(index) + "du"),
      duc_(layer_prefix(index) + "duc"),
      dol_(layer_prefix(index) + "dol"),
      do_(layer_prefix(index) + "do"),
      attn_(layer_prefix(index) + "attn", m.d_model, m.heads(), m.causal),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)) {}

void GatedAttBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, I = m.inner();
    declare_layernorm(store, p + "norm", d);
    declare_linear(store, p + "dv", d, I);
    declare_linear(store, p + "du", d, d);
    MultiHeadAttention::declare(store, p + "attn", d);
    declare_linear(store, p + "duc", d, d);
    declare_linear(store, p + "dol", d, I);
    declare_linear(store, p + "do", I, d);
}

Act GatedAttBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const Act X = g.layernorm(h, rows, norm_, eps_);
    const Act V = g.gelu(g.linear(X, rows, dv_), gelu_);
    const Act U = g.gelu(g.linear(X, rows, du_), gelu_);
    const Act Y = g.linear(attn_.forward(g, U, in), rows, duc_);
    const Act Z = g.mul(g.gelu(g.linear(Y, rows, dol_), gelu_), V);
    return g.add(h, g.linear(Z, rows, do_));
}

}  // namespace routescope::models
