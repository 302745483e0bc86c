// Zoom, pan, reset and hover readouts of charts and heatmaps (issue 18, "Interaction"), driven by
// simulated wheel, mouse and key events on the widgets themselves:
// - a chart (make_chart_view): the wheel, a rubber band, + / − and the arrow keys change the axis
//   ranges as Qt Charts' own value mapping says they should, Shift-drag and middle-drag pan, and R,
//   Ctrl+0 and a double-click restore the original ranges exactly; the nearest point's readout;
// - a heatmap: the same on its visible window of cells;
// - hovering a heatmap cell reports that cell's exact value (the value fed in, bit for bit);
// - compare mode: the kernel view's A, B and A − B heatmaps and two linked charts move together,
//   and a reset of B resets A;
// - the accuracy-by-length bar chart: whole bins across, the value axis up, its exact readout;
// - a chart refitted while zoomed (a live training run) keeps the zoom and resets to the new fit;
// - a readout names the axes by their titles, rounds to the axis's precision and stays up.
#include <QtTest>

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QToolTip>
#include <QValueAxis>

#include <QImage>
#include <QPainter>
#include <cmath>
#include <random>

#include "view_test_support.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_interaction.hpp"
#include "views/chart_options.hpp"
#include "views/chart_panel.hpp"
#include "views/figure_layout.hpp"
#include "views/heatmap_widget.hpp"
#include "views/interval_bar_chart.hpp"
#include "views/kernel_view.hpp"

using namespace routescope::views;

namespace {

// Events as a window system delivers them, sent straight to the widget under the pointer.
void mouse(QWidget* w, QEvent::Type type, QPoint at, Qt::MouseButton button, Qt::MouseButtons held,
           Qt::KeyboardModifiers mods = {}) {
    QMouseEvent e(type, QPointF(at), QPointF(w->mapToGlobal(at)), button, held, mods);
    QApplication::sendEvent(w, &e);
}
void drag(QWidget* w, QPoint from, QPoint to, Qt::MouseButton button = Qt::LeftButton,
          Qt::KeyboardModifiers mods = {}) {
    mouse(w, QEvent::MouseButtonPress, from, button, button, mods);
    const QPoint mid = (from + to) / 2;
    mouse(w, QEvent::MouseMove, mid, Qt::NoButton, button, mods);
    mouse(w, QEvent::MouseMove, to, Qt::NoButton, button, mods);
    mouse(w, QEvent::MouseButtonRelease, to, button, Qt::NoButton, mods);
}
void double_click(QWidget* w, QPoint at) {
    mouse(w, QEvent::MouseButtonPress, at, Qt::LeftButton, Qt::LeftButton);
    mouse(w, QEvent::MouseButtonRelease, at, Qt::LeftButton, Qt::NoButton);
    mouse(w, QEvent::MouseButtonDblClick, at, Qt::LeftButton, Qt::LeftButton);
    mouse(w, QEvent::MouseButtonRelease, at, Qt::LeftButton, Qt::NoButton);
}
void wheel(QWidget* w, QPoint at, int delta, Qt::KeyboardModifiers mods = {}) {
    QWheelEvent e(QPointF(at), QPointF(w->mapToGlobal(at)), QPoint(), QPoint(0, delta),
                  Qt::NoButton, mods, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
}

struct Ranges {
    double x0, x1, y0, y1;
};
Ranges ranges(QChartView* v) {
    const auto* x = qobject_cast<QValueAxis*>(v->chart()->axes(Qt::Horizontal).first());
    const auto* y = qobject_cast<QValueAxis*>(v->chart()->axes(Qt::Vertical).first());
    return {x->min(), x->max(), y->min(), y->max()};
}
// The viewport pixel of a data point and the data point under a viewport pixel, from Qt Charts'
// own mapping (not the interaction's).
QPoint pixel_of(QChartView* v, QPointF value) {
    return v->mapFromScene(v->chart()->mapToScene(v->chart()->mapToPosition(value)));
}
QPointF value_at(QChartView* v, QPoint pixel) {
    return v->chart()->mapToValue(v->chart()->mapFromScene(v->mapToScene(pixel)));
}
QPoint plot_pixel(QChartView* v, double fx, double fy) {
    const QRectF area = v->chart()->plotArea();
    return v->mapFromScene(v->chart()->mapToScene(
        QPointF(area.left() + fx * area.width(), area.top() + fy * area.height())));
}

QChartView* sine_chart(const QString& title) {
    QChartView* v = make_chart_view(title, nullptr);
    std::vector<double> x, y;
    for (int i = 0; i <= 200; ++i) {
        x.push_back(0.25 * i);
        y.push_back(3.0 * std::sin(0.2 * i) + 0.01 * i);
    }
    add_line(v, "sine", x, y);
    fit_axes(v);
    v->resize(640, 420);
    return v;
}

HeatmapData grid(int rows, int columns) {
    HeatmapData d;
    d.rows = rows;
    d.columns = columns;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < columns; ++c)
            d.values.push_back(r * 1000 + c);
    d.x_label = "column";
    d.y_label = "row";
    d.title = "grid";
    return d;
}
QPoint cell_centre(const HeatmapWidget& w, int row, int column) {
    // From the plot rectangle and the visible window: where the cell is drawn.
    const QRect plot = w.plot_rect(w.rect());
    const QRect v = w.visible_cells();
    return {plot.left() + static_cast<int>((column - v.left() + 0.5) * plot.width() / v.width()),
            plot.top() + static_cast<int>((row - v.top() + 0.5) * plot.height() / v.height())};
}

constexpr double kTol = 1e-9;

}  // namespace

namespace {
/// An accuracy-by-length chart's titles and bins, its series to be added.
routescope::views::IntervalBarData accuracy_chart(const QString& difference_label,
                                                  const QStringList& bins) {
    routescope::views::IntervalBarData d;
    d.title = "accuracy by length";
    d.x_label = "length";
    d.y_label = "accuracy";
    d.difference_label = difference_label;
    d.bins = bins;
    return d;
}
}  // namespace

class TestPlotInteraction : public QObject {
    Q_OBJECT
private slots:
    void chartZoomPanAndResetFromTheMouseAndKeys() {
        std::unique_ptr<QChartView> v(sine_chart("sine"));
        v->show();
        QVERIFY(QTest::qWaitForWindowExposed(v.get()));
        QWidget* port = v->viewport();
        const Ranges home = ranges(v.get());
        QVERIFY(home.x1 > home.x0 && home.y1 > home.y0);

        // Wheel: one notch in zooms by 1.25 about the pointer; the value under it stays put.
        const QPoint at = plot_pixel(v.get(), 0.3, 0.6);
        const QPointF under = value_at(v.get(), at);
        wheel(port, at, 120);
        Ranges r = ranges(v.get());
        QVERIFY(std::abs((r.x1 - r.x0) - (home.x1 - home.x0) / 1.25) < kTol);
        QVERIFY(std::abs((r.y1 - r.y0) - (home.y1 - home.y0) / 1.25) < kTol);
        const QPointF still = value_at(v.get(), at);
        QVERIFY2(std::abs(still.x() - under.x()) < 1e-6 * (home.x1 - home.x0),
                 qPrintable(QString("%1 vs %2").arg(still.x()).arg(under.x())));
        QVERIFY(std::abs(still.y() - under.y()) < 1e-6 * (home.y1 - home.y0));
        // Shift + wheel: x only.
        const Ranges before_shift = ranges(v.get());
        wheel(port, at, -120, Qt::ShiftModifier);
        r = ranges(v.get());
        QVERIFY(std::abs((r.x1 - r.x0) - (before_shift.x1 - before_shift.x0) * 1.25) < kTol);
        QCOMPARE(r.y0, before_shift.y0);
        QCOMPARE(r.y1, before_shift.y1);

        // R resets exactly.
        QTest::keyClick(v.get(), Qt::Key_R);
        r = ranges(v.get());
        QCOMPARE(r.x0, home.x0);
        QCOMPARE(r.x1, home.x1);
        QCOMPARE(r.y0, home.y0);
        QCOMPARE(r.y1, home.y1);

        // Rubber band: the axes become the values under the band's corners.
        const QPoint p1 = plot_pixel(v.get(), 0.2, 0.25), p2 = plot_pixel(v.get(), 0.55, 0.7);
        const QPointF v1 = value_at(v.get(), p1), v2 = value_at(v.get(), p2);
        drag(port, p1, p2);
        r = ranges(v.get());
        const double px = (home.x1 - home.x0) / v->chart()->plotArea().width();
        const double py = (home.y1 - home.y0) / v->chart()->plotArea().height();
        QVERIFY2(std::abs(r.x0 - v1.x()) < 1.01 * px && std::abs(r.x1 - v2.x()) < 1.01 * px,
                 qPrintable(
                     QString("x %1..%2, band %3..%4").arg(r.x0).arg(r.x1).arg(v1.x()).arg(v2.x())));
        QVERIFY(std::abs(r.y0 - v2.y()) < 1.01 * py && std::abs(r.y1 - v1.y()) < 1.01 * py);

        // + zooms about the centre, − back out; arrows pan by a tenth of the range.
        const Ranges band = r;
        QTest::keyClick(v.get(), Qt::Key_Plus);
        r = ranges(v.get());
        QVERIFY(std::abs((r.x1 - r.x0) - (band.x1 - band.x0) / 1.25) < kTol);
        QVERIFY(std::abs((r.x0 + r.x1) / 2 - (band.x0 + band.x1) / 2) < kTol);
        QTest::keyClick(v.get(), Qt::Key_Minus);
        r = ranges(v.get());
        QVERIFY(std::abs(r.x0 - band.x0) < kTol && std::abs(r.x1 - band.x1) < kTol);
        const double sx = r.x1 - r.x0, sy = r.y1 - r.y0;
        QTest::keyClick(v.get(), Qt::Key_Right);
        Ranges moved = ranges(v.get());
        QVERIFY(std::abs(moved.x0 - (r.x0 + 0.1 * sx)) < kTol);
        QVERIFY(std::abs(moved.x1 - (r.x1 + 0.1 * sx)) < kTol);
        QTest::keyClick(v.get(), Qt::Key_Up);  // up: larger values come into view
        Ranges up = ranges(v.get());
        QVERIFY(std::abs(up.y0 - (moved.y0 + 0.1 * sy)) < kTol);

        // Shift + drag and middle drag: the data follow the pointer.
        const QPoint a = plot_pixel(v.get(), 0.5, 0.5), b = plot_pixel(v.get(), 0.3, 0.6);
        const QPointF grabbed = value_at(v.get(), a);
        drag(port, a, b, Qt::LeftButton, Qt::ShiftModifier);
        QPointF now = value_at(v.get(), b);
        QVERIFY2(std::abs(now.x() - grabbed.x()) < 1e-6 * sx,
                 qPrintable(QString("%1 vs %2").arg(now.x()).arg(grabbed.x())));
        QVERIFY(std::abs(now.y() - grabbed.y()) < 1e-6 * sy);
        const QPointF grabbed2 = value_at(v.get(), b);
        drag(port, b, a, Qt::MiddleButton);
        now = value_at(v.get(), a);
        QVERIFY(std::abs(now.x() - grabbed2.x()) < 1e-6 * sx);

        // Double-click and Ctrl+0 reset exactly too.
        double_click(port, plot_pixel(v.get(), 0.5, 0.5));
        r = ranges(v.get());
        QCOMPARE(r.x0, home.x0);
        QCOMPARE(r.y1, home.y1);
        QTest::keyClick(v.get(), Qt::Key_Left);
        QVERIFY(ranges(v.get()).x0 != home.x0);
        QTest::keyClick(v.get(), Qt::Key_0, Qt::ControlModifier);
        r = ranges(v.get());
        QCOMPARE(r.x0, home.x0);
        QCOMPARE(r.x1, home.x1);
        QCOMPARE(r.y0, home.y0);
        QCOMPARE(r.y1, home.y1);
        QVERIFY(!chart_interaction(v.get())->zoomed());
    }

    // Issue 26 (LabPlot's per-plot settings): axis limits typed in are a zoom that Reset undoes;
    // limits that cannot be shown are refused with the reason; the legend goes below, right or
    // nowhere.
    void axisLimitsAndLegendPositionPerChart() {
        std::unique_ptr<QChartView> v(sine_chart("sine"));
        v->show();
        QVERIFY(QTest::qWaitForWindowExposed(v.get()));
        const Ranges home = ranges(v.get());
        QCOMPARE(set_axis_limits(v.get(), 10, 20, -1, 2), QString());
        Ranges r = ranges(v.get());
        QCOMPARE(r.x0, 10.0);
        QCOMPARE(r.x1, 20.0);
        QCOMPARE(r.y0, -1.0);
        QCOMPARE(r.y1, 2.0);
        QVERIFY(chart_interaction(v.get())->zoomed());
        QVERIFY(set_axis_limits(v.get(), 5, 5, 0, 1).contains("smaller to a larger"));
        QVERIFY(set_axis_limits(v.get(), 0, 1, NAN, 1).contains("numbers"));
        QCOMPARE(ranges(v.get()).x0, 10.0);  // a refused change changes nothing
        // Limits no axis can draw (the sine's data: x 0–50, y about −3–5): a span past the
        // largest double (2e308: the export hung in Qt Charts' label code), an end so large
        // that the tick step overflows, a span of 1e-15 at 1 (below a billionth of the values:
        // the PDF's coordinates of the data came out as garbage), and a range 1e6 of its own
        // widths from the data (the same PDF coordinates).
        QVERIFY(set_axis_limits(v.get(), -1e308, 1e308, 0, 1).contains("within"));
        QVERIFY(set_axis_limits(v.get(), 0, 1.7e308, 0, 1).contains("within"));
        QVERIFY(set_axis_limits(v.get(), 1, 1.000000000000001, 0, 1).contains("narrower"));
        QVERIFY(set_axis_limits(v.get(), 0, 1, 2, 2 + 1e-12).contains("narrower"));
        QVERIFY(set_axis_limits(v.get(), 1e6, 1e6 + 1, 0, 1).contains("away"));
        QCOMPARE(ranges(v.get()).x0, 10.0);
        // A deep zoom still in reach: data at most 50 / 1e-3 = 5e4 widths away.
        QCOMPARE(set_axis_limits(v.get(), 25, 25.001, 0, 1), QString());
        QCOMPARE(ranges(v.get()).x1, 25.001);
        // The wheel stops at the same depth: 200 notches in (1.25^200 ≈ 2e19 times) leave a
        // range of more than a millionth of the data's width (the data at most 1e5 widths off,
        // half the data on either side of the centre).
        const QPoint centre = plot_pixel(v.get(), 0.5, 0.5);
        for (int i = 0; i < 200; ++i)
            wheel(v->viewport(), centre, 120);
        r = ranges(v.get());
        QVERIFY2(r.x1 - r.x0 >= (home.x1 - home.x0) * 1e-6,
                 qPrintable(QString("x %1..%2").arg(r.x0, 0, 'g', 17).arg(r.x1, 0, 'g', 17)));
        QVERIFY(r.y1 - r.y0 >= (home.y1 - home.y0) * 1e-6);
        chart_interaction(v.get())->reset();
        r = ranges(v.get());
        QCOMPARE(r.x0, home.x0);
        QCOMPARE(r.y1, home.y1);

        auto* figure = dynamic_cast<FigureChartView*>(v.get());
        QVERIFY(figure);
        auto legend_box = [&]() -> QRectF {
            // The title and the legend entry both read "sine": the legend is drawn after it.
            const FigureLayout layout =
                record_figure_layout(QSizeF(v->size()), [&](QPainter& p) { v->render(&p); });
            std::vector<QRectF> found;
            for (const FigureText& t : layout.texts)
                if (t.text == "sine") found.push_back(t.box);
            return found.size() >= 2 ? found.back() : QRectF();
        };
        const QRectF plot = v->chart()->plotArea();
        QRectF box = legend_box();
        QVERIFY2(box.top() >= plot.bottom(), "the legend is below the plot by default");
        figure->set_legend_position(FigureChartView::LegendPosition::Right);
        QApplication::processEvents();
        box = legend_box();
        QVERIFY2(box.left() >= v->chart()->plotArea().right(), "the legend is right of the plot");
        figure->set_legend_position(FigureChartView::LegendPosition::Hidden);
        QApplication::processEvents();
        QVERIFY(legend_box().isNull());
    }

    void chartHoverReadsTheNearestPointExactly() {
        std::unique_ptr<QChartView> v(sine_chart("sine"));
        v->show();
        QVERIFY(QTest::qWaitForWindowExposed(v.get()));
        // Point 37: x = 9.25, y = 3 sin(7.4) + 0.37.
        const double x = 0.25 * 37, y = 3.0 * std::sin(0.2 * 37) + 0.01 * 37;
        mouse(v->viewport(), QEvent::MouseMove, pixel_of(v.get(), {x, y}), Qt::NoButton,
              Qt::NoButton);
        const QString text = chart_interaction(v.get())->readout();
        QVERIFY2(text.contains(QString::number(x, 'g', 17).left(4)), qPrintable(text));
        // Rounded to the precision the axis shows (issue 26): one digit finer than a thousandth
        // of the visible range, not the double's 17 digits ("p = 0.25000000000000006").
        const QString y_text = text.section("y = ", 1).trimmed();
        const int decimals = y_text.contains('.') ? int(y_text.section('.', 1).size()) : 0;
        QVERIFY2(decimals >= 1 && decimals <= 4, qPrintable(text));
        QVERIFY2(std::abs(y_text.toDouble() - y) <= 0.5 * std::pow(10.0, -decimals) + 1e-12,
                 qPrintable(text));
        QVERIFY(text.startsWith("sine"));
    }

    // Issue 26's readout complaints, on a chart with titled axes: the readout names the axes by
    // their titles ("step = …, loss (nats) = …"), prints the value to the precision the axis shows
    // (0.25000000000000006 on a 0..1 axis reads 0.250), and its tooltip is still up 1.5 s later
    // while the pointer rests (it used to vanish after about a second).
    void chartReadoutNamesTheAxesRoundsAndStaysWhileThePointerRests() {
        std::unique_ptr<QChartView> v(make_chart_view("loss", nullptr));
        add_line(v.get(), "run A", {0.0, 12.0, 24.0}, {0.0, 0.25000000000000006, 1.0});
        fit_axes(v.get());
        v->chart()->axes(Qt::Horizontal).first()->setTitleText("step");
        v->chart()->axes(Qt::Vertical).first()->setTitleText("loss (nats)");
        v->resize(640, 420);
        v->show();
        QVERIFY(QTest::qWaitForWindowExposed(v.get()));
        const auto* y = qobject_cast<QValueAxis*>(v->chart()->axes(Qt::Vertical).first());
        QVERIFY2(y->max() - y->min() > 0.5 && y->max() - y->min() < 2.0,
                 "the test needs a y axis of about one unit (three decimals)");
        const QPoint at = pixel_of(v.get(), {12.0, 0.25000000000000006});
        mouse(v->viewport(), QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
        const QString text = chart_interaction(v.get())->readout();
        QVERIFY2(text.startsWith("run A: step = 12"), qPrintable(text));
        QVERIFY2(text.endsWith("loss (nats) = 0.250"), qPrintable(text));
        QVERIFY2(!text.contains("00000000"), qPrintable(text));
        QTRY_VERIFY(QToolTip::isVisible());
        QCOMPARE(QToolTip::text(), text);
        QTest::qWait(1500);
        QVERIFY2(QToolTip::isVisible(), "the readout vanished while the pointer rested");
        QCOMPARE(QToolTip::text(), text);
        // Moving off every point turns the readout into the pointer's position, still named.
        mouse(v->viewport(), QEvent::MouseMove, plot_pixel(v.get(), 0.9, 0.1), Qt::NoButton,
              Qt::NoButton);
        const QString away = chart_interaction(v.get())->readout();
        QVERIFY2(away.startsWith("pointer at step = ") && away.contains(", loss (nats) = "),
                 qPrintable(away));
        QToolTip::hideText();
    }

    void heatmapZoomPanAndResetFromTheMouseAndKeys() {
        HeatmapWidget w;
        w.resize(700, 480);
        w.set_data(grid(20, 30));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QRect all(0, 0, 30, 20);
        QCOMPARE(w.visible_cells(), all);

        // + : 30 / 1.25 = 24 columns and 20 / 1.25 = 16 rows about the centre.
        QTest::keyClick(&w, Qt::Key_Plus);
        QCOMPARE(w.visible_cells(), QRect(3, 2, 24, 16));
        QTest::keyClick(&w, Qt::Key_R);
        QCOMPARE(w.visible_cells(), all);

        // Rubber band from cell (row 2, column 4) to (row 7, column 12): those cells exactly.
        drag(&w, cell_centre(w, 2, 4), cell_centre(w, 7, 12));
        QCOMPARE(w.visible_cells(), QRect(4, 2, 9, 6));
        // The hover reads the zoomed cells.
        mouse(&w, QEvent::MouseMove, cell_centre(w, 3, 5), Qt::NoButton, Qt::NoButton);
        QVERIFY2(w.readout().endsWith(": 3005"), qPrintable(w.readout()));

        // Arrows: a tenth of 9 columns rounds up to one cell; down shows later rows.
        QTest::keyClick(&w, Qt::Key_Right);
        QCOMPARE(w.visible_cells(), QRect(5, 2, 9, 6));
        QTest::keyClick(&w, Qt::Key_Down);
        QCOMPARE(w.visible_cells(), QRect(5, 3, 9, 6));
        QTest::keyClick(&w, Qt::Key_Up);
        QTest::keyClick(&w, Qt::Key_Up);
        QCOMPARE(w.visible_cells(), QRect(5, 1, 9, 6));
        // Shift + drag two cells to the left: two later columns come into view.
        drag(&w, cell_centre(w, 3, 9), cell_centre(w, 3, 7), Qt::LeftButton, Qt::ShiftModifier);
        QCOMPARE(w.visible_cells(), QRect(7, 1, 9, 6));
        // Middle drag one row down: the row above comes into view.
        drag(&w, cell_centre(w, 2, 9), cell_centre(w, 3, 9), Qt::MiddleButton);
        QCOMPARE(w.visible_cells(), QRect(7, 0, 9, 6));
        // Panning stops at the edge without shrinking the window.
        for (int i = 0; i < 5; ++i)
            QTest::keyClick(&w, Qt::Key_Up);
        QCOMPARE(w.visible_cells(), QRect(7, 0, 9, 6));

        // Double-click resets.
        double_click(&w, cell_centre(w, 2, 9));
        QCOMPARE(w.visible_cells(), all);

        // Wheel in over cell (row 15, column 25): fewer cells, that cell still under the pointer.
        const QPoint p = cell_centre(w, 15, 25);
        wheel(&w, p, 240);
        const QRect z = w.visible_cells();
        QVERIFY(z.width() < 30 && z.height() < 20);
        QCOMPARE(w.cell_at(p), QPoint(25, 15));
        QTest::keyClick(&w, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(w.visible_cells(), all);

        // A click (no drag) still selects a row; a rubber band does not.
        QSignalSpy clicked(&w, &HeatmapWidget::rowClicked);
        const QPoint c = cell_centre(w, 6, 3);
        mouse(&w, QEvent::MouseButtonPress, c, Qt::LeftButton, Qt::LeftButton);
        mouse(&w, QEvent::MouseButtonRelease, c, Qt::LeftButton, Qt::NoButton);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.first().at(0).toInt(), 6);
        drag(&w, cell_centre(w, 1, 1), cell_centre(w, 4, 4));
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(w.visible_cells(), QRect(1, 1, 4, 4));
        // New data of another shape: every cell again; the same shape keeps the window.
        w.set_data(grid(20, 30));
        QCOMPARE(w.visible_cells(), QRect(1, 1, 4, 4));
        w.set_data(grid(8, 9));
        QCOMPARE(w.visible_cells(), QRect(0, 0, 9, 8));
    }

    void heatmapHoverReportsTheExactValue() {
        // Values no short format prints exactly.
        HeatmapData d;
        d.rows = 7;
        d.columns = 11;
        std::mt19937_64 rng(18);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (int i = 0; i < d.rows * d.columns; ++i)
            d.values.push_back(u(rng) * std::pow(10.0, (i % 9) - 4));
        d.values[3 * 11 + 8] = 1.0 / 3.0;
        d.x_label = "position";
        d.y_label = "layer";
        const std::vector<double> fed = d.values;
        HeatmapWidget w;
        w.resize(640, 400);
        w.set_data(d);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy spy(&w, &HeatmapWidget::hovered);
        for (const QPoint cell : {QPoint(8, 3), QPoint(0, 0), QPoint(10, 6), QPoint(4, 2)}) {
            mouse(&w, QEvent::MouseMove, cell_centre(w, cell.y(), cell.x()), Qt::NoButton,
                  Qt::NoButton);
            const double expected = fed[static_cast<std::size_t>(cell.y() * 11 + cell.x())];
            QVERIFY(!spy.isEmpty());
            QCOMPARE(spy.last().at(0).toInt(), cell.y());
            QCOMPARE(spy.last().at(1).toInt(), cell.x());
            QCOMPARE(spy.last().at(2).toDouble(), expected);
            // The readout names the cell and its value, which reads back as the same double.
            const QString text = w.readout();
            QVERIFY2(
                text.startsWith(QString("layer = %1, position = %2: ").arg(cell.y()).arg(cell.x())),
                qPrintable(text));
            bool ok = false;
            const double shown = text.section(": ", -1).toDouble(&ok);
            QVERIFY2(ok, qPrintable(text));
            QCOMPARE(shown, expected);
        }
        // Zoomed in, the cell under the pointer is still reported exactly.
        w.set_visible_cells(QRect(6, 2, 4, 3));
        mouse(&w, QEvent::MouseMove, cell_centre(w, 3, 8), Qt::NoButton, Qt::NoButton);
        QCOMPARE(w.readout().section(": ", -1).toDouble(), 1.0 / 3.0);
    }

    // Counts of bins whose whiskers reach the top (accuracy 1.0) sit above the bars, not on
    // them, and the short difference panel has a scale of two ticks or more (it had "0" alone):
    // read from the figure's own layout at a journal column's size.
    void intervalBarChartKeepsCountsOffTheBarsAndScalesTheDifference() {
        IntervalBarData d = accuracy_chart("B − A", {"1–9", "10–19", "20–29"});
        d.series.push_back({"A", {1, 1, 1}, {0.93, 0.93, 0.92}, {1, 1, 1}, {48, 52, 49}, {}});
        d.series.push_back(
            {"B", {1, 0.9, 0.9}, {0.93, 0.8, 0.8}, {1, 0.95, 0.95}, {48, 52, 49}, {}});
        d.difference = {0, -0.1, -0.1};
        d.y_lo = 0;
        d.y_hi = 1;
        IntervalBarChart c;
        c.resize(336, 220);  // 89 mm at 96 dpi, as a print lays it out
        c.set_data(d);
        const FigureLayout layout = record_figure_layout(
            QSizeF(c.size()), [&](QPainter& p) { c.paint(p, QRect(QPoint(0, 0), c.size())); });
        QCOMPARE(layout.plot_areas.size(), std::size_t(2));
        const QRectF bars = layout.plot_areas[0], difference = layout.plot_areas[1];
        int counts = 0, difference_ticks = 0;
        for (const FigureText& t : layout.texts) {
            if (t.text.startsWith("n=")) {
                ++counts;
                QVERIFY2(t.box.bottom() <= bars.top() + 1,
                         qPrintable(QString("%1 at y %2..%3, the bars from %4")
                                        .arg(t.text)
                                        .arg(t.box.top())
                                        .arg(t.box.bottom())
                                        .arg(bars.top())));
            }
            bool number = false;
            QString(t.text).replace(QChar(0x2212), '-').toDouble(&number);
            if (number && t.box.right() <= difference.left() &&
                t.box.center().y() >= difference.top() - 1 &&
                t.box.center().y() <= difference.bottom() + 1)
                ++difference_ticks;
        }
        QCOMPARE(counts, 3);
        QVERIFY2(difference_ticks >= 2, qPrintable(QString::number(difference_ticks)));
        QVERIFY2(figure_layout_problems(layout).isEmpty(),
                 qPrintable(figure_layout_problems(layout).join("\n")));
    }

    // A bin without examples has no accuracy (NaN, as length-accuracy reports it): no bar and no
    // whisker there, the other bins drawn as before. Counted in pixels of the series' colour.
    void intervalBarChartDrawsNoBarForABinWithoutExamples() {
        const auto red_pixels = [](double middle) {
            IntervalBarData d = accuracy_chart("", {"1–9", "10–19", "20–29"});
            const bool empty = std::isnan(middle);
            d.series.push_back({"A",
                                {0.8, middle, 0.6},
                                {0.7, empty ? 0.0 : 0.4, 0.5},
                                {0.9, empty ? 1.0 : 0.6, 0.7},
                                {40, empty ? 0 : 40, 40},
                                QColor(255, 0, 0)});
            d.y_lo = 0;
            d.y_hi = 1.05;
            IntervalBarChart c;
            c.resize(336, 220);
            c.set_data(d);
            QImage image(c.size(), QImage::Format_ARGB32);
            image.fill(Qt::white);
            QPainter p(&image);
            c.paint(p, QRect(QPoint(0, 0), c.size()));
            p.end();
            int n = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    n += image.pixel(x, y) == qRgb(255, 0, 0);
            return n;
        };
        const int with_bar = red_pixels(0.5), without = red_pixels(std::nan(""));
        QVERIFY2(without > 0 && without < with_bar,
                 qPrintable(QString("%1 red pixels without the middle bar, %2 with it")
                                .arg(without)
                                .arg(with_bar)));
        // The two outer bars are all that is left: about 2/3 of the bars' area (0.8 + 0.6 of 1.9).
        QVERIFY2(std::abs(static_cast<double>(without) / with_bar - 1.4 / 1.9) < 0.05,
                 qPrintable(QString::number(static_cast<double>(without) / with_bar)));
    }

    void intervalBarChartZoomsBinsAndValuesAndReadsExactly() {
        IntervalBarData d = accuracy_chart("A − B", {"16–31", "32–47", "48–63", "64–79", "80–96"});
        d.series.push_back({"A",
                            {0.5, 0.625, 0.7, 0.8125, 0.9},
                            {0.4, 0.5, 0.6, 0.7, 0.8},
                            {0.6, 0.7, 0.8, 0.9, 0.95},
                            {32, 40, 30, 16, 10},
                            {}});
        d.series.push_back({"B",
                            {0.45, 0.6, 2.0 / 3.0, 0.75, 0.85},
                            {0.35, 0.5, 0.55, 0.6, 0.7},
                            {0.55, 0.7, 0.75, 0.85, 0.95},
                            {32, 40, 30, 16, 10},
                            {}});
        d.difference = {0.05, 0.025, 0.7 - 2.0 / 3.0, 0.0625, 0.05};
        d.p_value = {0.5, 0.75, 0.125, 0.25, 0.0625};
        d.y_lo = 0;
        d.y_hi = 1;
        IntervalBarChart c;
        c.resize(700, 480);
        c.set_data(d);
        c.show();
        QVERIFY(QTest::qWaitForWindowExposed(&c));
        const VisibleRange full{{0, 5}, {0, 1}};
        QCOMPARE(c.visible_range(), full);

        // Hover over bin 2: its values, intervals, counts and the difference, exactly.
        mouse(&c, QEvent::MouseMove, c.bin_centre(2), Qt::NoButton, Qt::NoButton);
        const QString text = c.interaction()->readout();
        // To the precision of the 0..1 axis: 3 decimals.
        QVERIFY2(text.startsWith("length 48–63: A 0.700 [0.600, 0.800] n=30; B 0.667 "),
                 qPrintable(text));
        const QString diff = text.section("A − B ", 1).section(' ', 0, 0);
        QCOMPARE(diff, QString::number(0.7 - 2.0 / 3.0, 'f', 3));
        QVERIFY2(text.endsWith("(p = 0.125)"), qPrintable(text));

        // A rubber band from bin 1 to bin 3 over the upper half: those bins, those values.
        const QRectF bars = c.bars_rect();
        const QPoint p1(c.bin_centre(1).x(), static_cast<int>(bars.top() + 0.1 * bars.height()));
        const QPoint p2(c.bin_centre(3).x(), static_cast<int>(bars.top() + 0.5 * bars.height()));
        drag(&c, p1, p2);
        VisibleRange r = c.visible_range();
        QCOMPARE(r.x, (AxisRange{1, 4}));
        const double px = 1.0 / bars.height();  // one pixel in value units
        QVERIFY2(std::abs(r.y.hi - (1.0 - (p1.y() - bars.top()) / bars.height())) < px &&
                     std::abs(r.y.lo - (1.0 - (p2.y() - bars.top()) / bars.height())) < px,
                 qPrintable(QString("%1..%2").arg(r.y.lo).arg(r.y.hi)));
        // The bin under a point follows the window.
        QCOMPARE(c.bin_at(c.bin_centre(3)), 3);
        QCOMPARE(c.bin_at(QPoint(static_cast<int>(bars.left() + 2), c.bin_centre(1).y())), 1);
        // Arrows: right by one bin, up by a tenth of the values.
        const VisibleRange before = c.visible_range();
        QTest::keyClick(&c, Qt::Key_Right);
        QTest::keyClick(&c, Qt::Key_Up);
        r = c.visible_range();
        QCOMPARE(r.x, (AxisRange{2, 5}));
        QVERIFY(std::abs(r.y.lo - (before.y.lo + 0.1 * before.y.span())) < 1e-12);
        QTest::keyClick(&c, Qt::Key_Right);  // the last bin is shown: no further
        QCOMPARE(c.visible_range().x, (AxisRange{2, 5}));
        // R resets exactly.
        QTest::keyClick(&c, Qt::Key_R);
        QCOMPARE(c.visible_range(), full);
        // The reset chart draws the same picture as a chart never zoomed.
        IntervalBarChart fresh;
        fresh.resize(c.size());
        fresh.set_data(d);
        QImage a(c.size(), QImage::Format_RGB32), b(c.size(), QImage::Format_RGB32);
        QPainter pa(&a), pb(&b);
        c.paint(pa, c.rect());
        fresh.paint(pb, fresh.rect());
        pa.end();
        pb.end();
        QCOMPARE(a, b);
        // A click still selects a bin.
        QSignalSpy clicked(&c, &IntervalBarChart::binClicked);
        QTest::mouseClick(&c, Qt::LeftButton, {}, c.bin_centre(3));
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.first().at(0).toInt(), 3);
    }

    void compareModeLinksTheKernelHeatmaps() {
        const QString dir = view_test::data_dir("plot_interaction");
        const QString a = view_test::sample_dump(dir, "ckpt_a.dump.h5", {"--state-seed", "1"});
        const QString b = view_test::sample_dump(dir, "ckpt_b.dump.h5", {"--state-seed", "2"});
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        KernelViewSettings s;
        s.a = KernelSource::from_path(a);
        s.b = KernelSource::from_path(b);
        KernelView view(s);
        view.resize(1300, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        HeatmapWidget *ha = view.heatmap_a(), *hb = view.heatmap_b(),
                      *hd = view.heatmap_difference();
        QVERIFY(ha->data().rows > 1 && ha->data().columns > 4);
        QCOMPARE(hb->data().columns, ha->data().columns);
        QCOMPARE(hd->data().rows, ha->data().rows);
        const QRect all = ha->all_cells();

        // Zooming A (keys, then a wheel notch) moves B and A − B to the same cells.
        QTest::keyClick(ha, Qt::Key_Plus);
        QVERIFY(ha->visible_cells() != all);
        QCOMPARE(hb->visible_cells(), ha->visible_cells());
        QCOMPARE(hd->visible_cells(), ha->visible_cells());
        wheel(ha, cell_centre(*ha, ha->visible_cells().top(), ha->visible_cells().left() + 1), 120);
        QCOMPARE(hb->visible_cells(), ha->visible_cells());
        // Panning B moves A.
        const QRect before = ha->visible_cells();
        QTest::keyClick(hb, Qt::Key_Right);
        QVERIFY(hb->visible_cells() != before);
        QCOMPARE(ha->visible_cells(), hb->visible_cells());
        QCOMPARE(hd->visible_cells(), hb->visible_cells());
        // Reset on B (double-click) resets A and A − B.
        double_click(hb, cell_centre(*hb, hb->visible_cells().top(), hb->visible_cells().left()));
        QCOMPARE(hb->visible_cells(), all);
        QCOMPARE(ha->visible_cells(), all);
        QCOMPARE(hd->visible_cells(), all);
        // A rubber band on A − B zooms A and B too.
        drag(hd, cell_centre(*hd, 0, 1), cell_centre(*hd, 1, 3));
        QCOMPARE(hd->visible_cells(), QRect(1, 0, 3, 2));
        QCOMPARE(ha->visible_cells(), QRect(1, 0, 3, 2));
        QCOMPARE(hb->visible_cells(), QRect(1, 0, 3, 2));
        QTest::keyClick(ha, Qt::Key_R);
        QCOMPARE(hb->visible_cells(), all);
    }

    void linkedChartsFollowEachOtherAndResetTogether() {
        std::unique_ptr<QChartView> a(sine_chart("A")), b(sine_chart("B"));
        // B's data span another range: each resets to its own original range.
        add_line(b.get(), "more", {-5, 60}, {-10, 12});
        fit_axes(b.get());
        link_ranges({chart_interaction(a.get()), chart_interaction(b.get())});
        a->show();
        b->show();
        QVERIFY(QTest::qWaitForWindowExposed(a.get()) && QTest::qWaitForWindowExposed(b.get()));
        const Ranges home_a = ranges(a.get()), home_b = ranges(b.get());
        wheel(a->viewport(), plot_pixel(a.get(), 0.4, 0.4), 240);
        Ranges ra = ranges(a.get()), rb = ranges(b.get());
        QVERIFY(ra.x1 - ra.x0 < home_a.x1 - home_a.x0);
        QCOMPARE(rb.x0, ra.x0);
        QCOMPARE(rb.x1, ra.x1);
        QCOMPARE(rb.y0, ra.y0);
        QCOMPARE(rb.y1, ra.y1);
        drag(b->viewport(), plot_pixel(b.get(), 0.5, 0.5), plot_pixel(b.get(), 0.6, 0.5),
             Qt::MiddleButton);
        ra = ranges(a.get());
        rb = ranges(b.get());
        QCOMPARE(ra.x0, rb.x0);
        QCOMPARE(ra.x1, rb.x1);
        QTest::keyClick(b.get(), Qt::Key_R);
        ra = ranges(a.get());
        rb = ranges(b.get());
        QCOMPARE(ra.x0, home_a.x0);
        QCOMPARE(ra.x1, home_a.x1);
        QCOMPARE(ra.y0, home_a.y0);
        QCOMPARE(ra.y1, home_a.y1);
        QCOMPARE(rb.x0, home_b.x0);
        QCOMPARE(rb.y1, home_b.y1);
    }

    void aRefitWhileZoomedKeepsTheZoomAndResetsToTheNewFit() {
        // A live training chart gains points and is refitted every second.
        std::unique_ptr<QChartView> v(sine_chart("live"));
        v->show();
        QVERIFY(QTest::qWaitForWindowExposed(v.get()));
        QTest::keyClick(v.get(), Qt::Key_Plus);
        const Ranges zoomed = ranges(v.get());
        auto* series = qobject_cast<QLineSeries*>(v->chart()->series().first());
        series->append(80.0, 9.0);
        fit_axes(v.get());
        Ranges r = ranges(v.get());
        QCOMPARE(r.x0, zoomed.x0);
        QCOMPARE(r.x1, zoomed.x1);
        QCOMPARE(r.y1, zoomed.y1);
        // The reference: the same chart history without the zoom.
        std::unique_ptr<QChartView> same(sine_chart("unzoomed"));
        qobject_cast<QLineSeries*>(same->chart()->series().first())->append(80.0, 9.0);
        fit_axes(same.get());
        QTest::keyClick(v.get(), Qt::Key_R);
        r = ranges(v.get());
        const Ranges u = ranges(same.get());
        QCOMPARE(r.x0, u.x0);
        QCOMPARE(r.x1, u.x1);
        QCOMPARE(r.y0, u.y0);
        QCOMPARE(r.y1, u.y1);
        QVERIFY(u.x1 >= 80.0);
        // A new chart of the same points.
        std::unique_ptr<QChartView> fresh(make_chart_view("fresh", nullptr));
        std::vector<double> x, y;
        for (const QPointF& p : series->points()) {
            x.push_back(p.x());
            y.push_back(p.y());
        }
        add_line(fresh.get(), "sine", x, y);
        fit_axes(fresh.get());
        const Ranges f = ranges(fresh.get());
        // clear_chart forgets the zoom: the next fit is shown whole.
        QTest::keyClick(v.get(), Qt::Key_Plus);
        clear_chart(v.get());
        add_line(v.get(), "sine", x, y);
        fit_axes(v.get());
        r = ranges(v.get());
        QCOMPARE(r.x0, f.x0);
        QCOMPARE(r.x1, f.x1);
        QVERIFY(!chart_interaction(v.get())->zoomed());
    }

    // Tick labels tell neighbouring ticks apart and write each tick exactly (session 35): the
    // similarity diagonal of two seeds, values that differ in their fifth digit, was labelled
    // "0.411 0.411 0.411 0.411"; a step of 0.25 needs two decimals. Each tick is printed here with
    // the axis's own format (QString::asprintf, as Qt Charts formats a value axis's labels) and
    // compared with the tick's value written by this test.
    void tickLabelsAreDistinctAndExact_data() {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::newRow("fifth digit") << 0.41100 << 0.41104;
        QTest::newRow("quarters") << 0.0 << 1.0;
        QTest::newRow("large") << 123456.0 << 123456.5;
        QTest::newRow("tiny") << 1.0001e-5 << 1.0004e-5;
    }
    void tickLabelsAreDistinctAndExact() {
        QFETCH(double, lo);
        QFETCH(double, hi);
        std::unique_ptr<QChartView> v(make_chart_view("ticks", nullptr));
        std::vector<double> x, y;
        for (int i = 0; i <= 20; ++i) {
            x.push_back(i);
            y.push_back(lo + (hi - lo) * i / 20.0);
        }
        add_line(v.get(), "line", x, y);
        fit_axes(v.get());
        auto* axis = qobject_cast<QValueAxis*>(v->chart()->axes(Qt::Vertical).first());
        QVERIFY(axis);
        const double step = axis->tickType() == QValueAxis::TicksDynamic
                                ? axis->tickInterval()
                                : (axis->max() - axis->min()) / (axis->tickCount() - 1);
        const double first =
            axis->tickType() == QValueAxis::TicksDynamic
                ? axis->tickAnchor() +
                      std::ceil((axis->min() - axis->tickAnchor()) / step - 1e-9) * step
                : axis->min();
        QStringList labels;
        for (double t = first; t <= axis->max() + 1e-9 * std::abs(step); t += step) {
            const QString label = QString::asprintf(axis->labelFormat().toLatin1().constData(), t);
            // The label read back is the tick, to a small part of the step.
            QVERIFY2(std::abs(label.toDouble() - t) <= 0.01 * step,
                     qPrintable(axis->labelFormat() + ": " + label + " for " +
                                QString::number(t, 'g', 17)));
            labels << label;
        }
        QVERIFY2(labels.size() >= 2, qPrintable(labels.join(' ')));
        QCOMPARE(labels.removeDuplicates(), qsizetype(0));
    }

    // Probe Z7-01: a range a view sets after fit_axes (the gates histogram's x axis, the gate's
    // range) keeps labels that tell ticks apart: every tick of a histogram of gate values 1e6
    // (range 1e6 ± 0.5, steps of 0.2) read "1e+06" ("%.3g" whenever |value| ≥ 1e6). The ranges are
    // a value v ± max(0.5, v · 2^-20), the gates analysis's range of equal values; 1e4 was right.
    // Each tick, as Qt Charts places dynamic ticks (multiples of the interval from the anchor),
    // printed with the axis's format, must read back as the tick's value written by this test.
    void tickLabelsStayDistinctWhenARangeIsSetAfterTheFit_data() {
        QTest::addColumn<double>("v");
        QTest::newRow("1e4") << 1e4;
        QTest::newRow("1e6") << 1e6;
        QTest::newRow("-1e7") << -1e7;
        QTest::newRow("1e8") << 1e8;
        QTest::newRow("1e10") << 1e10;
        QTest::newRow("3.4e38") << 3.4e38;
    }
    void tickLabelsStayDistinctWhenARangeIsSetAfterTheFit() {
        QFETCH(double, v);
        std::unique_ptr<QChartView> view(make_chart_view("ticks", nullptr));
        add_line(view.get(), "histogram", {v, v, v}, {0.0, 1.0, 0.0});
        fit_axes(view.get());
        const double half = std::max(0.5, std::abs(v) * std::ldexp(1.0, -20));
        // And wider, as a print's 5% margins set it (chart_figure.cpp).
        for (const double margin : {0.0, 0.1}) {
            QValueAxis* axis = x_axis(view.get());
            axis->setRange(v - half * (1 + margin), v + half * (1 + margin));
            QCOMPARE(axis->tickType(), QValueAxis::TicksDynamic);
            const double step = axis->tickInterval();
            const double first = axis->tickAnchor() +
                                 std::ceil((axis->min() - axis->tickAnchor()) / step - 1e-9) * step;
            QStringList labels;
            for (int i = 0; first + i * step <= axis->max() + 1e-9 * step; ++i) {
                const double t = first + i * step;
                const QString label =
                    QString::asprintf(axis->labelFormat().toLatin1().constData(), t);
                QVERIFY2(std::abs(label.toDouble() - t) <= 0.01 * step,
                         qPrintable(axis->labelFormat() + ": " + label + " for " +
                                    QString::number(t, 'g', 17)));
                labels << label;
            }
            QVERIFY2(labels.size() >= 2, qPrintable(labels.join(' ')));
            QVERIFY2(labels.size() == QSet<QString>(labels.begin(), labels.end()).size(),
                     qPrintable(axis->labelFormat() + ": " + labels.join(' ')));
        }
    }
};

QTEST_MAIN(TestPlotInteraction)
#include "test_plot_interaction.moc"
