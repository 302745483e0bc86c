#pragma once
// "Nice" tick values for a numeric axis (steps of 1, 2 or 5 × 10^k), shared by the painted plots.
#include <QString>
#include <vector>

namespace routescope::views {

/// At most about `max_ticks` values in [lo, hi], multiples of a 1/2/5 × 10^k step.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
/// A tick's text: as few digits as the step needs ("0.25", "1e+03").
QString tick_text(double value, double step);

}  // namespace routescope::views
