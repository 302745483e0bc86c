#include "engine/models/embeddings.hpp"

#include <algorithm>

namespace routescope::models {

Embeddings::Embeddings(const ModelConfig& m)
    : types_(m.type_embeddings),
      positions_(has_position_embeddings(m)),
      norm_(m.embedding_norm),
      eps_(static_cast<float>(m.ln_eps)) {}

bool Embeddings::has_position_embeddings(const ModelConfig& m) {
    return m.arch != "gmlp" && m.position_embeddings;
}

void Embeddings::declare(ParamStore& store, const ModelConfig& m) {
    // Embedding tables: normal init, no weight decay (docs/config.md "Parameter groups").
    constexpr auto init = ParamInit::normal;
    constexpr auto group = ParamGroup::no_decay;
    store.add("embeddings.word.weight", {m.vocab_size, m.d_model}, init, group);
    if (has_position_embeddings(m))
        store.add("embeddings.position.weight", {m.max_len, m.d_model}, init, group);
    if (m.type_embeddings) store.add("embeddings.type.weight", {2, m.d_model}, init, group);
    if (m.embedding_norm) declare_layernorm(store, "embeddings.norm", m.d_model);
}

Act Embeddings::forward(Graph& g, const std::int32_t* tokens, const std::int32_t* types,
                        const std::int32_t* positions, const std::int32_t* zeros, int B, int L,
                        const ops::DropoutSite& dropout) {
    const std::int64_t rows = std::int64_t(B) * L;
    Act x = g.embedding(tokens, rows, "embeddings.word.weight");
    if (positions_) x = g.add(x, g.embedding(positions, rows, "embeddings.position.weight"));
    if (types_) x = g.add(x, g.embedding(types ? types : zeros, rows, "embeddings.type.weight"));
    return g.dropout(norm_ ? g.layernorm(x, rows, "embeddings.norm", eps_) : x, dropout);
}

}  // namespace routescope::models
