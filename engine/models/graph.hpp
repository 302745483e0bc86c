#pragma once
// The forward graph of one step: every model is written as calls on a Graph, which allocates each
// activation (and its gradient) from the arena, runs the op from engine/ops/ and records the op's
// backward on the tape. Parameters are found by their checkpoint names in the ParamStore
// (`layers.0.dv` → `layers.0.dv.weight` [out, in] and `.bias` [out]), so a block names its
// parameters exactly once, as tests/reference/README.md lists them.
//
// Recorded backwards capture the pool and the buffers they need, never the Graph: it lives only for
// the forward pass, the tape until the next one.
//
// A Graph in planning mode runs the same calls without computing anything: it only adds up the
// arena bytes they ask for. Model sizes its arena once from that pass (llm.c: activations in one
// buffer sized from (B, L, config), no allocation inside a step).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/arena.hpp"
#include "engine/core/param_store.hpp"
#include "engine/core/tape.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/fft_conv.hpp"

namespace routescope::models {

/// An activation and its gradient (null when the step does not train). n elements each.
struct Act {
    float* v = nullptr;
    float* g = nullptr;
    std::int64_t n = 0;
};

enum class Gelu { tanh, erf };

class Graph {
public:
    /// A computing graph. training = true records backwards and allocates zeroed gradients.
    Graph(ParamStore& params, Arena& arena, Tape& tape, ThreadPool& pool, bool training);
    /// A planning graph: counts arena bytes (see planned_bytes()), computes nothing.
    Graph(ParamStore& params, ThreadPool& pool, bool training);

    bool planning() const { return planning_; }
    bool training() const { return training_; }
    std::size_t planned_bytes() const { return planned_; }
    ThreadPool& pool() { return pool_; }

    /// An activation (with a zeroed gradient when training).
    Act alloc(std::int64_t n, const char* what);
    /// Scratch without a gradient.
    template <class T>
    T* scratch(std::int64_t n, const char* what);

    /// y = x Wᵀ + b with W = `<name>.weight` [out, in], b = `<name>.bias`; x is [rows, in].
    Act linear(const Act& x, std::int64_t rows, const std::string& name);
    /// The same with explicitly named weight and bias (the tied MLM decoder).
    Act linear(const Act& x, std::int64_t rows, const std::string& weight_name,
               const std::string& bias_name);
    /// LayerNorm over the last axis with `<name>.weight`, `<name>.bias`.
    Act layernorm(const Act& x, std::int64_t rows, const std::string& name, float eps);
    Act gelu(const Act& x, Gelu kind);
    Act tanh(const Act& x);
    /// σ(x) (ops/sigmoid.hpp; Birdie's gates).
    Act sigmoid(const Act& x);
    Act add(const Act& a, const Act& b);
    Act mul(const Act& a, const Act& b);
    /// Reverses the sequence axis of [B, L, d] over the full padded length.
    Act flip(const Act& x, int B, int L, int d);
    Act dropout(const Act& x, const ops::DropoutSite& site);
    /// table[ids] for n ids; the gradient scatter-adds into `<table_name>`.
    Act embedding(const std::int32_t* ids, std::int64_t n, const std::string& table_name);
    /// One BiGS SSM (`<name>.A_re`, `.A_im`, `.C`, `.D`, `.log_step`): the S4D kernel of its
    /// parameters, then the FFT convolution with the D skip over u [B, L, d].
    Act ssm(const Act& u, int B, int L, int d, const std::string& name,
            ops::FftConvWorkspace<float>& workspace);
    /// Birdie's gated linear recurrence h_t = f_t ⊙ h_prev + x_t over f, x [B, L, N]
    /// (ops/linear_scan.hpp): channels [0, n_forward) scan left to right with carry mask
    /// keep_forward, channels [n_forward, N) right to left with keep_reverse ([B, L], 1 = the
    /// carry passes into the position; null = always).
    Act linear_scan(const Act& f, const Act& x, int B, int L, int N, int n_forward,
                    const std::int32_t* keep_forward, const std::int32_t* keep_reverse);
    /// Multi-head self-attention over projected q, k, v [B, L, d], padding keys masked.
    Act attention(const Act& q, const Act& k, const Act& v, const std::int32_t* lengths, int B,
                  int L, int d, int heads);
    /// gMLP's token mixing (ops/spatial_mix.hpp) over x [B, L, C] with `<name>.weight` [n, n]
    /// and `<name>.bias` [n] (n = model.max_len; their leading [L, L] / [L] part is used).
    Act spatial_mix(const Act& x, int B, int L, int C, const std::string& name, bool causal);
    /// Columns [begin, begin + count) of x [rows, cols] → [rows, count] (gMLP's split of Z).
    Act columns(const Act& x, std::int64_t rows, int cols, int begin, int count);
    /// Mean over the positions < length of x [B, L, d] → [B, d].
    Act mean_pool(const Act& x, const std::int32_t* lengths, int B, int L, int d);
    /// x[:, 0] of x [B, L, d] → [B, d].
    Act first_token(const Act& x, int B, int L, int d);
    /// y = x Wᵀ with W = `<weight_name>` [out, in] and no bias (the S-LSTM's U).
    Act linear_no_bias(const Act& x, std::int64_t rows, const std::string& weight_name);
    /// The S-LSTM's window-1 neighbour of each position of x [B, L, d] (ops/neighbour_shift.hpp):
    /// offset −1 = the left one, +1 = the right one, zero at the edges and where it is a pad.
    Act neighbour(const Act& x, const std::int32_t* lengths, int B, int L, int d, int offset);
    /// Softmax across the gates, element by element (ops/gate_softmax.hpp); all of one size.
    std::vector<Act> gate_softmax(const std::vector<Act>& gates);
    /// Softmax along the real tokens of x [B, L, d] together with x_own [B, d]
    /// (ops/sequence_softmax.hpp): (weights [B, L, d], zero at pads; own weight [B, d]).
    std::pair<Act, Act> sequence_softmax(const Act& x, const Act& x_own,
                                         const std::int32_t* lengths, int B, int L, int d);
    /// Σ_{t < length} w[:, t] ⊙ x[:, t] of w, x [B, L, d] → [B, d].
    Act weighted_sequence_sum(const Act& w, const Act& x, const std::int32_t* lengths, int B, int L,
                              int d);
    /// x [B, d] repeated at every position → [B, L, d].
    Act broadcast_sequence(const Act& x, int B, int L, int d);
    /// The pieces [rows, cols[k]] side by side → [rows, Σ cols].
    Act concat_columns(const std::vector<Act>& pieces, const std::vector<int>& cols,
                       std::int64_t rows);
    /// Mean cross-entropy of logits [rows, V] against targets (−100 ignored); records the backward
    /// with dloss = 1. Returns the loss (0 in planning mode).
    double cross_entropy(const Act& logits, const std::int32_t* targets, std::int64_t rows, int V);

private:
    const float* param(const std::string& name) const;
    float* grad(const std::string& name);
    const std::vector<std::int64_t>& shape(const std::string& name) const;

    ParamStore& params_;
    Arena* arena_ = nullptr;
    Tape* tape_ = nullptr;
    ThreadPool& pool_;
    bool training_ = false;
    bool planning_ = false;
    std::size_t planned_ = 0;
};

}  // namespace routescope::models
