#pragma once
// CUDA backend ops over sequences (exec.hpp says how an op is written; the math is that of the CPU
// kernels in engine/ops/<op>.hpp, in the same order of operations):
//
//   mean_pool              y[b] = (1/len_b) Σ_{l < len_b} x[b, l]: one index per (b, c) sums its
//                          tokens in order; the backward is one index per element of dx.
//   first_token            y[b] = x[b, 0]: one index per (b, c), forward and backward.
//   neighbour_shift        y[b, t] = x[b, t ± 1] inside [0, len_b), else 0: one index per element
//                          of y; the backward one per element of dx, which receives from the row
//                          at t − offset only.
//   gate_softmax           a softmax over K ≤ 5 arrays, element-wise: one index per element j
//                          owns y_k[j] (and dx_k[j]) for every k; the K pointers travel by value in
//                          the body.
//   sequence_softmax       per (b, channel j) one softmax over the len_b tokens and the node's own
//                          value: one index per (b, j) walks its tokens in order (max, exp, Z,
//                          scale; pads set to 0), the backward's dot product the same way.
//   weighted_sequence_sum  y[b, j] = Σ_{t < len_b} w·x: one index per (b, j), tokens in order; the
//                          backward is one index per element of dw and dx.
//   sequence_broadcast     y[b, t] = x[b]: one index per element of y; the backward one index per
//                          (b, j) adding the L rows into dx in order, as the CPU does.
//
// Every reduction is owned by one index in a fixed order (no atomics). Backwards accumulate (+=)
// into the input gradients that are not null; an output gradient that is null counts as zero.
// Lengths are checked on the host before they are uploaded (Model::forward); a kernel cannot report
// a bad one, so it only clamps a length into [0, L] to stay inside its tensors.
//
// Operands (op_defs.cpp): mean_pool x = 0, lengths = 1, y = 2; first_token x = 0, y = 1;
// neighbour_shift x = 0, lengths = 1, y = 2; gate_softmax x0 … x(K−1), y0 … y(K−1);
// sequence_softmax x = 0, x_own = 1, lengths = 2, w = 3, w_own = 4; weighted_sequence_sum w = 0,
// x = 1, lengths = 2, y = 3; sequence_broadcast x = 0, y = 1.
#include <cstdint>
#include <string>

#include "engine/backend/cuda/exec.hpp"
#include "engine/core/error.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool sequence_implements(ops::OpId op) {
    using ops::OpId;
    switch (op) {
        case OpId::mean_pool:
        case OpId::first_token:
        case OpId::neighbour_shift:
        case OpId::gate_softmax:
        case OpId::sequence_softmax:
        case OpId::weighted_sequence_sum:
        case OpId::sequence_broadcast:
            return true;
        default:
            return false;
    }
}

/// Sequence b's length clamped into [0, L] (the host has checked it; this only keeps a kernel
/// inside its tensors).
ROUTESCOPE_HD inline std::int64_t clamped_length(const std::int32_t* lengths, std::int64_t b,
                                                 std::int64_t L) {
    const std::int64_t n = lengths[b];
    return n < 0 ? 0 : (n > L ? L : n);
}

// ---------------------------------------------------------------- mean_pool
/// i runs over y [B, d]: the sum of the first len_b tokens in order, times 1/len_b (0 when empty).
template <class T>
struct MeanPoolForward {
    T* y;
    const T* x;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, c = i % d, n = clamped_length(lengths, b, L);
        T sum = 0;
        for (std::int64_t l = 0; l < n; ++l)
            sum += x[(b * L + l) * d + c];
        if (n > 0) sum *= T(1) / T(n);
        y[i] = sum;
    }
};

/// i runs over dx [B, L, d]: dx[b, l] += dy[b] / len_b for l < len_b.
template <class T>
struct MeanPoolBackward {
    T* dx;
    const T* dy;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % d, r = i / d, l = r % L, b = r / L;
        const std::int64_t n = clamped_length(lengths, b, L);
        if (l >= n) return;
        dx[i] += dy[b * d + c] * (T(1) / T(n));
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void mean_pool_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[2], MeanPoolForward<T>{c.value<T>(2), c.value<T>(0),
                                               c.value<std::int32_t>(1), c.i[1], c.i[2]});
}
template <class T, class X>
void mean_pool_backward(X& x, const ops::OpCall& c) {
    T* dx = c.gradient<T>(0);
    const T* dy = c.gradient<T>(2);
    if (!dx || !dy) return;
    x.each(c.i[0] * c.i[1] * c.i[2],
           MeanPoolBackward<T>{dx, dy, c.value<std::int32_t>(1), c.i[1], c.i[2]});
}

// ---------------------------------------------------------------- first_token
/// i runs over [B, d]: forward y[b, c] = x[b, 0, c]; backward dx[b, 0, c] += dy[b, c].
template <class T>
struct FirstTokenBody {
    T* seq;  ///< x (forward) or dx (backward), [B, L, d]
    T* row;  ///< y (forward) or dy (backward), [B, d]
    std::int64_t L, d;
    bool backward;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, c = i % d;
        if (backward)
            seq[b * L * d + c] += row[i];
        else
            row[i] = seq[b * L * d + c];
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void first_token_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[2], FirstTokenBody<T>{c.value<T>(0), c.value<T>(1), c.i[1], c.i[2], false});
}
template <class T, class X>
void first_token_backward(X& x, const ops::OpCall& c) {
    T* dx = c.gradient<T>(0);
    T* dy = c.gradient<T>(1);
    if (!dx || !dy) return;
    x.each(c.i[0] * c.i[2], FirstTokenBody<T>{dx, dy, c.i[1], c.i[2], true});
}

// ---------------------------------------------------------------- neighbour_shift
/// Whether position t reads a neighbour: t + offset inside [0, n).
ROUTESCOPE_HD inline bool has_neighbour(std::int64_t t, std::int64_t offset, std::int64_t n) {
    const std::int64_t s = t + offset;
    return s >= 0 && s < n;
}

/// i runs over y [B, L, d]: y[b, t] = x[b, t + offset] where that lies in [0, len_b), else 0.
template <class T>
struct NeighbourShiftForward {
    T* y;
    const T* x;
    const std::int32_t* lengths;
    std::int64_t L, d, offset;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % d, r = i / d, t = r % L, b = r / L;
        y[i] = has_neighbour(t, offset, clamped_length(lengths, b, L)) ? x[(r + offset) * d + c]
                                                                       : T(0);
    }
};

/// i runs over dx [B, L, d]: row r receives dy's row r − offset (position t) when the forward
/// copied row r into it.
template <class T>
struct NeighbourShiftBackward {
    T* dx;
    const T* dy;
    const std::int32_t* lengths;
    std::int64_t L, d, offset;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t c = i % d, r = i / d, b = r / L, t = r % L - offset;
        if (t < 0 || t >= L || !has_neighbour(t, offset, clamped_length(lengths, b, L))) return;
        dx[i] += dy[(r - offset) * d + c];
    }
};

inline std::int64_t neighbour_offset(const ops::OpCall& c) {
    if (c.i[3] != -1 && c.i[3] != 1)
        throw Error("neighbour_shift: offset " + std::to_string(c.i[3]) +
                    " is neither −1 (left) nor +1 (right)");
    return c.i[3];
}

/// Arguments: B, L, d, offset (−1 or +1).
template <class T, class X>
void neighbour_shift_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[1] * c.i[2],
           NeighbourShiftForward<T>{c.value<T>(2), c.value<T>(0), c.value<std::int32_t>(1), c.i[1],
                                    c.i[2], neighbour_offset(c)});
}
template <class T, class X>
void neighbour_shift_backward(X& x, const ops::OpCall& c) {
    const std::int64_t offset = neighbour_offset(c);
    T* dx = c.gradient<T>(0);
    const T* dy = c.gradient<T>(2);
    if (!dx || !dy) return;
    x.each(c.i[0] * c.i[1] * c.i[2],
           NeighbourShiftBackward<T>{dx, dy, c.value<std::int32_t>(1), c.i[1], c.i[2], offset});
}

// ---------------------------------------------------------------- gate_softmax
/// K arrays of n elements each, by value in the body.
template <class T>
struct GateArrays {
    T* p[ops::kMaxPieces];
};

/// i = j runs over the n elements: y_k[j] = exp(x_k[j] − max) / Σ_m exp(x_m[j] − max).
template <class T>
struct GateSoftmaxForward {
    GateArrays<T> y;
    GateArrays<const T> x;
    int K;
    ROUTESCOPE_HD void operator()(std::int64_t j) const {
        T top = x.p[0][j];
        for (int k = 1; k < K; ++k)
            top = x.p[k][j] > top ? x.p[k][j] : top;
        T sum = 0;
        for (int k = 0; k < K; ++k) {
            y.p[k][j] = std::exp(x.p[k][j] - top);
            sum += y.p[k][j];
        }
        const T inv = T(1) / sum;
        for (int k = 0; k < K; ++k)
            y.p[k][j] *= inv;
    }
};

/// dx_k[j] += y_k (dy_k − Σ_m y_m dy_m), for the dx_k that are not null (a null dy_k is zero).
template <class T>
struct GateSoftmaxBackward {
    GateArrays<T> dx;
    GateArrays<const T> dy;
    GateArrays<const T> y;
    int K;
    ROUTESCOPE_HD void operator()(std::int64_t j) const {
        T dot = 0;
        for (int k = 0; k < K; ++k)
            if (dy.p[k]) dot += y.p[k][j] * dy.p[k][j];
        for (int k = 0; k < K; ++k)
            if (dx.p[k]) dx.p[k][j] += y.p[k][j] * ((dy.p[k] ? dy.p[k][j] : T(0)) - dot);
    }
};

inline int gate_count(const ops::OpCall& c) {
    if (c.i[0] < 1 || c.i[0] > ops::kMaxPieces)
        throw Error("gate_softmax: K = " + std::to_string(c.i[0]) + " is outside [1, 5]");
    return static_cast<int>(c.i[0]);
}

/// Arguments: K, n.
template <class T, class X>
void gate_softmax_forward(X& x, const ops::OpCall& c) {
    const int K = gate_count(c);
    GateSoftmaxForward<T> body{};
    body.K = K;
    for (int k = 0; k < K; ++k) {
        body.x.p[k] = c.value<T>(k);
        body.y.p[k] = c.value<T>(K + k);
    }
    x.each(c.i[1], body);
}
template <class T, class X>
void gate_softmax_backward(X& x, const ops::OpCall& c) {
    const int K = gate_count(c);
    GateSoftmaxBackward<T> body{};
    body.K = K;
    bool any = false;
    for (int k = 0; k < K; ++k) {
        body.dx.p[k] = c.gradient<T>(k);
        body.dy.p[k] = c.gradient<T>(K + k);
        body.y.p[k] = c.value<T>(K + k);
        any = any || body.dx.p[k];
    }
    if (any) x.each(c.i[1], body);
}

// ---------------------------------------------------------------- sequence_softmax
/// i runs over [B, d] (b, j): the softmax over x[b, t < len_b, j] and x_own[b, j]; w is 0 at pads.
template <class T>
struct SequenceSoftmaxForward {
    T* w;
    T* w_own;
    const T* x;
    const T* x_own;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, j = i % d, n = clamped_length(lengths, b, L);
        const T* xb = x + b * L * d + j;
        T* wb = w + b * L * d + j;
        const T xo = x_own[i];
        T top = xo;
        for (std::int64_t t = 0; t < n; ++t)
            top = xb[t * d] > top ? xb[t * d] : top;
        for (std::int64_t t = 0; t < n; ++t)
            wb[t * d] = std::exp(xb[t * d] - top);
        for (std::int64_t t = n; t < L; ++t)
            wb[t * d] = T(0);
        const T own = std::exp(xo - top);
        T z = own;
        for (std::int64_t t = 0; t < n; ++t)
            z += wb[t * d];
        const T inv = T(1) / z;
        for (std::int64_t t = 0; t < n; ++t)
            wb[t * d] *= inv;
        w_own[i] = own * inv;
    }
};

/// i runs over [B, d] (b, j): S = w_own dw_own + Σ_t w dw (tokens in order), then
/// dx += w (dw − S) at t < len_b and dx_own += w_own (dw_own − S); null dw / dw_own count as zero.
template <class T>
struct SequenceSoftmaxBackward {
    T* dx;
    T* dx_own;
    const T* dw;
    const T* dw_own;
    const T* w;
    const T* w_own;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, j = i % d, n = clamped_length(lengths, b, L);
        const std::int64_t base = b * L * d + j;
        const T go = dw_own ? dw_own[i] : T(0);
        T dot = w_own[i] * go;
        if (dw)
            for (std::int64_t t = 0; t < n; ++t)
                dot += w[base + t * d] * dw[base + t * d];
        if (dx)
            for (std::int64_t t = 0; t < n; ++t)
                dx[base + t * d] += w[base + t * d] * ((dw ? dw[base + t * d] : T(0)) - dot);
        if (dx_own) dx_own[i] += w_own[i] * (go - dot);
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void sequence_softmax_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[2],
           SequenceSoftmaxForward<T>{c.value<T>(3), c.value<T>(4), c.value<T>(0), c.value<T>(1),
                                     c.value<std::int32_t>(2), c.i[1], c.i[2]});
}
template <class T, class X>
void sequence_softmax_backward(X& x, const ops::OpCall& c) {
    if (!c.gradient<T>(0) && !c.gradient<T>(1)) return;
    x.each(c.i[0] * c.i[2],
           SequenceSoftmaxBackward<T>{c.gradient<T>(0), c.gradient<T>(1), c.gradient<T>(3),
                                      c.gradient<T>(4), c.value<T>(3), c.value<T>(4),
                                      c.value<std::int32_t>(2), c.i[1], c.i[2]});
}

// ---------------------------------------------------------------- weighted_sequence_sum
/// i runs over y [B, d]: y[b, j] = Σ_{t < len_b} w[b, t, j]·x[b, t, j], tokens in order.
template <class T>
struct WeightedSequenceSumForward {
    T* y;
    const T* w;
    const T* x;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, j = i % d, n = clamped_length(lengths, b, L);
        const std::int64_t base = b * L * d + j;
        T sum = 0;
        for (std::int64_t t = 0; t < n; ++t)
            sum += w[base + t * d] * x[base + t * d];
        y[i] = sum;
    }
};

/// i runs over [B, L, d]: dw += dy·x and dx += dy·w at t < len_b (either may be null).
template <class T>
struct WeightedSequenceSumBackward {
    T* dw;
    T* dx;
    const T* dy;
    const T* w;
    const T* x;
    const std::int32_t* lengths;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t j = i % d, r = i / d, t = r % L, b = r / L;
        if (t >= clamped_length(lengths, b, L)) return;
        const T g = dy[b * d + j];
        if (dw) dw[i] += g * x[i];
        if (dx) dx[i] += g * w[i];
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void weighted_sequence_sum_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[2],
           WeightedSequenceSumForward<T>{c.value<T>(3), c.value<T>(0), c.value<T>(1),
                                         c.value<std::int32_t>(2), c.i[1], c.i[2]});
}
template <class T, class X>
void weighted_sequence_sum_backward(X& x, const ops::OpCall& c) {
    const T* dy = c.gradient<T>(3);
    if ((!c.gradient<T>(0) && !c.gradient<T>(1)) || !dy) return;
    x.each(c.i[0] * c.i[1] * c.i[2],
           WeightedSequenceSumBackward<T>{c.gradient<T>(0), c.gradient<T>(1), dy, c.value<T>(0),
                                          c.value<T>(1), c.value<std::int32_t>(2), c.i[1], c.i[2]});
}

// ---------------------------------------------------------------- sequence_broadcast
/// i runs over y [B, L, d]: y[b, t, j] = x[b, j].
template <class T>
struct SequenceBroadcastForward {
    T* y;
    const T* x;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t j = i % d, b = i / d / L;
        y[i] = x[b * d + j];
    }
};

/// i runs over dx [B, d]: dx[b, j] += dy[b, t, j] for t = 0 … L − 1, added one by one in order
/// (the CPU's order, so the sum is the same).
template <class T>
struct SequenceBroadcastBackward {
    T* dx;
    const T* dy;
    std::int64_t L, d;
    ROUTESCOPE_HD void operator()(std::int64_t i) const {
        const std::int64_t b = i / d, j = i % d;
        T acc = dx[i];
        for (std::int64_t t = 0; t < L; ++t)
            acc += dy[(b * L + t) * d + j];
        dx[i] = acc;
    }
};

/// Arguments: B, L, d.
template <class T, class X>
void sequence_broadcast_forward(X& x, const ops::OpCall& c) {
    x.each(c.i[0] * c.i[1] * c.i[2],
           SequenceBroadcastForward<T>{c.value<T>(1), c.value<T>(0), c.i[1], c.i[2]});
}
template <class T, class X>
void sequence_broadcast_backward(X& x, const ops::OpCall& c) {
    T* dx = c.gradient<T>(0);
    const T* dy = c.gradient<T>(1);
    if (!dx || !dy) return;
    x.each(c.i[0] * c.i[2], SequenceBroadcastBackward<T>{dx, dy, c.i[1], c.i[2]});
}

}  // namespace routescope::cuda::kernels
