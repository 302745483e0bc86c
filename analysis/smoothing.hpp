#pragma once
// Smoothing of training curves as TensorBoard does it (its scalar dashboard's "Smoothing"): an
// exponential moving average with the start-up bias removed, so the first points are not pulled
// towards 0. With weight w, after values x_0..x_t:
//   s_t = Σ_{i≤t} w^{t−i} (1 − w) x_i / (1 − w^{t+1})
// Non-finite values are passed through and left out of the average.
#include <vector>

namespace routescope::analysis {

/// The debiased exponential moving average of `values` with weight `weight` in [0, 1): 0 returns
/// the values unchanged. Throws std::invalid_argument for a weight outside [0, 1).
std::vector<double> debiased_ema(const std::vector<double>& values, double weight);

}  // namespace routescope::analysis
