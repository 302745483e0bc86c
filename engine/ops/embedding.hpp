#pragma once
// Embedding lookup: out[i] = table[ids[i]] for n tokens, table [vocab, d]. Used for word,
// position and type embeddings (position ids are 0..L−1). The backward scatter-adds, so a token
// that appears twice — or a table tied to the MLM decoder — accumulates all its gradients.
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// Throws routescope::Error naming the position when an id is outside [0, vocab).
template <class T>
void embedding_forward(T* out, const std::int32_t* ids, const T* table, std::int64_t n, int vocab,
                       int d, ThreadPool& pool = ThreadPool::serial());

/// dtable[ids[i]] += dout[i]. Workers own slices of the d columns and walk the tokens in order,
/// so repeated ids sum in a fixed order (deterministic for a given thread count).
template <class T>
void embedding_backward(T* dtable, const T* dout, const std::int32_t* ids, std::int64_t n,
                        int vocab, int d, ThreadPool& pool = ThreadPool::serial());

OpCost embedding_cost(std::int64_t n, int d, int bytes_per_element = 4);

}  // namespace routescope::ops
