#pragma once
// The implicit attention of an SSM layer (issue 28): the token-to-token matrix that the layer's
// two long convolutions realise for one example of length n, from the dump's kernels and gates.
// With the forward kernel K_f, the backward kernel K_b (/kernels/<l>, the first channel group when
// the model has several) and their skips D_f, D_b:
//
//   A_f[t, s] = K_f[t − s] for s < t,  K_f[0] + D_f for s = t,  0 for s > t   (causal)
//   A_b[t, s] = K_b[s − t] for s > t,  K_b[0] + D_b for s = t,  0 for s < t   (anti-causal)
//
// so the SSM outputs of one channel are y_f = A_f u_f and y_b = A_b u_b exactly (u the SSM's
// inputs in token order: a BiGS dump's gates u_f and u_b). A causal layer (model.causal: its dump
// holds K_f and D_f alone) has A_b = 0, so sum is A_f and gated uses u_f alone; backward is an
// error. Views of it (`mode`):
//   forward, backward  A_f or A_b;
//   sum                A_f + A_b, the pair's token mixing without the gates;
//   gated              (BiGS, needs the u_f and u_b gates) the channel-averaged magnitude of what
//                      token s contributes to the SSM outputs at t given the example's own inputs,
//                      mean_c |A_f[t, s] u_f,c[s]| + mean_c |A_b[t, s] u_b,c[s]| (the norm-based
//                      view of attention of Kobayashi et al. 2020, applied to the convolutions).
// A Birdie layer (gated linear recurrence, MODELS.md) has no kernels: its token mixing is the
// decay of its forget gates. State channel c of h_t = f_t ⊙ h_{t−1} + i_t ⊙ z_t gives
//
//   A_c[t, s] = Π_{k=s+1..t} f_c[k] for s ≤ t (forward channels),
//   A_c[t, s] = Π_{k=t..s−1} f_c[k] for s ≥ t (reverse channels of a bidirectional or prefix
//               layer: the second half; in a prefix layer no carry enters k from k + 1 once
//               k + 1 reaches the causal suffix),
//
// each 0 where the row's reset mask cuts the carry on the way (a sample start inside a packed
// row, in either direction; decay_attention),
//
// so the layer's states are h_c = A_c (i_c ⊙ z_c) exactly (from the dumped gates f, i, z of a dump
// written with --gates). Modes: forward / backward, the mean of A_c over the forward / reverse
// channels; sum, the mean over all channels; gated, mean_c |o_c[t] · A_c[t, s] · i_c[s] z_c[s]|,
// what token s contributes to the input of W_out at t (o the output gate). A gMLP layer mixes
// tokens through its spatial weight: the matrix is W[t, s] over the example's tokens (/mixing/<l>;
// source "spatial"), forward / backward its lower / upper triangle (a causal gMLP's W is
// lower-triangular). A dump that holds a layer's real attention probabilities (BERT, GATED/ATT:
// `dump --attention`, /layers/<l>/attention [S, H, L, L]) gives them instead, for the same example
// and tokens: one head, or the mean of the heads (`head` = −1), over the example's n real tokens,
// so a BiGS layer's implicit attention and a BERT layer's attention compare side by side. And a
// normalisation per row (`normalise`): raw; minmax, |·| scaled to [0, 1] by the row's own min and
// max; rownorm, |·| divided by the row's sum (rows sum to 1, no softmax).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

/// A_f (forward = true) or A_b of length n from a kernel of length ≥ n and its skip, row-major
/// [n, n], in double.
std::vector<double> toeplitz_attention(const std::vector<double>& kernel, double skip,
                                       std::int64_t n, bool forward);

/// Birdie: A_c of one state channel (a column of `f`, the layer's forget gates [L, N] of one
/// example) over its first n positions, row-major [n, n], in double. `forward` false: the reverse
/// scan. `reset_mask` (the row's /data/reset_mask, at least n values; empty: no cuts) cuts the
/// carry as the model does: no carry into a position whose bit 1 (a sample start) is set, left
/// to right; right to left none into k from k + 1 when k + 1 starts a sample, nor, with `prefix`
/// (a prefix layer), when k or k + 1 lies in the causal region (bit 2).
std::vector<double> decay_attention(const RowMatrixF& f, Eigen::Index channel, std::int64_t n,
                                    bool forward, const std::vector<std::int32_t>& reset_mask = {},
                                    bool prefix = false);

struct ImplicitAttentionOptions {
    int layer = 1;
    std::int64_t example = 0;
    std::string mode = "sum";       ///< forward | backward | sum | gated
    std::string normalise = "raw";  ///< raw | minmax | rownorm
    /// A dump with the layer's real attention probabilities (BERT, `dump --attention`): the head
    /// shown, or −1 for the mean of the heads. The mode does not apply to them.
    int head = -1;
};

struct ImplicitAttentionResult {
    Provenance provenance;
    ImplicitAttentionOptions options;
    std::int64_t length = 0;          ///< n, the example's real tokens
    std::vector<double> matrix;       ///< [n, n] row-major: row t (query), column s (source)
    std::vector<std::string> tokens;  ///< the example's tokens (vocabulary pieces), when known
    /// What the matrix is: "convolutions" (an SSM layer's implicit attention, `mode`), "decay"
    /// (a Birdie layer's forget-gate products), "spatial" (a gMLP layer's W), or "attention" (the
    /// layer's own softmax probabilities, `head`).
    std::string source = "convolutions";
    int heads = 0;  ///< the layer's attention heads (source attention)
    /// Source convolutions: the layer is causal (forward SSM only, A_b = 0).
    bool causal = false;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// Throws ConfigError naming the file when the layer has no kernels (a causal SSM, BERT, a dump
/// written without them), the example is out of range, `gated` lacks the u_f/u_b gates, or an
/// option is unknown.
ImplicitAttentionResult implicit_attention(const DumpReader& dump,
                                           const ImplicitAttentionOptions& options);

}  // namespace routescope::analysis
