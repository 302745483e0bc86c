// Deshuffling (TASKS.md): a fraction of the positions exchange their tokens; the target is the
// original order.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void deshuffling(std::span<const std::int32_t> original, double fraction, RandomStream& rng,
                 ObjectiveSample& s) {
    const auto n = static_cast<std::int32_t>(original.size());
    const auto m = std::clamp<std::int32_t>(
        static_cast<std::int32_t>(std::lround(std::clamp(fraction, 0.0, 1.0) * n)), 0, n);
    // The first m entries of a partial Fisher–Yates shuffle: m positions chosen uniformly.
    thread_local std::vector<std::int32_t> positions, moved;  // reused across calls
    positions.reserve(static_cast<std::size_t>(n));
    moved.reserve(static_cast<std::size_t>(n));
    positions.resize(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0);
    for (std::int32_t i = 0; i < m; ++i)
        std::swap(positions[static_cast<std::size_t>(i)],
                  positions[static_cast<std::size_t>(rng.between(i, n - 1))]);
    positions.resize(static_cast<std::size_t>(m));
    moved.assign(positions.begin(), positions.end());
    rng.shuffle(moved);
    s.input.assign(original.begin(), original.end());
    for (std::size_t j = 0; j < positions.size(); ++j)
        s.input[static_cast<std::size_t>(positions[j])] =
            original[static_cast<std::size_t>(moved[j])];
    s.target.assign(original.begin(), original.end());
}

}  // namespace routescope::data
