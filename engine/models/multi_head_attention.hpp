#pragma once
// Multi-head self-attention as the GATED/ATT and STACK/ATT blocks use it (MODELS.md;
// tests/reference/README.md "Multi-head attention"):
//
//   q = x W_qᵀ + b_q,  k = x W_kᵀ + b_k,  v = x W_vᵀ + b_v          (`<name>.{q,k,v}`, d→d)
//   head j: P_j = softmax(q_j k_jᵀ / √dh + mask),  out_j = P_j v_j   (columns [j·dh, (j+1)·dh))
//   MHA(x) = concat_j(out_j) W_oᵀ + b_o                                (`<name>.o`)
//
// Padding keys (positions ≥ length) get probability exactly 0. Dropout on the probabilities is not
// applied (docs/decisions.md, "Models: attention-probability dropout").
//
// Causal (model.causal, bert and gated_att): mask_{ij} = −∞ also for every key j > i, so P_j[i, j]
// is exactly 0 for j > i and out_j at position i reads positions ≤ i only.
#include <functional>

#include "engine/models/block.hpp"

namespace routescope::models {

class MultiHeadAttention {
public:
    MultiHeadAttention(const std::string& name, int d, int heads, bool causal = false);
    static void declare(ParamStore& store, const std::string& name, int d);
    Act forward(Graph& g, const Act& x, const BlockInput& in);
    /// Receives the attention probabilities [B, heads, L, L] (backend memory, valid during the
    /// call) of every non-training forward while set (`dump --attention`).
    using ProbsCapture = std::function<void(const float* probs, int heads)>;
    void set_capture(ProbsCapture capture) { capture_ = std::move(capture); }
    int heads() const { return heads_; }

private:
    ProbsCapture capture_;
    std::string q_, k_, v_, o_;
    int d_, heads_;
    bool causal_;
};

}  // namespace routescope::models
