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
    if (std::abs(value) >= 1e5 || (std::abs(value) > 0 && std::abs(value) < 1e-3) || step < 1e-4) {
        // As many significant digits as the step needs, 3 at least: a step of 5e-5 at 0.0315
        // wrote 0.03145, 0.0315 and 0.03155 as "0.0314", "0.0315", "0.0316" with ties repeated.
        const int digits =
            value != 0
                ? std::clamp(
                      static_cast<int>(std::ceil(std::log10(std::abs(value) / step) - 1e-9)) + 1, 3,
                      15)
                : 3;
        return QString::number(value, 'g', digits);
    }
    const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    return QString::number(value, 'f', decimals);
}

QString range_end_text(double value, double range) {
    if (!std::isfinite(value)) return QString::number(value);
    if (!(range > 0) || !std::isfinite(range)) return QString::number(value, 'g', 3);
    const double magnitude = std::abs(value);
    if (magnitude >= 1e5 || (magnitude > 0 && magnitude < 1e-3) || range < 1e-4) {
        // As many significant digits as a hundredth of the range needs (at least 3).
        const int digits =
            magnitude > 0
                ? std::clamp(
                      static_cast<int>(std::ceil(std::log10(magnitude / range) + 2 - 1e-9)) + 1, 3,
                      15)
                : 3;
        return QString::number(value, 'g', digits);
    }
    const int decimals =
        std::clamp(static_cast<int>(std::ceil(-std::log10(range) + 2 - 1e-9)), 0, 15);
    QString text = QString::number(value, 'f', decimals);
    if (text.contains('.')) {
        while (text.endsWith('0'))
            text.chop(1);
        if (text.endsWith('.')) text.chop(1);
    }
    if (text == QLatin1String("-0")) text = QStringLiteral("0");
    return text;
}

std::vector<std::pair<double, QString>> colour_bar_ticks(double lo, double hi, double length,
                                                         double label_height) {
    std::vector<std::pair<double, QString>> out;
    if (!std::isfinite(lo) || !std::isfinite(hi)) return out;
    if (!(hi > lo)) {
        out.emplace_back(lo, range_end_text(lo, std::abs(lo)));
        return out;
    }
    const double range = hi - lo;
    out.emplace_back(lo, range_end_text(lo, range));
    out.emplace_back(hi, range_end_text(hi, range));
    if (!(length > 0) || !(label_height > 0)) return out;
    const double gap = 1.2 * label_height;  // between two labels' centres
    const int room = static_cast<int>(length / (gap * 1.5));
    if (room < 2) return out;
    const auto ticks = nice_ticks(lo, hi, room);
    const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : range;
    // The ends' labels are drawn within the bar, their centres half a line in from its ends
    // (HeatmapWidget::paint): the round values keep their distance from there ('3.35' sat on '3').
    const double low_end = std::min(label_height / 2, length / 2);
    const double high_end = std::max(length - label_height / 2, length / 2);
    double last = low_end;  // centre of the last label kept from lo (the lo end's)
    for (double t : ticks) {
        const double at = (t - lo) / range * length;
        if (at - last < gap || high_end - at < gap) continue;
        out.emplace_back(t, tick_text(t, step));
        last = at;
    }
    return out;
}

}  // namespace routescope::views
