#include "analysis/histogram.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace routescope::analysis {

std::vector<double> histogram_edges(int bins, double lo, double hi) {
    if (bins < 1) throw ConfigError("bins must be at least 1 (got " + std::to_string(bins) + ")");
    if (!(hi > lo)) throw ConfigError("histogram range must have hi > lo");
    std::vector<double> edges(static_cast<std::size_t>(bins) + 1);
    const double step = (hi - lo) / bins;
    for (int i = 0; i <= bins; ++i) {
        // numpy rounds i·step before adding lo; a fused multiply-add (-march=native) would not, and
        // −1 + 50·0.02 would become 2e−17 instead of 0, moving cos = 0 into the bin below.
        volatile double offset = i * step;
        edges[static_cast<std::size_t>(i)] = lo + offset;
    }
    edges.back() = hi;
    return edges;
}

template <typename T>
std::vector<std::int64_t> histogram_counts(const std::vector<T>& values, int bins, double lo,
                                           double hi) {
    const std::vector<double> edges = histogram_edges(bins, lo, hi);
    const double scale = bins / (hi - lo);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(bins), 0);
    for (T v : values) {
        const double x = static_cast<double>(v);
        if (!(x >= lo && x <= hi)) continue;
        int b = std::min(static_cast<int>((x - lo) * scale), bins - 1);
        // numpy corrects the multiply's rounding against the edges themselves.
        if (x < edges[static_cast<std::size_t>(b)])
            --b;
        else if (b != bins - 1 && x >= edges[static_cast<std::size_t>(b) + 1])
            ++b;
        ++counts[static_cast<std::size_t>(b)];
    }
    return counts;
}

template std::vector<std::int64_t> histogram_counts(const std::vector<float>&, int, double, double);
template std::vector<std::int64_t> histogram_counts(const std::vector<double>&, int, double,
                                                    double);

}  // namespace routescope::analysis
