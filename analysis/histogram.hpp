#pragma once
// Equal-width histograms with numpy.histogram's exact binning rule, so that counts from Routescope
// and from a numpy reference agree exactly on the same values.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace routescope::analysis {

/// Edges lo + i·(hi − lo)/bins for i = 0..bins, the last set to hi (numpy.linspace).
std::vector<double> histogram_edges(int bins, double lo, double hi);

/// numpy.histogram's bin of one value: the rule of histogram_counts, for callers that bin values
/// as they produce them instead of collecting them first.
class HistogramBinner {
public:
    HistogramBinner(int bins, double lo, double hi);
    /// The bin of x, or −1 when x lies outside [lo, hi] (NaN included).
    int bin(double x) const {
        if (!(x >= lo_ && x <= hi_)) return -1;
        int b = std::min(static_cast<int>((x - lo_) * scale_), bins_ - 1);
        // numpy corrects the multiply's rounding against the edges themselves.
        if (x < edges_[static_cast<std::size_t>(b)])
            --b;
        else if (b != bins_ - 1 && x >= edges_[static_cast<std::size_t>(b) + 1])
            ++b;
        return b;
    }
    int bins() const { return bins_; }

private:
    std::vector<double> edges_;
    double lo_, hi_, scale_;
    int bins_;
};

/// numpy.histogram(values, bins, range=(lo, hi)): bins half-open [e_i, e_i+1) except the last,
/// which is closed; values outside [lo, hi] are not counted.
template <typename T>
std::vector<std::int64_t> histogram_counts(const std::vector<T>& values, int bins, double lo,
                                           double hi);

}  // namespace routescope::analysis
