#include "engine/models/stack_ssm_block.hpp"

namespace routescope::models {

StackSsmBlock::StackSsmBlock(const ModelConfig& m, int index)
    : norm1_(layer_prefix(index) + "norm1"),
      wi_f_(layer_prefix(index) + "wi_forward"),
      ssm_f_(layer_prefix(index) + "ssm_forward"),
      wo_f_(layer_prefix(index) + "wo_forward"),
      norm2_(layer_prefix(index) + "norm2"),
      wi_b_(layer_prefix(index) + "wi_backward"),
      ssm_b_(layer_prefix(index) + "ssm_backward"),
      wo_b_(layer_prefix(index) + "wo_backward"),
      norm3_(layer_prefix(index) + "norm3"),
      ffn1_(layer_prefix(index) + "ffn1"),
      ffn2_(layer_prefix(index) + "ffn2"),
      d_(m.d_model),
      causal_(m.causal),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)) {}

void StackSsmBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, I = m.inner();
    declare_layernorm(store, p + "norm1", d);
    declare_linear(store, p + "wi_forward", d, d);
    declare_ssm(store, p + "ssm_forward", m.ssm);
    declare_linear(store, p + "wo_forward", d, d);
    if (!m.causal) {
        declare_layernorm(store, p + "norm2", d);
        declare_linear(store, p + "wi_backward", d, d);
        declare_ssm(store, p + "ssm_backward", m.ssm);
        declare_linear(store, p + "wo_backward", d, d);
    }
    declare_layernorm(store, p + "norm3", d);
    declare_linear(store, p + "ffn1", d, I);
    declare_linear(store, p + "ffn2", I, d);
}

Act StackSsmBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const int B = in.B, L = in.L;
    const Act x1 = g.linear(g.layernorm(h, rows, norm1_, eps_), rows, wi_f_);
    const Act a1 = g.add(h, g.linear(g.ssm(x1, B, L, d_, ssm_f_), rows, wo_f_));
    if (causal_) {  // no backward sub-block: the FFN follows the forward SSM
        const Act f = g.gelu(g.linear(g.layernorm(a1, rows, norm3_, eps_), rows, ffn1_), gelu_);
        return g.add(a1, g.linear(f, rows, ffn2_));
    }
    const Act x2 = g.linear(g.flip(g.layernorm(a1, rows, norm2_, eps_), B, L, d_), rows, wi_b_);
    const Act y2 = g.linear(g.ssm(x2, B, L, d_, ssm_b_), rows, wo_b_);
    const Act a2 = g.add(a1, g.flip(y2, B, L, d_));
    const Act f = g.gelu(g.linear(g.layernorm(a2, rows, norm3_, eps_), rows, ffn1_), gelu_);
    return g.add(a2, g.linear(f, rows, ffn2_));
}

}  // namespace routescope::models
