#include "engine/models/embeddings.hpp"

#include <algorithm>

namespace routescope::models {

Embeddings::Embeddings(const ModelConfig& m)
    : types_(m.type_embeddings), positions_(m.arch != "gmlp"), eps_(static_cast<float>(m.ln_eps)) {}

void Embeddings::declare(ParamStore& store, const ModelConfig& m) {
    store.add("embeddings.word.weight", {m.vocab_size, m.d_model});
    if (m.arch != "gmlp") store.add("embeddings.position.weight", {m.max_len, m.d_model});
    if (m.type_embeddings) store.add("embeddings.type.weight", {2, m.d_model});
    declare_layernorm(store, "embeddings.norm", m.d_model);
}

Act Embeddings::forward(Graph& g, const std::int32_t* tokens, const std::int32_t* types, int B,
                        int L, const ops::DropoutSite& dropout) {
    const std::int64_t rows = std::int64_t(B) * L;
    Act x;
    if (positions_) {
        auto* positions = g.scratch<std::int32_t>(rows, "position ids");
        if (!g.planning())
            for (std::int64_t r = 0; r < rows; ++r)
                positions[r] = static_cast<std::int32_t>(r % L);
        x = g.add(g.embedding(tokens, rows, "embeddings.word.weight"),
                  g.embedding(positions, rows, "embeddings.position.weight"));
    } else {
        x = g.embedding(tokens, rows, "embeddings.word.weight");
    }
    if (types_) {
        const std::int32_t* segment = types;
        if (!segment) {
            auto* zeros = g.scratch<std::int32_t>(rows, "type ids");
            if (!g.planning()) std::fill(zeros, zeros + rows, 0);
            segment = zeros;
        }
        x = g.add(x, g.embedding(segment, rows, "embeddings.type.weight"));
    }
    return g.dropout(g.layernorm(x, rows, "embeddings.norm", eps_), dropout);
}

}  // namespace routescope::models
