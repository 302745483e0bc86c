#pragma once
// GATED/SSM, the BiGS block (MODELS.md; Wang et al. 2022, "Pretraining Without Attention").
// Pre-norm residual h ← h + F(LN(h)); with X = LN(h):
//
//   V   = gelu(dv(X))                       dv: d→I
//   U_f = gelu(du_forward(X))               d→d
//   U_b = gelu(du_backward(flip(X)))        d→d
//   Y_f = duc_forward(SSM_f(U_f))           d→d, no activation
//   Y_b = flip(duc_backward(SSM_b(U_b)))    d→d, no activation
//   F   = do( gelu(dol(Y_f ⊙ Y_b)) ⊙ V )    dol: d→I, do: I→d
//
// gelu is the block gelu (gelu_tanh by default). No dropout and no attention mask inside the
// block: pads go through the SSMs. Parameters `layers.<i>.{norm, dv, du_forward, du_backward,
// duc_forward, duc_backward, dol, do, ssm_forward, ssm_backward}`.
//
// Causal variant (model.causal; docs/decisions.md "Causal variants of bigs, stack_ssm, gated_att
// and bert"): no backward branch, so the multiplicative gate is the forward SSM path alone:
//
//   V   = gelu(dv(X))                       dv: d→I
//   U_f = gelu(du_forward(X))               d→d
//   Y_f = duc_forward(SSM_f(U_f))           d→d, no activation
//   F   = do( gelu(dol(Y_f)) ⊙ V )
//
// SSM_f is a causal convolution (y_t depends on u_{t'} for t' ≤ t) and every other map acts on
// one position, so F at t reads h at positions ≤ t only. Parameters `layers.<i>.{norm, dv,
// du_forward, duc_forward, dol, do, ssm_forward}` (du_backward, duc_backward and ssm_backward do
// not exist); gates for dumps are u_f and v.
#include <functional>
#include <vector>

#include "engine/models/block.hpp"

namespace routescope::models {

class GatedSsmBlock : public Block {
public:
    GatedSsmBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;

    /// Receives the gates of non-training forwards (DUMP_FORMAT.md, bigs: u_f, u_b [B, L, d],
    /// v [B, L, I]) as backend memory. U_b is computed on flip(X): it comes with
    /// time_reversed = true, and the receiver (Model::set_capture) puts it back in token order
    /// on its host copy.
    using GateCapture = std::function<void(const char* name, const float* values, int channels,
                                           bool time_reversed)>;
    void set_gate_capture(GateCapture capture) { capture_ = std::move(capture); }

private:
    GateCapture capture_;

    std::string norm_, dv_, du_f_, du_b_, duc_f_, duc_b_, dol_, do_, ssm_f_, ssm_b_;
    int d_;
    bool causal_;
    float eps_;
    Gelu gelu_;
};

}  // namespace routescope::models
