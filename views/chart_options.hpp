#pragma once
// A chart's own settings, as LabPlot offers them per plot: the axis limits typed in, and where the
// legend goes. make_chart_view attaches them as the chart's right-click menu.
#include <QString>
#include <Qt>

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
/// Returns why limits cannot be shown (not numbers, from not below to, ≤ 0 on a log axis, a
/// range no axis can draw: visible_range.hpp, drawable_range_problem), or an empty string when
/// they were applied.
QString set_axis_limits(QChartView* view, double x0, double x1, double y0, double y1);

/// The visible x and y ranges {x0, x1, y0, y1} in the axes' own values when the chart is zoomed
/// (by the mouse, the keys or typed limits), nothing when it shows its data's own range.
std::optional<std::array<double, 4>> zoomed_axis_limits(QChartView* view);

/// Opens the Axis Limits dialog of `view` (modal), filled with the visible ranges.
void edit_axis_limits(QChartView* view);

/// Whether the chart's horizontal or vertical axis is drawn logarithmic (base 10).
bool log_scale(QChartView* view, Qt::Orientation orientation);
/// Draws the chart's axis along `orientation` logarithmic (base 10) or linear, as LabPlot's axis
/// scale: the axis is replaced by one of the other kind with the same title, side and series,
/// its range the data's (a twentieth of the span added on each side, in decades on a log
/// axis), and the zoom's home is the new range. The view keeps the choice: the chart takes it
/// again each time its data is redrawn. Returns why a log axis cannot show the data (a value ≤ 0
/// along it; the axis then stays linear) or that the chart has no such axis; empty when done.
QString set_log_scale(QChartView* view, Qt::Orientation orientation, bool on);
/// After a redraw: the axes `view` was asked to draw logarithmic become so again once the event
/// loop runs (add_line calls it; one pass however many series are added).
void keep_log_scales(QChartView* view);
/// The same at once: the axes `view` was asked to draw logarithmic become so now (a no-op for the
/// others).
void apply_log_scales(QChartView* view);
/// Whether a person asked for the axis along `orientation` to be logarithmic (set_log_scale): what
/// a project saves.
bool log_scale_wanted(QChartView* view, Qt::Orientation orientation);

}  // namespace routescope::views
