#include "views/axis_ticks.hpp"

#include <algorithm>
#include <cmath>

namespace routescope::views {

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
    std::vector<double> out;
    if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || max_ticks < 1) {
        if (std::isfinite(lo)) out.push_back(lo);
        return out;
    }
    const double raw = (hi - lo) / max_ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    // A range narrower than the values' own precision (1 ± 2e-16) has a step below one ulp:
    // adding it would never move v. Such a range gets its one value, and the ticks are counted
    // by index, never more than max_ticks + 1.
    const double scale = std::max(std::abs(lo), std::abs(hi));
    if (step <= scale * 1e-12) {
        out.push_back(lo);
        return out;
    }
    const double first = std::ceil(lo / step - 1e-9) * step;
    for (int i = 0; i <= max_ticks + 1; ++i) {
        const double v = first + i * step;
        if (v > hi + step * 1e-9) break;
        out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    }
    return out;
}

QString tick_text(double value, double step) {
    if (step <= 0 || !std::isfinite(step)) return QString::number(value, 'g', 3);
    // Tiny or huge steps: every label in scientific notation, 0 as "0" (with 'f' and the step's
    // decimals a colour bar of 1e-30 printed 0 as thirty zeros, off the page).
    if (std::abs(value) >= 1e5 || (std::abs(value) > 0 && std::abs(value) < 1e-3) || step < 1e-4)
        return QString::number(value, 'g', 3);
    const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    return QString::number(value, 'f', decimals);
}

}  // namespace routescope::views
