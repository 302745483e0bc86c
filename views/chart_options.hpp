#pragma once
// A chart's own settings, as LabPlot offers them per plot: the axis limits typed in, and where the
// legend goes. make_chart_view attaches them as the chart's right-click menu.
#include <QString>

#include <array>
#include <optional>

class QChartView;

namespace routescope::views {

class FigureChartView;

/// The right-click menu of a chart: Axis Limits… (the visible ranges typed in), Legend (below
/// the plot, right of it, hidden) and Reset Zoom.
void attach_chart_options(FigureChartView* view);

/// Shows x in [x0, x1] and y in [y0, y1] (the axes' own values), as the Axis Limits dialog does:
/// through the chart's zoom, so Reset Zoom (Ctrl+0, a double-click) returns to the data's range.
/// Returns why limits cannot be shown (not numbers, from not below to, ≤ 0 on a log axis), or
/// an empty string when they were applied.
QString set_axis_limits(QChartView* view, double x0, double x1, double y0, double y1);

/// The visible x and y ranges {x0, x1, y0, y1} in the axes' own values when the chart is zoomed
/// (by the mouse, the keys or typed limits), nothing when it shows its data's own range.
std::optional<std::array<double, 4>> zoomed_axis_limits(QChartView* view);

/// Opens the Axis Limits dialog of `view` (modal), filled with the visible ranges.
void edit_axis_limits(QChartView* view);

}  // namespace routescope::views
