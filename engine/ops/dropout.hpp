#pragma once
// Inverted dropout (Srivastava et al. 2014): out = x · m / (1 − p), m_i = [u_i ≥ p], with
// u_i = uniform(philox(seed, step, stream, offset + i)) — a pure function of (seed, step, stream,
// element), so the mask is the same whatever the thread count (and whatever the number of
// data-parallel ranks: `offset` is the global index of the tensor's element 0, so rank r's rows
// draw the bits a single process would draw for the same rows of the global batch), and the
// backward recomputes it instead of storing it. `stream` tells the dropout sites of one step apart
// (e.g. 0 = embeddings, 1 + layer = attention probabilities of that layer).
#include <cstdint>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

struct DropoutSite {
    float p = 0;               ///< drop probability in [0, 1)
    std::uint64_t seed = 0;    ///< the run's seed
    std::uint32_t step = 0;    ///< optimizer step (micro-batch index under accumulation)
    std::uint32_t stream = 0;  ///< which dropout in the model
    std::uint64_t offset = 0;  ///< global element index of element 0 (data-parallel ranks)
};

/// Throws routescope::Error when p is outside [0, 1). p = 0 copies.
template <class T>
void dropout_forward(T* out, const T* x, std::int64_t n, const DropoutSite& site,
                     ThreadPool& pool = ThreadPool::serial());
/// dx += dout · m / (1 − p), with the same mask as the forward for the same site.
template <class T>
void dropout_backward(T* dx, const T* dout, std::int64_t n, const DropoutSite& site,
                      ThreadPool& pool = ThreadPool::serial());

/// The mask the forward applies to element i (offset + i globally; true = kept).
bool dropout_keeps(const DropoutSite& site, std::int64_t i);

OpCost dropout_cost(std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
