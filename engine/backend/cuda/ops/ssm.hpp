#pragma once
// CUDA backend ops: s4d_kernel, fft_conv and linear_scan (exec.hpp says how an op is written).
// NOT YET WRITTEN: each function below throws; ssm_implements() says which ops are done.
#include "engine/backend/cuda/exec.hpp"
#include "engine/backend/cuda/ops/not_implemented.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

/// The ops of this file that have a CUDA implementation.
constexpr bool ssm_implements(ops::OpId) {
    return false;
}

template <class T, class X>
void s4d_kernel_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void s4d_kernel_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void fft_conv_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void fft_conv_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

template <class T, class X>
void linear_scan_forward(X&, const ops::OpCall& c) {
    not_implemented(c);
}
template <class T, class X>
void linear_scan_backward(X&, const ops::OpCall& c) {
    not_implemented(c);
}

}  // namespace routescope::cuda::kernels
