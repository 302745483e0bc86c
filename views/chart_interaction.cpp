#include "views/chart_interaction.hpp"

#include <QApplication>
#include <QChartView>
#include <QKeyEvent>
#include <QLocale>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QRubberBand>
#include <QTextDocument>
#include <QToolTip>
#include <QValueAxis>
#include <QWheelEvent>
#include <QXYSeries>

#include <cmath>
#include <limits>

namespace routescope::views {

namespace {

constexpr double kZoomStep = 1.25;  ///< one wheel notch or one + / − press
constexpr double kPanStep = 0.1;    ///< one arrow key: a tenth of the visible range
constexpr int kMinBand = 4;         ///< pixels: a smaller rubber band extent is a click

// A Qt Charts view: the first horizontal and vertical axis of its chart, value or logarithmic
// (a log axis zooms and pans in log10 of its values).
class ChartTarget : public RangeTarget {
public:
    explicit ChartTarget(QChartView* view) : view_(view) {}

    bool available() const override {
        return supported(axis(Qt::Horizontal)) && supported(axis(Qt::Vertical));
    }
    QRectF plot_area() const override {
        const QRectF in_scene =
            view_->chart()->mapToScene(view_->chart()->plotArea()).boundingRect();
        return view_->viewportTransform().mapRect(in_scene);
    }
    VisibleRange visible() const override {
        return {range_of(axis(Qt::Horizontal)), range_of(axis(Qt::Vertical))};
    }
    void apply(const VisibleRange& r) override {
        if (!(r.x.span() > 0) || !(r.y.span() > 0) ||
            !std::isfinite(r.x.lo + r.x.hi + r.y.lo + r.y.hi))
            return;
        set_range(axis(Qt::Horizontal), r.x);
        set_range(axis(Qt::Vertical), r.y);
    }
    VisibleRange constrain(const VisibleRange& r, bool cover) const override {
        (void)cover;
        // A zoom or pan to a range the axes cannot draw (visible_range.hpp: an overflowing span,
        // one too narrow to label, the data too far off the plot for a PDF) stays where it is.
        const VisibleRange data = has_home() ? home() : visible();
        if (drawable_range_problem(r.x, data.x) != RangeProblem::none ||
            drawable_range_problem(r.y, data.y) != RangeProblem::none)
            return visible();
        return r;
    }
    bool has_home() const override {
        return home_x_ && home_y_ && home_x_ == axis(Qt::Horizontal) &&
               home_y_ == axis(Qt::Vertical);
    }
    void capture_home() override {
        home_x_ = axis(Qt::Horizontal);
        home_y_ = axis(Qt::Vertical);
        raw_x_ = raw(home_x_);
        raw_y_ = raw(home_y_);
    }
    VisibleRange home() const override {
        return {transformed(home_x_, raw_x_), transformed(home_y_, raw_y_)};
    }
    void restore_home() override {
        if (!has_home()) return;
        set_raw(home_x_, raw_x_);
        set_raw(home_y_, raw_y_);
    }
    void forget_home() override {
        home_x_ = nullptr;
        home_y_ = nullptr;
    }
    bool has_readout() const override { return true; }

    QString readout_at(const QPointF& at) const override {
        const QRectF area = plot_area();
        if (!available() || !area.contains(at) || area.width() < 1 || area.height() < 1) return {};
        const VisibleRange r = visible();
        QAbstractAxis* ax = axis(Qt::Horizontal);
        QAbstractAxis* ay = axis(Qt::Vertical);
        // The nearest point of any visible series within 10 pixels: its exact values.
        double best = 100.0;
        QString best_text;
        for (QAbstractSeries* s : view_->chart()->series()) {
            auto* xy = qobject_cast<QXYSeries*>(s);
            if (!xy || !xy->isVisible()) continue;
            for (const QPointF& p : xy->points()) {
                const double tx = to_axis(ax, p.x()), ty = to_axis(ay, p.y());
                if (!std::isfinite(tx) || !std::isfinite(ty)) continue;
                const double px = area.left() + (tx - r.x.lo) / r.x.span() * area.width();
                const double py = area.bottom() - (ty - r.y.lo) / r.y.span() * area.height();
                const double d = (px - at.x()) * (px - at.x()) + (py - at.y()) * (py - at.y());
                if (d <= best) {
                    best = d;
                    best_text = QObject::tr("%1: %2 = %3, %4 = %5")
                                    .arg(xy->name().isEmpty() ? QObject::tr("point") : xy->name(),
                                         axis_name(ax, "x"), shown(ax, r.x, p.x()),
                                         axis_name(ay, "y"), shown(ay, r.y, p.y()));
                }
            }
        }
        if (!best_text.isEmpty()) return best_text;
        const double x = from_axis(ax, r.x.lo + (at.x() - area.left()) / area.width() * r.x.span());
        const double y =
            from_axis(ay, r.y.lo + (area.bottom() - at.y()) / area.height() * r.y.span());
        return QObject::tr("pointer at %1 = %2, %3 = %4")
            .arg(axis_name(ax, "x"), shown(ax, r.x, x), axis_name(ay, "y"), shown(ay, r.y, y));
    }

private:
    /// The axis's title as the reader sees it ("step", "loss (nats)"), or `fallback`.
    static QString axis_name(QAbstractAxis* a, const char* fallback) {
        QString t = a ? a->titleText() : QString();
        if (Qt::mightBeRichText(t)) {
            QTextDocument doc;
            doc.setHtml(t);
            t = doc.toPlainText();
        }
        t = t.simplified();
        return t.isEmpty() ? QString::fromLatin1(fallback) : t;
    }
    /// `v` to the precision the axis shows: one digit finer than a thousandth of the visible
    /// range (its transformed range `r`), so that 0.25000000000000006 reads 0.250 on a 0..1 axis.
    static QString shown(QAbstractAxis* a, AxisRange r, double v) {
        if (!std::isfinite(v)) return QString::number(v);
        if (is_log(a)) return QString::number(v, 'g', 4);
        const double span = std::abs(r.span());
        if (!(span > 0)) return PlotInteraction::format_value(v);
        const int decimals =
            std::clamp(static_cast<int>(std::ceil(-std::log10(span / 1000))), 0, 12);
        if (std::abs(v) >= 1e7 || (v != 0 && std::abs(v) < 1e-4 && decimals > 8))
            return QString::number(v, 'g', 4);
        return QString::number(v, 'f', decimals);
    }

    QChartView* view_;
    QPointer<QAbstractAxis> home_x_, home_y_;
    AxisRange raw_x_, raw_y_;

    QAbstractAxis* axis(Qt::Orientation o) const {
        const auto axes = view_->chart()->axes(o);
        return axes.isEmpty() ? nullptr : axes.first();
    }
    static bool supported(QAbstractAxis* a) {
        return qobject_cast<QValueAxis*>(a) || qobject_cast<QLogValueAxis*>(a);
    }
    static bool is_log(QAbstractAxis* a) { return qobject_cast<QLogValueAxis*>(a) != nullptr; }
    static double to_axis(QAbstractAxis* a, double v) {
        return is_log(a) ? (v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN()) : v;
    }
    static double from_axis(QAbstractAxis* a, double v) {
        return is_log(a) ? std::pow(10.0, v) : v;
    }
    static AxisRange raw(QAbstractAxis* a) {
        if (auto* v = qobject_cast<QValueAxis*>(a)) return {v->min(), v->max()};
        if (auto* l = qobject_cast<QLogValueAxis*>(a)) return {l->min(), l->max()};
        return {};
    }
    static AxisRange transformed(QAbstractAxis* a, AxisRange r) {
        return {to_axis(a, r.lo), to_axis(a, r.hi)};
    }
    static AxisRange range_of(QAbstractAxis* a) { return transformed(a, raw(a)); }
    static void set_raw(QAbstractAxis* a, AxisRange r) {
        if (auto* v = qobject_cast<QValueAxis*>(a)) v->setRange(r.lo, r.hi);
        if (auto* l = qobject_cast<QLogValueAxis*>(a)) l->setRange(r.lo, r.hi);
    }
    static void set_range(QAbstractAxis* a, AxisRange r) {
        set_raw(a, {from_axis(a, r.lo), from_axis(a, r.hi)});
    }
};

}  // namespace

PlotInteraction::PlotInteraction(std::unique_ptr<RangeTarget> target, QWidget* key_widget,
                                 QWidget* mouse_widget)
    : QObject(key_widget),
      target_(std::move(target)),
      key_widget_(key_widget),
      mouse_widget_(mouse_widget) {
    setObjectName("plotInteraction");
    key_widget->installEventFilter(this);
    if (mouse_widget != key_widget) mouse_widget->installEventFilter(this);
    mouse_widget->setMouseTracking(true);
    if (key_widget->focusPolicy() == Qt::NoFocus) key_widget->setFocusPolicy(Qt::StrongFocus);
}

PlotInteraction::~PlotInteraction() = default;

QString PlotInteraction::format_value(double v) {
    // The shortest text that reads back as the same double: the exact value, never rounded.
    return QString::number(v, 'g', QLocale::FloatingPointShortest);
}

VisibleRange PlotInteraction::home_range() const {
    return target_->has_home() ? target_->home() : target_->visible();
}

bool PlotInteraction::zoomed() const {
    return target_->has_home() && target_->visible() != target_->home();
}

void PlotInteraction::ensure_home() {
    if (!target_->has_home()) target_->capture_home();
}

void PlotInteraction::change(const VisibleRange& requested, bool cover) {
    if (!target_->available()) return;
    ensure_home();
    const VisibleRange r = target_->constrain(requested, cover);
    if (r == target_->visible()) return;
    target_->apply(r);
    emit rangeChanged(target_->visible());
}

void PlotInteraction::set_limits(const VisibleRange& range) {
    change(range);
}

void PlotInteraction::zoom(double factor, QPointF anchor, Qt::Orientations orientations) {
    if (!target_->available() || !(factor > 0)) return;
    VisibleRange r = target_->visible();
    auto zoom_axis = [&](AxisRange a, double at, Qt::Orientation o) {
        // Cells: a whole number of them first, so that the cell under the pointer stays there.
        if (target_->pan_quantum(o) > 0)
            return zoomed_range(a, a.span() / std::max(1.0, std::round(a.span() / factor)), at);
        return zoomed_range(a, factor, at);
    };
    if (orientations & Qt::Horizontal) r.x = zoom_axis(r.x, anchor.x(), Qt::Horizontal);
    if (orientations & Qt::Vertical)
        r.y = zoom_axis(r.y, target_->y_grows_down() ? anchor.y() : 1.0 - anchor.y(), Qt::Vertical);
    change(r);
}

void PlotInteraction::pan(double dx, double dy) {
    if (!target_->available()) return;
    VisibleRange r = target_->visible();
    auto step = [this](AxisRange a, double fraction, Qt::Orientation o) {
        double d = fraction * a.span();
        const double q = target_->pan_quantum(o);
        if (q > 0 && d != 0 && std::abs(d) < q) d = std::copysign(q, d);
        return AxisRange{a.lo + d, a.hi + d};
    };
    r.x = step(r.x, dx, Qt::Horizontal);
    r.y = step(r.y, target_->y_grows_down() ? dy : -dy, Qt::Vertical);
    change(r);
}

void PlotInteraction::zoom_to(const QRectF& area) {
    if (!target_->available()) return;
    const QRectF plot = target_->plot_area();
    const QRectF band = area.normalized().intersected(plot);
    if (plot.width() < 1 || plot.height() < 1 || band.isEmpty()) return;
    VisibleRange r = target_->visible();
    const VisibleRange now = r;
    if (band.width() >= kMinBand) {
        r.x.lo = now.x.lo + (band.left() - plot.left()) / plot.width() * now.x.span();
        r.x.hi = now.x.lo + (band.right() - plot.left()) / plot.width() * now.x.span();
    }
    if (band.height() >= kMinBand) {
        const double top = (band.top() - plot.top()) / plot.height();
        const double bottom = (band.bottom() - plot.top()) / plot.height();
        if (target_->y_grows_down()) {
            r.y.lo = now.y.lo + top * now.y.span();
            r.y.hi = now.y.lo + bottom * now.y.span();
        } else {
            r.y.lo = now.y.hi - bottom * now.y.span();
            r.y.hi = now.y.hi - top * now.y.span();
        }
    }
    change(r, true);
}

void PlotInteraction::reset() {
    reset_silently();
    emit wasReset();  // also when this plot was home already: linked plots may not be
}

void PlotInteraction::reset_silently() {
    if (!target_->has_home()) return;
    target_->restore_home();
    target_->forget_home();
}

void PlotInteraction::set_visible_range(const VisibleRange& range) {
    if (!target_->available()) return;
    ensure_home();
    const VisibleRange r = target_->constrain(range, false);
    if (r != target_->visible()) target_->apply(r);
}

void PlotInteraction::forget() {
    target_->forget_home();
}

void PlotInteraction::rebase(const VisibleRange& keep) {
    target_->forget_home();
    target_->capture_home();
    set_visible_range(keep);
}

bool PlotInteraction::is_our_key(int key, Qt::KeyboardModifiers modifiers) {
    const auto mods = modifiers & ~(Qt::KeypadModifier | Qt::ShiftModifier);
    if (key == Qt::Key_0 && mods == Qt::ControlModifier) return true;
    if (mods != Qt::NoModifier) return false;
    switch (key) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
        case Qt::Key_Minus:
        case Qt::Key_Left:
        case Qt::Key_Right:
        case Qt::Key_Up:
        case Qt::Key_Down:
        case Qt::Key_R:
        case Qt::Key_Home:
            return true;
        default:
            return false;
    }
}

bool PlotInteraction::key(int key, Qt::KeyboardModifiers modifiers) {
    if (!is_our_key(key, modifiers)) return false;
    switch (key) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            zoom(kZoomStep);
            break;
        case Qt::Key_Minus:
            zoom(1.0 / kZoomStep);
            break;
        case Qt::Key_Left:
            pan(-kPanStep, 0);
            break;
        case Qt::Key_Right:
            pan(kPanStep, 0);
            break;
        case Qt::Key_Up:
            pan(0, -kPanStep);
            break;
        case Qt::Key_Down:
            pan(0, kPanStep);
            break;
        default:  // R, Home, Ctrl+0
            reset();
    }
    return true;
}

bool PlotInteraction::eventFilter(QObject* watched, QEvent* event) {
    if (forwarding_) return false;
    if (watched == key_widget_) {
        if (event->type() == QEvent::ShortcutOverride) {
            // Our keys go to the plot even where a window shortcut uses the same key.
            auto* k = static_cast<QKeyEvent*>(event);
            if (target_->available() && is_our_key(k->key(), k->modifiers())) {
                event->accept();
                return true;
            }
        } else if (event->type() == QEvent::KeyPress) {
            auto* k = static_cast<QKeyEvent*>(event);
            if (target_->available() && key(k->key(), k->modifiers())) return true;
        }
    }
    if (watched != mouse_widget_) return false;
    switch (event->type()) {
        case QEvent::Wheel: {
            auto* w = static_cast<QWheelEvent*>(event);
            const QRectF plot = target_->plot_area();
            const QPointF at = w->position();
            if (!target_->available() || !plot.contains(at) || w->angleDelta().y() == 0)
                return false;
            const double notches = w->angleDelta().y() / 120.0;
            Qt::Orientations o = Qt::Horizontal | Qt::Vertical;
            if (w->modifiers() & Qt::ShiftModifier) o = Qt::Horizontal;
            if (w->modifiers() & Qt::ControlModifier) o = Qt::Vertical;
            zoom(std::pow(kZoomStep, notches),
                 {(at.x() - plot.left()) / plot.width(), (at.y() - plot.top()) / plot.height()}, o);
            return true;
        }
        case QEvent::MouseButtonPress: {
            auto* m = static_cast<QMouseEvent*>(event);
            const QPoint at = m->position().toPoint();
            if (!target_->available() || !target_->plot_area().contains(at)) return false;
            if (key_widget_) key_widget_->setFocus(Qt::MouseFocusReason);
            press_ = last_ = at;
            if (m->button() == Qt::MiddleButton ||
                (m->button() == Qt::LeftButton && (m->modifiers() & Qt::ShiftModifier))) {
                drag_ = Drag::Pan;
                mouse_widget_->setCursor(Qt::ClosedHandCursor);
                return true;
            }
            if (m->button() == Qt::LeftButton) {
                drag_ = Drag::Pending;  // a click or the start of a rubber band
                return true;
            }
            return false;
        }
        case QEvent::MouseMove: {
            auto* m = static_cast<QMouseEvent*>(event);
            const QPoint at = m->position().toPoint();
            if (drag_ == Drag::Pending && (at - press_).manhattanLength() >= kMinBand) {
                drag_ = Drag::Band;
                if (!band_) band_ = new QRubberBand(QRubberBand::Rectangle, mouse_widget_);
            }
            if (drag_ == Drag::Band) {
                band_->setGeometry(QRect(press_, at).normalized());
                band_->show();
                return true;
            }
            if (drag_ == Drag::Pan) {
                const QRectF plot = target_->plot_area();
                const QPoint d = at - last_;
                last_ = at;
                if (plot.width() >= 1 && plot.height() >= 1 && !d.isNull()) {
                    // The data follow the pointer; an axis of whole cells moves once the
                    // pointer has moved half a cell or more from where it last moved it.
                    const VisibleRange r = target_->visible();
                    const double flip = target_->y_grows_down() ? -1.0 : 1.0;
                    VisibleRange n = r;
                    if (target_->pan_quantum(Qt::Horizontal) > 0) {
                        const auto cells =
                            std::lround((at.x() - press_.x()) / plot.width() * r.x.span());
                        n.x = {r.x.lo - cells, r.x.hi - cells};
                        if (cells != 0) press_.setX(at.x());
                    } else {
                        n.x = panned_range(r.x, -d.x() / plot.width());
                    }
                    if (target_->pan_quantum(Qt::Vertical) > 0) {
                        const auto cells =
                            std::lround((at.y() - press_.y()) / plot.height() * r.y.span());
                        n.y = {r.y.lo + flip * cells, r.y.hi + flip * cells};
                        if (cells != 0) press_.setY(at.y());
                    } else {
                        n.y = panned_range(r.y, flip * d.y() / plot.height());
                    }
                    if (n != r) change(n);
                }
                return true;
            }
            if (drag_ == Drag::None && target_->has_readout()) {
                const QString text = target_->readout_at(m->position());
                if (text != readout_) {
                    readout_ = text;
                    emit readoutChanged(readout_);
                }
                if (readout_.isEmpty())
                    QToolTip::hideText();
                else  // stays while the pointer rests (until it moves off the point)
                    QToolTip::showText(m->globalPosition().toPoint(), readout_, mouse_widget_,
                                       QRect(), 24 * 3600 * 1000);
            }
            return false;
        }
        case QEvent::MouseButtonRelease: {
            auto* m = static_cast<QMouseEvent*>(event);
            const Drag was = drag_;
            drag_ = Drag::None;
            if (was == Drag::Pan) {
                mouse_widget_->unsetCursor();
                return true;
            }
            if (was == Drag::Band) {
                band_->hide();
                zoom_to(QRectF(QPointF(press_), m->position()).normalized());
                return true;
            }
            if (was == Drag::Pending) {
                // A click: give the widget the press it did not see, then this release.
                QMouseEvent press(QEvent::MouseButtonPress, QPointF(press_),
                                  mouse_widget_->mapToGlobal(QPointF(press_)), m->button(),
                                  m->buttons() | m->button(), m->modifiers());
                forwarding_ = true;
                QCoreApplication::sendEvent(mouse_widget_, &press);
                forwarding_ = false;
            }
            return false;
        }
        case QEvent::MouseButtonDblClick: {
            auto* m = static_cast<QMouseEvent*>(event);
            if (m->button() != Qt::LeftButton || !target_->available() ||
                !target_->plot_area().contains(m->position()))
                return false;
            reset();
            return true;
        }
        case QEvent::Leave:
            if (!readout_.isEmpty()) {
                readout_.clear();
                emit readoutChanged(readout_);
            }
            return false;
        default:
            return false;
    }
}

PlotInteraction* attach_chart_interaction(QChartView* view) {
    return new PlotInteraction(std::make_unique<ChartTarget>(view), view, view->viewport());
}

PlotInteraction* chart_interaction(QChartView* view) {
    return view ? view->findChild<PlotInteraction*>(QString(), Qt::FindDirectChildrenOnly)
                : nullptr;
}

void link_ranges(std::initializer_list<PlotInteraction*> plots) {
    for (PlotInteraction* a : plots)
        for (PlotInteraction* b : plots) {
            if (a == b || !a || !b) continue;
            // set_visible_range and reset_silently emit nothing: no loop back to a.
            QObject::connect(a, &PlotInteraction::rangeChanged, b,
                             [b](const VisibleRange& r) { b->set_visible_range(r); });
            QObject::connect(a, &PlotInteraction::wasReset, b, [b] { b->reset_silently(); });
        }
}

}  // namespace routescope::views
