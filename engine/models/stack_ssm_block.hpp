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
    float eps_;
    Gelu gelu_;
};

}  // namespace routescope::models
