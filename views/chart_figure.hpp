#pragma once
// A Qt Charts panel drawn into a figure (PNG, SVG, PDF) with nothing elided. On screen Qt Charts
// shortens a title or a legend entry that does not fit ("A K_f (b..."); a figure for a paper must
// hold the whole text, so the figure draws the title (wrapped over as many lines as it needs) and
// the legend (entries in rows that wrap, as matplotlib's legend with ncol) itself and lets the
// chart lay out its plot in the rest. Also: equal aspect for plots whose geometry demands it.
#include <QRectF>

class QChart;
class QChartView;
class QPainter;

namespace routescope::views {

/// Draws `view`'s chart into `target` (the painter's coordinates) as QChartView::render does,
/// except that the title and legend are drawn in full. The chart is laid out again for the
/// drawing and restored afterwards.
void render_chart_figure(QChartView* view, QPainter& painter, const QRectF& target);

/// Keeps one data unit the same length on both axes of `chart` (a circle stays a circle), the
/// data `bounds` always in view: whenever the plot area changes, the axis with room to spare is
/// widened about the centre of `bounds` (matplotlib's set_aspect("equal", adjustable="datalim")).
void keep_equal_aspect(QChart* chart, const QRectF& bounds);

}  // namespace routescope::views
