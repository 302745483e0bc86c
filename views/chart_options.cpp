#include "views/chart_options.hpp"

#include <QAbstractAxis>
#include <QActionGroup>
#include <QChart>
#include <QChartView>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLogValueAxis>
#include <QMenu>
#include <QMessageBox>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <cmath>

#include "views/chart_figure.hpp"
#include "views/chart_interaction.hpp"
#include "views/chart_panel.hpp"

namespace routescope::views {
namespace {
QAbstractAxis* first_axis(QChartView* view, Qt::Orientation o) {
    const auto axes = view->chart()->axes(o);
    return axes.isEmpty() ? nullptr : axes.first();
}

bool is_log(QAbstractAxis* a) {
    return qobject_cast<QLogValueAxis*>(a) != nullptr;
}

/// The axis's visible range in its own values.
std::pair<double, double> raw_range(QAbstractAxis* a) {
    if (auto* v = qobject_cast<QValueAxis*>(a)) return {v->min(), v->max()};
    if (auto* l = qobject_cast<QLogValueAxis*>(a)) return {l->min(), l->max()};
    return {NAN, NAN};
}

const char* scale_property(Qt::Orientation o) {
    return o == Qt::Horizontal ? "routescopeLogX" : "routescopeLogY";
}

/// The smallest and largest value along `o` of the series attached to `axis`; whether all are > 0.
struct Extent {
    double lo = INFINITY, hi = -INFINITY;
    bool positive = true;
};
Extent extent_of(QChart* chart, QAbstractAxis* axis, Qt::Orientation o) {
    Extent e;
    for (QAbstractSeries* s : chart->series()) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        if (!xy || !s->attachedAxes().contains(axis)) continue;
        for (const QPointF& p : xy->points()) {
            const double v = o == Qt::Horizontal ? p.x() : p.y();
            if (!std::isfinite(v)) continue;
            e.lo = std::min(e.lo, v);
            e.hi = std::max(e.hi, v);
            e.positive = e.positive && v > 0;
        }
    }
    return e;
}

/// Swaps the axis along `o` to the kind the view asks for (its property), if it is not already.
QString apply_scale(QChartView* view, Qt::Orientation o) {
    const bool want = view->property(scale_property(o)).toBool();
    QAbstractAxis* axis = first_axis(view, o);
    if (!axis) return {};  // no data drawn yet: the choice applies when it is
    const bool log = is_log(axis);
    if (want == log) return {};
    if (!log && !qobject_cast<QValueAxis*>(axis))
        return QObject::tr("the axis is not a numeric axis");
    QChart* chart = view->chart();
    const Extent e = extent_of(chart, axis, o);
    if (want && !e.positive)
        return QObject::tr("a logarithmic axis cannot show values ≤ 0; these data have some");
    if (want) {
        auto* fresh = new QLogValueAxis();
        fresh->setBase(10);
        fresh->setLabelFormat("%g");
        fresh->setMinorTickCount(-1);                     // the 2…9 ticks of every decade
        fresh->setProperty("routescopeScaleAxis", true);  // made here: linear again on a redraw
        replace_axis(chart, axis, fresh);
        if (e.lo <= e.hi) {
            const double a = std::log10(e.lo), b = std::log10(e.hi);
            const double pad = std::max(0.05 * (b - a), 0.05);
            // Data within two decades (a loss from 2 to 9) are labelled in octaves.
            set_labelled_log_range(fresh, std::pow(10.0, a - pad), std::pow(10.0, b + pad),
                                   /*octaves=*/true);
        }
    } else {
        // The workbench's linear axis (round ticks), then the data's range as fit_axes gives it.
        QValueAxis* fresh = linear_axis(view, o, axis);
        if (e.lo <= e.hi) {
            const double pad = e.hi > e.lo ? 0.05 * (e.hi - e.lo) : 0.5;
            fresh->setRange(e.lo >= 0 ? std::max(0.0, e.lo - pad) : e.lo - pad, e.hi + pad);
            fresh->applyNiceNumbers();
        }
    }
    if (PlotInteraction* i = chart_interaction(view)) i->forget();  // a new home range
    if (auto* figure = dynamic_cast<FigureChartView*>(view)) figure->fit_decorations();
    return {};
}

/// Why [lo, hi] (the axis's own values) cannot be shown on `a`, whose data fill `data` (drawn
/// coordinates), or an empty string.
QString check(QAbstractAxis* a, double lo, double hi, AxisRange data, const QString& name) {
    if (!a) return QObject::tr("the chart has no %1 axis").arg(name);
    if (is_log(a) && std::isfinite(lo) && lo <= 0)
        return QObject::tr("the %1 axis is logarithmic: its limits must be above 0").arg(name);
    const AxisRange drawn =
        is_log(a) ? AxisRange{std::log10(lo), std::log10(hi)} : AxisRange{lo, hi};
    switch (drawable_range_problem(drawn, data)) {
        case RangeProblem::none:
            return {};
        case RangeProblem::not_numbers:
            return QObject::tr("the %1 limits must be numbers").arg(name);
        case RangeProblem::not_increasing:
            return QObject::tr("the %1 axis must run from a smaller to a larger value").arg(name);
        case RangeProblem::too_large:
            return QObject::tr("the %1 limits must lie within ±%2")
                .arg(name, QString::number(kMaxAxisValue, 'g', 3));
        case RangeProblem::too_narrow:
            return QObject::tr(
                       "the %1 range is narrower than %2 of its values (1e-9 × the larger "
                       "limit): an axis cannot label it")
                .arg(name, QString::number(kMinRelativeSpan, 'g', 3));
        case RangeProblem::too_deep:
            return QObject::tr(
                       "the %1 range would draw the data more than %2 times its width "
                       "away: zoom in less deeply")
                .arg(name, QString::number(kMaxZoomDepth, 'g', 3));
    }
    return {};
}
}  // namespace

QString set_axis_limits(QChartView* view, double x0, double x1, double y0, double y1) {
    QAbstractAxis* ax = first_axis(view, Qt::Horizontal);
    QAbstractAxis* ay = first_axis(view, Qt::Vertical);
    PlotInteraction* interaction = chart_interaction(view);
    // The data's range: the zoom's home (the range the view fit to its data), else the axes' now.
    const VisibleRange data =
        interaction ? interaction->home_range() : VisibleRange{{NAN, NAN}, {NAN, NAN}};
    for (const QString& e : {check(ax, x0, x1, data.x, QObject::tr("horizontal")),
                             check(ay, y0, y1, data.y, QObject::tr("vertical"))})
        if (!e.isEmpty()) return e;
    if (!interaction) return QObject::tr("the chart cannot be zoomed");
    // The interaction's ranges are in the axes' drawn coordinates (log10 on a log axis).
    auto drawn = [](QAbstractAxis* a, double v) { return is_log(a) ? std::log10(v) : v; };
    interaction->set_limits({{drawn(ax, x0), drawn(ax, x1)}, {drawn(ay, y0), drawn(ay, y1)}});
    return {};
}

std::optional<std::array<double, 4>> zoomed_axis_limits(QChartView* view) {
    PlotInteraction* interaction = chart_interaction(view);
    QAbstractAxis* ax = first_axis(view, Qt::Horizontal);
    QAbstractAxis* ay = first_axis(view, Qt::Vertical);
    if (!interaction || !interaction->zoomed() || !ax || !ay) return std::nullopt;
    const auto [x0, x1] = raw_range(ax);
    const auto [y0, y1] = raw_range(ay);
    if (!std::isfinite(x0) || !std::isfinite(x1) || !std::isfinite(y0) || !std::isfinite(y1))
        return std::nullopt;
    return std::array<double, 4>{x0, x1, y0, y1};
}

void edit_axis_limits(QChartView* view) {
    QAbstractAxis* ax = first_axis(view, Qt::Horizontal);
    QAbstractAxis* ay = first_axis(view, Qt::Vertical);
    if (!ax || !ay) return;
    QDialog dialog(view);
    dialog.setWindowTitle(QObject::tr("Axis Limits"));
    auto* form = new QFormLayout(&dialog);
    auto field = [&](double v, const char* name) {
        auto* e = new QLineEdit(QString::number(v, 'g', 6), &dialog);
        e->setObjectName(name);
        return e;
    };
    const auto [x0, x1] = raw_range(ax);
    const auto [y0, y1] = raw_range(ay);
    auto* x_from = field(x0, "xFrom");
    auto* x_to = field(x1, "xTo");
    auto* y_from = field(y0, "yFrom");
    auto* y_to = field(y1, "yTo");
    auto name = [](QAbstractAxis* a, const QString& fallback) {
        const QString t = a->titleText().simplified();
        return t.isEmpty() ? fallback : t;
    };
    form->addRow(QObject::tr("%1 from:").arg(name(ax, QObject::tr("Horizontal"))), x_from);
    form->addRow(QObject::tr("%1 to:").arg(name(ax, QObject::tr("Horizontal"))), x_to);
    form->addRow(QObject::tr("%1 from:").arg(name(ay, QObject::tr("Vertical"))), y_from);
    form->addRow(QObject::tr("%1 to:").arg(name(ay, QObject::tr("Vertical"))), y_to);
    auto* error = new QLabel(&dialog);
    error->setObjectName("limitsError");
    error->setStyleSheet(QStringLiteral("color: #b00020"));
    error->setWordWrap(true);
    form->addRow(error);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, [&] {
        auto number = [](QLineEdit* e) {
            bool ok = false;
            const double v = e->text().trimmed().toDouble(&ok);
            return ok ? v : NAN;
        };
        const QString e =
            set_axis_limits(view, number(x_from), number(x_to), number(y_from), number(y_to));
        if (e.isEmpty())
            dialog.accept();
        else
            error->setText(e);  // the dialog stays open with the reason
    });
    dialog.exec();
}

void apply_log_scales(QChartView* view) {
    for (const Qt::Orientation o : {Qt::Horizontal, Qt::Vertical})
        if (view->property(scale_property(o)).toBool()) (void)apply_scale(view, o);
}

void keep_log_scales(QChartView* view) {
    if (!view->property("routescopeLogX").toBool() && !view->property("routescopeLogY").toBool())
        return;
    if (view->property("routescopeScalePending").toBool()) return;
    view->setProperty("routescopeScalePending", true);
    QMetaObject::invokeMethod(
        view,
        [view] {
            view->setProperty("routescopeScalePending", false);
            apply_log_scales(view);
        },
        Qt::QueuedConnection);
}

bool log_scale_wanted(QChartView* view, Qt::Orientation orientation) {
    return view->property(scale_property(orientation)).toBool();
}

bool log_scale(QChartView* view, Qt::Orientation orientation) {
    return is_log(first_axis(view, orientation));
}

QString set_log_scale(QChartView* view, Qt::Orientation orientation, bool on) {
    const bool before = view->property(scale_property(orientation)).toBool();
    view->setProperty(scale_property(orientation), on);
    const QString e = apply_scale(view, orientation);
    if (!e.isEmpty()) view->setProperty(scale_property(orientation), before && !on);
    if (auto* figure = dynamic_cast<FigureChartView*>(view); figure && before != on)
        figure->notify_options_changed();
    return e;
}

void attach_chart_options(FigureChartView* view) {
    view->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(view, &QWidget::customContextMenuRequested, view, [view](const QPoint& pos) {
        auto* menu = new QMenu(view);
        menu->setObjectName("chartMenu");
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->addAction(QObject::tr("Axis &Limits…"), view, [view] { edit_axis_limits(view); });
        if (PlotInteraction* i = chart_interaction(view))
            menu->addAction(QObject::tr("&Reset Zoom"), i, [i] { i->reset(); });
        for (const auto& [o, text] :
             {std::pair{Qt::Horizontal, QObject::tr("Logarithmic &Horizontal Axis")},
              std::pair{Qt::Vertical, QObject::tr("Logarithmic &Vertical Axis")}}) {
            QAbstractAxis* axis = first_axis(view, o);
            QAction* a = menu->addAction(text);
            a->setObjectName(o == Qt::Horizontal ? "logX" : "logY");
            a->setCheckable(true);
            a->setChecked(is_log(axis));
            a->setEnabled(axis && (is_log(axis) || qobject_cast<QValueAxis*>(axis)));
            QObject::connect(a, &QAction::toggled, view, [view, o = o](bool on) {
                const QString e = set_log_scale(view, o, on);
                if (!e.isEmpty()) QMessageBox::information(view, QObject::tr("Axis Scale"), e);
            });
        }
        QMenu* legend = menu->addMenu(QObject::tr("L&egend"));
        auto* group = new QActionGroup(legend);
        using P = FigureChartView::LegendPosition;
        for (const auto& [position, text] : {std::pair{P::Below, QObject::tr("&Below the Plot")},
                                             std::pair{P::Right, QObject::tr("&Right of the Plot")},
                                             std::pair{P::Hidden, QObject::tr("&Hidden")}}) {
            QAction* a = legend->addAction(
                text, view, [view, position = position] { view->set_legend_position(position); });
            a->setCheckable(true);
            a->setChecked(view->legend_position() == position);
            group->addAction(a);
        }
        menu->popup(view->mapToGlobal(pos));
    });
}

}  // namespace routescope::views
