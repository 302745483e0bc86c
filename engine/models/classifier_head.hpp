#pragma once
// The classification head (MODELS.md "Heads"):
//
//   logits = out( dropout( tanh( pool_dense( pool(h) ) ) ) )        [B, n_labels]
//
// pool = mean of h over the positions < length (model.pool = "mean", the default), over all L
// positions ("mean_all"), h at position 0 ("first") or, for S-LSTM only, its sentence node g
// ("sentence"). Parameters
// `classifier.pool` [d, d], `classifier.out` [n_labels, d].
#include "engine/models/block.hpp"

namespace routescope::models {

/// model.pool of h [B, L, d] but "sentence": the head's pool and the dumps' sentence vectors.
/// `lengths`: each example's real tokens; `row_lengths`: L for each example (mean_all).
Act pool_tokens(Graph& g, const std::string& pool, const Act& h, const std::int32_t* lengths,
                const std::int32_t* row_lengths, int B, int L, int d);

class ClassifierHead {
public:
    explicit ClassifierHead(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);
    /// sentence: S-LSTM's node g [B, d] (read when model.pool = sentence; else may be empty).
    Act forward(Graph& g, const Act& h, const Act& sentence, const BlockInput& in,
                const ops::DropoutSite& dropout);

private:
    std::string pool_;
    int d_;
};

}  // namespace routescope::models
