#pragma once
// What an op costs, for the per-op profile and roofline figures. Every op's `<op>_cost(shape...)`
// returns the cost of its FORWARD pass; a backward costs about 2x the forward for the GEMM-like
// ops (two products instead of one) and about the same order for the elementwise ones.
namespace routescope::ops {

struct OpCost {
    double flops = 0;  ///< floating-point operations (a fused multiply-add counts as 2)
    double bytes = 0;  ///< bytes read plus bytes written, each tensor counted once
};

}  // namespace routescope::ops
