#pragma once
// CUDA backend ops: attention and spatial_mix (exec.hpp says how an op is written).
// NOT YET WRITTEN: each function below throws; attention_implements() says which ops are done.
#include "engine/backend/cuda/exec.hpp"
#include "engine/backend/cuda/ops/not_implemented.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool attention_implements(ops::OpId) {
    return false;
}

template <class T, class X>
void attention_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void attention_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void spatial_mix_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void spatial_mix_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

}  // namespace routescope::cuda::kernels
