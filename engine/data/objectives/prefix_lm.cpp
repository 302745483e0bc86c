// Prefix LM (TASKS.md: "the input split at a random point (default 75% prefix)"). The split
// fraction is uniform on an interval whose mean is train.prefix_fraction and which is as wide as
// [0, 1] allows (docs/decisions.md, "Prefix LM: the split point").
#include <algorithm>
#include <cmath>

#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

std::int32_t prefix_split(std::int32_t n, double fraction, RandomStream& rng) {
    if (n < 2) return n;
    const double lo = std::max(0.0, 2 * fraction - 1), hi = std::min(1.0, 2 * fraction);
    const double phi = lo + (hi - lo) * rng.uniform();
    return std::clamp<std::int32_t>(static_cast<std::int32_t>(std::lround(phi * n)), 1, n - 1);
}

void prefix_lm(std::span<const std::int32_t> original, double fraction, RandomStream& rng,
               ObjectiveSample& s) {
    const auto n = static_cast<std::int32_t>(original.size());
    const std::int32_t p = prefix_split(n, fraction, rng);
    s.input.assign(original.begin(), original.begin() + p);
    s.target.assign(original.begin() + p, original.end());
}

}  // namespace routescope::data
