#pragma once
// "Nice" tick values for a numeric axis (steps of 1, 2 or 5 × 10^k), shared by the painted plots.
#include <QString>
#include <utility>
#include <vector>

namespace routescope::views {

/// At most about `max_ticks` values in [lo, hi], multiples of a 1/2/5 × 10^k step.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);
/// A tick's text: as few digits as the step needs ("0.25", "1e+03").
QString tick_text(double value, double step);

/// The labelled values of a colour bar of [lo, hi] (lo < hi) that is `length` long (any unit)
/// with labels `label_height` high (the same unit): always both ends, written to a hundredth of
/// the range ("-3.6", "0.035"; trailing zeros dropped), and round values between them where they
/// keep 1.2 label heights from the ends and from each other (session 28: a bar that ticked only
/// at round values carried one label, "0" or "0.5", when the range held one round value).
std::vector<std::pair<double, QString>> colour_bar_ticks(double lo, double hi, double length,
                                                         double label_height);
/// An end of a colour bar of range `range`, written to a hundredth of the range.
QString range_end_text(double value, double range);

}  // namespace routescope::views
