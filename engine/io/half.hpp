#pragma once
// IEEE 754 binary16 ↔ binary32, for the float16 datasets of a dump and the float16 tensors of an
// imported checkpoint. HDF5 1.10's own float ↔ half conversion is a bit-by-bit soft path (~200 ns
// a value: a third of a float16 dump's time went to it, and most of PCA's on a float16 dump) and
// rounds wrongly where a carry crosses a power of two; so the writers and readers convert here and
// HDF5 only copies.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/core/half_bits.hpp"  // half_bits: one value, host and device

namespace routescope {

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
