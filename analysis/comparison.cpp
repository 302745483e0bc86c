#include "analysis/comparison.hpp"

namespace routescope::analysis {

std::optional<std::vector<double>> difference(const Grid& a, const Grid& b) {
    if (!a.values || !b.values || a.rows != b.rows || a.columns != b.columns || a.rows < 0 ||
        a.columns < 0)
        return std::nullopt;
    const auto n = static_cast<std::size_t>(a.rows * a.columns);
    if (a.values->size() != n || b.values->size() != n) return std::nullopt;
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = (*a.values)[i] - (*b.values)[i];
    return out;
}

}  // namespace routescope::analysis
