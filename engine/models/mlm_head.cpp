#include "engine/models/mlm_head.hpp"

namespace routescope::models {

MlmHead::MlmHead(const ModelConfig& m)
    : eps_(static_cast<float>(m.ln_eps)), transform_(m.mlm_transform) {}

void MlmHead::declare(ParamStore& store, const ModelConfig& m) {
    if (m.mlm_transform) declare_linear(store, "mlm.dense", m.d_model, m.d_model);
    declare_layernorm(store, "mlm.norm", m.d_model);
    store.add("mlm.bias", {m.vocab_size}, ParamInit::zeros, ParamGroup::no_decay);
}

Act MlmHead::forward(Graph& g, const Act& h, std::int64_t rows) {
    const Act x = transform_ ? g.gelu(g.linear(h, rows, "mlm.dense"), Gelu::erf) : h;  // dense+gelu
    const Act t = g.layernorm(x, rows, "mlm.norm", eps_);                              // LN
    return g.linear(t, rows, "embeddings.word.weight", "mlm.bias");  // · E_wordᵀ + bias
}

}  // namespace routescope::models
