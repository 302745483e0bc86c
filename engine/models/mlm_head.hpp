#pragma once
// The MLM head (MODELS.md "Heads"), decoder tied to the word embeddings:
//
//   logits = LN( gelu_erf( dense(h) ) ) · E_wordᵀ + bias          [B·L, V]
//
// Parameters `mlm.dense` [d, d], `mlm.norm` [d], `mlm.bias` [V]; the decoder weight is
// `embeddings.word.weight` itself (no parameter of its own), so its gradient adds to the lookup's.
//
// model.mlm_transform = false leaves out the transform (and `mlm.dense`): logits = LN(h)·E_wordᵀ +
// bias, the final LayerNorm and tied decoder of GPT-2 and H3's lm_simple (issue 27).
#include "engine/models/block.hpp"

namespace routescope::models {

class MlmHead {
public:
    explicit MlmHead(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);
    Act forward(Graph& g, const Act& h, std::int64_t rows);

private:
    float eps_;
    bool transform_;  ///< model.mlm_transform
};

}  // namespace routescope::models
