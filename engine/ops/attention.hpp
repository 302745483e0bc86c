#pragma once
// Multi-head scaled dot-product self-attention with a key padding mask (Vaswani et al. 2017):
// q, k, v [B, L, d] already projected; head h owns columns [h·dh, (h+1)·dh), dh = d / n_heads.
// For each (b, h):  P = softmax(Q_h K_hᵀ / √dh + mask),  out_h = P V_h,  where keys at positions
// ≥ lengths[b] are masked out (probability exactly 0). With causal, query i also masks every key
// j > i (probability exactly 0): position i attends to the keys j ≤ i, j < lengths[b]. Query rows
// at pad positions are computed like any other (they attend to the valid keys, j ≤ i when causal);
// a sequence of length 0 gives zero output. Attention-probability dropout is not implemented yet
// (MODELS.md's `dropout` on probabilities): callers that need it must add it; see
// docs/decisions.md.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// probs [B, n_heads, L, L] is written (cached for the backward; masked entries are 0).
/// lengths [B] or null (no padding); causal masks the keys after each query. Throws
/// routescope::Error when d % n_heads ≠ 0 or a length is outside [0, L].
template <class T>
void attention_forward(T* out, T* probs, const T* q, const T* k, const T* v,
                       const std::int32_t* lengths, int B, int L, int d, int n_heads, bool causal,
                       ThreadPool& pool = ThreadPool::serial());

/// Elements of scratch the backward needs: one L×L block per pool thread.
std::int64_t attention_backward_scratch_size(int L, const ThreadPool& pool);

/// Accumulates into dq, dk, dv; lengths and causal as the forward had them (the masked entries of
/// probs are 0, so their scores get no gradient).
template <class T>
void attention_backward(T* dq, T* dk, T* dv, T* scratch, const T* dout, const T* probs, const T* q,
                        const T* k, const T* v, const std::int32_t* lengths, int B, int L, int d,
                        int n_heads, bool causal, ThreadPool& pool = ThreadPool::serial());

/// 2·B·L²·d for QKᵀ, 2·B·L²·d for PV, ~5 per score for the softmax (causal or not: the kernels
/// compute every score and zero the masked ones).
OpCost attention_cost(int B, int L, int d, int n_heads, int bytes_per_element = 4);

}  // namespace routescope::ops
