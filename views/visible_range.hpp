#pragma once
// The part of a plot's data that is on screen: an interval per axis, in the axis's own linear
// coordinate (log10 of the value on a logarithmic axis, a cell index on a heatmap). Zoom, pan and
// the link between the A and B panels of compare mode all work on this model
// (chart_interaction.hpp).
#include <algorithm>
#include <cmath>

namespace routescope::views {

struct AxisRange {
    double lo = 0, hi = 1;
    double span() const { return hi - lo; }
    bool operator==(const AxisRange&) const = default;
};

struct VisibleRange {
    AxisRange x, y;
    bool operator==(const VisibleRange&) const = default;
};

/// `r` zoomed in by `factor` (> 1: in, < 1: out) keeping the point at `anchor` (a fraction of the
/// range from lo, 0 to 1) where it is.
inline AxisRange zoomed_range(AxisRange r, double factor, double anchor) {
    const double at = r.lo + anchor * r.span();
    const double span = r.span() / factor;
    return {at - anchor * span, at - anchor * span + span};
}

/// `r` moved by `fraction` of its span (positive: towards larger values).
inline AxisRange panned_range(AxisRange r, double fraction) {
    const double d = fraction * r.span();
    return {r.lo + d, r.hi + d};
}

/// What a chart's axis can draw (chart_options.hpp: set_axis_limits, and every zoom and pan):
/// - each end within ±kMaxAxisValue, so that the span is a finite number with room to coarsen its
///   tick step: x [-1e308, 1e308] (a span past the largest double) and [0, 1.7e308] made Qt
///   Charts' label code loop without end (an export that never finished);
/// - a span of at least kMinRelativeSpan of the larger end's magnitude (a billionth; a double
///   holds about 16 digits, and ticks need a few of them to differ);
/// - the data (`data`, the chart's own range) at most kMaxZoomDepth spans outside the range: a
///   chart zoomed to [1, 1 + 1e-15] drew its points ~1e15 plot widths away, and Qt's PDF writer
///   wrote such coordinates (beyond 2^32 device pixels) as garbage, an unreadable PDF.
/// In the axis's drawn coordinate (log10 of the values on a logarithmic axis).
inline constexpr double kMaxAxisValue = 1e300;
inline constexpr double kMinRelativeSpan = 1e-9;
inline constexpr double kMaxZoomDepth = 1e5;

enum class RangeProblem { none, not_numbers, not_increasing, too_large, too_narrow, too_deep };

inline RangeProblem drawable_range_problem(AxisRange r, AxisRange data) {
    if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) return RangeProblem::not_numbers;
    if (!(r.lo < r.hi)) return RangeProblem::not_increasing;
    if (std::abs(r.lo) > kMaxAxisValue || std::abs(r.hi) > kMaxAxisValue)
        return RangeProblem::too_large;
    if (r.span() < kMinRelativeSpan * std::max(std::abs(r.lo), std::abs(r.hi)))
        return RangeProblem::too_narrow;
    if (std::isfinite(data.lo) && std::isfinite(data.hi) && data.lo <= data.hi) {
        const double outside = std::max({r.lo - data.lo, data.hi - r.hi, 0.0});
        if (outside > kMaxZoomDepth * r.span()) return RangeProblem::too_deep;
    }
    return RangeProblem::none;
}

/// `r` as whole cells inside [0, count): at least one cell, never past either end, the span kept
/// when it fits (a pan at an edge stops there instead of shrinking the range).
inline AxisRange snapped_to_cells(AxisRange r, int count) {
    if (count <= 0) return {0, 0};
    const int n = std::clamp(static_cast<int>(std::lround(r.span())), 1, count);
    const int first = std::clamp(static_cast<int>(std::lround(r.lo)), 0, count - n);
    return {static_cast<double>(first), static_cast<double>(first + n)};
}

/// The whole cells inside [0, count) that `r` touches (a rubber band), at least one.
inline AxisRange covering_cells(AxisRange r, int count) {
    if (count <= 0) return {0, 0};
    const double lo = std::clamp(std::floor(r.lo), 0.0, count - 1.0);
    const double hi = std::clamp(std::ceil(r.hi), lo + 1, static_cast<double>(count));
    return {lo, hi};
}

}  // namespace routescope::views
