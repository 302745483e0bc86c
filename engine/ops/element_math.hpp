#pragma once
// Element math that every backend computes the same way, written once: plain inline functions
// that nvcc compiles for the device too (ROUTESCOPE_HD is __host__ __device__ under CUDA). The CPU
// backend's kernels are vectorised Eigen array expressions of these same formulas (gelu.cpp,
// sigmoid.cpp); test_op_conformance checks them against these scalar definitions, and the CPU
// AdamW runs adamw_element itself.
#include <cmath>

#include "engine/core/hd.hpp"

namespace routescope::ops::element {

inline constexpr double kSqrt2OverPi = 0.7978845608028654;  // √(2/π)
inline constexpr double kGeluCubic = 0.044715;              // Hendrycks & Gimpel's tanh fit
inline constexpr double kInvSqrt2 = 0.7071067811865476;     // 1/√2
inline constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1/√(2π)

/// ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
template <class T>
ROUTESCOPE_HD inline T gelu_tanh(T x) {
    return T(0.5) * x * (T(1) + std::tanh(T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x)));
}
/// d/dx of gelu_tanh: ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²), t = tanh(u)
template <class T>
ROUTESCOPE_HD inline T gelu_tanh_grad(T x) {
    const T t = std::tanh(T(kSqrt2OverPi) * (x + T(kGeluCubic) * x * x * x));
    return T(0.5) * (T(1) + t) +
           T(0.5) * x * (T(1) - t * t) * T(kSqrt2OverPi) * (T(1) + T(3 * kGeluCubic) * x * x);
}
/// xΦ(x) = ½x(1 + erf(x/√2))
template <class T>
ROUTESCOPE_HD inline T gelu_erf(T x) {
    return T(0.5) * x * (T(1) + std::erf(x * T(kInvSqrt2)));
}
/// Φ(x) + xφ(x)
template <class T>
ROUTESCOPE_HD inline T gelu_erf_grad(T x) {
    return T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2))) +
           x * T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x);
}
template <class T>
ROUTESCOPE_HD inline T sigmoid(T x) {
    return T(1) / (T(1) + std::exp(-x));
}

/// AdamW's per-element coefficients, computed once per span in double (torch's Python floats).
struct AdamWCoefficients {
    float decay;        ///< 1 − lr·wd
    float step_size;    ///< lr / (1 − β1^k)
    float denom_scale;  ///< √(1 − β2^k)
    float beta1, beta2, one_minus_beta1, one_minus_beta2, eps;
    bool decays;
};

/// One element of torch.optim.AdamW (foreach off) for float32 tensors.
ROUTESCOPE_HD inline void adamw_element(float& p, float g, float& m, float& v,
                                        const AdamWCoefficients& c) {
    if (c.decays) p *= c.decay;
    m = m * c.beta1 + c.one_minus_beta1 * g;
    v = v * c.beta2 + c.one_minus_beta2 * g * g;
    const float denom = std::sqrt(v) / c.denom_scale + c.eps;
    p -= c.step_size * (m / denom);
}

}  // namespace routescope::ops::element
