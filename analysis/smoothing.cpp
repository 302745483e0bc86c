#include "analysis/smoothing.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace routescope::analysis {

std::vector<double> debiased_ema(const std::vector<double>& values, double weight) {
    if (!(weight >= 0 && weight < 1))
        throw std::invalid_argument("smoothing weight must be in [0, 1), got " +
                                    std::to_string(weight));
    std::vector<double> out(values.size());
    double last = 0, kept = 0;  // kept = 1 − w^(number of finite values so far)
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double x = values[i];
        if (!std::isfinite(x)) {
            out[i] = x;
            continue;
        }
        last = last * weight + (1 - weight) * x;
        kept = kept * weight + (1 - weight);
        out[i] = last / kept;
    }
    return out;
}

}  // namespace routescope::analysis
