#pragma once
// gMLP: the spatial gating unit (MODELS.md "gMLP (spatial gating unit)"), pre-norm residual:
//
//   Z      = gelu(u(LN(h)))                      u: d→I (I = 6d by default, docs/decisions.md)
//   Z1, Z2 = Z[:, :I/2], Z[:, I/2:]              the first half is the bypass
//   s      = Z1 ⊙ (W · LN_s(Z2) + b)             W [n, n] over positions, b [n], n = model.max_len
//   h     ← h + v(s)                             v: I/2→d
//
// W · Z mixes positions (ops/spatial_mix.hpp): only W's leading [L, L] block is used, as if the
// sequence were padded to n with zeros after LN_s (docs/decisions.md). model.gmlp.causal uses only
// W's lower triangle (position i sees j ≤ i). No position embeddings: order comes from W.
// Init (Model::init): W uniform(−1e−3/n, 1e−3/n) (its strict upper triangle 0 when causal), b = 1,
// so the block starts as an FFN whose gate is ≈ 1.
//
// Parameters `layers.<i>.{norm, u, norm_spatial, spatial, v}`: norm [d], u [I, d] + [I],
// norm_spatial [I/2], spatial.weight [n, n] + spatial.bias [n], v [d, I/2] + [d].
#include <functional>

#include "engine/models/block.hpp"

namespace routescope::models {

class GmlpBlock : public Block {
public:
    GmlpBlock(const ModelConfig& m, int index);
    static void declare(ParamStore& store, const ModelConfig& m, int index);
    Act forward(Graph& g, const Act& h, const BlockInput& in) override;

    /// Receives the gate values W · LN_s(Z2) + b of non-training forwards ([B, L, I/2], token
    /// order; dumped as gate `spatial_gate`, docs/decisions.md).
    using GateCapture = std::function<void(const char* name, const float* values, int channels)>;
    void set_gate_capture(GateCapture capture) { capture_ = std::move(capture); }

private:
    GateCapture capture_;
    std::string norm_, u_, norm_spatial_, spatial_, v_;
    int inner_;
    bool causal_;
    float eps_;
    Gelu gelu_;
};

}  // namespace routescope::models
