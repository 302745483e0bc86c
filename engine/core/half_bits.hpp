#pragma once
// float32 → IEEE 754 binary16 bits, one value, on the host and (compiled by nvcc) on a CUDA device:
// the conversion a float16 dump stores, made where the activations are (Backend::to_half), so a
// GPU moves half the bytes to the host and the host converts nothing. engine/io/half.hpp adds the
// bulk host conversions (F16C) and the way back.
#include <cstdint>
#include <cstring>

#include "engine/core/hd.hpp"

namespace routescope {

/// The 32 bits of x.
ROUTESCOPE_HD inline std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
}

/// The binary16 bits nearest to x, ties to even (numpy's astype(float16), CUDA's
/// __float2half_rn): |x| ≥ 65520 gives ±inf, a NaN stays a quiet NaN of the same sign, values
/// below 2^-14 become subnormals (steps of 2^-24) or a signed zero.
ROUTESCOPE_HD inline std::uint16_t half_bits(float x) {
    std::uint32_t u = float_bits(x);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    u &= 0x7FFFFFFFu;
    if (u >= 0x7F800000u)  // inf, or NaN (quiet bit set, the top payload bits kept)
        return static_cast<std::uint16_t>(
            sign | (u == 0x7F800000u ? 0x7C00u : 0x7E00u | ((u >> 13) & 0x3FFu)));
    if (u >= 0x477FF000u)  // 65520 = 65504 + half an ulp: rounds to inf
        return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (u >= 0x38800000u) {               // 2^-14 and up: a normal half
        u += 0x0FFFu + ((u >> 13) & 1u);  // round the 13 dropped bits, ties to even
        return static_cast<std::uint16_t>(sign | ((u - 0x38000000u) >> 13));  // rebias 127 → 15
    }
    // Below 2^-14: x / 2^-24 rounded to an integer n ≤ 1024 (1024 is 2^-14's own bits).
    const std::uint32_t e = u >> 23;
    if (e < 102) return sign;  // below 2^-25: rounds to zero
    const std::uint32_t m = (u & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // x = m · 2^(e − 150), so x / 2^-24 = m / 2^shift
    std::uint32_t n = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (n & 1u))) ++n;
    return static_cast<std::uint16_t>(sign | n);
}

}  // namespace routescope
