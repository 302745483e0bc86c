#include "engine/models/gated_ssm_block.hpp"

#include <algorithm>

namespace routescope::models {

GatedSsmBlock::GatedSsmBlock(const ModelConfig& m, int index)
    : norm_(layer_prefix(index) + "norm"),
      dv_(layer_prefix(index) + "dv"),
      du_f_(layer_prefix(index) + "du_forward"),
      du_b_(layer_prefix(index) + "du_backward"),
      duc_f_(layer_prefix(index) + "duc_forward"),
      duc_b_(layer_prefix(index) + "duc_backward"),
      dol_(layer_prefix(index) + "dol"),
      do_(layer_prefix(index) + "do"),
      ssm_f_(layer_prefix(index) + "ssm_forward"),
      ssm_b_(layer_prefix(index) + "ssm_backward"),
      d_(m.d_model),
      causal_(m.causal),
      eps_(static_cast<float>(m.ln_eps)),
      gelu_(block_gelu(m)) {}

void GatedSsmBlock::declare(ParamStore& store, const ModelConfig& m, int index) {
    const std::string p = layer_prefix(index);
    const int d = m.d_model, I = m.inner();
    declare_layernorm(store, p + "norm", d);
    declare_linear(store, p + "dv", d, I);
    declare_linear(store, p + "du_forward", d, d);
    if (!m.causal) declare_linear(store, p + "du_backward", d, d);
    declare_linear(store, p + "duc_forward", d, d);
    if (!m.causal) declare_linear(store, p + "duc_backward", d, d);
    declare_linear(store, p + "dol", d, I);
    declare_linear(store, p + "do", I, d);
    declare_ssm(store, p + "ssm_forward", m.ssm);
    if (!m.causal) declare_ssm(store, p + "ssm_backward", m.ssm);
}

Act GatedSsmBlock::forward(Graph& g, const Act& h, const BlockInput& in) {
    const std::int64_t rows = std::int64_t(in.B) * in.L;
    const Act X = g.layernorm(h, rows, norm_, eps_);
    const Act V = g.gelu(g.linear(X, rows, dv_), gelu_);
    const Act U_f = g.gelu(g.linear(X, rows, du_f_), gelu_);
    if (causal_) {  // F = do( gelu(dol(Y_f)) ⊙ V ): the forward path alone gates V
        const Act Y_f = g.linear(g.ssm(U_f, in.B, in.L, d_, ssm_f_), rows, duc_f_);
        if (capture_ && !g.planning() && !g.training()) {
            capture_("u_f", U_f.v, d_, false);
            capture_("v", V.v, static_cast<int>(V.n / rows), false);
        }
        const Act Z = g.mul(g.gelu(g.linear(Y_f, rows, dol_), gelu_), V);
        return g.add(h, g.linear(Z, rows, do_));
    }
    const Act U_b = g.gelu(g.linear(g.flip(X, in.B, in.L, d_), rows, du_b_), gelu_);
    const Act Y_f = g.linear(g.ssm(U_f, in.B, in.L, d_, ssm_f_), rows, duc_f_);
    const Act Y_b =
        g.flip(g.linear(g.ssm(U_b, in.B, in.L, d_, ssm_b_), rows, duc_b_), in.B, in.L, d_);
    if (capture_ && !g.planning() && !g.training()) {
        capture_("u_f", U_f.v, d_, false);
        capture_("u_b", U_b.v, d_, /*time_reversed=*/true);
        capture_("v", V.v, static_cast<int>(V.n / rows), false);
    }
    const Act Z = g.mul(g.gelu(g.linear(g.mul(Y_f, Y_b), rows, dol_), gelu_), V);
    return g.add(h, g.linear(Z, rows, do_));
}

}  // namespace routescope::models
