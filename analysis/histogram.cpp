#include "analysis/histogram.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

std::vector<double> histogram_edges(int bins, double lo, double hi) {
    if (bins < 1) throw ConfigError("bins must be at least 1 (got " + std::to_string(bins) + ")");
    if (!(hi > lo) || !std::isfinite(hi - lo))
        throw ConfigError("the histogram's range [" + number_text(lo) + ", " + number_text(hi) +
                          "] is not an interval of finite numbers with hi > lo");
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

HistogramBinner::HistogramBinner(int bins, double lo, double hi)
    : edges_(histogram_edges(bins, lo, hi)),
      lo_(lo),
      hi_(hi),
      scale_(bins / (hi - lo)),
      bins_(bins) {}

template <typename T>
std::vector<std::int64_t> histogram_counts(const std::vector<T>& values, int bins, double lo,
                                           double hi) {
    const HistogramBinner binner(bins, lo, hi);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(bins), 0);
    for (T v : values) {
        const int b = binner.bin(static_cast<double>(v));
        if (b >= 0) ++counts[static_cast<std::size_t>(b)];
    }
    return counts;
}

template std::vector<std::int64_t> histogram_counts(const std::vector<float>&, int, double, double);
template std::vector<std::int64_t> histogram_counts(const std::vector<double>&, int, double,
                                                    double);

}  // namespace routescope::analysis
