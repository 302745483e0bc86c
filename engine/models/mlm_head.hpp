#pragma once
// The MLM head (MODELS.md "Heads"), decoder tied to the word embeddings:
//
//   logits = LN( gelu_erf( dense(h) ) ) · E_wordᵀ + bias          [B·L, V]
//
// Parameters `mlm.dense` [d, d], `mlm.norm` [d], `mlm.bias` [V]; the decoder weight is
// `embeddings.word.weight` itself (no parameter of its own), so its gradient adds to the lookup's.
#include "engine/models/block.hpp"

namespace routescope::models {

class MlmHead {
public:
    explicit MlmHead(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);
    Act forward(Graph& g, const Act& h, std::int64_t rows);

private:
    float eps_;
};

}  // namespace routescope::models
