#pragma once
// STACK/SSM: the paper's ablation of a transformer layer whose attention is replaced by two
// sequential SSM blocks (MODELS.md). The paper gives no equations; this is the reading that
// matches its ≈12d² parameter count (docs/decisions.md):
//
//   a1 = h  + wo_forward( SSM_f( wi_forward(LN1(h)) ) )
//   a2 = a1 + flip( wo_backward( SSM_b( wi_backward(flip(LN2(a1))) ) ) )
//   h' = a2 + ffn2( gelu(ffn1(LN3(a2))) )          ffn1: d→I (I = 4d), ffn2: I→d
//
// Parameters `layers.<i>.{norm1, wi_forward, ssm_forward, wo_forward, norm2, wi_backward,
// ssm_backward, wo_backward, norm3, ffn1, ffn2}`; gelu is the block gelu; pads go through the SSMs.
//
// Causal variant (model.causal; docs/decisions.md "Causal variants of bigs, stack_ssm, gated_att
// and bert"): the backward (flipped) SSM sub-block is left out, the forward one feeds the FFN:
//
//   a1 = h  + wo_forward( SSM_f( wi_forward(LN1(h)) ) )
//   h' = a1 + ffn2( gelu(ffn1(LN3(a1))) )
//
// SSM_f is a causal convolution and everything else acts on one position, so h' at t reads h at
// positions ≤ t only. Parameters `layers.<i>.{norm1, wi_forward, ssm_forward, wo_forward, norm3,
// ffn1, ffn2}` (norm2, wi_backward, ssm_backward and wo_backward do not exist).
#include "engine/models/block.hpp"

namespace routescope::models {

class StackSsmBlock : public Block {
public:
    StackSsmBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;

private:
    std::string norm1_, wi_f_, ssm_f_, wo_f_, norm2_, wi_b_, ssm_b_, wo_b_, norm3_, ffn1_, ffn2_;
    int d_;
    bool causal_;
    float eps_;
    Gelu gelu_;
};

}  // namespace routescope::models
