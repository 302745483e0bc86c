#pragma once
// GATED/ATT: the BiGS gated block with its two SSM branches replaced by one bidirectional
// multi-head self-attention (MODELS.md). Pre-norm residual; with X = LN(h):
//
//   V = gelu(dv(X)),  U = gelu(du(X))
//   F = do( gelu(dol( duc(MHA(U)) )) ⊙ V ),   h ← h + F
//
// Parameters `layers.<i>.{norm, dv, du, attn.{q,k,v,o}, duc, dol, do}`; padding keys masked.
// model.causal: MHA with the causal mask (multi_head_attention.hpp), position t attends to t' ≤ t;
// the rest acts on one position, so F at t reads h at positions ≤ t only. Same parameters.
#include "engine/models/block.hpp"
#include "engine/models/multi_head_attention.hpp"

namespace routescope::models {

class GatedAttBlock : public Block {
public:
    GatedAttBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;
    /// The block's self-attention (its probabilities are captured for `dump --attention`).
    MultiHeadAttention& attention() { return attn_; }

private:
    std::string norm_, dv_, du_, duc_, dol_, do_;
    MultiHeadAttention attn_;
    float eps_;
    Gelu gelu_;
};

}  // namespace routescope::models
