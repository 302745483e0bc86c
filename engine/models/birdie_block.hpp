#pragma once
// Birdie, a gated linear RNN (MODELS.md "Birdie"; Blouir et al. 2024, "Birdie: Advancing State
// Space Language Modeling with Dynamic Mixtures of Training Objectives"). Pre-norm residual; with
// X = LN(h) and state size N (= model.d_inner):
//
//   i_t = σ(w_i x_t)   z_t = w_z x_t   o_t = gelu(w_o x_t)   f_t = σ(w_f x_t)
//   h_t = f_t ⊙ h_{t−1} + i_t ⊙ z_t             (ops/linear_scan.hpp, fp32)
//   y_t = w_out(o_t ⊙ h_t);  h ← h + y
//
// w_i, w_z, w_o, w_f: d→N; w_out: N→d; all with bias. No separate MLP. The layer's mode:
//   causal         every state channel scans left to right;
//   bidirectional  channels [0, N/2) left to right, [N/2, N) right to left;
//   prefix         as bidirectional, but the right-to-left half carries nothing out of the causal
//                  region (reset-mask bit 2) nor across a sample boundary.
// The reset mask [B, L] (Batch::reset_mask; bit 1 = position starts a new packed sample, bit 2 =
// position lies in the causal region of a prefix-LM sample) cuts the carry of the left-to-right
// half at sample starts in every mode, and the right-to-left half's at sample ends. Layer modes
// follow model.birdie.layer_pattern: "alternate" gives even layers model.birdie.mode and odd
// layers causal; "uniform" gives every layer model.birdie.mode. The gelu of o is the block gelu.
// Parameters `layers.<i>.{norm, w_i, w_z, w_o, w_f, w_out}`; w_f takes no weight decay (AdamW).
#include <functional>
#include <vector>

#include "engine/models/block.hpp"

namespace routescope::models {

enum class BirdieLayerMode { causal, bidirectional, prefix };

/// The mode of layer `index` under model.birdie.{mode, layer_pattern}.
BirdieLayerMode birdie_layer_mode(const ModelConfig& m, int index);

/// W_f's bias at init for layer `index` [N] under model.birdie.forget_init. "zero": all 0
/// (MODELS.md's init rule; every forget gate starts at σ(0) = 1/2). "spread": each scan direction's
/// G channels (G = N in a causal layer; [0, N/2) and [N/2, N) otherwise) get, for k = 0 … G − 1,
///   a_k = 1 − 0.1 · 0.01^(k / (G − 1))   (a_k = 0.9 when G = 1),   b_k = ln(a_k / (1 − a_k)),
/// so σ(b_k) runs from 0.9 to 0.999 and the time constants 1 / (1 − a_k) from 10 to 1000
/// positions, geometrically (docs/decisions.md, "Birdie: forget-gate init").
std::vector<float> birdie_forget_bias(const ModelConfig& m, int index);

/// Bits of the reset mask (Batch::reset_mask), MODELS.md's "1 = new packed sample, 2 = causal
/// region"; a position may carry both.
inline constexpr std::int32_t kResetNewSample = 1;
inline constexpr std::int32_t kResetCausal = 2;

/// The carry masks of the scan from a reset mask [B, L] (1 = the state flows into the position):
/// left to right, right to left, and right to left in a prefix layer. Host code at the model
/// boundary (Model::forward), so the step's ops read them like any batch data.
void birdie_carry_masks(const std::int32_t* reset_mask, int B, int L, std::int32_t* keep_forward,
                        std::int32_t* keep_reverse, std::int32_t* keep_reverse_prefix);

class BirdieBlock : public Block {
public:
    BirdieBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;

    BirdieLayerMode mode() const { return mode_; }

    /// Receives the gates of non-training forwards (DUMP_FORMAT.md, birdie: f, i, z, o, each
    /// [B, L, N] in token order). f is the gate σ(w_f x) itself: where the reset mask cuts the
    /// carry the scan ignores it, which a reader recovers from the mask. In bidirectional and
    /// prefix layers channels [N/2, N) scan right to left.
    using GateCapture = std::function<void(const char* name, const float* values, int channels)>;
    void set_gate_capture(GateCapture capture) { capture_ = std::move(capture); }

private:
    GateCapture capture_;
    std::string norm_, w_i_, w_z_, w_o_, w_f_, w_out_;
    int N_;
    float eps_;
    Gelu gelu_;
    BirdieLayerMode mode_;
};

}  // namespace routescope::models
