#pragma once
// Means over seeds with intervals (issue 27): an experiment run with --seeds N reports, per model
// and metric, the mean over the seeds, the sample standard deviation, a 95% Student t interval of
// the mean (mean ± t_{0.975, n−1} · sd / √n) and the share of seeds at or above the protocol's
// threshold. The t quantile is Boost.Math's.
#include <optional>
#include <vector>

namespace routescope::analysis {

struct SeedSummary {
    int n = 0;
    double mean = 0;
    std::optional<double> sd;                 ///< n ≥ 2
    std::optional<double> ci_low, ci_high;    ///< n ≥ 2
    std::optional<double> share_at_or_above;  ///< when a threshold is given
};

/// `values`: one per seed (NaN entries are left out). `level`: the interval's coverage.
SeedSummary summarise_seeds(const std::vector<double>& values,
                            std::optional<double> threshold = std::nullopt, double level = 0.95);

/// t_{p, df}: the p quantile of Student's t with df degrees of freedom (df ≥ 1).
double student_t_quantile(double p, double df);

}  // namespace routescope::analysis
