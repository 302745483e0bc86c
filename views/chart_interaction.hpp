#pragma once
// Zoom, pan, reset and hover readouts of every chart and heatmap, written once: a PlotInteraction
// is an event filter on a plot widget that turns the mouse and keyboard into changes of the plot's
// VisibleRange through a RangeTarget (a Qt Charts view: chart_panel.hpp attaches one in
// make_chart_view; a heatmap: HeatmapWidget attaches its own). link_ranges() ties the A and B
// panels of compare mode together. docs/user-guide.md, "Zoom, pan and readouts", lists the inputs:
//   wheel: zoom about the pointer (Shift: x only, Ctrl: y only); left drag: zoom to the rubber
//   band; Shift + left drag or middle drag: pan; double-click, R, Ctrl+0 or Home: reset;
//   + / −: zoom about the centre; arrow keys: pan by a tenth of the visible range.
#include <QObject>
#include <QPoint>
#include <QPointer>
#include <QRectF>
#include <QString>

#include <initializer_list>
#include <memory>

#include "views/visible_range.hpp"

class QChartView;
class QRubberBand;
class QWidget;

namespace routescope::views {

/// A plot as the interaction sees it: a visible range, the rectangle its data fill on screen, and
/// the range a reset returns to (its home).
class RangeTarget {
public:
    virtual ~RangeTarget() = default;
    /// Whether there is something to zoom (data on axes the interaction understands).
    virtual bool available() const = 0;
    /// Where the data are drawn, in the coordinates of the widget that receives the mouse.
    virtual QRectF plot_area() const = 0;
    virtual VisibleRange visible() const = 0;
    virtual void apply(const VisibleRange& range) = 0;
    /// The range to apply for a requested one: heatmaps snap to whole cells inside the data;
    /// `cover`: every cell the request touches (a rubber band) rather than the nearest whole cells.
    virtual VisibleRange constrain(const VisibleRange& range, bool cover) const {
        (void)cover;
        return range;
    }
    /// Home: charts remember the range their view set when the first zoom begins; heatmaps' home
    /// is always every cell.
    virtual bool has_home() const = 0;
    virtual void capture_home() = 0;
    virtual VisibleRange home() const = 0;
    /// Applies the home exactly (the values captured, not a round trip through a transform).
    virtual void restore_home() = 0;
    virtual void forget_home() = 0;
    /// Heatmap rows grow downwards; chart values grow upwards.
    virtual bool y_grows_down() const { return false; }
    /// 1: the axis shows whole cells (heatmaps, bar groups): zoom and pan by whole cells; 0: any
    /// range.
    virtual double pan_quantum(Qt::Orientation orientation) const {
        (void)orientation;
        return 0;
    }
    /// Charts: the readout at a point of the mouse widget (empty outside the plot). Heatmaps show
    /// their own (HeatmapWidget::readout()) and return false from has_readout().
    virtual bool has_readout() const { return false; }
    virtual QString readout_at(const QPointF& position) const {
        (void)position;
        return {};
    }
};

class PlotInteraction : public QObject {
    Q_OBJECT
public:
    /// Filters `key_widget`'s keys and `mouse_widget`'s mouse (a chart view and its viewport, or a
    /// heatmap twice); a child of `key_widget`.
    PlotInteraction(std::unique_ptr<RangeTarget> target, QWidget* key_widget,
                    QWidget* mouse_widget);
    ~PlotInteraction() override;

    RangeTarget& target() const { return *target_; }
    VisibleRange visible_range() const { return target_->visible(); }
    /// The range a reset restores (the current range when nothing was zoomed yet).
    VisibleRange home_range() const;
    bool zoomed() const;
    /// The last hover readout of a chart (exact values of the nearest point), empty off the plot.
    QString readout() const { return readout_; }

    // What the mouse and keys do, callable directly; each emits rangeChanged or wasReset.
    /// Zooms by `factor` (> 1 in) about `anchor` (fractions of the plot area from its top left).
    void zoom(double factor, QPointF anchor = {0.5, 0.5},
              Qt::Orientations orientations = Qt::Horizontal | Qt::Vertical);
    /// Pans by fractions of the visible range in screen directions (dx > 0: right, dy > 0: down).
    void pan(double dx, double dy);
    /// Zooms to the part of the plot under `area` (mouse-widget coordinates); an extent under 4
    /// pixels leaves that axis alone.
    void zoom_to(const QRectF& area);
    void reset();
    /// Shows `range` (the axes' drawn coordinates) as a zoom the user asked for: a reset returns
    /// home, linked panels follow (the Axis Limits dialog).
    void set_limits(const VisibleRange& range);

    // Programmatic changes, no signals (what a link applies, what a redraw keeps).
    void set_visible_range(const VisibleRange& range);
    void reset_silently();
    /// The data were replaced: whatever range the view sets next is the new home.
    void forget();
    /// The view fitted new data while zoomed: the fitted range becomes home, `keep` stays shown.
    void rebase(const VisibleRange& keep);

    static QString format_value(double v);

signals:
    /// The user changed the visible range (zoom, pan, rubber band).
    void rangeChanged(const routescope::views::VisibleRange& range);
    /// The user reset the plot to its home.
    void wasReset();
    void readoutChanged(const QString& text);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    enum class Drag { None, Pending, Band, Pan };
    std::unique_ptr<RangeTarget> target_;
    QPointer<QWidget> key_widget_, mouse_widget_;
    QRubberBand* band_ = nullptr;
    Drag drag_ = Drag::None;
    QPoint press_, last_;
    bool forwarding_ = false;
    QString readout_;

    void ensure_home();
    void change(const VisibleRange& requested, bool cover = false);
    bool key(int key, Qt::KeyboardModifiers modifiers);
    static bool is_our_key(int key, Qt::KeyboardModifiers modifiers);
};

/// Attaches zoom, pan, reset and the nearest-point readout to a chart view (make_chart_view does).
PlotInteraction* attach_chart_interaction(QChartView* view);
/// The interaction make_chart_view attached to a chart view (nullptr for other views).
PlotInteraction* chart_interaction(QChartView* view);
/// Ties the plots' ranges: a zoom or pan of one applies the same range to the others, a reset of
/// one resets them all. Heatmaps of other shapes take the same cells as far as they have them.
void link_ranges(std::initializer_list<PlotInteraction*> plots);

}  // namespace routescope::views
