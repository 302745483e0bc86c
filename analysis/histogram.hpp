#pragma once
// Equal-width histograms with numpy.histogram's exact binning rule, so that counts from Routescope
// and from a numpy reference agree exactly on the same values.
#include <cstdint>
#include <vector>

namespace routescope::analysis {

/// Edges lo + i·(hi − lo)/bins for i = 0..bins, the last set to hi (numpy.linspace).
std::vector<double> histogram_edges(int bins, double lo, double hi);

/// numpy.histogram(values, bins, range=(lo, hi)): bins half-open [e_i, e_i+1) except the last,
/// which is closed; values outside [lo, hi] are not counted.
template <typename T>
std::vector<std::int64_t> histogram_counts(const std::vector<T>& values, int bins, double lo,
                                           double hi);

}  // namespace routescope::analysis
