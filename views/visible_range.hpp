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
