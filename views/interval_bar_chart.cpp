#include "views/interval_bar_chart.hpp"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <cmath>

#include "views/axis_ticks.hpp"
#include "views/chart_panel.hpp"
#include "views/figure_font.hpp"
#include "views/figure_layout.hpp"

namespace routescope::views {
namespace {

/// The legend's entries (a swatch and a series name each, then the whiskers' note) in rows
/// that fit `width`, as matplotlib's legend wraps with ncol. An entry wider than the row wraps
/// (at spaces, a word wider than the line broken where it ends: a file name) and makes its row
/// taller: every label in full, on the page (long model names ran off an 89 mm page).
struct LegendEntry {
    QString text;
    int series;  ///< -1: the note
    double width;
    double text_height;  ///< the label wrapped to the entry's width
};
struct LegendRows {
    std::vector<std::vector<LegendEntry>> rows;
    std::vector<double> heights;  ///< each row's: its tallest entry's, and a quarter line apart
    double height = 0;
};
LegendRows legend_rows(const QFontMetricsF& fm, const QFontMetricsF& small,
                       const std::vector<QString>& names, const QString& note, double width) {
    width = std::max(width, fm.height() * 2);
    std::vector<LegendEntry> entries;
    const double swatch = fm.height();
    for (std::size_t i = 0; i < names.size(); ++i) {
        const double w = std::min(width, swatch + fm.horizontalAdvance(names[i]) + 4);
        entries.push_back({names[i], static_cast<int>(i), w,
                           std::max(fm.height(), wrapped_text_height(fm, names[i], w - swatch))});
    }
    {
        const double w = std::min(width, small.horizontalAdvance(note) + 4);
        entries.push_back(
            {note, -1, w, std::max(fm.height(), wrapped_text_height(small, note, w))});
    }
    LegendRows out;
    out.rows.emplace_back();
    double used = 0;
    const double gap = fm.height();
    for (const LegendEntry& e : entries) {
        if (!out.rows.back().empty() && used + gap + e.width > width) {
            out.rows.emplace_back();
            used = 0;
        }
        used += (out.rows.back().empty() ? 0 : gap) + e.width;
        out.rows.back().push_back(e);
    }
    for (const auto& row : out.rows) {
        double h = fm.height();
        for (const LegendEntry& e : row)
            h = std::max(h, e.text_height);
        out.heights.push_back(h + fm.height() * 0.25);
        out.height += out.heights.back();
    }
    return out;
}

/// A bin's label over two lines, broken after its range's dash ("29.4–" over "47.6") or at a
/// space; unchanged when it has neither.
QString two_lines(const QString& label) {
    int at = label.indexOf(QChar(0x2013));
    if (at >= 0) return label.left(at + 1) + "\n" + label.mid(at + 1);
    at = label.indexOf(' ');
    return at >= 0 ? label.left(at) + "\n" + label.mid(at + 1) : label;
}

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

/// The bars' share of the height of the bars and the differences under them.
constexpr double kBarsShare = 0.68;

/// The room kept between the title and the bars for the counts of bins whose whiskers reach the
/// panel's top (a line of the figure's font).
double count_strip(const QFontMetricsF& fm) {
    return fm.height() * 1.1;
}
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
    // To the precision the value axis shows (one digit finer than a thousandth of its range),
    // p-values to 3 significant digits: "0.667", not 0.66666666666666663.
    const VisibleRange shown_range = visible_range();
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(
                                        std::max(1e-12, std::abs(shown_range.y.span())) / 1000))),
                                    0, 12);
    auto num = [decimals](double v) {
        return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("–");
    };
    auto p_num = [](double v) { return QString::number(v, 'g', 3); };
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
            d += tr(" (p = %1)").arg(p_num(data_.p_value[static_cast<std::size_t>(b)]));
        parts << d;
    }
    return tr("%1 %2: %3")
        .arg(data_.x_label.isEmpty() ? tr("bin") : data_.x_label, data_.bins.value(b),
             parts.join("; "));
}

IntervalBarChart::BinLabels IntervalBarChart::bin_labels(double group) const {
    const QFontMetricsF fm(figure_font(font()));
    double one = 0, two = 0;
    for (const QString& b : data_.bins) {
        one = std::max(one, fm.horizontalAdvance(b));
        for (const QString& part : two_lines(b).split('\n'))
            two = std::max(two, fm.horizontalAdvance(part));
    }
    BinLabels out;
    out.mode = one <= group * 0.95 ? 0 : two <= group * 0.95 ? 1 : 2;
    out.height = out.mode == 0 ? fm.height() * 1.3 : out.mode == 1 ? fm.height() * 2.3 : one + 6;
    return out;
}

QString IntervalBarChart::whiskers_note() const {
    return tr("whiskers: 95% Wilson interval");
}

double IntervalBarChart::legend_height(const QRect& target) const {
    const QFontMetricsF fm(figure_font(font())), small(figure_font(font(), 0.85));
    std::vector<QString> names;
    for (const auto& se : data_.series)
        names.push_back(se.name);
    return legend_rows(fm, small, names, whiskers_note(), target.width()).height;
}

IntervalBarChart::Layout IntervalBarChart::layout(const QRect& target) const {
    const QFontMetricsF fm(figure_font(font()));
    QFont bold = figure_font(font());
    bold.setBold(true);
    const double line = fm.height();
    const double top = wrapped_text_height(QFontMetricsF(bold), data_.title, target.width()) +
                       line * 0.6 + count_strip(fm);
    const double legend = legend_height(target) + line * 0.3;
    // Bin labels (on one line, two, or turned to read upwards, whichever fits a bin), then the
    // x title (wrapped when longer than the plot).
    const VisibleRange view = visible_range();
    const double shown = std::max(1.0, view.x.span());
    const double group_estimate =
        (target.width() - fm.horizontalAdvance("0.000") - 10 - line * 2 - 2) / shown;
    const double labels = bin_labels(group_estimate).height +
                          wrapped_text_height(fm, data_.x_label, target.width() * 0.8) + line * 0.2;
    const double bottom = labels + legend;
    const double gap = data_.difference.empty() ? 0 : line * 2.2;
    const double all_height = std::max(1.0, target.height() - top - bottom);
    const double bars_h = data_.difference.empty() ? all_height : (all_height - gap) * kBarsShare;
    const double diff_h = data_.difference.empty() ? 0 : (all_height - gap) * (1 - kBarsShare);
    // The axis titles run along their panel's height, over two lines when one is too short.
    const double title_room = std::max(wrapped_text_height(fm, data_.y_label, bars_h),
                                       wrapped_text_height(fm, data_.difference_label, diff_h));
    const double left = fm.horizontalAdvance("0.000") + 10 + title_room + 2;
    const QRectF all = QRectF(target).adjusted(left, top, -line, -bottom);
    if (data_.difference.empty()) return {all, {}};
    return {QRectF(all.left(), all.top(), all.width(), bars_h),
            QRectF(all.left(), all.top() + bars_h + gap, all.width(), diff_h)};
}

double IntervalBarChart::print_height(double width, double height) const {
    // The bars (and the differences under them) keep at least a quarter of the width, and each
    // panel the longest word of its axis title on a line: a legend of long names over several
    // rows takes its room from the panel's height, not from the bars.
    const QRect at(0, 0, static_cast<int>(std::lround(width)),
                   static_cast<int>(std::lround(height)));
    const Layout lay = layout(at);
    const QFontMetricsF fm(figure_font(font()));
    const bool diff = !lay.difference.isNull();
    const double gap = diff ? lay.difference.top() - lay.bars.bottom() : 0;
    const double plot = diff ? lay.difference.bottom() - lay.bars.top() : lay.bars.height();
    const double y_word = longest_word_width(fm, data_.y_label) + 2;
    double need = std::max(0.25 * width, diff ? y_word / kBarsShare + gap : y_word);
    if (diff)
        need = std::max(
            need, (longest_word_width(fm, data_.difference_label) + 2) / (1 - kBarsShare) + gap);
    return plot >= need ? height : height + (need - plot);
}

QColor IntervalBarChart::series_colour(int s) const {
    const auto i = static_cast<std::size_t>(s);
    if (i < data_.series.size() && data_.series[i].colour.isValid()) return data_.series[i].colour;
    return model_colour(i);
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
    draw_wrapped(
        painter,
        QRectF(target.left(), target.top() + fm.height() * 0.2, target.width(), target.height()),
        Qt::AlignHCenter | Qt::AlignTop, data_.title);
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
        // At least two labelled ticks, so that a short panel (B − A) has a scale, not a "0".
        int wanted = std::max(2, static_cast<int>(r.height() / (fm.height() * 2)));
        auto ticks = nice_ticks(lo, hi, wanted);
        while (ticks.size() < 2 && wanted < 8)
            ticks = nice_ticks(lo, hi, ++wanted);
        // Every second tick while the labels would overlap (a B − A panel at a journal column and
        // 10 pt drew "0.2", "0.0" and "−0.2" 8 pt apart), keeping 0 where it is a tick (the
        // difference panel's reference line), else the first.
        while (ticks.size() > 2 && std::abs(y_of(ticks[1], r, lo, hi) - y_of(ticks[0], r, lo, hi)) <
                                       fm.height() * 1.15) {
            std::size_t start = 0;
            for (std::size_t i = 0; i < ticks.size(); ++i)
                if (std::abs(ticks[i]) <= 1e-9 * (hi - lo)) start = i % 2;
            const auto every_second = [&ticks](std::size_t from) {
                std::vector<double> kept;
                for (std::size_t i = from; i < ticks.size(); i += 2)
                    kept.push_back(ticks[i]);
                return kept;
            };
            std::vector<double> kept = every_second(start);
            if (kept.size() < 2) kept = every_second(1 - start);  // −0.2, 0, 0.2: the two ends
            if (kept.size() < 2) break;
            ticks = std::move(kept);
        }
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
        note_plot_area(painter, r);
        // The title along the panel's height, read bottom to top, wrapped when longer.
        painter.save();
        painter.translate(target.left() + 1, r.center().y());
        painter.rotate(-90);
        draw_wrapped(
            painter,
            QRectF(-r.height() / 2, 0, r.height(), wrapped_text_height(fm, title, r.height())),
            Qt::AlignHCenter | Qt::AlignTop, title);
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
        const QColor colour = series_colour(s);
        for (int b = b0; b < b1 && b < static_cast<int>(se.value.size()); ++b) {
            // A bin without examples has no accuracy (NaN): no bar, no whisker.
            if (!std::isfinite(se.value[static_cast<std::size_t>(b)])) continue;
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
        }
    }
    if (has_view_) painter.restore();
    // The examples behind each bin, once above its highest whisker: "n=40" when every series
    // counts the same (the same examples), "n=40/38" in series order when not; left out where
    // the label is wider than its bin (the counts are in the CSV and the readout). A bin whose
    // whisker reaches the top (accuracy 1.0) has its count in the strip kept above the panel,
    // not on its bars.
    painter.setFont(small);
    const QFontMetricsF small_fm(small);
    for (int b = b0; b < b1; ++b) {
        QStringList counts;
        double y_top = lay.bars.bottom();
        for (const auto& se : data_.series) {
            const auto i = static_cast<std::size_t>(b);
            if (i >= se.value.size()) continue;
            const QString c = QString::number(se.count[i]);
            if (!counts.contains(c)) counts << c;
            y_top = std::min(y_top, y_of(se.high[i], lay.bars, y_lo, y_hi));
        }
        const QString label = "n=" + counts.join('/');
        if (counts.isEmpty() || small_fm.horizontalAdvance(label) > group * 0.95) continue;
        const double x = lay.bars.left() + (b - b0) * group;
        InPlotText in_plot(painter);
        const double y = std::clamp(y_top - fm.height() * 1.1, lay.bars.top() - count_strip(fm),
                                    lay.bars.bottom() - fm.height());
        painter.drawText(QRectF(x, y - 1, group, fm.height()), Qt::AlignHCenter | Qt::AlignBottom,
                         label);
    }
    painter.setFont(font_px);
    // Bin labels under the lowest panel.
    const QRectF& lowest = lay.difference.isNull() ? lay.bars : lay.difference;
    const BinLabels bins = bin_labels(group);
    for (int b = b0; b < b1; ++b) {
        const double x = lay.bars.left() + (b - b0) * group;
        if (bins.mode < 2) {
            painter.drawText(QRectF(x, lowest.bottom() + 3, group, bins.height),
                             Qt::AlignHCenter | Qt::AlignTop,
                             bins.mode == 0 ? data_.bins[b] : two_lines(data_.bins[b]));
        } else {
            painter.save();  // turned: reads upwards, ending under its bin
            painter.translate(x + group / 2 - fm.height() / 2, lowest.bottom() + 3);
            painter.rotate(-90);
            painter.drawText(QRectF(-(bins.height - 3), 0, bins.height - 3, fm.height()),
                             Qt::AlignRight | Qt::AlignVCenter, data_.bins[b]);
            painter.restore();
        }
    }
    {
        const double width = target.width() * 0.8;
        draw_wrapped(painter,
                     QRectF(std::clamp(lay.bars.center().x() - width / 2, double(target.left()),
                                       target.left() + target.width() - width),
                            lowest.bottom() + bins.height + 4, width,
                            wrapped_text_height(fm, data_.x_label, width)),
                     Qt::AlignHCenter | Qt::AlignTop, data_.x_label);
    }

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
            if (!std::isfinite(d)) continue;  // a side without examples in this bin
            const double x0 = lay.difference.left() + (b - b0) * group + group * 0.3;
            const double y0 = y_of(0, lay.difference, -m, m), y1 = y_of(d, lay.difference, -m, m);
            QPainterPath rect;
            rect.addRect(QRectF(x0, std::min(y0, y1), group * 0.4, std::abs(y1 - y0)));
            painter.fillPath(rect, d >= 0 ? QColor(0xb2, 0x18, 0x2b) : QColor(0x21, 0x66, 0xac));
            // The p-value above its bin, left out where wider than the bin (it is in the CSV).
            const QString p_text = b < static_cast<int>(data_.p_value.size())
                                       ? QStringLiteral("p=%1").arg(
                                             data_.p_value[static_cast<std::size_t>(b)], 0, 'g', 2)
                                       : QString();
            if (!p_text.isEmpty() && small_fm.horizontalAdvance(p_text) <= group * 0.95) {
                painter.setFont(small);
                painter.drawText(QRectF(x0 - group * 0.3, lay.difference.top() - fm.height() * 1.1,
                                        group, fm.height()),
                                 Qt::AlignHCenter | Qt::AlignBottom, p_text);
                painter.setFont(font_px);
            }
        }
    }
    // Legend: under everything, in rows that fit the panel's width.
    std::vector<QString> names;
    for (const auto& se : data_.series)
        names.push_back(se.name);
    const LegendRows legend = legend_rows(fm, small_fm, names, whiskers_note(), target.width());
    double ly = target.bottom() - legend.height;
    for (std::size_t r = 0; r < legend.rows.size(); ++r) {
        const auto& row = legend.rows[r];
        double row_width = 0;
        for (const LegendEntry& e : row)
            row_width += (row_width > 0 ? fm.height() : 0) + e.width;
        double lx = target.left() + std::max(0.0, (target.width() - row_width) / 2);
        for (const LegendEntry& e : row) {
            if (e.series >= 0) {
                painter.fillRect(QRectF(lx, ly + 2, fm.height() - 4, fm.height() - 4),
                                 series_colour(e.series));
                draw_wrapped(painter,
                             QRectF(lx + fm.height(), ly, e.width - fm.height(), e.text_height),
                             Qt::AlignLeft | Qt::AlignTop, e.text);
            } else {
                painter.setFont(small);
                // One line of the small font, centred on a line of the legend's, as the names.
                const double h = wrapped_text_height(small_fm, e.text, e.width);
                draw_wrapped(painter,
                             QRectF(lx, ly + std::max(0.0, (fm.height() - small_fm.height()) / 2),
                                    e.width, h),
                             Qt::AlignLeft | Qt::AlignTop, e.text);
                painter.setFont(font_px);
            }
            lx += e.width + fm.height();
        }
        ly += legend.heights[r];
    }
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
