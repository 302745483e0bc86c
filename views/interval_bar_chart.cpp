#include "views/interval_bar_chart.hpp"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <cmath>

#include "views/axis_ticks.hpp"
#include "views/figure_font.hpp"

namespace routescope::views {
namespace {
// Okabe & Ito's colour-blind-safe palette: blue, orange.
const QColor kSeriesColours[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00),
                                 QColor(0x00, 0x9e, 0x73)};

// The chart for the shared interaction: whole bins across, any range of the bars' value axis.
class IntervalTarget : public RangeTarget {
public:
    explicit IntervalTarget(IntervalBarChart* c) : c_(c) {}
    bool available() const override {
        return !c_->data().bins.isEmpty() && !c_->data().series.empty() &&
               c_->data().y_hi > c_->data().y_lo;
    }
    QRectF plot_area() const override { return c_->bars_rect(); }
    VisibleRange visible() const override { return c_->visible_range(); }
    void apply(const VisibleRange& r) override { c_->set_visible_range(r); }
    VisibleRange constrain(const VisibleRange& r, bool cover) const override {
        const int n = static_cast<int>(c_->data().bins.size());
        return {cover ? covering_cells(r.x, n) : snapped_to_cells(r.x, n), r.y};
    }
    bool has_home() const override { return true; }
    void capture_home() override {}
    VisibleRange home() const override { return c_->full_range(); }
    void restore_home() override { c_->set_visible_range(c_->full_range()); }
    void forget_home() override {}
    double pan_quantum(Qt::Orientation o) const override { return o == Qt::Horizontal ? 1 : 0; }
    bool has_readout() const override { return true; }
    QString readout_at(const QPointF& at) const override { return c_->readout_at(at.toPoint()); }

private:
    IntervalBarChart* c_;
};
}  // namespace

IntervalBarChart::IntervalBarChart(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setFocusPolicy(Qt::StrongFocus);
    interaction_ = new PlotInteraction(std::make_unique<IntervalTarget>(this), this, this);
}

void IntervalBarChart::set_data(IntervalBarData data) {
    if (data.bins.size() != data_.bins.size() || data.y_lo != data_.y_lo || data.y_hi != data_.y_hi)
        has_view_ = false;  // other bins or another value range: everything again
    data_ = std::move(data);
    if (selected_ >= data_.bins.size()) selected_ = -1;
    update();
}

VisibleRange IntervalBarChart::full_range() const {
    return {{0, static_cast<double>(data_.bins.size())}, {data_.y_lo, data_.y_hi}};
}

VisibleRange IntervalBarChart::visible_range() const {
    return has_view_ ? view_ : full_range();
}

void IntervalBarChart::set_visible_range(const VisibleRange& range) {
    const int n = static_cast<int>(data_.bins.size());
    VisibleRange r{snapped_to_cells(range.x, n), range.y};
    if (!(r.y.span() > 0) || !std::isfinite(r.y.lo) || !std::isfinite(r.y.hi)) r.y = full_range().y;
    has_view_ = r != full_range();
    view_ = r;
    update();
}

QString IntervalBarChart::readout_at(const QPoint& position) const {
    const int b = bin_at(position);
    if (b < 0) return {};
    auto num = [](double v) { return PlotInteraction::format_value(v); };
    QStringList parts;
    for (const auto& se : data_.series) {
        const auto i = static_cast<std::size_t>(b);
        if (i >= se.value.size()) continue;
        parts << tr("%1 %2 [%3, %4] n=%5")
                     .arg(se.name, num(se.value[i]), num(se.low.at(i)), num(se.high.at(i)))
                     .arg(se.count.at(i));
    }
    if (static_cast<std::size_t>(b) < data_.difference.size()) {
        QString d = tr("%1 %2").arg(
            data_.difference_label.isEmpty() ? tr("difference") : data_.difference_label,
            num(data_.difference[static_cast<std::size_t>(b)]));
        if (static_cast<std::size_t>(b) < data_.p_value.size())
            d += tr(" (p = %1)").arg(num(data_.p_value[static_cast<std::size_t>(b)]));
        parts << d;
    }
    return tr("%1 %2: %3")
        .arg(data_.x_label.isEmpty() ? tr("bin") : data_.x_label, data_.bins.value(b),
             parts.join("; "));
}

IntervalBarChart::Layout IntervalBarChart::layout(const QRect& target) const {
    const QFontMetricsF fm(figure_font(font()));
    const double line = fm.height();
    const double left = fm.horizontalAdvance("0.000") + line * 2;
    const double top = line * 2;
    const double legend = line * 1.6;
    const double labels = line * 2.6;  // bin labels and x title
    QRectF all = QRectF(target).adjusted(left, top, -line, -(labels + legend));
    if (data_.difference.empty()) return {all, {}};
    const double gap = line * 2.2;
    const double h = all.height() - gap;
    return {QRectF(all.left(), all.top(), all.width(), h * 0.68),
            QRectF(all.left(), all.top() + h * 0.68 + gap, all.width(), h * 0.32)};
}

void IntervalBarChart::paint(QPainter& painter, const QRect& target) const {
    painter.save();
    painter.fillRect(target, Qt::white);
    const QFont font_px = figure_font(font());
    const QFont small = figure_font(font(), 0.85);
    painter.setFont(font_px);
    const QFontMetricsF fm(font_px);
    const QColor ink(40, 40, 40);
    painter.setPen(ink);
    QFont bold = font_px;
    bold.setBold(true);
    painter.setFont(bold);
    painter.drawText(QRectF(target.left(), target.top(), target.width(), fm.height() * 1.8),
                     Qt::AlignCenter, data_.title);
    painter.setFont(font_px);
    const int n = static_cast<int>(data_.bins.size());
    if (n == 0 || data_.series.empty()) {
        painter.drawText(target, Qt::AlignCenter, tr("No data"));
        painter.restore();
        return;
    }
    const Layout lay = layout(target);
    // The window of bins and values shown (everything unless zoomed).
    const VisibleRange view = visible_range();
    const int b0 = static_cast<int>(view.x.lo);
    const int b1 = std::min(n, static_cast<int>(view.x.hi));
    const double y_lo = view.y.lo, y_hi = view.y.hi;
    const double group = lay.bars.width() / std::max(1, b1 - b0);
    const int k = static_cast<int>(data_.series.size());
    const double bar = group * 0.7 / k;

    auto y_of = [&](double v, const QRectF& r, double lo, double hi) {
        return r.bottom() - (v - lo) / (hi - lo) * r.height();
    };
    auto draw_axis = [&](const QRectF& r, double lo, double hi, const QString& title) {
        QPainterPath axes;
        axes.moveTo(r.topLeft());
        axes.lineTo(r.bottomLeft());
        axes.lineTo(r.bottomRight());
        const auto ticks =
            nice_ticks(lo, hi, std::max(2, static_cast<int>(r.height() / (fm.height() * 2))));
        const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : 1;
        QPainterPath grid;
        for (double t : ticks) {
            const double y = y_of(t, r, lo, hi);
            axes.moveTo(r.left() - 4, y);
            axes.lineTo(r.left(), y);
            grid.moveTo(r.left(), y);
            grid.lineTo(r.right(), y);
            painter.drawText(QRectF(target.left(), y - fm.height() / 2,
                                    r.left() - 6 - target.left(), fm.height()),
                             Qt::AlignRight | Qt::AlignVCenter, tick_text(t, step));
        }
        painter.setPen(QPen(QColor(225, 225, 225), 1));
        painter.drawPath(grid);
        painter.setPen(ink);
        painter.drawPath(axes);
        painter.save();
        painter.translate(target.left() + fm.height() * 0.8, r.center().y());
        painter.rotate(-90);
        painter.drawText(QRectF(-r.height() / 2, -fm.height(), r.height(), fm.height() * 1.2),
                         Qt::AlignCenter, title);
        painter.restore();
    };

    // Bars with intervals and counts.
    draw_axis(lay.bars, y_lo, y_hi, data_.y_label);
    if (selected_ >= b0 && selected_ < b1)
        painter.fillRect(QRectF(lay.bars.left() + (selected_ - b0) * group, lay.bars.top(), group,
                                lay.bars.height()),
                         QColor(255, 240, 200));
    if (has_view_) {
        painter.save();  // zoomed: bars and whiskers end at the panel's edges
        painter.setClipRect(lay.bars);
    }
    for (int s = 0; s < k; ++s) {
        const auto& se = data_.series[static_cast<std::size_t>(s)];
        const QColor colour = kSeriesColours[s % 3];
        for (int b = b0; b < b1 && b < static_cast<int>(se.value.size()); ++b) {
            const double x0 = lay.bars.left() + (b - b0) * group + group * 0.15 + s * bar;
            const double yv = y_of(se.value[static_cast<std::size_t>(b)], lay.bars, y_lo, y_hi);
            QPainterPath rect;
            rect.addRect(QRectF(x0, yv, bar * 0.92, lay.bars.bottom() - yv));
            painter.fillPath(rect, colour);
            QPainterPath whisker;
            const double xc = x0 + bar * 0.46;
            const double y_low = y_of(se.low[static_cast<std::size_t>(b)], lay.bars, y_lo, y_hi);
            const double y_high = y_of(se.high[static_cast<std::size_t>(b)], lay.bars, y_lo, y_hi);
            whisker.moveTo(xc, y_low);
            whisker.lineTo(xc, y_high);
            whisker.moveTo(xc - bar * 0.2, y_low);
            whisker.lineTo(xc + bar * 0.2, y_low);
            whisker.moveTo(xc - bar * 0.2, y_high);
            whisker.lineTo(xc + bar * 0.2, y_high);
            painter.setPen(QPen(ink, 1.2));
            painter.drawPath(whisker);
            painter.setFont(small);
            painter.drawText(QRectF(x0 - bar, y_high - fm.height() * 1.1, bar * 3, fm.height()),
                             Qt::AlignHCenter | Qt::AlignBottom,
                             QStringLiteral("n=%1").arg(se.count[static_cast<std::size_t>(b)]));
            painter.setFont(font_px);
        }
    }
    if (has_view_) painter.restore();
    // Bin labels under the lowest panel.
    const QRectF& lowest = lay.difference.isNull() ? lay.bars : lay.difference;
    for (int b = b0; b < b1; ++b)
        painter.drawText(
            QRectF(lay.bars.left() + (b - b0) * group, lowest.bottom() + 3, group, fm.height()),
            Qt::AlignHCenter | Qt::AlignTop, data_.bins[b]);
    painter.drawText(
        QRectF(lay.bars.left(), lowest.bottom() + fm.height() + 4, lay.bars.width(), fm.height()),
        Qt::AlignCenter, data_.x_label);

    if (!lay.difference.isNull()) {
        double m = 0.05;
        for (double d : data_.difference)
            m = std::max(m, std::abs(d));
        m *= 1.15;
        draw_axis(lay.difference, -m, m, data_.difference_label);
        QPainterPath zero;
        zero.moveTo(lay.difference.left(), y_of(0, lay.difference, -m, m));
        zero.lineTo(lay.difference.right(), y_of(0, lay.difference, -m, m));
        painter.drawPath(zero);
        for (int b = b0; b < b1 && b < static_cast<int>(data_.difference.size()); ++b) {
            const double d = data_.difference[static_cast<std::size_t>(b)];
            const double x0 = lay.difference.left() + (b - b0) * group + group * 0.3;
            const double y0 = y_of(0, lay.difference, -m, m), y1 = y_of(d, lay.difference, -m, m);
            QPainterPath rect;
            rect.addRect(QRectF(x0, std::min(y0, y1), group * 0.4, std::abs(y1 - y0)));
            painter.fillPath(rect, d >= 0 ? QColor(0xb2, 0x18, 0x2b) : QColor(0x21, 0x66, 0xac));
            if (b < static_cast<int>(data_.p_value.size())) {
                painter.setFont(small);
                painter.drawText(QRectF(x0 - group * 0.3, lay.difference.top() - fm.height() * 1.1,
                                        group, fm.height()),
                                 Qt::AlignHCenter | Qt::AlignBottom,
                                 QStringLiteral("p=%1").arg(
                                     data_.p_value[static_cast<std::size_t>(b)], 0, 'g', 2));
                painter.setFont(font_px);
            }
        }
    }
    // Legend.
    double lx = lay.bars.left();
    const double ly = target.bottom() - fm.height() * 1.3;
    for (int s = 0; s < k; ++s) {
        painter.fillRect(QRectF(lx, ly + 2, fm.height() - 4, fm.height() - 4),
                         kSeriesColours[s % 3]);
        const QString name = data_.series[static_cast<std::size_t>(s)].name;
        painter.drawText(QRectF(lx + fm.height(), ly, fm.horizontalAdvance(name) + 4, fm.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, name);
        lx += fm.height() + fm.horizontalAdvance(name) + 20;
    }
    painter.setFont(small);
    painter.drawText(QRectF(lx, ly, target.right() - lx, fm.height()),
                     Qt::AlignLeft | Qt::AlignVCenter, tr("whiskers: 95% Wilson interval"));
    painter.restore();
}

void IntervalBarChart::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    paint(painter, rect());
}

int IntervalBarChart::bin_at(const QPoint& position) const {
    const Layout lay = layout(rect());
    const int n = static_cast<int>(data_.bins.size());
    const QRectF area = lay.difference.isNull() ? lay.bars : lay.bars.united(lay.difference);
    if (n == 0 || !area.contains(position)) return -1;
    const VisibleRange view = visible_range();
    const int b0 = static_cast<int>(view.x.lo),
              shown = std::max(1, static_cast<int>(view.x.span()));
    return std::clamp(b0 + static_cast<int>((position.x() - area.left()) / area.width() * shown), 0,
                      n - 1);
}

QPoint IntervalBarChart::bin_centre(int bin) const {
    const Layout lay = layout(rect());
    const VisibleRange view = visible_range();
    const int shown = std::max(1, static_cast<int>(view.x.span()));
    return QPointF(lay.bars.left() + (bin - view.x.lo + 0.5) * lay.bars.width() / shown,
                   lay.bars.center().y())
        .toPoint();
}

void IntervalBarChart::mousePressEvent(QMouseEvent* event) {
    const int bin = bin_at(event->position().toPoint());
    if (event->button() != Qt::LeftButton || bin < 0) return;
    selected_ = bin;
    update();
    emit binClicked(bin);
}

}  // namespace routescope::views
