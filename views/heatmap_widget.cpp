#include "views/heatmap_widget.hpp"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/comparison.hpp"
#include "views/axis_ticks.hpp"
#include "views/figure_font.hpp"
#include "views/figure_layout.hpp"

namespace routescope::views {

HeatmapData difference_of(const HeatmapData& a, const HeatmapData& b, const QString& title,
                          const QString& undefined) {
    HeatmapData d = a;
    const auto values =
        a.row_labels == b.row_labels && a.column_labels == b.column_labels
            ? analysis::difference({a.rows, a.columns, &a.values}, {b.rows, b.columns, &b.values})
            : std::nullopt;
    if (values) {
        d.values = *values;
        d.title = title;
    } else {
        d.rows = d.columns = 0;
        d.values.clear();
        d.title = undefined;
    }
    d.value_label = QObject::tr("A − B");
    d.diverging = true;
    d.lo = d.hi = std::numeric_limits<double>::quiet_NaN();
    return d;
}

void link_colour_ranges(HeatmapData& a, HeatmapData& b) {
    if (!std::isnan(a.lo) || !std::isnan(b.lo)) return;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const HeatmapData* d : {&a, &b})
        for (double v : d->values)
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
    if (!std::isfinite(lo)) return;
    if (a.diverging || b.diverging) {
        hi = std::max(std::abs(lo), std::abs(hi));
        lo = -hi;
    }
    a.lo = b.lo = lo;
    a.hi = b.hi = hi;
}
namespace {
constexpr int kColourBarWidth = 14;
constexpr int kTickLength = 4;

bool is_vector_device(const QPainter& painter) {
    const QPaintEngine* engine = painter.paintEngine();
    if (!engine) return false;
    const auto type = engine->type();
    return type == QPaintEngine::SVG || type == QPaintEngine::Pdf || type == QPaintEngine::Picture;
}

// The heatmap for the shared interaction: x is the column index, y the row index (growing
// downwards), both in whole cells; home is every cell.
class HeatmapTarget : public RangeTarget {
public:
    explicit HeatmapTarget(HeatmapWidget* w) : w_(w) {}
    bool available() const override { return w_->data().rows > 0 && w_->data().columns > 0; }
    QRectF plot_area() const override { return w_->plot_rect(w_->rect()); }
    VisibleRange visible() const override { return of(w_->visible_cells()); }
    void apply(const VisibleRange& r) override {
        w_->set_visible_cells(QRect(static_cast<int>(r.x.lo), static_cast<int>(r.y.lo),
                                    static_cast<int>(r.x.span()), static_cast<int>(r.y.span())));
    }
    VisibleRange constrain(const VisibleRange& r, bool cover) const override {
        if (cover)  // every cell the band touches
            return {covering_cells(r.x, w_->data().columns), covering_cells(r.y, w_->data().rows)};
        return {snapped_to_cells(r.x, w_->data().columns), snapped_to_cells(r.y, w_->data().rows)};
    }
    bool has_home() const override { return true; }
    void capture_home() override {}
    VisibleRange home() const override { return of(w_->all_cells()); }
    void restore_home() override { w_->set_visible_cells(w_->all_cells()); }
    void forget_home() override {}
    bool y_grows_down() const override { return true; }
    double pan_quantum(Qt::Orientation) const override { return 1; }

private:
    HeatmapWidget* w_;
    static VisibleRange of(const QRect& c) {
        return {{static_cast<double>(c.left()), static_cast<double>(c.left() + c.width())},
                {static_cast<double>(c.top()), static_cast<double>(c.top() + c.height())}};
    }
};
}  // namespace

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    interaction_ = new PlotInteraction(std::make_unique<HeatmapTarget>(this), this, this);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

const ColourMap& HeatmapWidget::colour_map() const {
    return data_.diverging ? ColourMap::diverging() : ColourMap::viridis();
}

double HeatmapWidget::normalised(double v) const {
    return hi_ > lo_ ? (v - lo_) / (hi_ - lo_) : 0.5;
}

void HeatmapWidget::set_data(HeatmapData data) {
    const QRect before = all_cells();
    data_ = std::move(data);
    if (data_.values.size() != static_cast<std::size_t>(data_.rows) * data_.columns)
        data_.rows = data_.columns = 0;
    if (all_cells() != before || visible_.isEmpty()) visible_ = all_cells();
    double lo = INFINITY, hi = -INFINITY;
    for (double v : data_.values)
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!std::isfinite(lo)) lo = hi = 0;
    if (data_.diverging) {
        const double m = std::max(std::abs(lo), std::abs(hi));
        lo = -m;
        hi = m;
    }
    lo_ = std::isnan(data_.lo) ? lo : data_.lo;
    hi_ = std::isnan(data_.hi) ? hi : data_.hi;
    // A flat range (every cell one value, or values equal to their own precision) is drawn in the
    // map's middle colour on a range around the value, so that its colour bar still has two
    // labelled ends (a bar of one value carried one label).
    if (std::isfinite(lo_) && std::isfinite(hi_) &&
        !(hi_ - lo_ > 1e-12 * std::max(std::abs(lo_), std::abs(hi_)))) {
        const double v = (lo_ + hi_) / 2;
        const double half = v != 0 ? std::abs(v) * 0.1 : 1.0;
        lo_ = v - half;
        hi_ = v + half;
    }
    // Colour every cell once here; drawing then only scales this image.
    image_ = QImage(std::max(1, data_.columns), std::max(1, data_.rows), QImage::Format_RGB32);
    image_.fill(Qt::lightGray);
    const ColourMap& map = colour_map();
    const bool any_marked =
        data_.marked.size() == static_cast<std::size_t>(data_.rows) * data_.columns;
    for (int r = 0; r < data_.rows; ++r) {
        auto* line = reinterpret_cast<QRgb*>(image_.scanLine(r));
        for (int c = 0; c < data_.columns; ++c) {
            const double v = value(r, c);
            if (std::isnan(v))
                line[c] = qRgb(255, 0, 255);
            else if (std::isinf(v))
                line[c] = v > 0 ? qRgb(255, 255, 255) : qRgb(0, 0, 0);
            else if (any_marked && data_.marked[static_cast<std::size_t>(r) * data_.columns + c])
                line[c] = qRgb(255, 32, 32);
            else
                line[c] = map.at(normalised(v));
        }
    }
    if (selected_row_ >= data_.rows) selected_row_ = -1;
    widest_font_key_.clear();
    update();
}

void HeatmapWidget::set_visible_cells(const QRect& cells) {
    const QRect all = all_cells();
    QRect v = cells.intersected(all);
    if (v.isEmpty()) v = all;
    if (v == visible_) return;
    visible_ = v;
    update();
}

void HeatmapWidget::set_selected_row(int row) {
    selected_row_ = row;
    update();
}

QString HeatmapWidget::row_label(int row) const {
    return row < data_.row_labels.size() ? data_.row_labels[row] : QString::number(row);
}

QString HeatmapWidget::column_label(int column) const {
    return column < data_.column_labels.size() ? data_.column_labels[column]
                                               : QString::number(column);
}

double HeatmapWidget::widest_row_label(const QFont& font) const {
    const QString key = font.key();
    if (key != widest_font_key_) {
        const QFontMetricsF fm(font);
        widest_ = 0;
        for (int r = 0; r < data_.rows; ++r)
            widest_ = std::max(widest_, fm.horizontalAdvance(row_label(r)));
        widest_font_key_ = key;
    }
    return widest_;
}

HeatmapWidget::Layout HeatmapWidget::layout(const QRect& target) const {
    const QFontMetricsF fm(figure_font(font()));
    const double line = fm.height();
    QFont bold = figure_font(font());
    bold.setBold(true);
    const int top = static_cast<int>(
        data_.title.isEmpty()
            ? line * 0.6
            : wrapped_text_height(QFontMetricsF(bold), data_.title, target.width()) + line * 0.6);
    const int bottom = static_cast<int>(
        line * 1.6 + wrapped_text_height(fm, data_.x_label, target.width() * 0.8) +
        (data_.x_label.isEmpty() ? 0 : line * 0.2) +
        (data_.note.isEmpty() ? 0
                              : wrapped_text_height(QFontMetricsF(figure_font(font(), 0.85)),
                                                    data_.note, target.width() - 8) +
                                    line * 0.2) +
        kTickLength);
    // The axis labels run along the plot's height, over two lines when one is too short.
    const double along = std::max(1, target.height() - top - bottom);
    // The y title's strip at the left edge (drawn from 1 px in), then the row labels' column.
    const double title_strip =
        data_.y_label.isEmpty() ? 0 : wrapped_text_height(fm, data_.y_label, along) + 4;
    // Right of the cells: the colour bar 10 px off, its numbers (those paint() writes, at the
    // bar's length: a reserve for "−0.000e+00" took a fifth of an 89 mm figure from the cells),
    // then the value label along it.
    double widest_tick = 0;
    if (hi_ > lo_)
        for (const auto& [t, text] : colour_bar_ticks(lo_, hi_, along, line))
            widest_tick = std::max(widest_tick, fm.horizontalAdvance(text));
    const double right =
        std::ceil(10 + kColourBarWidth + 5 + widest_tick + 2 +
                  (data_.value_label.isEmpty()
                       ? 0
                       : line * 0.4 + wrapped_text_height(fm, data_.value_label, along) + 1));
    // Every row label whole (an exported figure holds each token in full) while the cells keep
    // kMinCellWidthShare of the width; beyond that a label is elided where it is drawn (a
    // 40-character vocabulary entry left the cells 6% of an 89 mm figure, session 31).
    Layout out;
    out.widest_label = widest_row_label(figure_font(font()));
    const double fixed_left = title_strip + kTickLength + 6;
    const double room = target.width() * (1 - kMinCellWidthShare) - fixed_left - right;
    out.label_width = std::clamp(room, 0.0, out.widest_label);
    const int left = static_cast<int>(std::ceil(fixed_left + out.label_width));
    out.plot = target.adjusted(left, top, -static_cast<int>(right), -bottom);
    out.label_left = target.left() + title_strip;
    // The labels' column ends 3 px before the ticks (whatever the rounding of `left`).
    out.label_width = out.plot.left() - kTickLength - 3 - out.label_left;
    return out;
}

QRect HeatmapWidget::plot_rect(const QRect& target) const {
    return layout(target).plot;
}

double HeatmapWidget::print_height(double width, double height) const {
    // The cells' height the texts need: a share of the width (as a chart's plot), and every word
    // of the axis labels along them on a line (wrapped along a sliver they broke a glyph a line).
    const QFontMetricsF fm(figure_font(font()));
    const double need =
        std::max({kMinPlotHeightShare * width, longest_word_width(fm, data_.y_label) + 2,
                  longest_word_width(fm, data_.value_label) + 2});
    // The room above and below the cells depends on the width only: one round settles it.
    const QRect at(0, 0, static_cast<int>(std::lround(width)),
                   static_cast<int>(std::lround(height)));
    const double have = plot_rect(at).height();
    return have >= need - 0.5 ? height : height + std::ceil(need - have);
}

void HeatmapWidget::paint(QPainter& painter, const QRect& target) const {
    painter.save();
    painter.setClipRect(target);
    painter.fillRect(target, Qt::white);
    const QFont font_px = figure_font(font());
    painter.setFont(font_px);
    const QFontMetricsF fm(font_px);
    const Layout lay = layout(target);
    const QRect plot = lay.plot;
    const QColor ink(40, 40, 40);

    if (!data_.title.isEmpty()) {
        QFont bold = font_px;
        bold.setBold(true);
        painter.setFont(bold);
        painter.setPen(ink);
        draw_wrapped(painter,
                     QRectF(target.left(), target.top() + fm.height() * 0.2, target.width(),
                            plot.top() - target.top()),
                     Qt::AlignHCenter | Qt::AlignTop, data_.title);
        painter.setFont(font_px);
    }
    if (data_.rows == 0 || data_.columns == 0) {
        painter.setPen(Qt::gray);
        painter.drawText(target, Qt::AlignCenter, tr("No data"));
        painter.restore();
        return;
    }
    if (plot.width() < 4 || plot.height() < 4) {
        // Cells that exist but have no room (a print layout grows the panel for its texts,
        // print_height, but not its width) are never drawn as "No data", which a reader takes
        // for an empty result: the panel says so, and an export's layout check fails on it.
        note_layout_problem(painter,
                            tr("the heatmap '%1' has no room for its %2 × %3 cells (a plot of "
                               "%4 × %5 px in a panel of %6 × %7): they are not drawn")
                                .arg(data_.title.simplified())
                                .arg(data_.rows)
                                .arg(data_.columns)
                                .arg(plot.width())
                                .arg(plot.height())
                                .arg(target.width())
                                .arg(target.height()));
        painter.setPen(Qt::gray);
        painter.drawText(target, Qt::AlignCenter | Qt::TextWordWrap,
                         tr("Too small to draw the cells"));
        painter.restore();
        return;
    }

    // Cells: the visible window (every cell unless zoomed).
    const QRect shown = visible_.isEmpty() ? all_cells() : visible_;
    const int r0 = shown.top(), c0 = shown.left(), n_rows = shown.height(),
              n_columns = shown.width();
    const double cw = static_cast<double>(plot.width()) / n_columns;
    const double ch = static_cast<double>(plot.height()) / n_rows;
    note_plot_area(painter, QRectF(plot));
    if (is_vector_device(painter)) {
        // One image, not a rectangle per cell: renderers antialias the edges of abutting
        // rectangles into hairline seams (librsvg, pdf viewers). Scaled up beforehand by whole
        // pixels per cell, each axis on its own, until the image has the plot's size at 600 dpi:
        // a viewer's smoothing of a small image (librsvg and poppler interpolate) then blurs a
        // cell's edge by a fraction of a printed dot instead of a band across the cell.
        const QImage cells = image_.copy(shown);
        const QRectF on_device = painter.combinedTransform().mapRect(QRectF(plot));
        const QPaintDevice* device = painter.device();
        auto factor = [](double extent, int dpi, int n) {  // extent in device units
            const double pixels = extent / std::max(1, dpi) * 600.0;
            return std::clamp(static_cast<int>(std::ceil(pixels / std::max(1, n))), 1, 1024);
        };
        int fx = factor(on_device.width(), device->logicalDpiX(), n_columns),
            fy = factor(on_device.height(), device->logicalDpiY(), n_rows);
        // At most 16 M pixels (64 MB while it is encoded), halving the larger factor first.
        while (static_cast<double>(n_columns) * fx * n_rows * fy > 16e6 && (fx > 1 || fy > 1))
            (fx >= fy ? fx : fy) = std::max(1, (fx >= fy ? fx : fy) / 2);
        const QSize scaled(n_columns * fx, n_rows * fy);
        // Lossless: without the hint Qt's PDF engine stores the image as a JPEG, whose blocks
        // smear a cell's colour into its neighbours' (hundreds of colours for a map's 52).
        painter.setRenderHint(QPainter::LosslessImageRendering, true);
        painter.drawImage(QRectF(plot),
                          scaled != cells.size()
                              ? cells.scaled(scaled, Qt::IgnoreAspectRatio, Qt::FastTransformation)
                              : cells);
    } else {
        // Nearest-neighbour scaling keeps cell borders sharp and is what makes a 24 × 4096 redraw
        // cheap (docs/benchmarks.md, "Heatmap redraw").
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter.drawImage(QRectF(plot), image_, QRectF(shown));
    }

    // Frame, ticks and marks as one path: real vector strokes in SVG/PDF.
    QPainterPath axes;
    axes.addRect(QRectF(plot).adjusted(-0.5, -0.5, 0.5, 0.5));
    painter.setPen(ink);
    const int row_step =
        std::max(1, static_cast<int>(std::ceil(n_rows * fm.height() / std::max(1, plot.height()))));
    for (int r = r0; r < r0 + n_rows; r += row_step) {
        const double y = plot.top() + (r - r0 + 0.5) * ch;
        axes.moveTo(plot.left() - kTickLength, y);
        axes.lineTo(plot.left(), y);
        // A label reaching below the plot into the column labels' row (the bottom row thinner
        // than a line of text) would sit on the first column's label: the tick stays, unlabelled.
        if (r > r0 && y + fm.height() / 2 > plot.bottom() + kTickLength + 2) continue;
        // In the labels' column, right of the y title's strip (drawn from the panel's edge they
        // lay on the title). Whole unless wider than the column layout() allows (the cells keep
        // kMinCellWidthShare of the width): elided then, which the layout check reports.
        const QString label = row_label(r);
        const QString text = fm.elidedText(label, Qt::ElideRight, lay.label_width);
        if (text.isEmpty() && !label.trimmed().isEmpty())
            note_layout_problem(painter, tr("the row label '%1' of the heatmap '%2' has no room "
                                            "(%3 px): it is not drawn")
                                             .arg(label.simplified(), data_.title.simplified())
                                             .arg(lay.label_width, 0, 'f', 1));
        painter.drawText(QRectF(lay.label_left, y - fm.height() / 2, std::max(0.0, lay.label_width),
                                fm.height()),
                         Qt::AlignRight | Qt::AlignVCenter, text);
    }
    // The step between labelled columns follows the usual label's width (the 90th percentile of
    // up to 65 of them), not the widest: one long token among short ones thinned the labels of a
    // whole row of tokens to a few. A label that would touch the one drawn before it is left out
    // (its tick stays; hovering names the cell), so a long token never lies on its neighbours.
    std::vector<double> widths;
    for (int c = 0; c < data_.columns; c += std::max(1, data_.columns / 64))
        widths.push_back(fm.horizontalAdvance(column_label(c)));
    double usual = fm.horizontalAdvance(QStringLiteral("0000"));
    if (!widths.empty()) {
        const auto at = widths.begin() + static_cast<std::ptrdiff_t>((widths.size() - 1) * 9 / 10);
        std::nth_element(widths.begin(), at, widths.end());
        usual = std::max(usual, *at);
    }
    constexpr double kLabelGap = 12;
    const int max_column_ticks = std::max(1, static_cast<int>(plot.width() / (usual + kLabelGap)));
    int column_step =
        std::max(1, static_cast<int>(std::ceil(static_cast<double>(n_columns) / max_column_ticks)));
    // Round the step to 1/2/5 × 10^k so that the ticks land on readable positions.
    if (column_step > 1) {
        const auto ticks = nice_ticks(0, n_columns, max_column_ticks);
        if (ticks.size() >= 2) column_step = std::max(1, static_cast<int>(ticks[1] - ticks[0]));
    }
    const int phase = data_.marked_column >= 0 ? data_.marked_column % column_step : 0;
    const int first_column = c0 + ((phase - c0) % column_step + column_step) % column_step;
    double last_right = -std::numeric_limits<double>::infinity();
    for (int c = first_column; c < c0 + n_columns; c += column_step) {
        const double x = plot.left() + (c - c0 + 0.5) * cw;
        axes.moveTo(x, plot.bottom() + 1);
        axes.lineTo(x, plot.bottom() + 1 + kTickLength);
        const QString label = column_label(c);
        const double half = fm.horizontalAdvance(label) / 2;
        if (x - half < last_right + kLabelGap / 2) continue;
        painter.drawText(
            QRectF(x - half - 1, plot.bottom() + kTickLength + 2, 2 * half + 2, fm.height()),
            Qt::AlignHCenter | Qt::AlignTop, label);
        last_right = x + half;
    }
    painter.setBrush(Qt::NoBrush);
    painter.drawPath(axes);
    if (data_.marked_column >= c0 && data_.marked_column < c0 + n_columns) {
        QPainterPath mark;
        const double x = plot.left() + (data_.marked_column - c0 + 0.5) * cw;
        mark.moveTo(x, plot.top());
        mark.lineTo(x, plot.bottom());
        painter.setPen(QPen(QColor(255, 255, 255, 170), 1, Qt::DashLine));
        painter.drawPath(mark);
    }
    if (selected_row_ >= r0 && selected_row_ < r0 + n_rows) {
        painter.setPen(QPen(QColor(230, 30, 30), 2));
        painter.drawRect(QRectF(plot.left() + 1, plot.top() + (selected_row_ - r0) * ch + 1,
                                plot.width() - 2, std::max(1.0, ch - 2)));
    }
    painter.setPen(ink);
    if (!data_.x_label.isEmpty()) {
        // Centred under the plot, within the panel.
        const double width = target.width() * 0.8;
        draw_wrapped(painter,
                     QRectF(std::clamp(plot.center().x() - width / 2, double(target.left()),
                                       target.left() + target.width() - width),
                            plot.bottom() + kTickLength + 2 + fm.height() * 1.1, width,
                            wrapped_text_height(fm, data_.x_label, width)),
                     Qt::AlignHCenter | Qt::AlignTop, data_.x_label);
    }
    if (!data_.note.isEmpty()) {
        QFont small = figure_font(font(), 0.85);
        painter.setFont(small);
        painter.setPen(QColor(90, 90, 90));
        // The note in full, wrapped over as many lines as it needs (never elided, so that an
        // exported figure holds the whole sentence).
        const double height =
            wrapped_text_height(QFontMetricsF(small), data_.note, target.width() - 8);
        const QRectF where(target.left() + 4, target.bottom() - height - fm.height() * 0.1,
                           target.width() - 8, height);
        draw_wrapped(painter, where, Qt::AlignLeft | Qt::AlignTop, data_.note);
        painter.setFont(font_px);
        painter.setPen(ink);
    }
    // The axis labels along the plot's height, read bottom to top, wrapped when longer.
    auto draw_along = [&](const QString& text, double left) {
        const double h = wrapped_text_height(fm, text, plot.height());
        painter.save();
        painter.translate(left, plot.center().y());
        painter.rotate(-90);
        draw_wrapped(painter, QRectF(-plot.height() / 2.0, 0, plot.height(), h),
                     Qt::AlignHCenter | Qt::AlignTop, text);
        painter.restore();
    };
    if (!data_.y_label.isEmpty()) draw_along(data_.y_label, target.left() + 1);

    // Colour bar: 64 bands are indistinguishable from the 256-entry table at this size.
    const QRectF bar(plot.right() + 10, plot.top(), kColourBarWidth, plot.height());
    const ColourMap& map = colour_map();
    constexpr int kBands = 64;
    painter.setPen(Qt::NoPen);
    for (int i = 0; i < kBands; ++i) {
        const double t = (i + 0.5) / kBands;
        const double y0 = bar.bottom() - (i + 1) * bar.height() / kBands;
        painter.fillRect(QRectF(bar.left(), y0, bar.width(), bar.height() / kBands + 0.5),
                         QColor::fromRgb(map.at(t)));
    }
    note_plot_area(painter, bar);
    note_colour_bar(painter, bar, Qt::Vertical);
    QPainterPath bar_axes;
    bar_axes.addRect(bar);
    // Both ends labelled, and round values between where there is room: a bar ticked only at
    // round values carried one label ("0", "0.5") when its range held one (session 28).
    const auto ticks = colour_bar_ticks(lo_, hi_, bar.height(), fm.height());
    painter.setPen(ink);
    double widest_tick = 0;
    for (const auto& [t, text] : ticks) {
        widest_tick = std::max(widest_tick, fm.horizontalAdvance(text));
        const double y =
            hi_ > lo_ ? bar.bottom() - (t - lo_) / (hi_ - lo_) * bar.height() : bar.center().y();
        bar_axes.moveTo(bar.right(), y);
        bar_axes.lineTo(bar.right() + 3, y);
        // An end's label is kept within the bar's height (centred on its tick it reached half a
        // line past the bar, onto the x axis's labels below: '[MASK]' overlapped '-3.49').
        const double top = std::max(static_cast<double>(bar.top()),
                                    std::min(y - fm.height() / 2.0, bar.bottom() - fm.height()));
        painter.drawText(
            QRectF(bar.right() + 5, top, target.right() - bar.right() - 5, fm.height()),
            Qt::AlignLeft | Qt::AlignVCenter, text);
    }
    painter.setBrush(Qt::NoBrush);
    painter.drawPath(bar_axes);
    if (!data_.value_label.isEmpty()) {
        // Beside the colour bar's numbers, as a colour bar's label is.
        const double h = wrapped_text_height(fm, data_.value_label, plot.height());
        draw_along(data_.value_label, std::min(bar.right() + 5 + widest_tick + fm.height() * 0.4,
                                               target.right() - 1 - h));
    }
    painter.restore();
}

void HeatmapWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    paint(painter, rect());
}

QPoint HeatmapWidget::cell_at(const QPoint& position) const {
    const QRect plot = plot_rect(rect());
    if (data_.rows == 0 || !plot.contains(position)) return {-1, -1};
    const QRect shown = visible_.isEmpty() ? all_cells() : visible_;
    const int c =
        std::clamp(shown.left() + static_cast<int>((position.x() - plot.left()) * shown.width() /
                                                   static_cast<double>(plot.width())),
                   shown.left(), shown.left() + shown.width() - 1);
    const int r =
        std::clamp(shown.top() + static_cast<int>((position.y() - plot.top()) * shown.height() /
                                                  static_cast<double>(plot.height())),
                   shown.top(), shown.top() + shown.height() - 1);
    return {c, r};
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* event) {
    const QPoint cell = cell_at(event->position().toPoint());
    if (cell.x() < 0) {
        readout_.clear();
        QToolTip::hideText();
        return;
    }
    const double v = value(cell.y(), cell.x());
    // A label that is not the index (a token, a layer name) gets the index beside it.
    auto named = [](const QString& label, int index) {
        return label == QString::number(index) ? label
                                               : QStringLiteral("%1 [%2]").arg(label).arg(index);
    };
    readout_ = tr("%1 = %2, %3 = %4: %5")
                   .arg(data_.y_label.isEmpty() ? tr("row") : data_.y_label,
                        named(row_label(cell.y()), cell.y()),
                        data_.x_label.isEmpty() ? tr("column") : data_.x_label,
                        named(column_label(cell.x()), cell.x()),
                        PlotInteraction::format_value(v));  // exact: reads back as the same double
    QToolTip::showText(event->globalPosition().toPoint(), readout_, this);
    emit hovered(cell.y(), cell.x(), v);
}

void HeatmapWidget::mousePressEvent(QMouseEvent* event) {
    const QPoint cell = cell_at(event->position().toPoint());
    if (event->button() != Qt::LeftButton || cell.y() < 0) return;
    set_selected_row(cell.y());
    emit rowClicked(cell.y());
    if (cell.x() >= 0) emit cellClicked(cell.y(), cell.x());
}

void HeatmapWidget::leaveEvent(QEvent*) {
    readout_.clear();
}

}  // namespace routescope::views
