// The heatmap widget: one image pixel per cell coloured by the published colour map stops, hover
// and click name the cell under the pointer, and the same paint() draws screen and export. Also
// prints the redraw time of a 24 × 4096 heatmap (docs/benchmarks.md, "Heatmap redraw"); the time
// is a printed figure, never an assertion.
#include <QtTest>

#include <QElapsedTimer>
#include <QPainter>
#include <algorithm>
#include <random>

#include "views/colour_map.hpp"
#include "views/heatmap_widget.hpp"

using namespace routescope::views;

namespace {
HeatmapData ramp(int rows, int columns) {
    HeatmapData d;
    d.rows = rows;
    d.columns = columns;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < columns; ++c)
            d.values.push_back(r * columns + c);
    d.title = "ramp";
    d.x_label = "column";
    d.y_label = "row";
    return d;
}
QPoint centre_of(const HeatmapWidget& w, int row, int column) {
    const QRect plot = w.plot_rect(w.rect());
    return {plot.left() + static_cast<int>((column + 0.5) * plot.width() / w.data().columns),
            plot.top() + static_cast<int>((row + 0.5) * plot.height() / w.data().rows)};
}
}  // namespace

class TestHeatmapWidget : public QObject {
    Q_OBJECT
private slots:
    void colourMapsEndAtTheirPublishedStops() {
        // viridis runs from #440154 to #fde725 (van der Walt & Smith's published end colours).
        QCOMPARE(ColourMap::viridis().at(0.0), qRgb(0x44, 0x01, 0x54));
        QCOMPARE(ColourMap::viridis().at(1.0), qRgb(0xfd, 0xe7, 0x25));
        // Diverging: ColorBrewer RdBu ends, the neutral #f7f7f7 at the middle (value 0).
        QCOMPARE(ColourMap::diverging().at(0.0), qRgb(0x05, 0x30, 0x61));
        QCOMPARE(ColourMap::diverging().at(1.0), qRgb(0x67, 0x00, 0x1f));
        const QRgb mid = ColourMap::diverging().at(0.5);
        QVERIFY(qRed(mid) > 240 && qGreen(mid) > 240 && qBlue(mid) > 240);
    }

    void imageHasOnePixelPerCellColouredByValue() {
        HeatmapWidget w;
        w.set_data(ramp(3, 7));
        QCOMPARE(w.image().width(), 7);
        QCOMPARE(w.image().height(), 3);
        QCOMPARE(w.image().pixel(0, 0), ColourMap::viridis().at(0.0));  // minimum
        QCOMPARE(w.image().pixel(6, 2), ColourMap::viridis().at(1.0));  // maximum
        QCOMPARE(w.image().pixel(3, 1), ColourMap::viridis().at(10.0 / 20.0));
    }

    void signedValuesUseADivergingMapSymmetricAboutZero() {
        HeatmapWidget w;
        HeatmapData d;
        d.rows = 1;
        d.columns = 3;
        d.values = {-2, 0, 1};
        d.diverging = true;
        w.set_data(d);
        QCOMPARE(w.range_lo(), -2.0);
        QCOMPARE(w.range_hi(), 2.0);
        QCOMPARE(w.image().pixel(1, 0), ColourMap::diverging().at(0.5));
        QCOMPARE(w.image().pixel(0, 0), ColourMap::diverging().at(0.0));
        QCOMPARE(w.image().pixel(2, 0), ColourMap::diverging().at(0.75));
    }

    void hoverReportsTheCellUnderThePointer() {
        HeatmapWidget w;
        w.resize(640, 400);
        w.set_data(ramp(4, 9));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy spy(&w, &HeatmapWidget::hovered);
        QTest::mouseMove(&w, centre_of(w, 2, 5));
        QTRY_VERIFY(!spy.isEmpty());
        QCOMPARE(spy.last().at(0).toInt(), 2);
        QCOMPARE(spy.last().at(1).toInt(), 5);
        QCOMPARE(spy.last().at(2).toDouble(), 2.0 * 9 + 5);
        QVERIFY2(w.readout().contains("23"), qPrintable(w.readout()));
    }

    void clickingARowEmitsItAndSelectsIt() {
        HeatmapWidget w;
        w.resize(640, 400);
        w.set_data(ramp(6, 11));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy spy(&w, &HeatmapWidget::rowClicked);
        QTest::mouseClick(&w, Qt::LeftButton, {}, centre_of(w, 4, 1));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first().at(0).toInt(), 4);
        QCOMPARE(w.selected_row(), 4);
        // Outside the cells (the colour bar) nothing is clicked.
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(w.width() - 3, w.height() / 2));
        QCOMPARE(spy.count(), 1);
    }

    void paintFillsThePlotWithTheCells() {
        // What paint() draws at a cell's centre is that cell's colour (same path as export).
        HeatmapWidget w;
        w.resize(500, 300);
        w.set_data(ramp(2, 3));
        QImage out(w.size(), QImage::Format_RGB32);
        QPainter p(&out);
        w.paint(p, w.rect());
        p.end();
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                QCOMPARE(out.pixel(centre_of(w, r, c)), w.image().pixel(c, r));
    }

    void redrawOf24By4096IsTimed() {
        // docs/benchmarks.md, "Heatmap redraw": the figure printed here.
        HeatmapData d;
        d.rows = 24;
        d.columns = 4096;
        std::mt19937 rng(1);
        std::uniform_real_distribution<double> u(-1, 1);
        for (int i = 0; i < d.rows * d.columns; ++i)
            d.values.push_back(u(rng));
        d.diverging = true;
        d.x_label = "relative position";
        d.y_label = "layer";
        HeatmapWidget w;
        QElapsedTimer colour;
        colour.start();
        w.set_data(d);
        const double colour_ms = colour.nsecsElapsed() / 1e6;
        QCOMPARE(w.image().size(), QSize(4096, 24));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        for (QSize size : {QSize(800, 500), QSize(1280, 800), QSize(1920, 1080)}) {
            w.resize(size);
            QTest::qWait(10);
            std::vector<double> times;
            for (int i = 0; i < 15; ++i) {
                QElapsedTimer t;
                t.start();
                w.repaint();  // synchronous paint, as a resize does
                times.push_back(t.nsecsElapsed() / 1e6);
            }
            std::sort(times.begin(), times.end());
            qInfo(
                "heatmap redraw 24x4096 at %dx%d: median %.2f ms, max %.2f ms (colouring the cells "
                "once: %.2f ms)",
                size.width(), size.height(), times[times.size() / 2], times.back(), colour_ms);
        }
    }
};

QTEST_MAIN(TestHeatmapWidget)
#include "test_heatmap_widget.moc"
