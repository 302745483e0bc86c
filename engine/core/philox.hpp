#pragma once
// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror & Shaw, "Parallel random
// numbers: as easy as 1, 2, 3" (SC 2011). A value is a pure function f(key, counter), so a dropout
// mask for (seed, step, stream, element) is the same whatever thread computes it and in whatever
// order (and on the host or a GPU: ROUTESCOPE_HD, core/hd.hpp). Round constants and multipliers are
// the paper's (Random123 philox.h).
#include <array>
#include <cstdint>

#include "engine/core/hd.hpp"

namespace routescope {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

ROUTESCOPE_HD inline PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
    constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;    // Philox4x32 multipliers
    constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // golden ratio, sqrt(3)-1
    for (int round = 0; round < 10; ++round) {
        const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * ctr[0];
        const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * ctr[2];
        const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
        const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
        ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
        key[0] += kWeyl0;
        key[1] += kWeyl1;
    }
    return ctr;
}

/// The uniform in [0, 1) carried by the top 24 bits of a 32-bit draw (exact in float).
ROUTESCOPE_HD inline float uniform_from_bits(std::uint32_t bits) {
    return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);  // 2^-24
}

/// The engine's one way of drawing: element `index` of stream `stream` at step `step` under
/// `seed`. Four consecutive indices share one Philox block, so filling a buffer costs one block
/// per four values.
ROUTESCOPE_HD inline std::uint32_t philox_bits(std::uint64_t seed, std::uint32_t step,
                                               std::uint32_t stream, std::uint64_t index) {
    const std::uint64_t block = index >> 2;
    const PhiloxCounter out = philox4x32_10(
        {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), stream, step},
        {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
    return out[index & 3u];
}

}  // namespace routescope
