#pragma once
// CUDA backend ops over token ids: embedding and cross_entropy (exec.hpp says how an op is written;
// the math is engine/ops/embedding.hpp's and cross_entropy.hpp's).
//
// embedding       y[t] = table[ids[t]]: one index per element of y. The backward scatter-adds
//                 dtable[ids[t]] += dy[t] without atomics: the table's rows are split into groups
//                 (about 64 Ki indices of (group, column)); each index walks all n ids and adds
//                 the tokens whose id falls in its group, in token order, so repeated ids sum in
//                 the CPU's order (bit-identical to it). One index per column walking every token
//                 (d indices, a serial chain of n read-add-writes each) took 14 ms of a base-size
//                 BiGS step at n = 16 Ki on an H200; the groups cut each chain to n/groups adds
//                 while every index still reads the n ids (a broadcast within the warp).
// cross_entropy   PyTorch's mean CE with ignore index −100. Forward: a warp per row computes
//                 the max, then Σ exp(z − max) and lse = max + log Σ (saved, [rows]) in
//                 x.reduce_rows's fixed order (one index per row walking V = 8000 columns
//                 serially took 3.4 ms at 4096 rows on an H100); then one warp sums lse − logits[r,
//                 t_r] in double over the non-ignored rows and writes their mean (0 when all are
//                 ignored) into the double loss (one index walking the rows took 1.3 ms at 4096
//                 rows on an H200). Backward: one warp computes the count and scale = seed /
//                 count (seed = the loss's gradient,
//                 read on the device, 1 when absent) into scratch; then one index per logit adds
//                 scale·exp(z − lse) on non-ignored rows and subtracts scale at the target, in the
//                 CPU's order.
//
// Ids and targets are checked on the host before they are uploaded (Model::forward); a kernel
// cannot report a bad one. To stay inside its tensors it writes NaN instead: an embedding row for
// an id outside [0, vocab) is NaN (its gradient is dropped), a target neither −100 nor in [0, V)
// makes the loss NaN (and its row gets no one-hot term).
//
// Operands (op_defs.cpp): embedding ids = 0, table = 1, y = 2; cross_entropy logits = 0,
// targets = 1, saved loss = 2 (f64, [1]), saved lse = 3 ([rows]).
#include <cmath>
#include <cstdint>

#include "engine/backend/cuda/exec.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool tokens_implements(ops::OpId op) {
    return op == ops::OpId::embedding || op == ops::OpId::cross_entropy;
}

// ---------------------------------------------------------------- embedding
/// i runs over y [n, d]: y[t, c] = table[ids[t], c] (NaN for an id outside the vocabulary).
template <class T>
struct EmbeddingForward {
    T* y;
    const std::int32_t* ids;
    const T* table;
    std::int64_t d, vocab;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t t = i / d, c = i % d, id = ids[t];
        y[i] = id >= 0 && id < vocab ? table[id * d + c] : static_cast<T>(NAN);
    }
};

/// i = (g, c): column c of the vocabulary rows [g·per_group, (g + 1)·per_group): dtable[ids[t], c]
/// += dy[t, c] for the tokens t = 0 … n − 1 whose id lies there, in order. Each (row, column) is
/// one index's, and its sum runs over t in order: the CPU's order, bit for bit.
template <class T>
struct EmbeddingBackwardGroup {
    T* dtable;
    const T* dy;
    const std::int32_t* ids;
    std::int64_t n, d, vocab, per_group;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t g = i / d, c = i % d;
        const std::int64_t lo = g * per_group;
        const std::int64_t hi = lo + per_group < vocab ? lo + per_group : vocab;
        for (std::int64_t t = 0; t < n; ++t) {
            const std::int64_t id = ids[t];
            if (id >= lo && id < hi) dtable[id * d + c] += dy[t * d + c];
        }
    }
};

/// How many groups of vocabulary rows the backward splits the table into: about 64 Ki indices
/// (groups·d), at most one group per row.
inline std::int64_t embedding_groups(std::int64_t d, std::int64_t vocab) {
    std::int64_t g = (65536 + d - 1) / (d > 0 ? d : 1);
    if (g > vocab) g = vocab;
    return g > 1 ? g : 1;
}

/// Arguments: tokens, d, vocab.
template <class T, class X>
void embedding_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[1], EmbeddingForward<T>{c.value<T>(2), c.value<std::int32_t>(0),
                                                c.value<T>(1), c.i[1], c.i[2]});
}
template <class T, class X>
void embedding_backward(X& x, const ops::OpCall& c) {
    T* dtable = c.gradient<T>(1);
    const T* dy = c.gradient<T>(2);
    if (!dtable || !dy) return;
    const std::int64_t groups = embedding_groups(c.i[1], c.i[2]);
    x.each(groups * c.i[1],
           EmbeddingBackwardGroup<T>{dtable, dy, c.value<std::int32_t>(0), c.i[0], c.i[1], c.i[2],
                                     (c.i[2] + groups - 1) / groups});
}

// ---------------------------------------------------------------- cross_entropy
/// Row r's max into lse[r] (the first of two passes; a warp per row, x.reduce_rows).
template <class T>
struct CrossEntropyRowMax {
    using Acc = T;
    T* lse;
    const T* logits;
    std::int64_t V;
    ROUTESCOPE_HD Acc identity() const { return static_cast<T>(-INFINITY); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const { return logits[r * V + j]; }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return b > a ? b : a; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { lse[r] = a; }
};

/// lse[r] = max + log Σ_j exp(z_j − max), max = lse[r] from the first pass.
template <class T>
struct CrossEntropyRowLse {
    using Acc = T;
    T* lse;
    const T* logits;
    std::int64_t V;
    ROUTESCOPE_HD Acc identity() const { return T(0); }
    ROUTESCOPE_HD Acc term(std::int64_t r, std::int64_t j) const {
        return std::exp(logits[r * V + j] - lse[r]);
    }
    ROUTESCOPE_HD Acc combine(Acc a, Acc b) const { return a + b; }
    ROUTESCOPE_HD void finish(std::int64_t r, Acc a) const { lse[r] = lse[r] + std::log(a); }
};

/// One row of `rows` terms (x.reduce_rows(1, rows, …): a warp, not one index walking every row):
/// loss = (1/N) Σ_{r: t_r ≠ −100} (lse_r − logits[r, t_r]) in double; 0 when N = 0, NaN when a
/// target is out of range.
template <class T>
struct CrossEntropyLoss {
    using Acc = Acc2<double>;  ///< (N, Σ)
    double* loss;
    const T* lse;
    const T* logits;
    const std::int32_t* targets;
    std::int64_t V;
    ROUTESCOPE_HD Acc identity() const { return {0.0, 0.0}; }
    ROUTESCOPE_HD Acc term(std::int64_t, std::int64_t r) const {
        const std::int64_t t = targets[r];
        if (t == ops::kIgnoreIndex) return {0.0, 0.0};
        return {1.0, t >= 0 && t < V ? static_cast<double>(lse[r] - logits[r * V + t]) : NAN};
    }
    ROUTESCOPE_HD Acc combine(Acc p, Acc q) const { return {p.a + q.a, p.b + q.b}; }
    ROUTESCOPE_HD void finish(std::int64_t, Acc s) const { loss[0] = s.a == 0 ? 0.0 : s.b / s.a; }
};

/// One row of `rows` terms: scale[0] = seed / N (T arithmetic, as the CPU), N the non-ignored
/// rows (counted exactly in double); 0 if none.
template <class T>
struct CrossEntropyScale {
    using Acc = double;
    T* scale;
    const double* seed;  ///< ∂L/∂loss, or null for 1
    const std::int32_t* targets;
    ROUTESCOPE_HD Acc identity() const { return 0.0; }
    ROUTESCOPE_HD Acc term(std::int64_t, std::int64_t r) const {
        return targets[r] != ops::kIgnoreIndex ? 1.0 : 0.0;
    }
    ROUTESCOPE_HD Acc combine(Acc p, Acc q) const { return p + q; }
    ROUTESCOPE_HD void finish(std::int64_t, Acc count) const {
        const T dloss = seed ? static_cast<T>(seed[0]) : T(1);
        scale[0] = count == 0 ? T(0) : dloss / static_cast<T>(count);
    }
};

/// i runs over dlogits [rows, V]: on a non-ignored row, += scale·exp(z − lse), then −= scale at
/// the target.
template <class T>
struct CrossEntropyBackward {
    T* dlogits;
    const T* logits;
    const T* lse;
    const std::int32_t* targets;
    const T* scale;
    std::int64_t V;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t r = i / V, j = i % V, t = targets[r];
        if (t == ops::kIgnoreIndex) return;
        const T s = scale[0];
        T g = dlogits[i] + s * std::exp(logits[i] - lse[r]);
        if (j == t) g -= s;
        dlogits[i] = g;
    }
};

/// Arguments: rows, V.
template <class T, class X>
void cross_entropy_forward(X& x, const ops::OpCall& c) {
    const std::int64_t rows = c.i[0], V = c.i[1];
    T* lse = c.value<T>(3);
    const T* logits = c.value<T>(0);
    if (V > 0) {
        x.reduce_rows(rows, V, CrossEntropyRowMax<T>{lse, logits, V});
        x.reduce_rows(rows, V, CrossEntropyRowLse<T>{lse, logits, V});
    }
    x.reduce_rows(
        1, rows, CrossEntropyLoss<T>{c.value<double>(2), lse, logits, c.value<std::int32_t>(1), V});
}
template <class T, class X>
void cross_entropy_backward(X& x, const ops::OpCall& c) {
    T* scale = x.template scratch<T>(1);  // requested first: the same scratch on every call
    T* dlogits = c.gradient<T>(0);
    if (!dlogits) return;
    const std::int64_t rows = c.i[0], V = c.i[1];
    const std::int32_t* targets = c.value<std::int32_t>(1);
    x.reduce_rows(1, rows, CrossEntropyScale<T>{scale, c.gradient<double>(2), targets});
    x.each(rows * V,
           CrossEntropyBackward<T>{dlogits, c.value<T>(0), c.value<T>(3), targets, scale, V});
}

}  // namespace routescope::cuda::kernels
