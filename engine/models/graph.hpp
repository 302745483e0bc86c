#pragma once
// The forward graph of one step: every model is written as calls on a Graph. Each call names its
// op's inputs (activations, parameters by their checkpoint names, batch data) and integer
// arguments; one generic path (apply) then checks them against the op table (engine/ops/op.hpp),
// allocates the outputs (with gradients when training) and saved tensors from the arena, runs the
// op on the backend and appends the call to the tape. Parameters are found by their checkpoint
// names in the ParamStore (`layers.0.dv` → `layers.0.dv.weight` [out, in] and `.bias` [out]), so
// a block names its parameters exactly once, as tests/reference/README.md lists them; the look-up
// composes the name on the stack and builds no string.
//
// A Graph in planning mode runs the same calls without computing anything: it adds up the arena
// bytes and tape records they ask for and lets the backend prepare its workspaces. Model sizes its
// arena and tape once from that pass (llm.c: no allocation inside a step).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>

#include "engine/backend/backend.hpp"
#include "engine/backend/tape.hpp"
#include "engine/core/arena.hpp"
#include "engine/core/param_store.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/op.hpp"
#include "engine/ops/op_table.hpp"

namespace routescope::models {

/// An activation and its gradient (null when the step does not train). n elements each.
struct Act {
    float* v = nullptr;
    float* g = nullptr;
    std::int64_t n = 0;
};

enum class Gelu { tanh, erf };

/// Up to ops::kMaxPieces activations (gate_softmax's outputs).
using Pieces = std::array<Act, ops::kMaxPieces>;

class Graph {
public:
    /// A computing graph. training = true records the tape and allocates zeroed gradients.
    Graph(ParamStore& params, Arena& arena, Tape& tape, Backend& backend, bool training);
    /// A planning graph: counts arena bytes and tape records, prepares the backend, computes
    /// nothing.
    Graph(ParamStore& params, Backend& backend, bool training);

    bool planning() const { return planning_; }
    bool training() const { return training_; }
    /// The arena bytes the graph needed at most (planning; release_to lowers the bytes in use,
    /// not this peak).
    std::size_t planned_bytes() const { return planned_; }
    std::size_t planned_ops() const { return planned_ops_; }
    /// Times every op's forward into `profile` ("<op> forward", with its cost), or off.
    void set_profile(ops::OpProfile* profile) { profile_ = profile; }

    /// An activation (with a zeroed gradient when training).
    Act alloc(std::int64_t n, const char* what);
    /// The arena bytes in use (planning: counted so far), a mark for release_to.
    std::size_t mark() const { return planning_ ? planned_used_ : arena_->used(); }
    /// Frees everything allocated since `mark`: what an inference step is done with (a layer's
    /// internals once its output is copied out). A training graph refuses: its tape still needs
    /// them. Pointers handed out since `mark` are invalid after it.
    void release_to(std::size_t mark);
    /// Scratch without a gradient.
    template <class T>
    T* scratch(std::int64_t n, const char* what);

    /// y = x Wᵀ + b with W = `<name>.weight` [out, in], b = `<name>.bias`; x is [rows, in].
    Act linear(const Act& x, std::int64_t rows, std::string_view name);
    /// The same with explicitly named weight and bias (the tied MLM decoder).
    Act linear(const Act& x, std::int64_t rows, std::string_view weight_name,
               std::string_view bias_name);
    /// y = x Wᵀ with W = `<weight_name>` [out, in] and no bias (the S-LSTM's U).
    Act linear_no_bias(const Act& x, std::int64_t rows, std::string_view weight_name);
    /// LayerNorm over the last axis with `<name>.weight`, `<name>.bias`.
    Act layernorm(const Act& x, std::int64_t rows, std::string_view name, float eps);
    Act gelu(const Act& x, Gelu kind);
    Act tanh(const Act& x);
    /// σ(x) (Birdie's gates).
    Act sigmoid(const Act& x);
    Act add(const Act& a, const Act& b);
    Act mul(const Act& a, const Act& b);
    /// Reverses the sequence axis of [B, L, d] over the full padded length.
    Act flip(const Act& x, int B, int L, int d);
    /// Inverted dropout at `site`; the identity when not training or p = 0.
    Act dropout(const Act& x, const ops::DropoutSite& site);
    /// table[ids] for n ids; the gradient scatter-adds into `<table_name>`.
    Act embedding(const std::int32_t* ids, std::int64_t n, std::string_view table_name);
    /// One BiGS SSM (`<name>.A_re`, `.A_im`, `.C`, `.D`, `.log_step`): the S4D kernel of its
    /// parameters, then the FFT convolution with the D skip over u [B, L, d].
    Act ssm(const Act& u, int B, int L, int d, std::string_view name);
    /// The S4D kernel K [H, L] of the SSM `name` alone (ssm()'s first op; the dump's /kernels).
    Act s4d_kernel(std::string_view name, int L);
    /// Birdie's gated linear recurrence h_t = f_t ⊙ h_prev + x_t over f, x [B, L, N]
    /// (ops/linear_scan.hpp): channels [0, n_forward) scan left to right with carry mask
    /// keep_forward, channels [n_forward, N) right to left with keep_reverse ([B, L], 1 = the
    /// carry passes into the position; null = always).
    Act linear_scan(const Act& f, const Act& x, int B, int L, int N, int n_forward,
                    const std::int32_t* keep_forward, const std::int32_t* keep_reverse);
    /// Multi-head self-attention over projected q, k, v [B, L, d], padding keys masked (and the
    /// keys after each query when causal).
    Act attention(const Act& q, const Act& k, const Act& v, const std::int32_t* lengths, int B,
                  int L, int d, int heads, bool causal = false,
                  const float** probs = nullptr);  ///< probs: the op's [B, heads, L, L] (backend)
    /// gMLP's token mixing (ops/spatial_mix.hpp) over x [B, L, C] with `<name>.weight` [n, n]
    /// and `<name>.bias` [n] (n = model.max_len; their leading [L, L] / [L] part is used).
    Act spatial_mix(const Act& x, int B, int L, int C, std::string_view name, bool causal);
    /// Columns [begin, begin + count) of x [rows, cols] → [rows, count] (gMLP's split of Z).
    Act columns(const Act& x, std::int64_t rows, int cols, int begin, int count);
    /// Mean over the positions < length of x [B, L, d] → [B, d].
    Act mean_pool(const Act& x, const std::int32_t* lengths, int B, int L, int d);
    /// x[:, 0] of x [B, L, d] → [B, d] (ops/first_token.hpp).
    Act first_token(const Act& x, int B, int L, int d);
    /// The S-LSTM's window-1 neighbour of each position of x [B, L, d] (ops/neighbour_shift.hpp):
    /// offset −1 = the left one, +1 = the right one, zero at the edges and where it is a pad.
    Act neighbour(const Act& x, const std::int32_t* lengths, int B, int L, int d, int offset);
    /// Softmax across the gates, element by element (ops/gate_softmax.hpp); all of one size.
    Pieces gate_softmax(std::span<const Act> gates);
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
    Act concat_columns(std::initializer_list<Act> pieces, std::initializer_list<int> cols,
                       std::int64_t rows);
    /// Mean cross-entropy of logits [rows, V] against targets (−100 ignored); records the backward
    /// with dloss = 1. Returns the loss (0 in planning mode).
    double cross_entropy(const Act& logits, const std::int32_t* targets, std::int64_t rows, int V);

private:
    /// An op call with these integer arguments and no inputs yet.
    static ops::OpCall call(ops::OpId op, std::initializer_list<std::int64_t> args);
    void input(ops::OpCall& c, const Act& x) const;
    /// The parameter `<module>.<leaf>` (or `module` itself when leaf is empty) as an input.
    void input(ops::OpCall& c, std::string_view module, std::string_view leaf);
    void input(ops::OpCall& c, const std::int32_t* data, std::int64_t n) const;
    /// The one generic path: check, allocate outputs and saved tensors, run, record.
    Pieces apply(ops::OpCall& c);
    Act apply1(ops::OpCall& c) { return apply(c)[0]; }
    const ParamEntry& entry(std::string_view module, std::string_view leaf) const;

    ParamStore& params_;
    Arena* arena_ = nullptr;
    Tape* tape_ = nullptr;
    Backend& backend_;
    ops::OpProfile* profile_ = nullptr;
    bool training_ = false;
    bool planning_ = false;
    std::size_t planned_ = 0;       ///< peak
    std::size_t planned_used_ = 0;  ///< in use now
    std::size_t planned_ops_ = 0;
};

}  // namespace routescope::models
