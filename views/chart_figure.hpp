#pragma once
// A Qt Charts panel with nothing elided, on screen and drawn into a figure (PNG, SVG, PDF). Qt
// Charts shortens a title, axis title or legend entry that does not fit ("A K_f (b..."); a
// figure for a paper, and a window at its default size, must hold the whole text, so the view
// draws them itself (wrapped over as many lines as they need, the legend's entries in rows as
// matplotlib's legend with ncol) and lets the chart lay out its plot in the rest. Also: equal
// aspect for plots whose geometry demands it.
#include <functional>

#include <QChartView>
#include <QMargins>
#include <QRectF>
#include <QString>

class QChart;
class QPainter;
class QPaintEvent;
class QResizeEvent;
class QWidget;

namespace routescope::views {

class ColourMap;

/// A key of a sequential colour map at the end of a chart's legend, "layer  0 ▮▮▮▮ 23": its
/// label, the map's part [t0, t1] as a bar, and the values at the bar's ends (session 28: a
/// PCA chart of 24 layers had 24 legend entries in 5 repeating colours). Empty (no map): none.
struct ColourKey {
    const ColourMap* map = nullptr;
    double t0 = 0, t1 = 1;
    QString label, lo_text, hi_text;
};

/// A chart view whose title, legend and axis titles are drawn by the view in full, on screen and
/// in every figure, instead of by Qt Charts, which shortens them with "..." when they do not fit:
/// the title and axis titles wrap over as many lines as they need, the legend's entries wrap into
/// rows under the plot (matplotlib's legend with ncol), and the chart lays its plot out in the
/// room left (its margins). Code sets the title, legend and axis titles on the chart as usual;
/// the view takes them over before it next draws (the chart's title() is then empty: use
/// chart_title()).
class FigureChartView : public QChartView {
public:
    FigureChartView(QChart* chart, QWidget* parent);
    QString title() const;
    /// Where the legend goes: under the plot in rows (the default), right of it in a column, or
    /// nowhere (LabPlot's legend position).
    enum class LegendPosition { Below, Right, Hidden };
    LegendPosition legend_position() const { return legend_position_; }
    void set_legend_position(LegendPosition position);
    /// Called whenever a chart option a project saves changes here: the legend's position, an
    /// axis made logarithmic or linear (set_log_scale). Zooms are PlotInteraction's signals.
    void on_options_changed(std::function<void()> f) { options_changed_ = std::move(f); }
    void notify_options_changed() {
        if (options_changed_) options_changed_();
    }
    /// Takes over the chart's title, legend and axis titles and fits the chart's margins to the
    /// room they need at the view's size and fonts.
    void fit_decorations();
    /// The height at `width` that leaves the plot room, for a print layout
    /// (AnalysisView::prepare_print): `height`, or more when the title, legend and axis titles at
    /// the current fonts would leave the plot lower than kMinPlotShare of `width` or than the
    /// longest word of a vertical axis title (which would then be broken inside its words), at
    /// most kMaxPrintAspect × `width`. Resizes the view to `width` × the height returned.
    int print_height(int width, int height);
    /// The colour key the legend ends with (an entry of its own, in the legend's rows or column).
    void set_colour_key(const ColourKey& key);
    const ColourKey& colour_key() const { return key_; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void take_decorations();
    QMargins decoration_room() const;
    /// The legend's column width when it is right of the plot (0: no entries).
    double right_legend_width() const;
    QString title_;
    bool legend_ = false;
    LegendPosition legend_position_ = LegendPosition::Below;
    QMargins base_, room_;
    ColourKey key_;
    std::function<void()> options_changed_;
};

/// The lowest plot a print layout gives a chart, as a share of the panel's width (a 0.62 panel's
/// plot is about 0.4 of its width with one row of legend): a panel whose texts would leave less
/// grows taller instead (FigureChartView::print_height).
inline constexpr double kMinPlotShare = 0.25;

/// The highest a print layout makes a chart's panel, as a multiple of its width: texts that would
/// need more (a legend of dozens of long names) are drawn over the plot, and the export's layout
/// check (--check-layout) reports them, rather than the panel running off any page.
inline constexpr double kMaxPrintAspect = 2.5;

/// Sets the colour key of `view`'s legend (a FigureChartView; other views have none).
void set_colour_key(QChartView* view, const ColourKey& key);

/// The chart's title, whether it is still on the chart or a FigureChartView has taken it.
QString chart_title(QChartView* view);

/// Draws `view`'s chart into `target` (the painter's coordinates) as QChartView::render does,
/// except that the title and legend are drawn in full. The chart is laid out again for the
/// drawing and restored afterwards.
void render_chart_figure(QChartView* view, QPainter& painter, const QRectF& target);

/// Keeps one data unit the same length on both axes of `chart` (a circle stays a circle), the
/// data `bounds` always in view: whenever the plot area changes, the axis with room to spare is
/// widened about the centre of `bounds` (matplotlib's set_aspect("equal", adjustable="datalim")).
void keep_equal_aspect(QChart* chart, const QRectF& bounds);

}  // namespace routescope::views
