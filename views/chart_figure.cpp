#include "views/chart_figure.hpp"

#include <QAbstractSeries>
#include <QAbstractTextDocumentLayout>
#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QPointer>
#include <QScatterSeries>
#include <QTextDocument>
#include <QValueAxis>

#include <cmath>

#include "views/figure_font.hpp"
#include "views/figure_layout.hpp"

namespace routescope::views {
namespace {
constexpr double kSwatch = 22;    // legend swatch length, as matplotlib's handlelength 2 em
constexpr double kSwatchGap = 5;  // between a swatch and its label
constexpr double kEntryGap = 14;  // between legend entries of one row
constexpr double kPadding = 4;    // between the title or legend and the chart's plot

// Title and legend fonts are in pixels of the figure (figure_font): a font in points would be
// measured at the device's resolution and grow 6× in a 600 dpi PDF.

/// The chart's title as a document of `width`, centred, wrapped at word boundaries.
void set_title_document(QTextDocument& doc, const QChart& chart, double width) {
    doc.setDefaultFont(figure_font(chart.titleFont()));
    doc.setDocumentMargin(0);
    QTextOption centred(Qt::AlignHCenter);
    centred.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    doc.setDefaultTextOption(centred);
    // Qt Charts reads every title as HTML (a "<" must be "&lt;"); so does the figure.
    doc.setHtml(chart.title());
    doc.setTextWidth(width);
}

struct Entry {
    QLegendMarker* marker;
    QString label;
    double width;  // swatch + gap + label (the label wrapped to the row when wider)
};

struct LegendLayout {
    std::vector<std::vector<Entry>> rows;
    std::vector<double> row_heights;  // an entry wider than the chart wraps: its row is taller
    double swatch_height = 0, height = 0;
};

LegendLayout layout_legend(QLegend* legend, double width) {
    LegendLayout out;
    const QFontMetricsF fm(figure_font(legend->font()));
    out.swatch_height = std::max(fm.height(), kSwatch * 0.6) + 2;
    const double text_room = std::max(10.0, width - kSwatch - kSwatchGap);
    std::vector<Entry> row;
    double used = 0;
    for (QLegendMarker* m : legend->markers()) {
        if (!m->isVisible() || m->label().isEmpty()) continue;
        const double w =
            kSwatch + kSwatchGap + std::min(text_room, fm.horizontalAdvance(m->label()) + 1);
        if (!row.empty() && used + kEntryGap + w > width) {
            out.rows.push_back(std::move(row));
            row.clear();
            used = 0;
        }
        used += (row.empty() ? 0 : kEntryGap) + w;
        row.push_back({m, m->label(), w});
    }
    if (!row.empty()) out.rows.push_back(std::move(row));
    for (const auto& r : out.rows) {
        double h = out.swatch_height;
        for (const Entry& e : r)
            h = std::max(h, fm.boundingRect(QRectF(0, 0, text_room, 1e6),
                                            Qt::TextWordWrap | Qt::AlignLeft, e.label)
                                    .height() +
                                2);
        out.row_heights.push_back(h);
        out.height += h;
    }
    return out;
}

void draw_swatch(QPainter& painter, QLegendMarker& m, const QRectF& box) {
    const QAbstractSeries* s = m.series();
    painter.save();
    if (qobject_cast<const QScatterSeries*>(s)) {
        painter.setPen(m.pen());
        painter.setBrush(m.brush());
        const double r = std::min(box.height(), box.width()) * 0.3;
        painter.drawEllipse(box.center(), r, r);
    } else if (const auto* line = qobject_cast<const QLineSeries*>(s)) {
        QPen pen = line->pen();
        pen.setCapStyle(Qt::FlatCap);
        painter.setPen(pen);
        painter.drawLine(QPointF(box.left(), box.center().y()),
                         QPointF(box.right(), box.center().y()));
    } else {
        painter.setPen(Qt::NoPen);
        painter.setBrush(m.brush());
        painter.drawRect(box.adjusted(box.width() * 0.2, box.height() * 0.2, -box.width() * 0.2,
                                      -box.height() * 0.2));
    }
    painter.restore();
}

void draw_legend(QPainter& painter, QLegend* legend, const LegendLayout& lay, const QRectF& area) {
    painter.save();
    painter.setFont(figure_font(legend->font()));
    double y = area.top();
    for (std::size_t r = 0; r < lay.rows.size(); ++r) {
        double row_width = 0;
        for (const Entry& e : lay.rows[r])
            row_width += (row_width > 0 ? kEntryGap : 0) + e.width;
        double x = area.left() + std::max(0.0, (area.width() - row_width) / 2);
        for (const Entry& e : lay.rows[r]) {
            draw_swatch(painter, *e.marker, QRectF(x, y, kSwatch, lay.swatch_height));
            painter.setPen(legend->labelColor());
            painter.drawText(QRectF(x + kSwatch + kSwatchGap, y + 1, e.width - kSwatch - kSwatchGap,
                                    lay.row_heights[r]),
                             Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, e.label);
            x += e.width + kEntryGap;
        }
        y += lay.row_heights[r];
    }
    painter.restore();
}

/// An axis title the figure draws itself: wrapped along its axis instead of elided.
struct AxisTitle {
    QAbstractAxis* axis;
    QString text;
    Qt::Alignment side;  // where the axis sits: left, right, bottom or top
    double height = 0;   // wrapped to the plot's extent along the axis
};

QString plain(const QString& text) {
    if (!Qt::mightBeRichText(text)) return text;
    QTextDocument doc;
    doc.setHtml(text);
    return doc.toPlainText();
}

double wrapped_height(const QFont& font, const QString& text, double width) {
    return QFontMetricsF(font)
        .boundingRect(QRectF(0, 0, std::max(1.0, width), 1e6), Qt::TextWordWrap | Qt::AlignHCenter,
                      text)
        .height();
}

/// A value axis's ticks land on its minimum (a tick count from min to max, or a tick anchor and
/// interval that hit it).
bool tick_at_minimum(const QValueAxis* a) {
    const double span = a->max() - a->min();
    if (!(span > 0)) return false;
    if (a->tickType() == QValueAxis::TicksFixed) return true;
    const double k = (a->min() - a->tickAnchor()) / a->tickInterval();
    return std::abs(k - std::round(k)) * a->tickInterval() < 1e-9 * span;
}

/// Lays the chart out now (Qt defers it to the event loop), twice when the first layout changed
/// something that asks for another (an equal-aspect plot widening an axis).
void lay_out_now(QChart* chart) {
    for (int i = 0; i < 3 && chart->layout() && !chart->layout()->isActivated(); ++i)
        chart->layout()->activate();
}

}  // namespace

void render_chart_figure(QChartView* view, QPainter& painter, const QRectF& target) {
    QChart* chart = view->chart();
    const QRectF source = view->viewport()->rect();
    QLegend* legend = chart->legend();
    const bool legend_shown = legend->isVisible();
    const QString title = chart->title();
    const QMargins margins = chart->margins();
    // Everything below is in the viewport's (the chart's) coordinates.
    const double width = source.width() - margins.left() - margins.right();

    QTextDocument title_doc;
    double title_height = 0;
    if (!title.isEmpty()) {
        set_title_document(title_doc, *chart, width);
        title_height = title_doc.size().height() + kPadding;
    }
    LegendLayout legend_layout;
    if (legend_shown) legend_layout = layout_legend(legend, width);
    const double legend_height = legend_layout.rows.empty() ? 0 : legend_layout.height + kPadding;

    // Axis titles: drawn by the figure, wrapped along the plot (Qt Charts elides a title longer
    // than its axis). The chart keeps the room for them as margins.
    std::vector<AxisTitle> axis_titles;
    for (QAbstractAxis* a : chart->axes())
        if (a->isVisible() && a->isTitleVisible() && !a->titleText().isEmpty()) {
            axis_titles.push_back({a, plain(a->titleText()), a->alignment()});
            a->setTitleVisible(false);
        }
    // The first tick label of the x axis and the lowest of the y axis both sit at the plot's
    // corner when both axes have a tick at their minimum: the x axis gets a margin of 5% of its
    // range on each side, as matplotlib's default axes margins, so that the two never collide.
    struct XRange {
        QPointer<QValueAxis> axis;
        double min, max;
        QValueAxis::TickType type;
        double anchor, interval;
    };
    std::vector<XRange> widened;
    {
        QValueAxis* y_bottom = nullptr;
        for (QAbstractAxis* a : chart->axes(Qt::Vertical))
            if (auto* v = qobject_cast<QValueAxis*>(a); v && v->isVisible() && v->labelsVisible())
                y_bottom = v;
        for (QAbstractAxis* a : chart->axes(Qt::Horizontal)) {
            auto* x = qobject_cast<QValueAxis*>(a);
            if (!x || !y_bottom || !x->labelsVisible() || !tick_at_minimum(x) ||
                !tick_at_minimum(y_bottom))
                continue;
            widened.push_back(
                {x, x->min(), x->max(), x->tickType(), x->tickAnchor(), x->tickInterval()});
            const double span = x->max() - x->min();
            if (x->tickType() == QValueAxis::TicksFixed) {
                // The same ticks, anchored, so that widening the range does not move them.
                x->setTickAnchor(x->min());
                x->setTickInterval(span / std::max(1, x->tickCount() - 1));
                x->setTickType(QValueAxis::TicksDynamic);
            }
            x->setRange(x->min() - 0.05 * span, x->max() + 0.05 * span);
        }
    }

    // The chart lays out its plot and axes without a title, legend or axis titles, in the room
    // they leave: laid out once, the titles wrapped to the plot it gives, and again if their
    // height changed.
    chart->setTitle(QString());
    legend->setVisible(false);
    QMargins room;
    for (int pass = 0; pass < 3; ++pass) {
        QMargins needed(0, static_cast<int>(std::ceil(title_height)), 0,
                        static_cast<int>(std::ceil(legend_height)));
        for (const AxisTitle& t : axis_titles) {
            const int h = static_cast<int>(std::ceil(t.height + kPadding));
            if (t.side & Qt::AlignLeft) needed.setLeft(needed.left() + h);
            if (t.side & Qt::AlignRight) needed.setRight(needed.right() + h);
            if (t.side & Qt::AlignBottom) needed.setBottom(needed.bottom() + h);
            if (t.side & Qt::AlignTop) needed.setTop(needed.top() + h);
        }
        if (pass > 0 && needed == room) break;
        room = needed;
        chart->setMargins(margins + room);
        lay_out_now(chart);
        const QRectF plot = chart->plotArea();
        for (AxisTitle& t : axis_titles)
            t.height = wrapped_height(
                figure_font(t.axis->titleFont()), t.text,
                (t.side & (Qt::AlignLeft | Qt::AlignRight)) ? plot.height() : plot.width());
    }

    painter.save();
    view->render(&painter, target, source.toRect(), Qt::IgnoreAspectRatio);
    painter.translate(target.topLeft());
    painter.scale(target.width() / source.width(), target.height() / source.height());
    const QRectF plot = chart->plotArea();
    note_plot_area(painter, plot);
    if (title_height > 0) {
        painter.save();
        painter.translate(margins.left(), margins.top());
        QAbstractTextDocumentLayout::PaintContext context;
        context.palette.setColor(QPalette::Text, chart->titleBrush().color());
        title_doc.documentLayout()->draw(&painter, context);
        painter.restore();
    }
    // Each axis title in the outermost strip of its side's room, centred on the plot.
    double left = margins.left(), right = source.width() - margins.right();
    double top = margins.top() + title_height;
    double bottom = source.height() - margins.bottom() - legend_height;
    for (const AxisTitle& t : axis_titles) {
        painter.save();
        painter.setFont(figure_font(t.axis->titleFont()));
        painter.setPen(t.axis->titleBrush().color());
        const int flags = Qt::TextWordWrap | Qt::AlignHCenter | Qt::AlignTop;
        if (t.side & (Qt::AlignLeft | Qt::AlignRight)) {
            const double x = (t.side & Qt::AlignLeft) ? left : right - t.height;
            painter.translate(x, plot.center().y());
            painter.rotate(-90);  // read bottom to top
            painter.drawText(QRectF(-plot.height() / 2, 0, plot.height(), t.height), flags, t.text);
            (t.side & Qt::AlignLeft ? left : right) +=
                (t.side & Qt::AlignLeft ? 1 : -1) * (t.height + kPadding);
        } else {
            const double y = (t.side & Qt::AlignBottom) ? bottom - t.height : top;
            painter.drawText(QRectF(plot.left(), y, plot.width(), t.height), flags, t.text);
            (t.side & Qt::AlignBottom ? bottom : top) +=
                (t.side & Qt::AlignBottom ? -1 : 1) * (t.height + kPadding);
        }
        painter.restore();
    }
    if (legend_height > 0)
        draw_legend(
            painter, legend, legend_layout,
            QRectF(margins.left(), source.height() - margins.bottom() - legend_height + kPadding,
                   width, legend_layout.height));
    painter.restore();

    for (const AxisTitle& t : axis_titles)
        t.axis->setTitleVisible(true);
    for (const XRange& r : widened)
        if (r.axis) {
            r.axis->setTickType(r.type);
            r.axis->setTickAnchor(r.anchor);
            r.axis->setTickInterval(r.interval);
            r.axis->setRange(r.min, r.max);
        }
    chart->setTitle(title);
    legend->setVisible(legend_shown);
    chart->setMargins(margins);
    lay_out_now(chart);
}

void keep_equal_aspect(QChart* chart, const QRectF& bounds) {
    // One context object per chart: a new call replaces the previous bounds' connection.
    const QString name = QStringLiteral("equalAspect");
    delete chart->findChild<QObject*>(name, Qt::FindDirectChildrenOnly);
    auto* context = new QObject(chart);
    context->setObjectName(name);
    auto apply = [chart, bounds](const QRectF& plot) {
        if (plot.width() < 1 || plot.height() < 1 || bounds.width() <= 0 || bounds.height() <= 0)
            return;
        auto* ax = chart->axes(Qt::Horizontal).isEmpty()
                       ? nullptr
                       : qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).front());
        auto* ay = chart->axes(Qt::Vertical).isEmpty()
                       ? nullptr
                       : qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front());
        if (!ax || !ay) return;
        const double per_pixel =
            std::max(bounds.width() / plot.width(), bounds.height() / plot.height());
        const QPointF c = bounds.center();
        const double hx = per_pixel * plot.width() / 2, hy = per_pixel * plot.height() / 2;
        auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * (1 + std::abs(b)); };
        if (same(ax->min(), c.x() - hx) && same(ax->max(), c.x() + hx) &&
            same(ay->min(), c.y() - hy) && same(ay->max(), c.y() + hy))
            return;
        ax->setRange(c.x() - hx, c.x() + hx);
        ay->setRange(c.y() - hy, c.y() + hy);
    };
    QObject::connect(chart, &QChart::plotAreaChanged, context, apply);
    apply(chart->plotArea());
}

}  // namespace routescope::views
