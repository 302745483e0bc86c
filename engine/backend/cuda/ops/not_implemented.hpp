#pragma once
#include <string>

#include "engine/core/error.hpp"
#include "engine/ops/op.hpp"

namespace routescope::cuda::kernels {

[[noreturn]] inline void not_implemented(const ops::OpCall& c) {
    throw Error(std::string("the CUDA backend has no kernel for op ") + ops::op_def(c.op).name);
}

}  // namespace routescope::cuda::kernels
