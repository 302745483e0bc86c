#pragma once
// Grouped bars with confidence intervals and counts, one group per bin, and an optional panel of
// per-bin differences below: what accuracy by length needs and Qt Charts lacks (error bars).
// Painted by one paint() for screen and export; clicking a group emits its bin.
#include <QStringList>
#include <QWidget>

#include <vector>

#include "views/painted_panel.hpp"

namespace routescope::views {

struct IntervalBarSeries {
    QString name;
    std::vector<double> value, low, high;  ///< per bin
    std::vector<qint64> count;
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
    /// The bin whose group is under `position` (widget coordinates), or −1.
    int bin_at(const QPoint& position) const;
    /// Centre of bin `bin`'s group in widget coordinates (for tests and tooltips).
    QPoint bin_centre(int bin) const;
    int selected_bin() const { return selected_; }
    QSize sizeHint() const override { return {640, 420}; }

signals:
    void binClicked(int bin);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    IntervalBarData data_;
    int selected_ = -1;
    struct Layout {
        QRectF bars, difference;
    };
    Layout layout(const QRect& target) const;
};

}  // namespace routescope::views
