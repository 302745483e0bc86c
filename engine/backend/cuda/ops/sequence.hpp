#pragma once
// CUDA backend ops: the sequence ops (mean_pool, first_token, neighbour_shift, gate_softmax,
// sequence_softmax, weighted_sequence_sum, sequence_broadcast) (exec.hpp says how an op is
// written). NOT YET WRITTEN: each function below throws; sequence_implements() says which ops are
// done.
#include "engine/backend/cuda/exec.hpp"
#include "engine/backend/cuda/ops/not_implemented.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool sequence_implements(ops::OpId) {
    return false;
}

template <class T, class X>
void mean_pool_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void mean_pool_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void first_token_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void first_token_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void neighbour_shift_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void neighbour_shift_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void gate_softmax_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void gate_softmax_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void sequence_softmax_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void sequence_softmax_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void weighted_sequence_sum_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void weighted_sequence_sum_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void sequence_broadcast_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void sequence_broadcast_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

}  // namespace routescope::cuda::kernels
