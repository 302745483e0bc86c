#include "views/chart_figure.hpp"

#include <QAbstractSeries>
#include <QAbstractTextDocumentLayout>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QGraphicsLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLinearGradient>
#include <QPainter>
#include <QPointer>
#include <QResizeEvent>
#include <QScatterSeries>
#include <QTextDocument>
#include <QValueAxis>

#include <cmath>

#include "views/colour_map.hpp"
#include "views/figure_font.hpp"
#include "views/figure_layout.hpp"

namespace routescope::views {
namespace {
constexpr double kPadding = 4;  // between the title or legend and the chart's plot

/// The legend's spacing: in ems of its font (matplotlib's handlelength and columnspacing), never
/// less than the screen's 22, 5 and 14 pixels. Session 28: fixed pixels in a print, laid out at
/// three times its size, drew a swatch a third of its length, too short to tell a dashed line from
/// a solid one.
struct LegendSpacing {
    double swatch, swatch_gap, entry_gap;
};
LegendSpacing legend_spacing(const QFontMetricsF& fm) {
    const double em = fm.height();
    return {std::max(22.0, 1.5 * em), std::max(5.0, 0.35 * em), std::max(14.0, em)};
}

// Title and legend fonts are in pixels of the figure (figure_font): a font in points would be
// measured at the device's resolution and grow 6× in a 600 dpi PDF.

/// The chart's title as a document of `width`, centred, wrapped at word boundaries.
void set_title_document(QTextDocument& doc, const QChart& chart, const QString& title,
                        double width) {
    doc.setDefaultFont(figure_font(chart.titleFont()));
    doc.setDocumentMargin(0);
    QTextOption centred(Qt::AlignHCenter);
    centred.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    doc.setDefaultTextOption(centred);
    // Qt Charts reads every title as HTML (a "<" must be "&lt;"); so does the figure.
    doc.setHtml(title);
    doc.setTextWidth(width);
}

struct Entry {
    QLegendMarker* marker;  // nullptr: the colour key
    QString label;
    double width;    // swatch + gap + label (the label wrapped to the row when wider)
    double bar = 0;  // the colour key's bar
};

bool has_key(const ColourKey* key) {
    return key && key->map;
}

/// The colour key's entry: "label lo [bar] hi" on one line, the bar shortened (to half) when
/// the row is narrower.
Entry key_entry(const ColourKey& key, const QFontMetricsF& fm, double width) {
    const LegendSpacing sp = legend_spacing(fm);
    const double most = 4 * sp.swatch;  // the bar's length, at most
    const double text = fm.horizontalAdvance(key.label) + fm.horizontalAdvance(key.lo_text) +
                        fm.horizontalAdvance(key.hi_text) + 2 * sp.swatch_gap + sp.entry_gap / 2 +
                        3;
    const double bar = std::clamp(width - text, most / 2, most);
    return {nullptr, key.label, text + bar, bar};
}

struct LegendLayout {
    std::vector<std::vector<Entry>> rows;
    std::vector<double> row_heights;  // an entry wider than the chart wraps: its row is taller
    double swatch_height = 0, height = 0;
    LegendSpacing spacing{};
};

LegendLayout layout_legend(QLegend* legend, double width, const ColourKey* key) {
    LegendLayout out;
    const QFontMetricsF fm(figure_font(legend->font()));
    const LegendSpacing sp = out.spacing = legend_spacing(fm);
    out.swatch_height = std::max(fm.height(), 22 * 0.6) + 2;
    const double text_room = std::max(10.0, width - sp.swatch - sp.swatch_gap);
    std::vector<Entry> row;
    double used = 0;
    for (QLegendMarker* m : legend->markers()) {
        // Not the marker's isVisible(): the legend itself is hidden (the view draws it), which
        // hides every marker. A marker left out of the legend has the property legendHidden.
        if (m->property("legendHidden").toBool() || m->label().isEmpty()) continue;
        const double w =
            sp.swatch + sp.swatch_gap + std::min(text_room, fm.horizontalAdvance(m->label()) + 1);
        if (!row.empty() && used + sp.entry_gap + w > width) {
            out.rows.push_back(std::move(row));
            row.clear();
            used = 0;
        }
        used += (row.empty() ? 0 : sp.entry_gap) + w;
        row.push_back({m, m->label(), w});
    }
    if (has_key(key)) {  // after the entries, in their row when it has room
        Entry e = key_entry(*key, fm, width);
        if (!row.empty() && used + sp.entry_gap + e.width > width) {
            out.rows.push_back(std::move(row));
            row.clear();
            used = 0;
        }
        if (!row.empty()) e = key_entry(*key, fm, width - used - sp.entry_gap);
        used += (row.empty() ? 0 : sp.entry_gap) + e.width;
        row.push_back(e);
    }
    if (!row.empty()) out.rows.push_back(std::move(row));
    for (const auto& r : out.rows) {
        double h = out.swatch_height;
        for (const Entry& e : r) {
            if (!e.marker) {
                h = std::max(h, fm.height() + 2);
                continue;
            }
            h = std::max(h,
                         wrapped_text_height(fm, e.label, e.width - sp.swatch - sp.swatch_gap) + 2);
        }
        out.row_heights.push_back(h);
        out.height += h;
    }
    return out;
}

void draw_swatch(QPainter& painter, QLegendMarker& m, const QRectF& box) {
    const QAbstractSeries* s = m.series();
    painter.save();
    if (const auto* scatter = qobject_cast<const QScatterSeries*>(s)) {
        painter.setPen(m.pen());
        painter.setBrush(m.brush());
        const double r = std::min(box.height(), box.width()) * 0.3;
        if (scatter->markerShape() == QScatterSeries::MarkerShapeRectangle)
            painter.drawRect(QRectF(box.center().x() - r, box.center().y() - r, 2 * r, 2 * r));
        else
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

/// The colour key at (x, y): its label, the low end's value, the bar, the high end's value.
void draw_key(QPainter& painter, const ColourKey& key, const Entry& e, QColor ink, double x,
              double y) {
    const QFontMetricsF fm(painter.font());
    const LegendSpacing sp = legend_spacing(fm);
    const double line = fm.height();
    painter.setPen(ink);
    auto text = [&](const QString& t, double gap) {
        painter.drawText(QRectF(x, y + 1, fm.horizontalAdvance(t) + 1, line),
                         Qt::AlignLeft | Qt::AlignTop, t);
        x += fm.horizontalAdvance(t) + 1 + gap;
    };
    text(key.label, sp.entry_gap / 2);
    text(key.lo_text, sp.swatch_gap);
    const QRectF bar(x, y + 1 + line * 0.2, e.bar, line * 0.6);
    // One gradient, not a rectangle per band: antialiased abutting rectangles show seams.
    constexpr int kStops = 32;
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= kStops; ++i)
        gradient.setColorAt(static_cast<double>(i) / kStops,
                            QColor::fromRgb(key.map->at(key.t0 + (key.t1 - key.t0) * i / kStops)));
    painter.fillRect(bar, gradient);
    note_colour_bar(painter, bar, Qt::Horizontal);
    x += e.bar + sp.swatch_gap;
    text(key.hi_text, 0);
}

void draw_legend(QPainter& painter, QLegend* legend, const LegendLayout& lay, const QRectF& area,
                 const ColourKey* key) {
    painter.save();
    painter.setFont(figure_font(legend->font()));
    double y = area.top();
    for (std::size_t r = 0; r < lay.rows.size(); ++r) {
        double row_width = 0;
        for (const Entry& e : lay.rows[r])
            row_width += (row_width > 0 ? lay.spacing.entry_gap : 0) + e.width;
        double x = area.left() + std::max(0.0, (area.width() - row_width) / 2);
        for (const Entry& e : lay.rows[r]) {
            if (!e.marker) {
                if (has_key(key)) draw_key(painter, *key, e, legend->labelColor(), x, y);
                x += e.width + lay.spacing.entry_gap;
                continue;
            }
            const LegendSpacing& sp = lay.spacing;
            draw_swatch(painter, *e.marker, QRectF(x, y, sp.swatch, lay.swatch_height));
            painter.setPen(legend->labelColor());
            draw_wrapped(painter,
                         QRectF(x + sp.swatch + sp.swatch_gap, y + 1,
                                e.width - sp.swatch - sp.swatch_gap, lay.row_heights[r]),
                         Qt::AlignLeft | Qt::AlignTop, e.label);
            x += e.width + sp.entry_gap;
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
    double height = 0;   // wrapped to `along`
    // Where the title runs along its axis (chart coordinates, y for a vertical axis): the plot's
    // extent, or longer, centred on the plot within the chart, where a word of the title is
    // longer than the plot (a crowded panel's sliver of plot wrapped a y title "‖Δh‖ / ‖h^(ℓ−1)‖"
    // one glyph a line, and the room it then took squeezed the plot further).
    double from = 0, along = 0;
};

/// An axis title as Qt Charts shows it: HTML when it looks like markup or holds an entity (a view
/// escapes a model's name in it: "&lt;v2&gt;" is "<v2>"), else the text as it is.
QString plain(const QString& text) {
    if (!Qt::mightBeRichText(text) && !text.contains('&')) return text;
    QTextDocument doc;
    doc.setHtml(text);
    return doc.toPlainText();
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

/// A tick label as Qt Charts writes it with the axis's printf-style format (an estimate for
/// sizing: integers for %d and %i).
QString tick_label(const QString& format, double v) {
    const QByteArray f = format.toLatin1();
    if (format.contains('d') || format.contains('i'))
        return QString::asprintf(f.constData(), static_cast<int>(std::llround(v)));
    return QString::asprintf(f.constData(), v);
}

/// The next coarser round step after `step`: 1, 2, 5 × 10^k.
double coarser(double step) {
    const double e = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    const double m = step / e;
    return (m < 1.5 ? 2 : m < 3.5 ? 5 : 10) * e;
}

/// Thins the ticks of the chart's value axes until their labels have room on the plot (Qt Charts
/// shortens a tick label to "..." when its neighbours crowd it). The step the axis was given is
/// kept (wantedTickInterval, wantedTickCount) and started from at every fit, so a larger plot
/// (a print) gets its ticks back.
void fit_ticks(QChart* chart) {
    const QRectF plot = chart->plotArea();
    for (QAbstractAxis* a : chart->axes()) {
        auto* v = qobject_cast<QValueAxis*>(a);
        if (!v || !v->labelsVisible() || !(v->max() > v->min())) continue;
        const bool horizontal = v->orientation() == Qt::Horizontal;
        const double extent = horizontal ? plot.width() : plot.height();
        if (extent < 1) continue;
        const QFontMetricsF fm(v->labelsFont());
        const double label =
            horizontal ? std::max(fm.horizontalAdvance(tick_label(v->labelFormat(), v->min())),
                                  fm.horizontalAdvance(tick_label(v->labelFormat(), v->max()))) +
                             fm.height()
                       : fm.height() * 1.4;
        const double range = v->max() - v->min();
        if (v->tickType() == QValueAxis::TicksDynamic) {
            const double current = v->tickInterval();
            const double fitted = v->property("fittedTickInterval").toDouble();
            const double wanted = fitted > 0 && current == fitted
                                      ? v->property("wantedTickInterval").toDouble()
                                      : current;
            double step = wanted;
            while (step > 0 && step < range && extent * step / range < label)
                step = coarser(step);
            v->setProperty("wantedTickInterval", wanted);
            v->setProperty("fittedTickInterval", step);
            if (step != current) v->setTickInterval(step);
        } else {
            const int current = v->tickCount();
            const int fitted = v->property("fittedTickCount").toInt();
            const int wanted =
                fitted > 0 && current == fitted ? v->property("wantedTickCount").toInt() : current;
            int count = wanted;
            while (count > 2 && extent / (count - 1) < label)
                --count;
            v->setProperty("wantedTickCount", wanted);
            v->setProperty("fittedTickCount", count);
            if (count != current) v->setTickCount(count);
        }
    }
}

/// Lays the chart out now (Qt defers it to the event loop), twice when the first layout changed
/// something that asks for another (an equal-aspect plot widening an axis).
void lay_out_now(QChart* chart) {
    for (int i = 0; i < 3 && chart->layout() && !chart->layout()->isActivated(); ++i)
        chart->layout()->activate();
}

}  // namespace

FigureChartView::FigureChartView(QChart* chart, QWidget* parent)
    : QChartView(chart, parent), base_(chart->margins()) {}

QString FigureChartView::title() const {
    const QString pending = chart()->title();
    return pending.isEmpty() ? title_ : pending;
}

void FigureChartView::take_decorations() {
    QChart* c = chart();
    // The chart draws none of its title, legend and axis titles: this view does, in full.
    if (!c->title().isEmpty()) {
        title_ = c->title();
        c->setTitle(QString());
    }
    if (c->legend()->isVisible()) {
        legend_ = true;
        c->legend()->setVisible(false);
    }
    for (QAbstractAxis* a : c->axes())
        if (a->isTitleVisible() && !a->titleText().isEmpty()) {
            a->setProperty("figureDrawsTitle", true);
            a->setTitleVisible(false);
        }
}

namespace {
/// The axis titles this view draws: wrapped along the plot's extent.
std::vector<AxisTitle> axis_titles_of(QChart* chart) {
    std::vector<AxisTitle> out;
    const QRectF plot = chart->plotArea();
    for (QAbstractAxis* a : chart->axes()) {
        if (!a->isVisible() || !a->property("figureDrawsTitle").toBool() ||
            a->titleText().isEmpty())
            continue;
        AxisTitle t{a, plain(a->titleText()), a->alignment()};
        const QFontMetricsF fm(figure_font(a->titleFont()));
        const bool vertical = t.side & (Qt::AlignLeft | Qt::AlignRight);
        const double extent = vertical ? plot.height() : plot.width();
        const double centre = vertical ? plot.center().y() : plot.center().x();
        const double chart_extent = vertical ? chart->size().height() : chart->size().width();
        t.along = std::max(extent, std::min(chart_extent, longest_word_width(fm, t.text) + 2));
        t.from = std::clamp(centre - t.along / 2, 0.0, std::max(0.0, chart_extent - t.along));
        t.height = wrapped_text_height(fm, t.text, t.along);
        out.push_back(t);
    }
    return out;
}
}  // namespace

QMargins FigureChartView::decoration_room() const {
    QChart* c = chart();
    const double width = viewport()->width() - base_.left() - base_.right();
    QMargins room;
    if (!title_.isEmpty()) {
        QTextDocument doc;
        set_title_document(doc, *c, title_, width);
        room.setTop(static_cast<int>(std::ceil(doc.size().height() + kPadding)));
    }
    if (legend_ && legend_position_ == LegendPosition::Below) {
        const LegendLayout legend = layout_legend(c->legend(), width, &key_);
        if (!legend.rows.empty())
            room.setBottom(static_cast<int>(std::ceil(legend.height + kPadding)));
    }
    if (legend_ && legend_position_ == LegendPosition::Right) {
        const double w = right_legend_width();
        if (w > 0) room.setRight(static_cast<int>(std::ceil(w + 2 * kPadding)));
    }
    for (const AxisTitle& t : axis_titles_of(c)) {
        const int h = static_cast<int>(std::ceil(t.height + kPadding));
        if (t.side & Qt::AlignLeft) room.setLeft(room.left() + h);
        if (t.side & Qt::AlignRight) room.setRight(room.right() + h);
        if (t.side & Qt::AlignBottom) room.setBottom(room.bottom() + h);
        if (t.side & Qt::AlignTop) room.setTop(room.top() + h);
    }
    return room;
}

void FigureChartView::fit_decorations() {
    take_decorations();
    // The room depends on the plot (axis titles wrap along it) and the plot on the room: a few
    // rounds settle it (the same room twice).
    for (int pass = 0; pass < 3; ++pass) {
        const QMargins room = decoration_room();
        if (pass > 0 && room == room_) break;
        room_ = room;
        if (chart()->margins() != base_ + room_) chart()->setMargins(base_ + room_);
        lay_out_now(chart());
    }
    fit_ticks(chart());
    lay_out_now(chart());
}

int FigureChartView::print_height(int width, int height) {
    // The plot's height the texts need: a share of the width, and every word of a title along a
    // vertical axis on one line (a title wrapped along a sliver of plot came out a glyph a line).
    double need = kMinPlotShare * width;
    for (QAbstractAxis* a : chart()->axes(Qt::Vertical)) {
        if (!a->isVisible() || !a->property("figureDrawsTitle").toBool()) continue;
        need = std::max(need, longest_word_width(QFontMetricsF(figure_font(a->titleFont())),
                                                 plain(a->titleText())) +
                                  2);
    }
    // The room the texts take depends on the size (they wrap): a few rounds settle it. The panel
    // grows at most to kMaxPrintAspect of its width (texts that need more are over the plot,
    // which the export's layout check reports).
    const int most = std::max(height, static_cast<int>(std::ceil(kMaxPrintAspect * width)));
    int h = std::max(1, height);
    for (int round = 0;; ++round) {
        resize(width, h);
        if (testAttribute(Qt::WA_PendingResizeEvent)) {  // hidden: Qt delivers it when shown
            QResizeEvent event(size(), size());
            QCoreApplication::sendEvent(this, &event);
        }
        fit_decorations();
        // Qt Charts keeps the last plot area when the margins leave it no room (a legend of long
        // names in many rows taller than the panel): that plot is not where the chart is now,
        // and the plot can have no more than the room between the margins.
        const QMargins m = chart()->margins();
        qreal left = 0, top = 0, right = 0, bottom = 0;
        if (chart()->layout()) chart()->layout()->getContentsMargins(&left, &top, &right, &bottom);
        const double chart_height = chart()->size().height();
        const QRectF plot = chart()->plotArea();
        const bool stale =
            plot.top() < m.top() - 0.5 || plot.bottom() > chart_height - m.bottom() + 0.5;
        const double have =
            stale ? chart_height - top - bottom - m.top() - m.bottom() : plot.height();
        if (have >= need - 0.5 || round == 8 || h >= most) break;
        h = std::min(most, h + static_cast<int>(std::ceil(need - have)));
    }
    return h;
}

void FigureChartView::resizeEvent(QResizeEvent* event) {
    QChartView::resizeEvent(event);
    fit_decorations();
}

void FigureChartView::paintEvent(QPaintEvent* event) {
    // A view may have set a title, added a series (a legend entry) or an axis since the last
    // paint: the room follows before anything is drawn.
    const QMargins before = room_;
    fit_decorations();
    if (room_ != before) viewport()->update();
    QChartView::paintEvent(event);
}

void FigureChartView::drawForeground(QPainter* painter, const QRectF& rect) {
    QChartView::drawForeground(painter, rect);
    QChart* c = chart();
    // Scene coordinates are the chart's (QChartView keeps the chart at the scene's origin).
    const QRectF source(QPointF(0, 0), c->size());
    const double width = source.width() - base_.left() - base_.right();
    painter->save();
    double title_height = 0;
    if (!title_.isEmpty()) {
        QTextDocument doc;
        set_title_document(doc, *c, title_, width);
        title_height = doc.size().height() + kPadding;
        painter->save();
        painter->translate(base_.left(), base_.top());
        QAbstractTextDocumentLayout::PaintContext context;
        context.palette.setColor(QPalette::Text, c->titleBrush().color());
        doc.documentLayout()->draw(painter, context);
        painter->restore();
    }
    LegendLayout legend;
    if (legend_ && legend_position_ == LegendPosition::Below)
        legend = layout_legend(c->legend(), width, &key_);
    const double legend_height = legend.rows.empty() ? 0 : legend.height + kPadding;
    // Each axis title in the outermost strip of its side's room, centred on the plot.
    const QRectF plot = c->plotArea();
    double left = base_.left(), right = source.width() - base_.right();
    double top = base_.top() + title_height;
    double bottom = source.height() - base_.bottom() - legend_height;
    for (const AxisTitle& t : axis_titles_of(c)) {
        painter->save();
        painter->setFont(figure_font(t.axis->titleFont()));
        painter->setPen(t.axis->titleBrush().color());
        const int flags = Qt::AlignHCenter | Qt::AlignTop;
        if (t.side & (Qt::AlignLeft | Qt::AlignRight)) {
            const double x = (t.side & Qt::AlignLeft) ? left : right - t.height;
            painter->translate(x, t.from + t.along / 2);
            painter->rotate(-90);  // read bottom to top
            draw_wrapped(*painter, QRectF(-t.along / 2, 0, t.along, t.height), flags, t.text);
            (t.side & Qt::AlignLeft ? left : right) +=
                (t.side & Qt::AlignLeft ? 1 : -1) * (t.height + kPadding);
        } else {
            const double y = (t.side & Qt::AlignBottom) ? bottom - t.height : top;
            draw_wrapped(*painter, QRectF(t.from, y, t.along, t.height), flags, t.text);
            (t.side & Qt::AlignBottom ? bottom : top) +=
                (t.side & Qt::AlignBottom ? -1 : 1) * (t.height + kPadding);
        }
        painter->restore();
    }
    if (legend_height > 0)
        draw_legend(
            *painter, c->legend(), legend,
            QRectF(base_.left(), source.height() - base_.bottom() - legend_height + kPadding, width,
                   legend.height),
            &key_);
    if (legend_ && legend_position_ == LegendPosition::Right) {
        // One entry per row (the column as wide as the widest), centred on the plot's height.
        const double w = right_legend_width();
        if (w > 0) {
            const LegendLayout column = layout_legend(c->legend(), w, &key_);
            draw_legend(
                *painter, c->legend(), column,
                QRectF(source.width() - base_.right() - w - kPadding,
                       std::max(top, plot.center().y() - column.height / 2), w, column.height),
                &key_);
        }
    }
    painter->restore();
}

void FigureChartView::set_legend_position(LegendPosition position) {
    if (position == legend_position_) return;
    legend_position_ = position;
    fit_decorations();
    viewport()->update();
    notify_options_changed();
}

double FigureChartView::right_legend_width() const {
    // As wide as the widest entry, at most 40% of the chart (a longer name wraps).
    const QFontMetricsF fm(figure_font(chart()->legend()->font()));
    double widest = 0;
    for (QLegendMarker* m : chart()->legend()->markers())
        if (!m->property("legendHidden").toBool() && !m->label().isEmpty())
            widest = std::max(widest, legend_spacing(fm).swatch + legend_spacing(fm).swatch_gap +
                                          fm.horizontalAdvance(m->label()) + 1);
    if (has_key(&key_)) widest = std::max(widest, key_entry(key_, fm, 1e6).width);
    return std::min(widest, 0.4 * viewport()->width());
}

void FigureChartView::set_colour_key(const ColourKey& key) {
    key_ = key;
    fit_decorations();
    viewport()->update();
}

void set_colour_key(QChartView* view, const ColourKey& key) {
    if (auto* figure = dynamic_cast<FigureChartView*>(view)) figure->set_colour_key(key);
}

QString chart_title(QChartView* view) {
    if (auto* figure = dynamic_cast<FigureChartView*>(view)) return figure->title();
    return view->chart()->title();
}

void render_chart_figure(QChartView* view, QPainter& painter, const QRectF& target) {
    auto* figure = dynamic_cast<FigureChartView*>(view);
    QChart* chart = view->chart();
    const QRectF source = view->viewport()->rect();
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
    // The room for the title, legend and axis titles at this size and with these fonts.
    if (figure) figure->fit_decorations();
    lay_out_now(chart);

    painter.save();
    // The scene's foreground (FigureChartView::drawForeground) holds the title, legend and axis
    // titles, drawn in full.
    view->render(&painter, target, source.toRect(), Qt::IgnoreAspectRatio);
    painter.translate(target.topLeft());
    painter.scale(target.width() / source.width(), target.height() / source.height());
    note_plot_area(painter, chart->plotArea());
    painter.restore();

    for (const XRange& r : widened)
        if (r.axis) {
            r.axis->setTickType(r.type);
            r.axis->setTickAnchor(r.anchor);
            r.axis->setTickInterval(r.interval);
            r.axis->setRange(r.min, r.max);
        }
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
