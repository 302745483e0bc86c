#pragma once
// The CUDA backend's op table: every OpId to its forward and backward (engine/backend/cuda/ops/),
// for any executor (exec.hpp). CudaBackend runs it with CudaExec on the GPU and PlanExec in
// prepare(); the host test suite runs it with HostExec against the CPU backend.
#include "engine/backend/cuda/ops/attention.hpp"
#include "engine/backend/cuda/ops/dense.hpp"
#include "engine/backend/cuda/ops/elementwise.hpp"
#include "engine/backend/cuda/ops/layernorm.hpp"
#include "engine/backend/cuda/ops/layout.hpp"
#include "engine/backend/cuda/ops/not_implemented.hpp"
#include "engine/backend/cuda/ops/sequence.hpp"
#include "engine/backend/cuda/ops/ssm.hpp"
#include "engine/backend/cuda/ops/tokens.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda {

/// Whether the op has CUDA kernels (forward and backward).
constexpr bool implements(ops::OpId op) {
    using ops::OpId;
    switch (op) {
        case OpId::dense:
        case OpId::layernorm:
        case OpId::gelu_tanh:
        case OpId::gelu_erf:
        case OpId::tanh:
        case OpId::sigmoid:
        case OpId::add:
        case OpId::mul:
        case OpId::dropout:
        case OpId::flip:
        case OpId::column_slice:
        case OpId::column_concat:
            return true;
        default:
            return kernels::ssm_implements(op) || kernels::attention_implements(op) ||
                   kernels::sequence_implements(op) || kernels::tokens_implements(op);
    }
}

/// Runs the op's forward (backward = false) or backward with executor x in float type T.
template <class T, class X>
void run_op(X& x, const ops::OpCall& c, bool backward) {
    using ops::OpId;
    namespace k = kernels;
    using U = k::Unary;
#define ROUTESCOPE_CUDA_OP(id, fn) \
    case OpId::id:                 \
        return backward ? k::fn##_backward<T>(x, c) : k::fn##_forward<T>(x, c);
    switch (c.op) {
        case OpId::gelu_tanh:
            return backward ? k::unary_backward<T, U::gelu_tanh>(x, c)
                            : k::unary_forward<T, U::gelu_tanh>(x, c);
        case OpId::gelu_erf:
            return backward ? k::unary_backward<T, U::gelu_erf>(x, c)
                            : k::unary_forward<T, U::gelu_erf>(x, c);
        case OpId::tanh:
            return backward ? k::unary_backward<T, U::tanh>(x, c)
                            : k::unary_forward<T, U::tanh>(x, c);
        case OpId::sigmoid:
            return backward ? k::unary_backward<T, U::sigmoid>(x, c)
                            : k::unary_forward<T, U::sigmoid>(x, c);
            ROUTESCOPE_CUDA_OP(dense, dense)
            ROUTESCOPE_CUDA_OP(embedding, embedding)
            ROUTESCOPE_CUDA_OP(layernorm, layernorm)
            ROUTESCOPE_CUDA_OP(add, add)
            ROUTESCOPE_CUDA_OP(mul, mul)
            ROUTESCOPE_CUDA_OP(flip, flip)
            ROUTESCOPE_CUDA_OP(dropout, dropout)
            ROUTESCOPE_CUDA_OP(s4d_kernel, s4d_kernel)
            ROUTESCOPE_CUDA_OP(fft_conv, fft_conv)
            ROUTESCOPE_CUDA_OP(attention, attention)
            ROUTESCOPE_CUDA_OP(spatial_mix, spatial_mix)
            ROUTESCOPE_CUDA_OP(column_slice, column_slice)
            ROUTESCOPE_CUDA_OP(column_concat, column_concat)
            ROUTESCOPE_CUDA_OP(mean_pool, mean_pool)
            ROUTESCOPE_CUDA_OP(first_token, first_token)
            ROUTESCOPE_CUDA_OP(neighbour_shift, neighbour_shift)
            ROUTESCOPE_CUDA_OP(gate_softmax, gate_softmax)
            ROUTESCOPE_CUDA_OP(sequence_softmax, sequence_softmax)
            ROUTESCOPE_CUDA_OP(weighted_sequence_sum, weighted_sequence_sum)
            ROUTESCOPE_CUDA_OP(sequence_broadcast, sequence_broadcast)
            ROUTESCOPE_CUDA_OP(linear_scan, linear_scan)
            ROUTESCOPE_CUDA_OP(cross_entropy, cross_entropy)
        case OpId::count:
            break;
    }
#undef ROUTESCOPE_CUDA_OP
    kernels::not_implemented(c);
}

}  // namespace routescope::cuda
