#pragma once
// IEEE 754 binary16 ↔ binary32, for the float16 datasets of a dump and the float16 tensors of an
// imported checkpoint. HDF5 1.10's own float ↔ half conversion is a bit-by-bit soft path (~200 ns
// a value: a third of a float16 dump's time went to it, and most of PCA's on a float16 dump) and
// rounds wrongly where a carry crosses a power of two; so the writers and readers convert here and
// HDF5 only copies.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace routescope {

/// The binary16 bits nearest to x, ties to even (numpy's astype(float16), CUDA's
/// __float2half_rn): |x| ≥ 65520 gives ±inf, a NaN stays a quiet NaN of the same sign, values
/// below 2^-14 become subnormals (steps of 2^-24) or a signed zero.
inline std::uint16_t half_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    u &= 0x7FFFFFFFu;
    if (u >= 0x7F800000u)  // inf, or NaN (quiet bit set, the top payload bits kept)
        return sign | (u == 0x7F800000u ? 0x7C00u : 0x7E00u | ((u >> 13) & 0x3FFu));
    if (u >= 0x477FF000u) return sign | 0x7C00u;  // 65520 = 65504 + half an ulp: rounds to inf
    if (u >= 0x38800000u) {                       // 2^-14 and up: a normal half
        u += 0x0FFFu + ((u >> 13) & 1u);          // round the 13 dropped bits, ties to even
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

/// half_bits of n values (the CPU's F16C conversion where it has one: the same bits, 8 at a time).
void to_half(const float* x, std::size_t n, std::uint16_t* out);

/// The float of binary16 bits h: exact (every half is a float), subnormals, infinities and NaN
/// (payload kept) included.
inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu, bits;
    if (exponent == 0x1F) {
        bits = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN
    } else if (exponent != 0) {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 → 127
    } else if (mantissa == 0) {
        bits = sign;  // ±0
    } else {          // subnormal: m · 2^-24, normalised
        exponent = 113;
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

/// half_to_float of n little-endian binary16 values at `halves`, which need not be aligned (a
/// tensor's bytes inside a mapped file); F16C where the CPU has it.
void from_half(const void* halves, std::size_t n, float* out);

}  // namespace routescope
