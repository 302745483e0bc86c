#include "engine/models/stack_att_block.hpp"

namespace routescope::models {

StackAttBlock::StackAttBlock(const ModelConfig& m, int index)
    : norm1_(layer_prefix(index) + "norm1"),
      norm2_(layer_prefix(index) + "norm2"),
      ffn1_(layer_prefix(index) + "ffn1"),
      ffn2_(layer_prefix(index) + "ffn2"),
      attn_(layer_prefix(index) + "attn", m.d_model, m.heads(), m.causal),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)),
      post_(m.norm_position == "post") {}

void StackAttBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, I = m.inner();
    declare_layernorm(store, p + "norm1", d);
    MultiHeadAttention::declare(store, p + "attn", d);
    declare_layernorm(store, p + "norm2", d);
    declare_linear(store, p + "ffn1", d, I);
    declare_linear(store, p + "ffn2", I, d);
}

Act StackAttBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    if (post_) {
        const Act a = g.layernorm(g.add(h, attn_.forward(g, h, in)), rows, norm1_, eps_);
        const Act f = g.gelu(g.linear(a, rows, ffn1_), gelu_);
        return g.layernorm(g.add(a, g.linear(f, rows, ffn2_)), rows, norm2_, eps_);
    }
    const Act a = g.add(h, attn_.forward(g, g.layernorm(h, rows, norm1_, eps_), in));
    const Act f = g.gelu(g.linear(g.layernorm(a, rows, norm2_, eps_), rows, ffn1_), gelu_);
    return g.add(a, g.linear(f, rows, ffn2_));
}

}  // namespace routescope::models
