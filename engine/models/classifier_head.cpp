#include "engine/models/classifier_head.hpp"

#include "engine/core/error.hpp"

namespace routescope::models {

ClassifierHead::ClassifierHead(const ModelConfig& m) : pool_(m.pool), d_(m.d_model) {
    if (m.pool == "sentence" && m.arch != "slstm")
        throw ConfigError(
            "model.pool: 'sentence' is the S-LSTM sentence node; the BiGS family "
            "pools by 'mean', 'mean_all' or 'first'");
}

Act pool_tokens(Graph& g, const std::string& pool, const Act& h, const std::int32_t* lengths,
                const std::int32_t* row_lengths, int B, int L, int d) {
    if (pool == "first") return g.first_token(h, B, L, d);
    return g.mean_pool(h, pool == "mean_all" ? row_lengths : lengths, B, L, d);
}

void ClassifierHead::declare(ParamStore& store, const ModelConfig& m) {
    declare_linear(store, "classifier.pool", m.d_model, m.d_model);
    declare_linear(store, "classifier.out", m.d_model, m.n_labels);
}

Act ClassifierHead::forward(Graph& g, const Act& h, const Act& sentence, const BlockInput& in,
                            const ops::DropoutSite& dropout) {
    const Act pooled = pool_ == "sentence"
                           ? sentence
                           : pool_tokens(g, pool_, h, in.lengths, in.row_lengths, in.B, in.L, d_);
    const Act t = g.tanh(g.linear(pooled, in.B, "classifier.pool"));
    return g.linear(g.dropout(t, dropout), in.B, "classifier.out");
}

}  // namespace routescope::models
