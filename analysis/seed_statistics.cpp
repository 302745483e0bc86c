#include "analysis/seed_statistics.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>

#include "engine/core/error.hpp"

namespace routescope::analysis {

double student_t_quantile(double p, double df) {
    if (!(df >= 1) || !(p > 0 && p < 1))
        throw ConfigError("student_t_quantile: needs df ≥ 1 and 0 < p < 1");
    return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

SeedSummary summarise_seeds(const std::vector<double>& values, std::optional<double> threshold,
                            double level) {
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x)) v.push_back(x);
    SeedSummary s;
    s.n = static_cast<int>(v.size());
    if (v.empty()) return s;
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / s.n;
    if (threshold) {
        int above = 0;
        for (double x : v)
            above += x >= *threshold ? 1 : 0;
        s.share_at_or_above = static_cast<double>(above) / s.n;
    }
    if (s.n >= 2) {
        double ss = 0;
        for (double x : v)
            ss += (x - s.mean) * (x - s.mean);
        s.sd = std::sqrt(ss / (s.n - 1));
        const double half =
            student_t_quantile(0.5 + level / 2, s.n - 1) * *s.sd / std::sqrt(double(s.n));
        s.ci_low = s.mean - half;
        s.ci_high = s.mean + half;
    }
    return s;
}

}  // namespace routescope::analysis
