#pragma once
// S-LSTM, the sentence-state LSTM (MODELS.md "S-LSTM (graph recurrent network, parameters shared
// across steps)"; Zhang, Liu and Song 2018, "Sentence-State LSTM for Text Representation"). One
// set of parameters applied for T = model.n_layers recurrent steps to token nodes h_i, c_i and a
// sentence node g, c_g. With x_i the embeddings output:
//
//   h_i⁰ = c_i⁰ = x_i            g⁰ = c_g⁰ = mean over the non-pad x_i
//   h̄ᴸ_i = h_{i−1}, h̄ᴿ_i = h_{i+1}   (zero at the edges and where the neighbour is a pad; c̄
//   likewise)
//
//   [v_i, v_l, v_r, v_f, v_s, v_o, v_u] = W[h_i ; h̄ᴸ_i ; h̄ᴿ_i ; g] + U x_i + b
//   (model.slstm.gate_norm: LN on each of the 7 pre-activations)
//   i, l, r, f, s, o = σ(·);  u = tanh(v_u)
//   (i, l, r, f, s) ← softmax over the five gates of their sigmoids
//   c_i ← u⊙i + c̄ᴸ_i⊙l + c̄ᴿ_i⊙r + c_i⊙f + c_g⊙s ;  h_i = o ⊙ tanh(c_i)
//
//   sentence node, from the new h_i, c_i and the old g, c_g:
//   h̄ = mean_i h_i
//   [f_g, o_g] = σ(W_g[g ; h̄] + b_g);  f_i' = σ(W_f'[h_i ; g] + b_f')
//   (f̂_1 … f̂_n, f̂_g) = softmax over {f_1' … f_n', f_g} along the sequence (pads excluded)
//   c_g ← Σ_i f̂_i ⊙ c_i + f̂_g ⊙ c_g ;  g = o_g ⊙ tanh(c_g)
//
// W: 4d→7d, U: d→7d without bias (U x_i is computed once and reused by every step), W_g: 2d→2d
// (output [f_g ; o_g]), W_f': 2d→d. Parameters (shared, no layer index): `slstm.W` [7d, 4d] + bias
// [7d], `slstm.U.weight` [7d, d], `slstm.W_g` [2d, 2d] + [2d], `slstm.W_f` [d, 2d] + [d] and, with
// gate_norm, `slstm.norm_{i,l,r,f,s,o,u}` [d]. The 7d outputs of W and U are gate-major (rows
// [k·d, (k+1)·d) belong to gate k in the order i, l, r, f, s, o, u). Pad positions are computed
// like tokens but never read by a real one (neighbours, h̄ and the softmax skip them).
#include <array>
#include <functional>
#include <string>

#include "engine/models/block.hpp"

namespace routescope::models {

/// The nodes after a step: h, c [B, L, d]; g, c_g [B, d].
struct SlstmState {
    Act h, c, g, c_g;
};

class SlstmRecurrence {
public:
    explicit SlstmRecurrence(const ModelConfig& m);
    static void declare(ParamStore& store, const ModelConfig& m);

    /// U x_i [B·L, 7d], shared by every step.
    Act input_projection(Graph& g, const Act& x, const BlockInput& in);
    /// The step-0 state from x [B, L, d].
    SlstmState start(Graph& g, const Act& x, const BlockInput& in);
    /// Recurrent step `index` (1 … n_layers); Ux from input_projection().
    SlstmState step(Graph& g, const SlstmState& s, const Act& Ux, const BlockInput& in, int index);

    /// Receives the probes of non-training forwards with the step index (DUMP_FORMAT.md, slstm):
    /// "i", "l", "r", "f", "s" (the softmaxed token gates) and "o", each [B, L, d];
    /// "sentence_weight" [B, L + 1, d] (the token weights f̂_i, 0 at pads, then the node's f̂_g),
    /// which comes as the token weights [B, L, d] in `values` and the node's [B, d] in `own`.
    /// All are backend memory (the receiver, Model::set_capture, downloads them); own is null for
    /// every other name.
    using GateCapture = std::function<void(int step, const char* name, const float* values,
                                           int channels, const float* own)>;
    void set_gate_capture(GateCapture capture) { capture_ = std::move(capture); }

private:
    GateCapture capture_;
    int d_;
    float eps_;
    bool gate_norm_;
    std::array<std::string, 7> norm_names_;  ///< slstm.norm_<gate>, composed once
};

}  // namespace routescope::models
