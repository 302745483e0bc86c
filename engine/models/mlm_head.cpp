#include "engine/models/mlm_head.hpp"

namespace routescope::models {

MlmHead::MlmHead(const ModelConfig& m) : eps_(static_cast<float>(m.ln_eps)) {}

void MlmHead::declare(ParamStore& store, const ModelConfig& m) {
    declare_linear(store, "mlm.dense", m.d_model, m.d_model);
    declare_layernorm(store, "mlm.norm", m.d_model);
    store.add("mlm.bias", {m.vocab_size}, ParamInit::zeros, ParamGroup::no_decay);
}

Act MlmHead::forward(Graph& g, const Act& h, std::int64_t rows) {
    const Act t =
        g.layernorm(g.gelu(g.linear(h, rows, "mlm.dense"), Gelu::erf), rows, "mlm.norm", eps_);
    return g.linear(t, rows, "embeddings.word.weight", "mlm.bias");
}

}  // namespace routescope::models
