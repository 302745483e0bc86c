#pragma once
// CUDA backend ops: embedding and cross_entropy (exec.hpp says how an op is written).
// NOT YET WRITTEN: each function below throws; tokens_implements() says which ops are done.
#include "engine/backend/cuda/exec.hpp"
#include "engine/backend/cuda/ops/not_implemented.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool tokens_implements(ops::OpId) {
    return false;
}

template <class T, class X>
void embedding_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void embedding_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void cross_entropy_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void cross_entropy_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

}  // namespace routescope::cuda::kernels
