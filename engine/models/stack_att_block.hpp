#pragma once
// STACK/ATT, the BERT baseline as a pre-norm transformer layer (MODELS.md):
//
//   h ← h + MHA(LN1(h))
//   h ← h + ffn2( gelu(ffn1(LN2(h))) )        ffn1: d→I (I = 4d), ffn2: I→d
//
// model.norm_position = "post" gives Hugging Face BERT's post-LN layer instead:
//
//   h ← LN1( h + MHA(h) )
//   h ← LN2( h + ffn2( gelu(ffn1(h)) ) )
//
// Heads of width 64 unless model.n_heads; padding keys masked; gelu is the block gelu.
// model.causal: MHA with the causal mask (multi_head_attention.hpp), position t attends to t' ≤ t,
// in either norm position; same parameters.
// Parameters `layers.<i>.{norm1, attn.{q,k,v,o}, norm2, ffn1, ffn2}`.
#include "engine/models/block.hpp"
#include "engine/models/multi_head_attention.hpp"

namespace routescope::models {

class StackAttBlock : public Block {
public:
    StackAttBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;
    /// The block's self-attention (its probabilities are captured for `dump --attention`).
    MultiHeadAttention& attention() { return attn_; }

private:
    std::string norm1_, norm2_, ffn1_, ffn2_;
    MultiHeadAttention attn_;
    float eps_;
    Gelu gelu_;
    bool post_;
};

}  // namespace routescope::models
