#pragma once
// Elementwise add and multiply of two equal-shaped tensors (residual sums, gates ⊙).
#include <cstdint>
#include <type_traits>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_cost.hpp"

namespace routescope::ops {

/// out = a + b (out may alias a or b)
template <class T>
void add_forward(T* out, const T* a, const T* b, std::int64_t n,
                 ThreadPool& pool = ThreadPool::serial());
/// da += dout, db += dout; either may be null.
template <class T>
void add_backward(std::type_identity_t<T>* da, std::type_identity_t<T>* db, const T* dout,
                  std::int64_t n, ThreadPool& pool = ThreadPool::serial());

/// out = a ⊙ b (out may alias a or b only if the backward does not need the overwritten input)
template <class T>
void mul_forward(T* out, const T* a, const T* b, std::int64_t n,
                 ThreadPool& pool = ThreadPool::serial());
/// da += dout ⊙ b, db += dout ⊙ a; either may be null; da == db (x ⊙ x) is allowed.
template <class T>
void mul_backward(std::type_identity_t<T>* da, std::type_identity_t<T>* db, const T* dout,
                  const T* a, const T* b, std::int64_t n, ThreadPool& pool = ThreadPool::serial());

OpCost add_cost(std::int64_t n, int bytes_per_element = 4);
OpCost mul_cost(std::int64_t n, int bytes_per_element = 4);

}  // namespace routescope::ops
