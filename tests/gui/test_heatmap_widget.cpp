// The colour maps are the published tables (viridis, Moreland's cool-warm: the entries, their
// CIE L* computed here from sRGB); the heatmap widget: one image pixel per cell coloured by them,
// hover and click name the cell under the pointer, and the same paint() draws screen and export.
// Also prints the redraw time of a 24 × 4096 heatmap (docs/benchmarks.md, "Heatmap redraw"); the
// time is a printed figure, never an assertion.
#include <QtTest>

#include <QElapsedTimer>
#include <QPainter>
#include <algorithm>
#include <cmath>
#include <random>

#include "views/axis_ticks.hpp"
#include "views/colour_map.hpp"
#include "views/figure_layout.hpp"
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

// CIE 1976 L* of an sRGB colour (components in [0, 1]): IEC 61966-2-1 decoding, Y from the sRGB
// primaries' luminances, then L* relative to a white of Y = 1.
double lightness(double r, double g, double b) {
    auto linear = [](double c) {
        return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
    };
    const double y = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    return y > 216.0 / 24389.0 ? 116.0 * std::cbrt(y) - 16.0 : 24389.0 / 27.0 * y;
}
double lightness(const ColourEntry& e) {
    return lightness(e.r, e.g, e.b);
}
double lightness(QRgb c) {
    return lightness(qRed(c) / 255.0, qGreen(c) / 255.0, qBlue(c) / 255.0);
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
    // One long row label (a 40-character vocabulary entry among short tokens) took its whole
    // width from the cells: at 89 mm the heatmap was 6% of the figure (figure probe, session 31).
    // Labels are drawn whole while the cells keep a tenth of the figure's width
    // (docs/user-guide.md, "Print layout"); this one is longer than that allows: it is elided
    // (which the layout check reports) and the cells keep their tenth.
    void oneLongRowLabelLeavesTheCellsTheirWidth() {
        HeatmapWidget w;
        HeatmapData d = ramp(16, 16);
        for (int r = 0; r < 16; ++r)
            d.row_labels << QString("tok%1").arg(r);
        d.row_labels[5] = "supercalifragilisticexpialidocious_token";
        const QRect target(0, 0, 336, 300);  // 89 mm at 96 dpi
        w.set_data(d);
        const FigureLayout layout =
            record_figure_layout(QSizeF(target.size()), [&](QPainter& p) { w.paint(p, target); });
        QVERIFY(!layout.plot_areas.empty());
        const double cells = layout.plot_areas.front().width();
        QVERIFY2(cells >= 0.1 * target.width() - 1,
                 qPrintable(QString("cells %1 px of %2").arg(cells).arg(target.width())));
        // The long label is shortened, and the check says so.
        QVERIFY2(figure_layout_problems(layout).filter("is elided").size() >= 1,
                 qPrintable(figure_layout_problems(layout).join("; ")));
    }

    // Long tokens as row labels (an Implicit Attention figure of German compounds) are drawn whole
    // while the cells keep a tenth of the width, and never on the y axis's title (they were
    // elided, "Donaudampfsch…", and drawn from the panel's left edge over "query token t"). The
    // boxes come from the figure's own drawing; whether two lie on each other is computed here.
    void longTokenLabelsAreWholeAndOffTheAxisTitle_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("font_px");
        // 89 and 183 mm at 8 pt, as a print lays them out (3 × the print's size).
        QTest::newRow("89 mm, 8 pt") << 1009 << 32;
        QTest::newRow("183 mm, 8 pt") << 2075 << 32;
        QTest::newRow("screen") << 640 << 12;
    }
    void longTokenLabelsAreWholeAndOffTheAxisTitle() {
        QFETCH(int, width);
        QFETCH(int, font_px);
        const QStringList tokens{"Donaudampfschifffahrtsgesellschaft",
                                 "antidisestablishmentarianism", "a", "c"};
        HeatmapData d = ramp(8, 8);
        for (int i = 0; i < 8; ++i)
            d.row_labels << tokens[i % 4];
        d.column_labels = d.row_labels;
        d.y_label = "query token t";
        d.x_label = "source token s";
        d.value_label = "A_f + A_b (both convolutions) (raw)";
        d.title = "lt, layer 1, example 0";
        HeatmapWidget w;
        QFont f = w.font();
        f.setPixelSize(font_px);
        w.setFont(f);
        w.set_data(d);
        const QRect target(0, 0, width, static_cast<int>(width * 0.62));
        const FigureLayout layout =
            record_figure_layout(QSizeF(target.size()), [&](QPainter& p) { w.paint(p, target); });
        const FigureText* title = nullptr;
        QStringList drawn;
        for (const FigureText& t : layout.texts) {
            drawn << t.text;
            if (t.text == d.y_label) title = &t;
        }
        QVERIFY(title);
        QVERIFY2(title->box.height() > title->box.width(), "the y title runs along the plot");
        for (const QString& token : tokens.mid(0, 2))
            QVERIFY2(drawn.contains(token), qPrintable(token + " not among: " + drawn.join(" | ")));
        for (const FigureText& t : layout.texts) {
            QVERIFY2(!t.text.contains(QChar(0x2026)), qPrintable(t.text));
            if (&t == title || !tokens.contains(t.text)) continue;
            const QRectF i = t.box.intersected(title->box);
            QVERIFY2(i.width() <= 0.5 || i.height() <= 0.5,
                     qPrintable(QString("'%1' (x %2–%3) on the y title (x %4–%5)")
                                    .arg(t.text)
                                    .arg(t.box.left())
                                    .arg(t.box.right())
                                    .arg(title->box.left())
                                    .arg(title->box.right())));
        }
        QVERIFY2(figure_layout_problems(layout).isEmpty(),
                 qPrintable(figure_layout_problems(layout).join("\n")));
    }

    // One long token among 48 short ones as column labels (an Attention figure of a sentence with
    // a compound) spaced every label by the long one's width: at 89 mm one or two of the 48
    // columns had a label. The step now follows the usual label, a label that would touch the one
    // before it is left out, and no two labels overlap.
    void oneLongColumnLabelDoesNotThinOutTheOthers() {
        HeatmapData d = ramp(4, 48);
        for (int r = 0; r < 4; ++r)
            d.row_labels << QString("r%1").arg(r);
        for (int c = 0; c < 48; ++c)
            d.column_labels << QString("c%1").arg(c);
        d.column_labels[10] = "Donaudampfschifffahrtsgesellschaft";
        HeatmapWidget w;
        QFont f = w.font();
        f.setPixelSize(32);  // 8 pt in an 89 mm print laid out at 3 × its size
        w.setFont(f);
        w.set_data(d);
        const QRect target(0, 0, 1009, 626);
        const FigureLayout layout =
            record_figure_layout(QSizeF(target.size()), [&](QPainter& p) { w.paint(p, target); });
        QVERIFY(!layout.plot_areas.empty());
        const QRectF plot = layout.plot_areas.front();
        QList<QRectF> labels;
        for (const FigureText& t : layout.texts)
            if (d.column_labels.contains(t.text) && t.box.top() >= plot.bottom() - 1)
                labels << t.box;
        // "c47" is about 1.7 em wide: at least one label per 6 em of the plot's width.
        const int expected = static_cast<int>(plot.width() / (6 * 32));
        QVERIFY2(labels.size() >= expected,
                 qPrintable(QString("%1 column labels over %2 px, expected %3 or more")
                                .arg(labels.size())
                                .arg(plot.width())
                                .arg(expected)));
        for (int i = 0; i < labels.size(); ++i)
            for (int j = i + 1; j < labels.size(); ++j)
                QVERIFY2(!labels[i].intersects(labels[j]), "two column labels overlap");
        QVERIFY2(figure_layout_problems(layout).isEmpty(),
                 qPrintable(figure_layout_problems(layout).join("\n")));
    }

    // A title over several lines in a narrow panel left the cells no room, and the panel drew
    // "No data" while its data existed (an export exited 0 with it). A print gives the panel the
    // height that keeps its cells a quarter of its width high (docs/user-guide.md, "Print
    // layout": the panel grows, not the text shrinks); a panel drawn too small for its cells
    // says so and the layout check fails on it, never "No data".
    void aPanelTooShortForItsCellsGrowsInPrintAndIsReported() {
        HeatmapWidget w;
        QFont f = w.font();
        f.setPixelSize(40);  // 10 pt at 89 mm laid out at 3 ×
        w.setFont(f);
        HeatmapData d = ramp(3, 3);
        d.title =
            "linear CKA: BiGS-large seed 0 lr 3e-4 warmup 10k xxxxxxxxxxxxxxxxxxxxxxxx "
            "against BiGS-large seed 1 lr 3e-4 warmup 10k xxxxxxxxxxxxxxxxxxxxxxxx";
        d.note =
            "N = 158 token vectors (of 158); the interval and null on a Gram sample of n = 20 "
            "examples";
        d.x_label = "layer of BiGS-large seed 1 lr 3e-4 warmup 10k xxxxxxxxxxxxxxxxxxxxxxxx";
        d.y_label = "layer of BiGS-large seed 0 lr 3e-4 warmup 10k xxxxxxxxxxxxxxxxxxxxxxxx";
        w.set_data(d);
        const int width = 1009;  // 89 mm laid out at 3 ×
        const double aspect_height = width * 0.62;
        // At the print's usual aspect the cells are a sliver; in a shorter panel they have no
        // room at all.
        const QRect usual(0, 0, width, static_cast<int>(aspect_height));
        QVERIFY2(w.plot_rect(usual).height() < 0.25 * width,
                 qPrintable(QString("the case needs cells lower than a quarter of the width: %1 px")
                                .arg(w.plot_rect(usual).height())));
        const QRect short_panel(0, 0, width, width / 2);
        const QRect before = w.plot_rect(short_panel);
        QVERIFY2(before.height() < 4 || before.width() < 4,
                 qPrintable(QString("the case needs a panel too short for its cells: %1 × %2 px")
                                .arg(before.width())
                                .arg(before.height())));
        auto record = [&](const QRect& target) {
            return record_figure_layout(QSizeF(target.size()),
                                        [&](QPainter& p) { w.paint(p, target); });
        };
        const FigureLayout too_short = record(short_panel);
        QStringList texts;
        for (const FigureText& t : too_short.texts)
            texts << t.text;
        QVERIFY2(!texts.contains("No data"), qPrintable(texts.join(" | ")));
        QVERIFY2(
            figure_layout_problems(too_short).filter("no room for its 3 × 3 cells").size() == 1,
            qPrintable(figure_layout_problems(too_short).join("; ")));

        const double grown = w.print_height(width, aspect_height);
        const QRect panel(0, 0, width, static_cast<int>(std::lround(grown)));
        const FigureLayout printed = record(panel);
        QVERIFY(!printed.plot_areas.empty());
        const QRectF cells = printed.plot_areas.front();
        QVERIFY2(
            cells.height() >= 0.25 * width - 1,
            qPrintable(
                QString("cells %1 px high in a panel %2 wide").arg(cells.height()).arg(width)));
        QVERIFY2(figure_layout_problems(printed).isEmpty(),
                 qPrintable(figure_layout_problems(printed).join("\n")));
        // A panel with room already keeps its height.
        QCOMPARE(w.print_height(width, 4 * width), 4.0 * width);
    }

    // A colour bar's end labels are drawn inside the bar (an end's label is moved half a line in,
    // off the x axis's labels), and the round values between were spaced from the ends' ticks:
    // '3.35' sat on '3', '0.253' on '0.2' (figure probe, session 31). As drawn, every two labels'
    // centres are at least 1.2 lines apart (the spacing colour_bar_ticks promises).
    void colourBarLabelsKeepTheirSpacingAsDrawn() {
        const std::vector<std::pair<double, double>> ranges = {
            {-3.6, 3.6}, {0, 3.35}, {0.021, 0.253}, {0.43, 0.57}, {-1, 1}, {0, 1e-3}, {12.3, 98.7}};
        for (const auto& [lo, hi] : ranges)
            for (double h : {10.0, 14.0, 20.0})
                for (double length : {60.0, 100.0, 150.0, 230.0, 400.0}) {
                    if (length < 3 * h) continue;
                    std::vector<double> centres;
                    for (const auto& [t, text] : colour_bar_ticks(lo, hi, length, h)) {
                        const double at = (t - lo) / (hi - lo) * length;
                        centres.push_back(std::clamp(at, h / 2, length - h / 2));  // as drawn
                    }
                    std::sort(centres.begin(), centres.end());
                    for (std::size_t i = 1; i < centres.size(); ++i)
                        QVERIFY2(centres[i] - centres[i - 1] >= 1.2 * h - 1e-9,
                                 qPrintable(QString("[%1, %2], bar %3 px, line %4 px: labels %5 "
                                                    "px apart")
                                                .arg(lo)
                                                .arg(hi)
                                                .arg(length)
                                                .arg(h)
                                                .arg(centres[i] - centres[i - 1])));
                }
    }

    void viridisIsMatplotlibsTable() {
        // matplotlib's _cm_listed.py _viridis_data rows 0, 127, 128 and 255, and their hex codes.
        const ColourMap& v = ColourMap::viridis();
        QCOMPARE(v.entry(0), qRgb(0x44, 0x01, 0x54));    // (0.267004, 0.004874, 0.329415)
        QCOMPARE(v.entry(127), qRgb(0x21, 0x90, 0x8d));  // (0.128729, 0.563265, 0.551229)
        QCOMPARE(v.entry(128), qRgb(0x21, 0x91, 0x8c));  // (0.127568, 0.566949, 0.550556)
        QCOMPARE(v.entry(255), qRgb(0xfd, 0xe7, 0x25));  // (0.993248, 0.906157, 0.143936)
        QVERIFY(std::abs(v.published(127).r - 0.128729) < 1e-6);
        QVERIFY(std::abs(v.published(127).g - 0.563265) < 1e-6);
        QVERIFY(std::abs(v.published(127).b - 0.551229) < 1e-6);
        QCOMPARE(v.at(0.0), v.entry(0));
        QCOMPARE(v.at(1.0), v.entry(255));
        QCOMPARE(v.at(127.0 / 255.0), v.entry(127));
        QCOMPARE(v.at(-3.0), v.entry(0));  // clamped
        QCOMPARE(v.at(7.0), v.entry(255));
        QCOMPARE(v.at(std::nan("")), qRgb(128, 128, 128));
    }

    void viridisLightnessRisesMonotonically() {
        const ColourMap& v = ColourMap::viridis();
        // The published entries: L* rises at every step, from about 15 to about 91.
        for (int i = 1; i < ColourMap::kSize; ++i)
            QVERIFY2(lightness(v.published(i)) > lightness(v.published(i - 1)) + 0.2,
                     qPrintable(QString("entry %1").arg(i)));
        QVERIFY(std::abs(lightness(v.published(0)) - 14.95) < 0.05);
        QVERIFY(std::abs(lightness(v.published(255)) - 90.90) < 0.05);
        // The 8-bit colours shown: rounding to 8 bits moves L* by at most a few hundredths, so
        // a step may dip by that much, but every two steps rise.
        for (int i = 1; i < ColourMap::kSize; ++i) {
            QVERIFY2(lightness(v.entry(i)) > lightness(v.entry(i - 1)) - 0.05,
                     qPrintable(QString("entry %1").arg(i)));
            if (i >= 2) QVERIFY(lightness(v.entry(i)) > lightness(v.entry(i - 2)));
        }
    }

    void divergingIsMorelandsCoolWarm() {
        // Moreland (2009) gives the ends as 8-bit (59, 76, 192) and (180, 4, 38), and the centre
        // as the unsaturated M = 88, i.e. L* = 88.
        const ColourMap& d = ColourMap::diverging();
        QVERIFY(d.is_diverging());
        QCOMPARE(d.entry(0), qRgb(59, 76, 192));
        QCOMPARE(d.entry(255), qRgb(180, 4, 38));
        QCOMPARE(d.at(0.0), d.entry(0));
        QCOMPARE(d.at(1.0), d.entry(255));
        QVERIFY(std::abs(lightness(d.published(127)) - 88.0) < 0.1);
        QVERIFY(std::abs(lightness(d.published(128)) - 88.0) < 0.1);
        // Value 0 (t = 0.5) is a light grey, neither blue nor red.
        const QRgb mid = d.at(0.5);
        QVERIFY(qRed(mid) > 215 && qGreen(mid) > 215 && qBlue(mid) > 215);
        QVERIFY(std::abs(qRed(mid) - qBlue(mid)) <= 2 && std::abs(qRed(mid) - qGreen(mid)) <= 2);
        QVERIFY(qBlue(d.at(0.25)) > qRed(d.at(0.25)));  // negative: blue
        QVERIFY(qRed(d.at(0.75)) > qBlue(d.at(0.75)));  // positive: red
    }

    void divergingLightnessIsSymmetricAndPeaksAtTheCentre() {
        const ColourMap& d = ColourMap::diverging();
        const int n = ColourMap::kSize;
        for (int i = 0; i < n; ++i)
            QVERIFY2(std::abs(lightness(d.published(i)) - lightness(d.published(n - 1 - i))) < 0.01,
                     qPrintable(QString("entry %1").arg(i)));
        for (int i = 1; i < n / 2; ++i)  // rising to the centre ...
            QVERIFY(lightness(d.published(i)) > lightness(d.published(i - 1)));
        for (int i = n / 2 + 1; i < n; ++i)  // ... and falling after it
            QVERIFY(lightness(d.published(i)) < lightness(d.published(i - 1)));
        // The 8-bit colours shown: symmetric within what rounding to 8 bits moves L* by.
        for (int i = 0; i < n; ++i)
            QVERIFY(std::abs(lightness(d.entry(i)) - lightness(d.entry(n - 1 - i))) < 0.4);
    }

    void fractionalPositionsInterpolateBetweenEntries() {
        for (const ColourMap* map : {&ColourMap::viridis(), &ColourMap::diverging()}) {
            for (int i = 0; i + 1 < ColourMap::kSize; ++i) {
                const QRgb a = map->entry(i), b = map->entry(i + 1);
                const QRgb c = map->at((i + 0.5) / (ColourMap::kSize - 1));
                auto between = [](int x, int lo, int hi) {
                    return std::min(lo, hi) <= x && x <= std::max(lo, hi);
                };
                QVERIFY2(between(qRed(c), qRed(a), qRed(b)) &&
                             between(qGreen(c), qGreen(a), qGreen(b)) &&
                             between(qBlue(c), qBlue(a), qBlue(b)),
                         qPrintable(map->name() + QString(" between %1 and %2").arg(i).arg(i + 1)));
            }
        }
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
