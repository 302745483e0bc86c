#pragma once
// Grouped bars with confidence intervals and counts, one group per bin, and an optional panel of
// per-bin differences below: what accuracy by length needs and Qt Charts lacks (error bars).
// Painted by one paint() for screen and export; clicking a group emits its bin. Zoom and pan
// (chart_interaction.hpp) show a window of whole bins and a range of the bars' value axis; the
// hover readout gives a bin's exact values, intervals and counts.
#include <QColor>
#include <QStringList>
#include <QWidget>

#include <vector>

#include "views/chart_interaction.hpp"
#include "views/painted_panel.hpp"

namespace routescope::views {

struct IntervalBarSeries {
    QString name;
    std::vector<double> value, low, high;  ///< per bin
    std::vector<qint64> count;
    QColor colour;  ///< invalid: model_colour(the series' place)
};

struct IntervalBarData {
    QString title, x_label, y_label, difference_label;
    QStringList bins;
    std::vector<IntervalBarSeries> series;
    std::vector<double> difference;  ///< per bin (empty: no difference panel)
    std::vector<double> p_value;     ///< per bin, printed under the difference (may be empty)
    double y_lo = 0, y_hi = 1;
};

class IntervalBarChart : public QWidget, public PaintedPanel {
    Q_OBJECT
public:
    explicit IntervalBarChart(QWidget* parent = nullptr);
    void set_data(IntervalBarData data);
    const IntervalBarData& data() const { return data_; }
    void paint(QPainter& painter, const QRect& target) const override;
    double print_height(double width, double height) const override;
    /// The bin whose group is under `position` (widget coordinates), or −1.
    int bin_at(const QPoint& position) const;
    /// Centre of bin `bin`'s group in widget coordinates (for tests and tooltips).
    QPoint bin_centre(int bin) const;
    int selected_bin() const { return selected_; }
    /// x: the bins shown [first, end), y: the bars' value axis. Every bin and [y_lo, y_hi] until a
    /// zoom; set_data keeps the window when the bins and the value range stay the same.
    VisibleRange visible_range() const;
    VisibleRange full_range() const;
    void set_visible_range(const VisibleRange& range);
    /// Where the bars are drawn (widget coordinates).
    QRectF bars_rect() const { return layout(rect()).bars; }
    PlotInteraction* interaction() const { return interaction_; }
    /// The readout at a point: the bin's value, interval and count of every series (exact), and
    /// the difference; empty outside the bins.
    QString readout_at(const QPoint& position) const;
    QSize sizeHint() const override { return {640, 420}; }

signals:
    void binClicked(int bin);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    IntervalBarData data_;
    int selected_ = -1;
    bool has_view_ = false;
    VisibleRange view_;
    PlotInteraction* interaction_ = nullptr;
    struct Layout {
        QRectF bars, difference;
    };
    Layout layout(const QRect& target) const;
    QString whiskers_note() const;
    /// The colour of series `s`: its own, else model_colour(s).
    QColor series_colour(int s) const;
    /// How the bin labels fit bins `group` wide: mode 0 one line, 1 two lines (broken after the
    /// range's dash), 2 turned to read upwards; height: the room they take under the bins.
    struct BinLabels {
        int mode;
        double height;
    };
    BinLabels bin_labels(double group) const;
    /// The legend's rows (series, then the whiskers' note) at the bottom of `target`.
    double legend_height(const QRect& target) const;
};

}  // namespace routescope::views
