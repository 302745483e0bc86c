#include "views/chart_panel.hpp"

#include "views/chart_interaction.hpp"

#include <QScatterSeries>
#include <QXYSeries>

#include <algorithm>
#include <cmath>

#include "views/axis_ticks.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_options.hpp"
#include "views/display_name.hpp"

namespace routescope::views {

QChartView* make_chart_view(const QString& title, QWidget* parent) {
    auto* chart = new QChart();
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    chart->setAnimationOptions(QChart::NoAnimation);
    // The title, legend and axis titles in full, on screen and in figures (chart_figure.hpp).
    auto* view = new FigureChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(200, 160);
    attach_chart_interaction(view);  // zoom, pan, reset, hover readout
    attach_chart_options(view);      // right-click: axis limits, legend position
    return view;
}

QColor model_colour(std::size_t i) {
    static const char* const kColours[] = {"#0072b2", "#e69f00", "#009e73", "#d55e00",
                                           "#cc79a7", "#56b4e9", "#f0e442", "#000000"};
    const QColor base(kColours[i % 8]);
    const int cycle = static_cast<int>(i / 8);
    if (cycle == 0) return base;
    // A ninth model and beyond: the palette again, each round darker (black: a lighter grey), so
    // that no two models of one chart share a colour (the ninth was the first's blue).
    if (base == QColor(Qt::black)) return QColor::fromHsv(0, 0, std::min(200, 80 * cycle));
    return base.darker(100 + 50 * cycle);
}

void style_in(QXYSeries* series, const QColor& colour, Qt::PenStyle style) {
    QPen pen = series->pen();
    pen.setColor(colour);
    pen.setStyle(style);
    series->setPen(pen);
    series->setColor(colour);  // a scatter's markers
}

void style_as_model(QXYSeries* series, std::size_t i, Qt::PenStyle style) {
    style_in(series, model_colour(i), style);
}

QColor compared_colour(const QString& a, const QString& b) {
    const QColor c = model_colour_of(b);
    return model_key(a) == model_key(b) ? c.lighter(160) : c;
}

QColor model_colour_of(const QString& path) {
    return model_colour(static_cast<std::size_t>(model_colour_slot(path)));
}

void style_as_model_of(QXYSeries* series, const QString& path, Qt::PenStyle style) {
    style_as_model(series, static_cast<std::size_t>(model_colour_slot(path)), style);
}

void clear_chart(QChartView* view) {
    if (PlotInteraction* i = chart_interaction(view)) i->forget();  // new data, new home
    QChart* chart = view->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* a : chart->axes()) {
        chart->removeAxis(a);
        delete a;
    }
}

namespace {
constexpr const char* kIntegerTicks = "routescopeIntegerTicks";

/// The significant digits ("%.Ng") that tell apart ticks `step` apart on an axis reaching `m` in
/// magnitude: the digit of the step's place and every one above it, 3 at least. A fixed "%.3g"
/// wrote every tick of a gate histogram around 1e6 (steps of 0.2) as "1e+06".
int significant_digits(double m, double step) {
    if (!(m > 0) || !(step > 0) || !std::isfinite(m / step)) return 3;
    const int digits =
        std::clamp(static_cast<int>(std::ceil(std::log10(m / step) - 1e-9)) + 1, 3, 17);
    // "%.Ng" writes a value of exponent N in scientific notation and one below it in full: one
    // more digit keeps an axis across a power of ten in one notation ("99999950", "100000000",
    // not "99999950", "1e+08").
    const int exponent = static_cast<int>(std::floor(std::log10(m)));
    return digits == exponent ? digits + 1 : digits;
}

void set_round_ticks(QValueAxis* axis, double lo, double hi) {
    const auto ticks = nice_ticks(lo, hi, 5);
    if (ticks.size() < 2) return;
    double step = ticks[1] - ticks[0];
    if (axis->property(kIntegerTicks).toBool()) step = std::max(1.0, std::round(step));
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(step);
    // Steps far from 1 in scientific notation: "%.31f" wrote 1e-31 as 0.000…0001 across the page.
    // And as many significant digits as the step needs, whatever the range is set by (a view
    // that sets it after fit_axes, a zoom): distinct ticks always read differently.
    if (const double m = std::max(std::abs(lo), std::abs(hi)); step < 1e-4 || m >= 1e6) {
        axis->setLabelFormat(QStringLiteral("%.%1g").arg(significant_digits(m, step)));
        return;
    }
    const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

}  // namespace

void set_integer_ticks(QValueAxis* axis) {
    axis->setProperty(kIntegerTicks, true);
    set_round_ticks(axis, axis->min(), axis->max());
}

void set_labelled_log_range(QLogValueAxis* axis, double lo, double hi, bool octaves) {
    const auto powers = [&](double base) {  // powers of `base` inside [lo, hi]
        return std::floor(std::log(hi) / std::log(base) + 1e-9) -
               std::ceil(std::log(lo) / std::log(base) - 1e-9) + 1;
    };
    axis->setBase(10);
    if (powers(10) < 2) {
        if (octaves) {
            axis->setBase(2);
            if (powers(2) < 2) {
                lo = std::exp2(std::floor(std::log2(lo)));
                hi = std::max(std::exp2(std::ceil(std::log2(hi))), 2 * lo);
            }
        } else {
            lo = std::pow(10.0, std::floor(std::log10(lo)));
            hi = std::max(std::pow(10.0, std::ceil(std::log10(hi))), 10 * lo);
        }
    }
    axis->setRange(lo, hi);
}

void set_layer_ticks(QValueAxis* axis, bool relative_depth) {
    if (!relative_depth) {
        set_integer_ticks(axis);
        return;
    }
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickInterval(0.25);
    axis->setTickAnchor(0);
    axis->setLabelFormat("%.2f");
}

namespace {
QValueAxis* new_linear_axis(QChart* chart) {
    auto* v = new QValueAxis(chart);
    // Ticks at round numbers whatever range is set (a data range, a zoom): multiples of a
    // 1/2/5 × 10^k step, labelled with the digits the step needs ("0.25", not "0.2500").
    // The step follows minChanged/maxChanged, which QValueAxis emits with the new bound
    // stored and *before* its chart lays the axis out for the new range; rangeChanged comes
    // after that layout, which would place the old step over the new range (a step of 0.2
    // over a range of 10^6 makes millions of tick items and hangs the GUI).
    const auto follow = [v] { set_round_ticks(v, v->min(), v->max()); };
    QObject::connect(v, &QValueAxis::minChanged, v, follow);
    QObject::connect(v, &QValueAxis::maxChanged, v, follow);
    return v;
}

QValueAxis* axis(QChartView* view, Qt::Orientation o, Qt::Alignment where, const QString& title) {
    QChart* chart = view->chart();
    for (QAbstractAxis* a : chart->axes(o)) {
        if (auto* v = qobject_cast<QValueAxis*>(a)) {
            if (!title.isEmpty()) v->setTitleText(title);
            return v;
        }
        // A logarithmic axis a person asked for (set_log_scale) is linear while the chart is
        // redrawn; keep_log_scales makes it logarithmic again afterwards.
        if (a->property("routescopeScaleAxis").toBool()) {
            QValueAxis* v = linear_axis(view, o, a);
            if (!title.isEmpty()) v->setTitleText(title);
            keep_log_scales(view);
            return v;
        }
    }
    QValueAxis* v = new_linear_axis(chart);
    v->setTitleText(title);
    chart->addAxis(v, where);
    return v;
}
}  // namespace

/// Replaces `old` by `fresh` on the chart: same title (drawn by the figure or not), side, fonts,
/// colours and series.
void replace_axis(QChart* chart, QAbstractAxis* old, QAbstractAxis* fresh) {
    fresh->setTitleText(old->titleText());
    fresh->setTitleFont(old->titleFont());
    fresh->setTitleBrush(old->titleBrush());
    fresh->setTitleVisible(old->isTitleVisible());
    fresh->setProperty("figureDrawsTitle", old->property("figureDrawsTitle"));
    fresh->setLabelsFont(old->labelsFont());
    fresh->setLabelsBrush(old->labelsBrush());
    fresh->setLinePen(old->linePen());
    fresh->setGridLinePen(old->gridLinePen());
    fresh->setGridLineVisible(old->isGridLineVisible());
    const Qt::Alignment side = old->alignment();
    QList<QAbstractSeries*> attached;
    for (QAbstractSeries* s : chart->series())
        if (s->attachedAxes().contains(old)) attached << s;
    for (QAbstractSeries* s : attached)
        s->detachAxis(old);
    chart->removeAxis(old);
    delete old;
    chart->addAxis(fresh, side);
    for (QAbstractSeries* s : attached)
        s->attachAxis(fresh);
}

QValueAxis* linear_axis(QChartView* view, Qt::Orientation o, QAbstractAxis* replacing) {
    QValueAxis* v = new_linear_axis(view->chart());
    if (replacing)
        replace_axis(view->chart(), replacing, v);
    else
        view->chart()->addAxis(v, o == Qt::Horizontal ? Qt::AlignBottom : Qt::AlignLeft);
    return v;
}

QValueAxis* x_axis(QChartView* view, const QString& title) {
    return axis(view, Qt::Horizontal, Qt::AlignBottom, title);
}
QValueAxis* y_axis(QChartView* view, const QString& title) {
    return axis(view, Qt::Vertical, Qt::AlignLeft, title);
}

QLineSeries* add_line(QChartView* view, const QString& name, const std::vector<double>& x,
                      const std::vector<double>& y) {
    auto* series = new QLineSeries();
    series->setName(name);
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(std::min(x.size(), y.size())));
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
        if (std::isfinite(x[i]) && std::isfinite(y[i])) points.append({x[i], y[i]});
    series->replace(points);
    view->chart()->addSeries(series);
    series->attachAxis(x_axis(view));
    series->attachAxis(y_axis(view));
    keep_log_scales(view);
    return series;
}

namespace {
// On a series: the factor its y values carry. On an axis: what fit_axes added to its title.
constexpr const char* kYScale = "routescopeYScale";
constexpr const char* kScaleSuffix = "routescopeScaleSuffix";

/// " (×10⁻²⁰)": the factor 10^k an axis's values carry, as a printed axis title writes it.
QString power_of_ten_suffix(int k) {
    static const char16_t kSuperscript[] =
        u"\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
    QString digits;
    for (QChar c : QString::number(std::abs(k)))
        digits += QChar(kSuperscript[c.digitValue()]);
    return QStringLiteral(" (\u00d710") + (k < 0 ? QStringLiteral("\u207b") : QString()) + digits +
           QLatin1Char(')');
}

/// Keeps a series' recorded factor true to its points: points the view replaces are its own
/// values again (factor 1); a point the view appends takes the factor of the points beside it.
void watch_scale(QXYSeries* xy) {
    if (xy->property("routescopeScaleWatched").toBool()) return;
    xy->setProperty("routescopeScaleWatched", true);
    QObject::connect(xy, &QXYSeries::pointsReplaced, xy, [xy] { xy->setProperty(kYScale, 1.0); });
    QObject::connect(xy, &QXYSeries::pointAdded, xy, [xy](int i) {
        const double f = xy->property(kYScale).toDouble();
        if (!(f > 0) || f == 1) return;
        QPointF p = xy->at(i);
        p.setY(p.y() * f);
        xy->replace(i, p);
    });
}

/// Multiplies the y values of every series of the chart by `factor`, recording it on the series.
void scale_y(QChart* chart, double factor) {
    for (QAbstractSeries* s : chart->series()) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        if (!xy) continue;
        watch_scale(xy);
        QList<QPointF> points = xy->points();
        for (QPointF& p : points)
            p.setY(p.y() * factor);
        xy->replace(points);  // (the watch records factor 1, then the factor is set)
        xy->setProperty(kYScale, factor);
    }
}

/// Draws the y values of a chart whose values all lie below 1e-9 in magnitude as multiples of
/// 10^k, with "(×10^k)" in the axis title: Qt Charts lays out no ticks at all on a range narrower
/// than about 1e-12 (qFuzzyIsNull), so kernels of 1e-20 had a y axis without a value. Undoes the
/// factor an earlier fit left (the chart fitted again after new points). Returns whether the factor
/// changed.
bool scale_tiny_y(QChartView* view) {
    QChart* chart = view->chart();
    double before = 1;
    for (QAbstractSeries* s : chart->series()) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        const double f = xy ? xy->property(kYScale).toDouble() : 0;
        if (!(f > 0) || f == 1) continue;
        before = f;
        QList<QPointF> points = xy->points();
        for (QPointF& p : points)
            p.setY(p.y() / f);
        xy->replace(points);
        xy->setProperty(kYScale, 1.0);
    }
    double m = 0;
    for (QAbstractSeries* s : chart->series())
        if (auto* xy = qobject_cast<QXYSeries*>(s))
            for (const QPointF& p : xy->points())
                if (std::isfinite(p.y())) m = std::max(m, std::abs(p.y()));
    const int k = m > 0 && m < 1e-9 ? static_cast<int>(std::floor(std::log10(m) + 1e-6)) : 0;
    const double factor = k != 0 ? std::pow(10.0, -k) : 1.0;
    if (factor != 1) scale_y(chart, factor);
    // The title of the chart's y axis, never creating one (an empty chart has none).
    QValueAxis* y = nullptr;
    for (QAbstractAxis* a : chart->axes(Qt::Vertical))
        if (auto* v = qobject_cast<QValueAxis*>(a)) y = v;
    if (!y) return factor != before;
    QString title = y->titleText();
    const QString old_suffix = y->property(kScaleSuffix).toString();
    if (!old_suffix.isEmpty() && title.endsWith(old_suffix)) title.chop(old_suffix.size());
    const QString suffix = k != 0 ? power_of_ten_suffix(k) : QString();
    y->setProperty(kScaleSuffix, suffix);
    y->setTitleText(title + suffix);
    return factor != before;
}
}  // namespace

QXYSeries* add_marked_curve(QChartView* view, const QString& name, const std::vector<double>& x,
                            const std::vector<double>& y, const QString& path, bool second) {
    std::size_t finite = 0;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
        finite += std::isfinite(x[i]) && std::isfinite(y[i]);
    if (finite != 1) {
        QLineSeries* line = add_line(view, name, x, y);
        line->setPointsVisible(true);
        style_as_model_of(line, path, second ? Qt::DashLine : Qt::SolidLine);
        return line;
    }
    auto* points = new QScatterSeries();
    points->setName(name);
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
        if (std::isfinite(x[i]) && std::isfinite(y[i])) points->append(x[i], y[i]);
    points->setMarkerShape(second ? QScatterSeries::MarkerShapeRectangle
                                  : QScatterSeries::MarkerShapeCircle);
    points->setMarkerSize(10);
    view->chart()->addSeries(points);
    points->attachAxis(x_axis(view));
    points->attachAxis(y_axis(view));
    style_as_model_of(points, path);
    points->setBorderColor(model_colour_of(path));
    keep_log_scales(view);
    return points;
}

void fit_axes(QChartView* view) {
    const bool rescaled = scale_tiny_y(view);
    // Zoomed (a live training run growing): the fit becomes what a reset returns to, the zoom
    // stays (unless the values' factor changed under it).
    PlotInteraction* interaction = chart_interaction(view);
    const bool keep = interaction && interaction->zoomed() && !rescaled;
    const VisibleRange kept = keep ? interaction->visible_range() : VisibleRange{};
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (QAbstractSeries* s : view->chart()->series())
        if (auto* xy = qobject_cast<QXYSeries*>(s))
            for (const QPointF& p : xy->points()) {
                x0 = std::min(x0, p.x());
                x1 = std::max(x1, p.x());
                y0 = std::min(y0, p.y());
                y1 = std::max(y1, p.y());
            }
    if (!std::isfinite(x0)) return;
    // A range within rounding of one value (CKA of a model with itself: 1 ± 2e-16) is one value;
    // relative to the values, not to 1 (kernels of 1e-30 were drawn as a flat line at 0 on ±0.5).
    auto flat = [](double a, double b) {
        return !(b - a > 1e-9 * std::max(std::abs(a), std::abs(b)));
    };
    if (flat(x0, x1)) {  // one x (a one-layer dump): the point in the middle, not on the edge
        const double h = x0 != 0 ? 0.5 * std::abs(x0) : 0.5;
        x0 -= h;
        x1 += h;
    }
    const double pad = !flat(y0, y1) ? 0.05 * (y1 - y0) : y0 != 0 ? 0.5 * std::abs(y0) : 0.5;
    x_axis(view)->setRange(x0, x1);
    // Data that are never negative (fractions, probabilities, counts) get no axis below 0.
    y_axis(view)->setRange(y0 >= 0 ? std::max(0.0, y0 - pad) : y0 - pad, y1 + pad);
    // A layer axis (whole-number ticks) ends at the data: nice numbers took 23 layers to 30,
    // leaving a quarter of the plot empty.
    if (!x_axis(view)->property(kIntegerTicks).toBool()) x_axis(view)->applyNiceNumbers();
    y_axis(view)->applyNiceNumbers();
    // Values far below 1 or far above it: labels in scientific notation (a fixed "%.2f" printed
    // every tick of a 1e-30 axis as "0.00", and the axis showed none).
    // And as many digits as the tick step needs: values that differ in their fifth digit (the
    // similarity diagonal of two seeds) were labelled "0.411 0.411 0.411 0.411".
    for (QValueAxis* a : {x_axis(view), y_axis(view)}) {
        const double m = std::max(std::abs(a->min()), std::abs(a->max()));
        const double step = a->tickType() == QValueAxis::TicksDynamic
                                ? a->tickInterval()
                                : (a->max() - a->min()) / std::max(1, a->tickCount() - 1);
        if (!(m > 0) || !(step > 0) || !std::isfinite(step)) continue;
        if (m < 1e-3 || m >= 1e6) {
            a->setLabelFormat(QStringLiteral("%.%1g").arg(significant_digits(m, step)));
        } else if (a->property(kIntegerTicks).toBool()) {
            continue;  // whole numbers (set_integer_ticks)
        } else {
            // The fewest decimals that write the first tick and the step exactly (0.25 needs 2),
            // and at least as many as tell neighbouring ticks apart.
            int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 15);
            const auto exact = [](double v, int d) {
                const double scaled = v * std::pow(10.0, d);
                return std::abs(scaled - std::round(scaled)) <=
                       1e-6 * std::max(1.0, std::abs(scaled));
            };
            // The first tick: the axis's minimum, or for dynamic ticks the first multiple of the
            // interval from the anchor inside the range.
            const double first =
                a->tickType() == QValueAxis::TicksDynamic
                    ? a->tickAnchor() + std::ceil((a->min() - a->tickAnchor()) / step - 1e-9) * step
                    : a->min();
            while (decimals < 6 && !(exact(step, decimals) && exact(first, decimals)))
                ++decimals;
            const QString format = a->labelFormat();
            // A view's own fixed format with at least as many decimals stands.
            bool ok = false;
            const int given = format.startsWith("%.") && format.endsWith('f')
                                  ? format.mid(2, format.size() - 3).toInt(&ok)
                                  : -1;
            if (!ok || given < decimals) a->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
        }
    }
    if (keep) interaction->rebase(kept);
}

}  // namespace routescope::views
