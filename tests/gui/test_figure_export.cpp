// Figure export through the one painter path: a PNG has the pixel size of the chosen DPI, an SVG is
// XML with vector paths (not only an embedded image), a PDF is a PDF that renders to a page, the
// CSV holds the analysis result's values, and the provenance JSON beside each figure names the
// input's SHA-256. The figure is the kernel browser on a `routescope-cli sample-dump` dump, whose
// kernels have a closed form (app/cli/sample_dump_command.cpp): K_f[k] = e^{−k/τ} cos(0.4k/ℓ),
// K_b[k] = 0.7 e^{−k/(0.7τ)} cos(0.3k/ℓ), τ = 2 + 6ℓ, D_f = 1, D_b = 0.9.
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>
#include <QElapsedTimer>
#include <QFontDatabase>
#include <QGlyphRun>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTextLayout>
#include <QXmlStreamReader>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <memory>

#include "engine/core/error.hpp"
#include "figure_render_check.hpp"
#include "view_test_support.hpp"
#include "views/chart_interaction.hpp"
#include "views/chart_options.hpp"
#include "views/chart_panel.hpp"
#include "views/colour_map.hpp"
#include "views/display_name.hpp"
#include "views/figure_export.hpp"
#include "views/figure_font.hpp"
#include "views/figure_layout.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"

using namespace routescope::views;

namespace {
double closed_form(int layer, int r) {
    const double tau = 2.0 + 6.0 * layer;
    auto kf = [&](int k) {
        return static_cast<double>(
            static_cast<float>(std::exp(-k / tau) * std::cos(0.4 * k / layer)));
    };
    auto kb = [&](int k) {
        return static_cast<double>(
            static_cast<float>(0.7 * std::exp(-k / (0.7 * tau)) * std::cos(0.3 * k / layer)));
    };
    if (r < 0) return kf(-r);
    if (r > 0) return kb(r);
    return 0.5 * (kf(0) + 1.0 + kb(0) + 0.9);
}

struct SvgText {
    QString error, width_attr;
    double width_mm = 0, height_mm = 0, view_w = 0, view_h = 0;
    std::vector<double> font_pt;  // each <text>'s font size in print
};

double mm_of(const QString& length) {  // "89mm", "3.5in", "100" (CSS px)
    if (length.endsWith("mm")) return length.chopped(2).toDouble();
    if (length.endsWith("in")) return length.chopped(2).toDouble() * 25.4;
    if (length.endsWith("pt")) return length.chopped(2).toDouble() / 72 * 25.4;
    return QString(length).remove("px").toDouble() / 96 * 25.4;
}

/// The SVG's declared size and the print size of each text: font-size (on the text or an
/// enclosing <g>) × the enclosing transforms' scale × declared size / view box, in points.
SvgText read_svg_text(const QString& path) {
    SvgText out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {"cannot open " + path};
    QXmlStreamReader xml(&f);
    struct Group {
        double font_size, scale;
    };
    std::vector<Group> stack;
    double mm_per_unit = 0;
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::EndElement) {
            if (!stack.empty()) stack.pop_back();
            continue;
        }
        if (token != QXmlStreamReader::StartElement) continue;
        const auto a = xml.attributes();
        Group g = stack.empty() ? Group{0, 1} : stack.back();
        if (xml.name() == QLatin1String("svg")) {
            out.width_attr = a.value("width").toString();
            out.width_mm = mm_of(out.width_attr);
            out.height_mm = mm_of(a.value("height").toString());
            const auto box = a.value("viewBox").toString().split(' ', Qt::SkipEmptyParts);
            if (box.size() != 4) return {"no viewBox"};
            out.view_w = box[2].toDouble();
            out.view_h = box[3].toDouble();
            mm_per_unit = out.width_mm / out.view_w;
        }
        if (a.hasAttribute("font-size")) g.font_size = a.value("font-size").toDouble();
        if (a.hasAttribute("transform")) {
            static const QRegularExpression matrix(R"(matrix\(([^)]*)\))");
            const auto m = matrix.match(a.value("transform").toString());
            if (m.hasMatch()) {
                const auto v = m.captured(1).split(QRegularExpression("[ ,]+"), Qt::SkipEmptyParts);
                if (v.size() == 6)  // QSvgGenerator writes the whole world transform per group
                    g.scale = std::sqrt(std::abs(v[0].toDouble() * v[3].toDouble() -
                                                 v[1].toDouble() * v[2].toDouble()));
            }
        }
        if (xml.name() == QLatin1String("text") && g.font_size > 0)
            out.font_pt.push_back(g.font_size * g.scale * mm_per_unit / 25.4 * 72);
        stack.push_back(g);
    }
    if (xml.hasError()) out.error = xml.errorString();
    return out;
}

/// A heatmap of 2 × 3 cells in a checkerboard of 0 and 1 (viridis' two ends) as a figure.
struct CheckerFigure : FigureSource {
    static constexpr int kRows = 2, kColumns = 3;
    std::unique_ptr<HeatmapWidget> heatmap = std::make_unique<HeatmapWidget>();
    CheckerFigure() {
        HeatmapData d;
        d.rows = kRows;
        d.columns = kColumns;
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < kColumns; ++c)
                d.values.push_back((r + c) % 2);
        d.title = "checkerboard";
        d.lo = 0;
        d.hi = 1;
        heatmap->set_data(std::move(d));
    }
    QSize figure_size() const override { return {480, 300}; }
    void paint_figure(QPainter& p, const QRect& target) const override {
        p.fillRect(target, Qt::white);
        heatmap->paint(p, target);
    }
    routescope::analysis::CsvTable figure_table() const override { return {}; }
    nlohmann::json figure_provenance() const override { return nlohmann::json::object(); }
    QString figure_name() const override { return "checker"; }
};

/// A short heatmap (a 130 px figure: a colour bar about three labels tall) of 3 × 4 cells whose
/// rows and columns are named by letters, so that every number on the page is a colour-bar label.
struct ShortHeatmapFigure : FigureSource {
    std::unique_ptr<HeatmapWidget> heatmap = std::make_unique<HeatmapWidget>();
    int height = 130;
    explicit ShortHeatmapFigure(HeatmapData d, int figure_height = 130) : height(figure_height) {
        d.row_labels = QStringList{"a", "b", "c"};
        d.column_labels = QStringList{"w", "x", "y", "z"};
        d.title = "cells";
        d.value_label = "value";
        heatmap->set_data(std::move(d));
    }
    QSize figure_size() const override { return {480, height}; }
    void paint_figure(QPainter& p, const QRect& target) const override {
        p.fillRect(target, Qt::white);
        heatmap->paint(p, target);
    }
    routescope::analysis::CsvTable figure_table() const override { return {}; }
    nlohmann::json figure_provenance() const override { return nlohmann::json::object(); }
    QString figure_name() const override { return "short"; }
};

/// The numbers poppler reads on the PDF's page (pdftotext -bbox), a minus sign as "-".
std::vector<double> numbers_on_page(const QString& pdf, QString* error) {
    std::vector<double> out;
    const QString pdftotext = QStandardPaths::findExecutable("pdftotext");
    QProcess p;
    p.start(pdftotext, {"-bbox", pdf, "-"});
    if (!p.waitForFinished(30000)) {
        *error = "pdftotext did not finish";
        return out;
    }
    const QRegularExpression word(R"re(<word [^>]*>([^<]*)</word>)re");
    for (auto it = word.globalMatch(QString::fromUtf8(p.readAllStandardOutput())); it.hasNext();) {
        QString text = it.next().captured(1).trimmed();
        text.replace(QChar(0x2212), QLatin1Char('-'));
        bool ok = false;
        const double v = text.toDouble(&ok);
        if (ok) out.push_back(v);
    }
    return out;
}

/// A figure for the test of the export check: a plot area and labels, each of which can be made
/// unreadable in one way.
struct LabelFigure : FigureSource {
    enum class Fault {
        None,
        Clipped,
        PastTheEdge,
        OnThePlot,
        Overlapping,
        Elided,
        ColourBarOfOneValue,
        BrokenInsideAWord
    };
    Fault fault = Fault::None;
    QSize figure_size() const override { return {480, 300}; }
    void paint_figure(QPainter& p, const QRect& target) const override {
        p.fillRect(target, Qt::white);
        QFont f = p.font();
        f.setPixelSize(14);
        p.setFont(f);
        p.setPen(Qt::black);
        const QRectF plot(60, 40, 380, 200);
        p.drawRect(plot);
        p.drawLine(plot.bottomLeft(), plot.topRight());
        note_plot_area(p, plot);
        p.drawText(QPointF(180, 270), "sequence length L");
        {
            InPlotText in_plot(p);
            p.drawText(QPointF(80, 70), "cell 0.25");
        }
        switch (fault) {
            case Fault::None:
                p.drawText(QPointF(180, 30), "a title that fits");
                break;
            case Fault::Clipped:
                p.save();
                p.setClipRect(QRectF(180, 10, 40, 30));
                p.drawText(QPointF(180, 30), "a title that is clipped");
                p.restore();
                break;
            case Fault::PastTheEdge:
                p.drawText(QPointF(400, 30), "a title past the edge");
                break;
            case Fault::OnThePlot:
                p.drawText(QPointF(200, 120), "a legend on the plot");
                break;
            case Fault::Overlapping:
                p.drawText(QPointF(180, 30), "one title");
                p.drawText(QPointF(200, 34), "another title");
                break;
            case Fault::Elided:
                p.drawText(QPointF(180, 30), QStringLiteral("a title that is eli\u2026"));
                break;
            case Fault::ColourBarOfOneValue: {
                // A colour bar right of the plot ticked at its one round value (session 28).
                const QRectF bar(446, 40, 8, 200);
                p.fillRect(bar, Qt::darkCyan);
                note_colour_bar(p, bar, Qt::Vertical);
                p.drawText(QPointF(457, 145), "0.5");
                break;
            }
            case Fault::BrokenInsideAWord:
                // An axis title wrapped to a line narrower than two of its glyphs, left of the
                // plot: one glyph a line (session 37's transitions view at 89 mm, 10 pt).
                p.drawText(QPointF(180, 30), "a title that fits");
                draw_wrapped(p, QRectF(8, 10, 14, 285), Qt::AlignLeft | Qt::AlignTop,
                             QStringLiteral("‖Δh‖ / ‖h^(ℓ−1)‖"));
                break;
        }
    }
    routescope::analysis::CsvTable figure_table() const override { return {}; }
    nlohmann::json figure_provenance() const override { return nlohmann::json::object(); }
    QString figure_name() const override { return "labels"; }
};

/// The printed height in mm of the test's kernel figure (one dump: the heatmap and the kernel
/// curve, then the frequency response and the poles, secondary) by the print layout's rule
/// (docs/user-guide.md, "Print layout"): as many columns of at least 80 mm as fit, 2 mm apart,
/// each panel the column's width × 0.62 (below 120 mm) or 0.55 high, panels with nothing to show
/// left out, secondary panels left out when the figure would be taller than 180 mm.
double kernel_print_height_mm(double width_mm) {
    const int columns = std::clamp(static_cast<int>(width_mm / 80), 1, 4);
    const double column = (width_mm - 2.0 * (columns - 1)) / columns;
    const double panel = column * (width_mm < 120 ? 0.62 : 0.55);
    auto height = [&](int panels) {
        const int rows = (panels + columns - 1) / columns;
        return rows * panel + 2.0 * (rows - 1);
    };
    // A dump's kernels figure: the heatmap, the curve, the frequency response; its pole plot
    // (poles come from a checkpoint) has nothing to show and is left out of prints.
    return height(3) > 180 ? height(2) : height(3);
}

QList<QStringList> read_csv(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QList<QStringList> rows;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.isEmpty())
            rows.append(QString::fromUtf8(line).split(','));  // numeric cells: no quoting
    return rows;
}
}  // namespace

class TestFigureExport : public QObject {
    Q_OBJECT
    QString dump_, out_;
    std::unique_ptr<KernelView> view_;

private slots:
    void initTestCase() {
        dump_ = view_test::sample_dump(view_test::data_dir("figure_export"), "sample.dump.h5");
        QVERIFY(!dump_.isEmpty());
        out_ = QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/figure_export");
        QDir(out_).removeRecursively();
        QVERIFY(QDir().mkpath(out_));
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_);
        s.radius = 6;
        view_ = std::make_unique<KernelView>(s);
        view_->resize(1000, 640);
        view_->show();
        QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
        view_->start();
        QVERIFY(view_test::wait_for(view_.get()));
        QVERIFY2(view_->has_result(), qPrintable(view_->error()));
    }

    void pngHasThePixelSizeOfTheChosenDpi() {
        const QSize logical = view_->figure_size();
        const QString path = out_ + "/kernels.png";
        view_->export_to(path, 300);
        const QImage png(path);
        QVERIFY(!png.isNull());
        // 300 dpi on a figure measured in 1/96 inch: 300/96 pixels per logical pixel.
        QCOMPARE(png.size(), QSize(qRound(logical.width() * 300.0 / 96),
                                   qRound(logical.height() * 300.0 / 96)));
        QCOMPARE(qRound(png.dotsPerMeterX() * 0.0254), 300);
        // Not a blank page: the heatmap's colours are there.
        QSet<QRgb> colours;
        for (int y = 0; y < png.height(); y += 7)
            for (int x = 0; x < png.width(); x += 7)
                colours.insert(png.pixel(x, y));
        QVERIFY(colours.size() > 20);
    }

    void svgIsXmlWithVectorPaths() {
        const QString path = out_ + "/kernels.svg";
        view_->export_to(path);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        int paths = 0, shapes = 0, images = 0, texts = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const auto name = xml.name();
            if (name == QLatin1String("path")) ++paths;
            if (name == QLatin1String("path") || name == QLatin1String("rect") ||
                name == QLatin1String("polygon") || name == QLatin1String("polyline"))
                ++shapes;
            if (name == QLatin1String("image")) ++images;
            if (name == QLatin1String("text")) ++texts;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY2(paths > 0, "no <path> element");
        // Every heatmap cell (4 layers × 13 positions) is a shape of its own, not pixels of an
        // image.
        QVERIFY2(shapes >= 4 * 13,
                 qPrintable(QString("%1 shapes, %2 images").arg(shapes).arg(images)));
        QVERIFY(texts > 10);
    }

    // Session 38: a model named with control characters (a rename to "model\x07A", a dump's
    // file name) was written raw into the SVG's text: not well-formed XML (1.0 forbids U+0001 …
    // U+0008, U+000B, U+000C, U+000E … U+001F, U+FFFE, U+FFFF), which no viewer opened. Each is
    // now U+FFFD; the document parses, and the text reads with the replacements.
    void svgOfANameWithControlCharactersIsWellFormedXml() {
        set_display_name(dump_, QString::fromUtf8("model\x07"
                                                  "A\x1b"
                                                  "B\x0c"
                                                  "C") +
                                    QChar(0xFFFE));
        view_->restyle();
        QVERIFY(view_test::wait_for(view_.get()));
        const QString path = out_ + "/control-name.svg";
        view_->export_to(path);
        set_display_name(dump_, QString());
        view_->restyle();
        QVERIFY(view_test::wait_for(view_.get()));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QXmlStreamReader xml(bytes);
        QString text;
        while (!xml.atEnd())
            if (xml.readNext() == QXmlStreamReader::Characters) text += xml.text();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        const QString replaced = QString::fromUtf8("model\uFFFDA\uFFFDB\uFFFDC\uFFFD");
        QVERIFY2(text.contains(replaced), qPrintable(text.left(400)));
        for (char c = 1; c < 0x20; ++c)
            if (c != '\t' && c != '\n' && c != '\r') QVERIFY(!bytes.contains(c));
    }

    // The SVG names the face its text was measured and drawn in, as fontconfig resolves the
    // figure's generic family, then CSS's sans-serif: Qt wrote font-family="Sans Serif", no CSS
    // family, which browsers and resvg replace with a serif default of other widths.
    void svgNamesTheFontItWasDrawnIn() {
        const QString fc_match = QStandardPaths::findExecutable("fc-match");
        if (fc_match.isEmpty()) QSKIP("fc-match (fontconfig) is not installed");
        QProcess p;
        p.start(fc_match, {"--format=%{family[0]}", QFont().family()});
        QVERIFY(p.waitForFinished(30000));
        const QString face = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
        QVERIFY(!face.isEmpty());
        const QString path = out_ + "/fonts.svg";
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 7;
        view_->export_to(path, o);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        int named = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const QString family = xml.attributes().value("font-family").toString();
            if (family.isEmpty()) continue;
            ++named;
            QCOMPARE(family, QString("'%1', sans-serif").arg(face));
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(named > 10);
    }

    void pdfIsAPdfThatRendersToAPage() {
        const QString path = out_ + "/kernels.pdf";
        view_->export_to(path);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.read(5), QByteArray("%PDF-"));
        const QString pdftoppm = QStandardPaths::findExecutable("pdftoppm");
        if (pdftoppm.isEmpty()) QSKIP("pdftoppm (poppler-utils) is not installed");
        QProcess p;
        p.start(pdftoppm, {"-png", "-r", "48", "-singlefile", path, out_ + "/kernels_pdf_page"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QImage page(out_ + "/kernels_pdf_page.png");
        QVERIFY(!page.isNull());
        // The page has the figure's aspect ratio (its size in inches is the figure's at 96 dpi).
        const QSize logical = view_->figure_size();
        QVERIFY(std::abs(page.width() - logical.width() / 2) <= 2);
        QVERIFY(std::abs(page.height() - logical.height() / 2) <= 2);
    }

    // A heatmap's cells stay flat up to their edges when librsvg and poppler render the exported
    // SVG and PDF: the renderers smooth an embedded image as they scale it, so a figure that
    // embeds a few pixels per cell shows a blurred band across every cell border (the demo's
    // kernels figure, two layers tall, lost a sixth of each row to it).
    void heatmapCellsStaySharpWhenRendered_data() {
        QTest::addColumn<QString>("format");
        QTest::newRow("svg, librsvg") << "svg";
        QTest::newRow("pdf, poppler") << "pdf";
    }
    void heatmapCellsStaySharpWhenRendered() {
        QFETCH(QString, format);
        if (const QString missing = view_test::renderers_missing(); !missing.isEmpty())
            QSKIP(qPrintable(missing));
        CheckerFigure figure;
        FigureExportOptions o;
        o.width_mm = 89;
        const FigureLayout layout = figure_layout(figure, o);
        QVERIFY(!layout.plot_areas.empty());
        const QRectF heat = layout.plot_areas.front();
        const QString path = out_ + "/checker." + format, png = out_ + "/checker_" + format;
        export_figure(figure, path, o);
        constexpr int kDpi = 300;
        QProcess p;
        if (format == "svg")
            p.start(QStandardPaths::findExecutable("rsvg-convert"),
                    {"--dpi-x", QString::number(kDpi), "--dpi-y", QString::number(kDpi),
                     "--background-color", "white", "--output", png + ".png", path});
        else
            p.start(QStandardPaths::findExecutable("pdftoppm"),
                    {"-png", "-r", QString::number(kDpi), "-singlefile", path, png});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QImage page = QImage(png + ".png").convertToFormat(QImage::Format_RGB32);
        QVERIFY(!page.isNull());
        const double scale = page.width() / layout.page.width();  // rendering pixels per unit
        QVERIFY(std::abs(scale - kDpi / 96.0) < 0.05);
        auto distance = [](QRgb a, QRgb b) {
            return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) +
                   std::abs(qBlue(a) - qBlue(b));
        };
        // Down each column, from the first row's centre to the second's, and along each row
        // from one column's centre to the next: every pixel has the colour of one of the two
        // cells (viridis' ends), but for the border's antialiasing (2 pixels at 300 dpi).
        const int rows = CheckerFigure::kRows, columns = CheckerFigure::kColumns;
        const double cell_w = heat.width() * scale / columns, cell_h = heat.height() * scale / rows;
        QVERIFY2(cell_h > 100 && cell_w > 100,
                 qPrintable(QString("%1 × %2").arg(cell_w).arg(cell_h)));
        auto check = [&](QPoint from, QPoint to, const QString& where) {
            const QRgb a = page.pixel(from), b = page.pixel(to);
            QVERIFY2(distance(a, b) > 300, qPrintable(where + ": the two cells look alike"));
            const int steps = std::max(std::abs(to.x() - from.x()), std::abs(to.y() - from.y()));
            int between = 0;
            for (int i = 0; i <= steps; ++i) {
                const QRgb c = page.pixel(from + (to - from) * i / steps);
                if (distance(c, a) > 24 && distance(c, b) > 24) ++between;
            }
            QVERIFY2(between <= 2, qPrintable(QString("%1, %2: %3 pixels of neither cell's colour")
                                                  .arg(path, where)
                                                  .arg(between)));
        };
        auto centre = [&](int r, int c) {
            return QPoint(static_cast<int>(heat.left() * scale + (c + 0.5) * cell_w),
                          static_cast<int>(heat.top() * scale + (r + 0.5) * cell_h));
        };
        for (int c = 0; c < columns; ++c)
            check(centre(0, c), centre(1, c), QString("column %1, rows 1/2").arg(c + 1));
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c + 1 < columns; ++c)
                check(centre(r, c), centre(r, c + 1),
                      QString("row %1, columns %2/%3").arg(r + 1).arg(c + 1).arg(c + 2));
    }

    // The guide promises each heatmap cell a block of whole pixels in the colours of the colour
    // map; Qt's PDF engine stored the image as a JPEG (/DCTDecode), hundreds of colours for a
    // map's few, up to 88/255 off at cell edges. Read back from the PDF's bytes: every image
    // XObject is Flate (lossless), and poppler's pdfimages extracts exactly the cells' colours.
    void pdfHeatmapCellsAreStoredLossless() {
        CheckerFigure figure;
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 8;
        const QString path = out_ + "/checker_lossless.pdf";
        export_figure(figure, path, o);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray pdf = f.readAll();
        // Each image XObject's dictionary: from its /Subtype /Image to the stream it describes.
        int images = 0;
        for (qsizetype at = pdf.indexOf("/Subtype /Image"); at >= 0;
             at = pdf.indexOf("/Subtype /Image", at + 1)) {
            const qsizetype start = pdf.lastIndexOf("<<", at), end = pdf.indexOf("stream", at);
            QVERIFY(start >= 0 && end > at);
            const QByteArray dict = pdf.mid(start, end - start);
            ++images;
            QVERIFY2(!dict.contains("/DCTDecode"), dict.constData());
            QVERIFY2(dict.contains("/FlateDecode"), dict.constData());
        }
        QVERIFY2(images >= 1, "no image in the PDF");
        QVERIFY(!pdf.contains("/DCTDecode"));
        const QString pdfimages = QStandardPaths::findExecutable("pdfimages");
        if (pdfimages.isEmpty()) QSKIP("pdfimages (poppler-utils) is not installed");
        const QString prefix = out_ + "/checker_lossless_img";
        QProcess p;
        p.start(pdfimages, {"-png", path, prefix});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QImage cells = QImage(prefix + "-000.png").convertToFormat(QImage::Format_RGB32);
        QVERIFY(!cells.isNull());
        // The two colours of the checkerboard's cells, from the colour map's ends.
        const QSet<QRgb> expected{ColourMap::viridis().at(0) | 0xff000000u,
                                  ColourMap::viridis().at(1) | 0xff000000u};
        QSet<QRgb> seen;
        for (int y = 0; y < cells.height(); ++y)
            for (int x = 0; x < cells.width(); ++x)
                seen.insert(cells.pixel(x, y));
        QVERIFY2(seen == expected, qPrintable(QString("%1 colours in the PDF's image, not the "
                                                      "colour map's 2")
                                                  .arg(seen.size())));
    }

    // A heatmap panel with no room for its cells at a narrow print (the kernels figure at 60 mm
    // and 10 pt) was drawn as "No data", exit 0 under --check-layout. The print layout grows the
    // panel until its cells are a quarter of its width high (docs/user-guide.md, "Print layout");
    // cells it still cannot draw are a layout problem, never "No data".
    void aHeatmapPanelKeepsItsCellsInANarrowPrint_data() {
        QTest::addColumn<double>("mm");
        QTest::addColumn<double>("pt");
        QTest::newRow("60 mm, 10 pt") << 60.0 << 10.0;
        QTest::newRow("40 mm, 7 pt") << 40.0 << 7.0;
        QTest::newRow("89 mm, 10 pt") << 89.0 << 10.0;
    }
    void aHeatmapPanelKeepsItsCellsInANarrowPrint() {
        QFETCH(double, mm);
        QFETCH(double, pt);
        FigureExportOptions o;
        o.width_mm = mm;
        o.font_pt = pt;
        const FigureLayout layout = figure_layout(*view_, o);
        for (const FigureText& t : layout.texts)
            QVERIFY2(t.text.trimmed() != "No data", "a panel drawn as 'No data'");
        const QStringList problems = figure_layout_problems(layout);
        QVERIFY2(problems.filter("no room").isEmpty(), qPrintable(problems.join("\n")));
        // The heatmap is the figure's first panel, and its cells the first plot area it notes.
        QVERIFY(!layout.plot_areas.empty());
        const QRectF cells = layout.plot_areas.front();
        QVERIFY2(cells.height() >= 0.25 * layout.page.width() - 1 && cells.width() >= 4,
                 qPrintable(QString("cells %1 × %2 on a page %3 wide")
                                .arg(cells.width())
                                .arg(cells.height())
                                .arg(layout.page.width())));
    }

    void csvHoldsTheKernelValues() {
        const QString path = out_ + "/kernels.csv";
        view_->export_to(path);
        const auto rows = read_csv(path);
        QCOMPARE(rows.value(0), (QStringList{"layer", "r", "value", "scaled"}));
        QCOMPARE(rows.size(), 1 + 4 * 13);  // layers 1..4 × r = −6..6
        for (int i = 1; i < rows.size(); ++i) {
            const int layer = rows[i][0].toInt(), r = rows[i][1].toInt();
            const double v = rows[i][2].toDouble();
            QVERIFY2(std::abs(v - closed_form(layer, r)) < 1e-6,
                     qPrintable(QString("layer %1 r %2: %3 vs %4")
                                    .arg(layer)
                                    .arg(r)
                                    .arg(v)
                                    .arg(closed_form(layer, r))));
        }
    }

    void heatmapShowsTheMinMaxScaledMagnitudes() {
        const HeatmapWidget* h = view_->heatmap_a();
        QCOMPARE(h->data().rows, 4);
        QCOMPARE(h->data().columns, 13);
        for (int layer = 1; layer <= 4; ++layer) {
            std::vector<double> m;
            for (int r = -6; r <= 6; ++r)
                m.push_back(std::abs(closed_form(layer, r)));
            const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
            for (int c = 0; c < 13; ++c)
                QVERIFY(std::abs(h->data().values[(layer - 1) * 13 + c] -
                                 (m[c] - *lo) / (*hi - *lo)) < 1e-5);
        }
    }

    // Issue 26: one panel exported alone, at a journal's width, reads in full; its provenance
    // names it; a zoomed panel's range is in the provenance; a panel the figure lacks is an error.
    void onePanelExportsAlone() {
        const QStringList panels = view_->panel_titles();
        // The one-dump kernel view: the heatmap, then the kernel curve, its frequency response
        // and the poles (reading order).
        QCOMPARE(panels.size(), 4);
        QVERIFY2(panels[2].startsWith("Frequency response"), qPrintable(panels.join(" | ")));
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 8;
        o.panel = 2;
        const QString path = out_ + "/kernels-panel3.svg";
        view_->export_to(path, o);
        const QStringList texts = [&] {
            QStringList out;
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly)) return out;
            QXmlStreamReader xml(&f);
            while (!xml.atEnd())
                if (xml.readNext() == QXmlStreamReader::StartElement &&
                    xml.name() == QLatin1String("text"))
                    out << xml.readElementText(QXmlStreamReader::IncludeChildElements);
            return out;
        }();
        const QString all = texts.join(" ");
        QVERIFY2(all.contains("Frequency response"), qPrintable(all));
        QVERIFY2(!all.contains("Poles") && !all.contains("layer"), qPrintable(all));
        // Alone, the panel is as high as 0.62 of the column (89 mm wide).
        const SvgText svg = read_svg_text(path);
        QVERIFY2(std::abs(svg.height_mm - 89 * 0.62) <= 0.15,
                 qPrintable(QString::number(svg.height_mm)));
        QVERIFY2(figure_layout_problems(figure_layout(*view_, o)).isEmpty(),
                 qPrintable(figure_layout_problems(figure_layout(*view_, o)).join("\n")));
        QFile prov(provenance_path(path));
        QVERIFY(prov.open(QIODevice::ReadOnly));
        const auto doc = nlohmann::json::parse(prov.readAll().toStdString());
        QCOMPARE(doc["panel"]["number"].get<int>(), 3);
        QVERIFY(QString::fromStdString(doc["panel"]["title"].get<std::string>())
                    .startsWith("Frequency response"));
        QVERIFY(!doc.contains("zoom"));

        // Zoomed in on the heatmap: the provenance records the range shown.
        PlotInteraction* zoom = view_->heatmap_a()->interaction();
        const VisibleRange home = zoom->visible_range();
        VisibleRange part = home;
        part.x = {home.x.lo + 2, home.x.lo + 8};
        zoom->set_visible_range(part);
        const QString zoomed = out_ + "/kernels-zoomed.pdf";
        FigureExportOptions whole;
        view_->export_to(zoomed, whole);
        zoom->set_visible_range(home);
        QFile zoomed_prov(provenance_path(zoomed));
        QVERIFY(zoomed_prov.open(QIODevice::ReadOnly));
        const auto z = nlohmann::json::parse(zoomed_prov.readAll().toStdString());
        QVERIFY2(z.contains("zoom") && z["zoom"].size() == 1, z.dump().c_str());
        QCOMPARE(z["zoom"][0]["panel"].get<int>(), 1);
        QCOMPARE(z["zoom"][0]["x"][0].get<double>(), home.x.lo + 2);
        QCOMPARE(z["zoom"][0]["x"][1].get<double>(), home.x.lo + 8);

        o.panel = 4;
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, view_->export_to(out_ + "/none.svg", o));
        QVERIFY(!QFile::exists(out_ + "/none.svg"));
    }

    // A zoomed chart on a logarithmic axis: the provenance records the range in the axis's values
    // (as the project's chart limits are), not the log10 the interaction works in.
    void provenanceOfAZoomOnALogAxisIsInAxisValues() {
        // The first chart whose y data are all positive (a log axis takes only those).
        QChartView* chart = nullptr;
        for (auto* c : view_->findChildren<QChartView*>())
            if (c->chart()->series().size() > 0 && chart_interaction(c) &&
                set_log_scale(c, Qt::Vertical, true).isEmpty()) {
                chart = c;
                break;
            }
        QVERIFY2(chart, "no chart of the kernels view takes a logarithmic y axis");
        PlotInteraction* zoom = chart_interaction(chart);
        const VisibleRange home = zoom->visible_range();
        VisibleRange part = home;
        // Inside the data's range on the log axis (log10 coordinates): 10^lo .. 10^hi.
        const double lo = home.y.lo + 0.25 * home.y.span(), hi = home.y.lo + 0.75 * home.y.span();
        part.y = {lo, hi};
        zoom->set_visible_range(part);
        const QString path = out_ + "/kernels-log-zoom.svg";
        view_->export_to(path, FigureExportOptions{});
        zoom->set_visible_range(home);
        (void)set_log_scale(chart, Qt::Vertical, false);
        QFile prov(provenance_path(path));
        QVERIFY(prov.open(QIODevice::ReadOnly));
        const auto z = nlohmann::json::parse(prov.readAll().toStdString());
        QVERIFY2(z.contains("zoom") && z["zoom"].size() == 1, z.dump().c_str());
        const auto y = z["zoom"][0]["y"];
        QVERIFY2(std::abs(y[0].get<double>() - std::pow(10.0, lo)) <= 1e-9 * std::pow(10.0, lo) &&
                     std::abs(y[1].get<double>() - std::pow(10.0, hi)) <= 1e-9 * std::pow(10.0, hi),
                 qPrintable(QString::fromStdString(y.dump()) +
                            QString(" vs 10^%1, 10^%2").arg(lo).arg(hi)));
    }

    // The largest size the options allow (1000 mm at 2400 dpi: a PNG of about 94,488 pixels
    // across, over QImage's 2 GiB) fails for the PNG alone, saying why; the SVG, PDF and CSV of
    // the view are still written (they were skipped, and the error said only "cannot write PNG").
    void aPngTooLargeToDrawCostsOnlyThePng() {
        FigureExportOptions o;
        o.width_mm = 1000;
        o.dpi = 2400;
        const QString dir = out_ + "/huge";
        QDir(dir).removeRecursively();
        try {
            (void)export_all_formats(*view_, dir, o, "huge");
            QFAIL("a PNG of 94,488 pixels across was reported written");
        } catch (const routescope::IoError& e) {
            const QString m = QString::fromUtf8(e.what());
            QVERIFY2(m.contains("pixels") && m.contains("lower the DPI or the width") &&
                         m.contains("3 of 4"),
                     qPrintable(m));
        }
        QVERIFY(!QFile::exists(dir + "/huge.png"));
        for (const char* suffix : {"svg", "pdf", "csv"})
            QVERIFY2(QFileInfo(dir + "/huge." + suffix).size() > 0, suffix);
    }

    // A disk that refuses the bytes, in this process (no child: forking a process that paints
    // can deadlock): the soft file-size limit lowered for the export alone, SIGXFSZ ignored, so
    // write() fails with EFBIG as a full disk's fails with ENOSPC. Every format says so, naming
    // the file and the system's reason (the PNG said "Unknown error (No space left on device)";
    // SVG and PDF writers report no write error at all), and leaves nothing.
    void aFullDiskIsSaidForEveryFormat_data() {
        QTest::addColumn<QString>("suffix");
        for (const char* s : {"png", "svg", "pdf", "csv"})
            QTest::newRow(s) << QString(s);
    }
    void aFullDiskIsSaidForEveryFormat() {
        QFETCH(QString, suffix);
        const QString path = out_ + "/full-disk." + suffix;
        QFile::remove(path);
        rlimit saved{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        QString said = "(no error)";
        {
            const rlimit limit{512, saved.rlim_max};
            ::setrlimit(RLIMIT_FSIZE, &limit);
            try {
                (void)export_figure(*view_, path, FigureExportOptions{});
            } catch (const routescope::IoError& e) {
                said = QString::fromUtf8(e.what());
            }
            ::setrlimit(RLIMIT_FSIZE, &saved);
        }
        std::signal(SIGXFSZ, old_handler);
        const QString reason = QString::fromUtf8(std::strerror(EFBIG));
        QVERIFY2(said.contains(path) && said.contains(reason) && !said.contains("Unknown error"),
                 qPrintable(said));
        QVERIFY2(!QFile::exists(path), qPrintable(path));
        QVERIFY2(!QFile::exists(path + ".part"), qPrintable(path));
        QVERIFY(!QFile::exists(provenance_path(path)));
    }

    // Export All on a full disk: every format fails for one reason, said once with the files it
    // cost, not four times (session 30's probe).
    void exportAllOnAFullDiskSaysTheReasonOnce() {
        const QString dir = out_ + "/full-disk-all";
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir));
        rlimit saved{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        QString said = "(no error)";
        {
            const rlimit limit{64, saved.rlim_max};
            ::setrlimit(RLIMIT_FSIZE, &limit);
            try {
                (void)export_all_formats(*view_, dir, FigureExportOptions{}, "all");
            } catch (const routescope::IoError& e) {
                said = QString::fromUtf8(e.what());
            }
            ::setrlimit(RLIMIT_FSIZE, &saved);
        }
        std::signal(SIGXFSZ, old_handler);
        qDebug("%s", qPrintable(said));
        const QString reason = QString::fromUtf8(std::strerror(EFBIG));
        QCOMPARE(said.count(reason), 1);
        for (const char* file : {"all.png", "all.svg", "all.pdf", "all.csv"})
            QVERIFY2(said.contains(file), qPrintable(said));
        QVERIFY2(said.contains(dir), qPrintable(said));
        QVERIFY2(QDir(dir).entryList(QDir::Files | QDir::Hidden).isEmpty(),
                 qPrintable(QDir(dir).entryList(QDir::Files | QDir::Hidden).join(", ")));
    }

    // Session 37: two formats whose names directories hold failed for one reason, said once
    // with the files, but the reason lost "is a directory" (only the text after its last ": "
    // was kept: "give its name (a file in the directory, say)").
    void twoFormatsBlockedByDirectoriesSayWhy() {
        const QString dir = out_ + "/blocked";
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir + "/b.svg") && QDir().mkpath(dir + "/b.pdf"));
        QStringList written;
        QString said = "(no error)";
        try {
            (void)export_all_formats(*view_, dir, FigureExportOptions{}, "b", &written);
        } catch (const routescope::IoError& e) {
            said = QString::fromUtf8(e.what());
        }
        QVERIFY2(said.contains("cannot write b.svg and b.pdf in " + dir + ": is a directory") &&
                     said.contains("give its name") && said.contains("2 of 4"),
                 qPrintable(said));
        QCOMPARE(written, (QStringList{dir + "/b.png", dir + "/b.png.provenance.json",
                                       dir + "/b.csv", dir + "/b.csv.provenance.json"}));
    }

    // Session 37: a provenance whose name a directory holds cost its figure's provenance only:
    // the PNG was written without it, yet counted as not written ("3 of 4" with four figures on
    // disk). A figure and its provenance are now written together or not at all.
    void aBlockedProvenanceCostsItsFigureToo() {
        const QString dir = out_ + "/blocked-provenance";
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir + "/c.png.provenance.json"));
        QStringList written;
        QString said = "(no error)";
        try {
            (void)export_all_formats(*view_, dir, FigureExportOptions{}, "c", &written);
        } catch (const routescope::IoError& e) {
            said = QString::fromUtf8(e.what());
        }
        QVERIFY2(said.contains(dir + "/c.png.provenance.json: is a directory") &&
                     said.contains("c.png is not written without its provenance") &&
                     said.contains("3 of 4"),
                 qPrintable(said));
        QVERIFY(!QFile::exists(dir + "/c.png"));
        QCOMPARE(written.size(), 6);
        for (const QString& f : written)
            QVERIFY2(QFileInfo(f).isFile() && QFileInfo(f).size() > 0, qPrintable(f));
        // What is on disk agrees with the count: three figures, each with its provenance, and
        // no temporary left behind.
        QStringList files = QDir(dir).entryList(QDir::Files | QDir::Hidden, QDir::Name);
        QCOMPARE(files, (QStringList{"c.csv", "c.csv.provenance.json", "c.pdf",
                                     "c.pdf.provenance.json", "c.svg", "c.svg.provenance.json"}));
    }

    // Found by a probe: `--export` wrote a figure's CSV through a link in --out onto the
    // project's own dump. An output that is a project's input (the file itself, a link to it,
    // a hard link) is refused while an ExportInputs names it: none of the figure's files is
    // written, the error names both, and the input keeps every byte.
    void anOutputThatIsAnInputIsNeverWritten() {
        const QString dir = out_ + "/inputs-kept";
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir + "/figs"));
        const QString input = dir + "/a.dump.h5", project = dir + "/p.rsproj";
        for (const QString& f : {input, project}) {
            QFile file(f);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("an input's bytes\n");
        }
        const auto bytes = [](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        QVERIFY(QFile::link("../a.dump.h5", dir + "/figs/c.csv"));                   // a link
        QVERIFY(::link(qPrintable(project), qPrintable(dir + "/figs/d.svg")) == 0);  // a hard link
        const ExportInputs inputs({input, project});
        const auto refused = [&](const QString& stem, const QString& file, const QString& in) {
            QStringList written;
            QString said = "(no error)";
            try {
                (void)export_all_formats(*view_, dir + "/figs", FigureExportOptions{}, stem,
                                         &written);
            } catch (const routescope::ConfigError& e) {
                said = QString::fromUtf8(e.what());
            }
            QVERIFY2(
                said.contains(dir + "/figs/" + file) && said.contains(in) && said.contains("input"),
                qPrintable(said));
            QVERIFY(written.isEmpty());
            for (const QString suffix : {".png", ".pdf", ".png.provenance.json"})
                QVERIFY2(!QFileInfo::exists(dir + "/figs/" + stem + suffix), qPrintable(stem));
        };
        refused("c", "c.csv", input);
        refused("d", "d.svg", project);
        // The figure alone, by its own name, and its provenance's name.
        QVERIFY_THROWS_EXCEPTION(
            routescope::ConfigError,
            export_figure(*view_, dir + "/a.dump.h5", FigureFormat::Csv, FigureExportOptions{}));
        QVERIFY(QFile::link("../p.rsproj", dir + "/figs/e.png.provenance.json"));
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError,
                                 export_figure(*view_, dir + "/figs/e.png", FigureExportOptions{}));
        QVERIFY(!QFileInfo::exists(dir + "/figs/e.png"));
        QCOMPARE(bytes(input), QByteArray("an input's bytes\n"));
        QCOMPARE(bytes(project), QByteArray("an input's bytes\n"));
        QVERIFY(QFileInfo(dir + "/figs/c.csv").isSymLink());
        // Any other name is written as before.
        QCOMPARE(export_all_formats(*view_, dir + "/figs", FigureExportOptions{}, "f").size(), 8);
    }

    // The export check's line for a broken word: a long file name broken where its line ends
    // (more than a few characters a line) reads; the same name in a line of three characters
    // does not, and the check says how many a line holds.
    void aWordBrokenIntoAFewCharactersALineDoesNotRead() {
        struct Broken : FigureSource {
            double line = 0;  // the box's width
            QSize figure_size() const override { return {480, 300}; }
            void paint_figure(QPainter& p, const QRect& target) const override {
                p.fillRect(target, Qt::white);
                QFont f = p.font();
                f.setPixelSize(12);
                p.setFont(f);
                draw_wrapped(p, QRectF(10, 10, line, 280), Qt::AlignLeft | Qt::AlignTop,
                             "run_a_with_a_long_name");
            }
            routescope::analysis::CsvTable figure_table() const override { return {}; }
            nlohmann::json figure_provenance() const override { return nlohmann::json::object(); }
            QString figure_name() const override { return "broken"; }
        } figure;
        QFont f;
        f.setPixelSize(12);
        const QFontMetricsF fm(f);
        FigureExportOptions o;
        figure.line = fm.horizontalAdvance("run_a_with") + 1;  // ten characters a line
        QVERIFY2(figure_layout_problems(figure_layout(figure, o)).isEmpty(),
                 qPrintable(figure_layout_problems(figure_layout(figure, o)).join("\n")));
        figure.line = fm.horizontalAdvance("run") + 1;  // three
        QCOMPARE(figure_layout_problems(figure_layout(figure, o)),
                 QStringList{"'run_a_with_a_long_name' is broken inside a word, 3 characters a "
                             "line"});
    }

    // An output folder that cannot be made says why (it said only "cannot create directory").
    void anOutputFolderThatIsAFileSaysSo() {
        const QString file = out_ + "/a-file";
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        for (const QString& dir : {file, file + "/sub"}) {
            try {
                (void)export_all_formats(*view_, dir, FigureExportOptions{}, "x");
                QFAIL("exported into a file");
            } catch (const routescope::IoError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains("a-file is a file, not a directory"),
                         e.what());
            }
        }
    }

    // A dangling symbolic link where the folder should be says so, naming the link and what it
    // names, as routescope-cli experiment does (docs/cli.md: the message names the file and the
    // problem); it said "the file system refused it". Nothing is made at the link's target.
    void anOutputFolderThatIsADanglingLinkSaysSo() {
        const QString link = out_ + "/dangling", target = out_ + "/nowhere/figs";
        QFile::remove(link);
        QVERIFY(QFile::link(target, link));
        for (const QString& dir : {link, link + "/sub"}) {
            try {
                (void)export_all_formats(*view_, dir, FigureExportOptions{}, "x");
                QFAIL("exported through a dangling link");
            } catch (const routescope::IoError& e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(link + " is a symbolic link to " +
                                                              target + ", which does not exist"),
                         e.what());
            }
        }
        QVERIFY(!QFileInfo::exists(out_ + "/nowhere"));
        QFile::remove(link);
    }

    void provenanceNamesTheInputHash() {
        const QString path = out_ + "/kernels_prov.png";
        const QStringList written = view_->export_to(path, 96);
        QCOMPARE(written.size(), 2);
        QCOMPARE(written[1], path + ".provenance.json");
        QFile f(written[1]);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        const auto doc = QJsonDocument::fromJson(text).object();
        QCOMPARE(doc["figure"].toString(), QString("kernels_prov.png"));
        QCOMPARE(doc["view"].toString(), QString("kernels"));
        QVERIFY(!doc["application"].toObject()["version"].toString().isEmpty());
        const auto input = doc["results"].toArray()[0].toObject()["inputs"].toArray()[0].toObject();
        QCOMPARE(input["path"].toString(), dump_);
        QCOMPARE(input["hash"].toString(), view_test::sha256_of(dump_));
        QCOMPARE(doc["settings"].toObject()["radius"].toInt(), 6);
    }

    // Probe Q3: two dumps of the same bytes (a copy in another folder). The result cache answers
    // by content, and the copy's figure named the first file in its provenance's inputs while its
    // settings named the copy. The inputs are the view's own files; their hash is the content's.
    void provenanceNamesTheViewsOwnFileOfACopy() {
        const QString dir = out_ + "/copy";
        QVERIFY(QDir().mkpath(dir + "/final"));
        const QString copy = dir + "/final/copy.dump.h5";
        QFile::remove(copy);
        QVERIFY(QFile::copy(dump_, copy));
        auto provenance_of = [&](KernelView& view, const QString& path) {
            view.start();
            if (!view_test::wait_for(&view) || !view.has_result()) return QJsonObject();
            view.export_to(path, 96);
            QFile f(provenance_path(path));
            if (!f.open(QIODevice::ReadOnly)) return QJsonObject();
            return QJsonDocument::fromJson(f.readAll()).object();
        };
        KernelViewSettings s;
        s.a = KernelSource::from_path(copy);
        s.radius = 6;  // view_'s settings: the cache holds view_'s result of dump_
        KernelView one(s);
        const QJsonObject doc = provenance_of(one, dir + "/copy.png");
        QVERIFY2(one.has_result(), qPrintable(one.error()));
        const auto results = doc["results"].toArray();
        QCOMPARE(results.size(), 1);
        const auto input = results[0].toObject()["inputs"].toArray()[0].toObject();
        QCOMPARE(input["path"].toString(), copy);
        QCOMPARE(input["hash"].toString(), view_test::sha256_of(copy));
        QCOMPARE(input["hash"].toString(), view_test::sha256_of(dump_));
        // The original and its copy compared: A is the original, B the copy (both results are
        // the one cached result, of the original).
        s.a = KernelSource::from_path(dump_);
        s.b = KernelSource::from_path(copy);
        KernelView two(s);
        const QJsonObject pair = provenance_of(two, dir + "/pair.png");
        QVERIFY2(two.has_result(), qPrintable(two.error()));
        QStringList paths;
        for (const auto r : pair["results"].toArray())
            for (const auto in : r.toObject()["inputs"].toArray())
                paths << in.toObject()["path"].toString();
        QCOMPARE(paths, (QStringList{dump_, copy}));
        // Results of one file at other parameters (a layer each) keep to that file: the second
        // result of the same parameters on the same bytes is the second file's.
        const std::string hash = view_test::sha256_of(dump_).toStdString(),
                          orig = dump_.toStdString();
        auto result = [&](int layer) {
            return nlohmann::json{{"analysis", "pca"},
                                  {"inputs", {{{"role", "dump"}, {"path", orig}, {"hash", hash}}}},
                                  {"parameters", {{"layer", layer}}}};
        };
        const nlohmann::json named = results_named_by_inputs(
            nlohmann::json::array({result(1), result(2), result(1), result(2)}), {dump_, copy});
        QStringList layer_paths;
        for (const auto& r : named)
            layer_paths << QString::fromStdString(r["inputs"][0]["path"].get<std::string>());
        QCOMPARE(layer_paths, (QStringList{dump_, dump_, copy, copy}));
        // One result alone (not in a list), and an input none of the files has, kept as it was.
        nlohmann::json other = result(1);
        other["inputs"][0]["hash"] = std::string(64, '0');
        QCOMPARE(results_named_by_inputs(other, {copy}), other);
        QCOMPARE(results_named_by_inputs(result(1), {copy})["inputs"][0]["path"],
                 copy.toStdString());
    }

    // Probe Q3: Arabic token labels were drawn as separate, unjoined letters in the PNG and PDF:
    // the figure fonts' QFont::PreferNoShaping (no ligatures in a PDF's text layer) leaves every
    // script unshaped that Qt does not count as needing OpenType, Arabic among them. Shaped,
    // "سسس" is the initial, medial and final forms of seen (three glyphs, none of them the
    // isolated "س" drawn alone); "effective" and "first" keep one glyph per letter (no "ff",
    // "fi" ligature). Both figure fonts: figure_font's and the print layout's (prepare_print).
    void figureFontsJoinArabicLettersWithoutLatinLigatures() {
        if (QFontDatabase::families(QFontDatabase::Arabic).isEmpty())
            QSKIP("no font with Arabic glyphs on this machine");
        auto glyphs = [](const QFont& font, const QString& text) {
            QTextLayout layout(text, font);
            layout.beginLayout();
            layout.createLine();
            layout.endLayout();
            QList<quint32> out;
            for (const QGlyphRun& run : layout.glyphRuns())
                out += run.glyphIndexes();
            return out;
        };
        auto check = [&](const QFont& font, const char* which) {
            const QList<quint32> alone = glyphs(font, QString::fromUtf8("س"));
            const QList<quint32> joined = glyphs(font, QString::fromUtf8("سسس"));
            if (alone.size() != 1 || joined.size() != 3)
                return QString("%1: %2 and %3 glyphs")
                    .arg(which)
                    .arg(alone.size())
                    .arg(joined.size());
            if (joined.contains(alone[0]) || joined[0] == joined[1] || joined[1] == joined[2] ||
                joined[0] == joined[2])
                return QString("%1: seen unjoined (glyphs %2 %3 %4, alone %5)")
                    .arg(which)
                    .arg(joined[0])
                    .arg(joined[1])
                    .arg(joined[2])
                    .arg(alone[0]);
            for (const QString word : {"effective", "first", "fl"})
                if (glyphs(font, word).size() != word.size())
                    return QString("%1: '%2' drawn with a ligature").arg(which, word);
            return QString();
        };
        const QString own = check(figure_font(view_->font()), "figure_font");
        QVERIFY2(own.isEmpty(), qPrintable(own));
        const auto restore = view_->prepare_print(QSizeF(336, 240), 10, -1);
        const QString print = check(view_->figure()->font(), "print layout");
        const QString print_own = check(figure_font(view_->font()), "figure_font in print");
        restore();
        QVERIFY2(print.isEmpty(), qPrintable(print));
        QVERIFY2(print_own.isEmpty(), qPrintable(print_own));
    }

    void exportAllWritesEveryFormatWithProvenance() {
        const QStringList files = export_all_formats(*view_, out_ + "/all", 120);
        QCOMPARE(files.size(), 8);
        for (const QString& f : files)
            QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));
        QVERIFY(files[0].endsWith("kernels-sample.png"));
    }

    void aViewNeverShownExportsToo() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_);
        KernelView hidden(s);
        hidden.start();
        QVERIFY(view_test::wait_for(&hidden));
        const QString path = out_ + "/hidden.png";
        hidden.export_to(path, 96);
        QCOMPARE(QImage(path).size(), QSize(960, 600));
    }

    void anUnknownFormatIsAnError() {
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, view_->export_to(out_ + "/kernels.bmp"));
    }

    // Issue 18: physical sizes and print font sizes. Expected values are the journal presets
    // themselves (89 mm, 183 mm, 8 pt...), converted by the definitions of the units
    // (1 in = 25.4 mm = 72 pt), never by the exporter's code.
    void svgHasThePresetWidthAndFontSize_data() {
        QTest::addColumn<QString>("width");
        QTest::addColumn<double>("mm");
        QTest::addColumn<double>("pt");
        QTest::newRow("single column, 8 pt") << "single" << 89.0 << 8.0;
        QTest::newRow("double column, 7 pt") << "double" << 183.0 << 7.0;
        QTest::newRow("custom 120 mm, 10 pt") << "120" << 120.0 << 10.0;
    }
    void svgHasThePresetWidthAndFontSize() {
        QFETCH(QString, width);
        QFETCH(double, mm);
        QFETCH(double, pt);
        const QSize screen = view_->figure_size();
        FigureExportOptions o;
        o.width_mm = figure_width_mm_from_text(width);
        o.font_pt = pt;
        const QString path = out_ + "/kernels-" + width + ".svg";
        view_->export_to(path, o);
        QCOMPARE(view_->figure_size(), screen);  // the on-screen layout is back
        const SvgText svg = read_svg_text(path);
        QVERIFY2(svg.error.isEmpty(), qPrintable(svg.error));
        QCOMPARE(svg.width_attr, QString::number(mm) + "mm");
        QVERIFY(std::abs(svg.width_mm - mm) < 1e-9);
        // Height by the print layout's reflow (to the 0.1 mm the SVG declares, and the layout's
        // whole pixels at 3× the print: 0.1 mm).
        QVERIFY2(std::abs(svg.height_mm - kernel_print_height_mm(mm)) <= 0.15,
                 qPrintable(QString("%1 mm, expected %2 mm")
                                .arg(svg.height_mm)
                                .arg(kernel_print_height_mm(mm))));
        // The view box spans the declared size with one scale on both axes.
        QVERIFY(std::abs(svg.view_w / svg.width_mm - svg.view_h / svg.height_mm) <
                1e-4 * svg.view_w / svg.width_mm);
        QVERIFY2(svg.font_pt.size() > 10, "too few texts");
        // Every text, titles, legends, tick labels and painted panels alike, is at the preset
        // (whole pixels of the layout at 3× the print: within 1/24 pt).
        for (double f : svg.font_pt)
            QVERIFY2(std::abs(f - pt) <= 1.0 / 24 + 1e-9,
                     qPrintable(QString("a text of %1 pt, not %2 pt").arg(f).arg(pt)));
    }

    // "On-screen fonts" at a print width: each text prints at its size on the screen (one screen
    // pixel = 1/96 inch), as in the on-screen size export, in SVG and PDF alike. The layout is
    // three times the print, so its fonts grow with it; before, painted panels printed at a third
    // of their size (2.3 pt) and the charts' point-sized fonts, in the SVG, at 254/96 of theirs.
    void onScreenFontsPrintAtTheirScreenSize() {
        FigureExportOptions screen, print;
        print.width_mm = kSingleColumnMm;
        view_->export_to(out_ + "/fonts-screen.svg", screen);
        view_->export_to(out_ + "/fonts-print.svg", print);
        const SvgText a = read_svg_text(out_ + "/fonts-screen.svg");
        const SvgText b = read_svg_text(out_ + "/fonts-print.svg");
        QVERIFY2(a.error.isEmpty() && b.error.isEmpty(), qPrintable(a.error + b.error));
        QVERIFY(a.font_pt.size() > 10 && b.font_pt.size() > 10);
        // Every printed size is one of the screen's (to the layout's whole pixels: 1/4 pt).
        for (double f : b.font_pt) {
            double nearest = 1e9;
            for (double g : a.font_pt)
                nearest = std::min(nearest, std::abs(f - g));
            QVERIFY2(nearest <= 0.26, qPrintable(QString("a %1 pt text in print, %2 pt from "
                                                         "every on-screen size")
                                                     .arg(f)
                                                     .arg(nearest)));
        }
        // The PDF's words as poppler reads them: the tallest as tall as on the screen's PDF.
        const QString pdftotext = QStandardPaths::findExecutable("pdftotext");
        if (pdftotext.isEmpty()) QSKIP("pdftotext (poppler-utils) is not installed");
        auto tallest_word = [&](const QString& pdf) {
            QProcess p;
            p.start(pdftotext, {"-bbox", pdf, "-"});
            if (!p.waitForFinished(30000)) return -1.0;
            const QRegularExpression word(
                R"re(yMin="([0-9.]+)" xMax="[0-9.]+" yMax="([0-9.]+)")re");
            double tallest = 0;
            for (auto it = word.globalMatch(QString::fromUtf8(p.readAllStandardOutput()));
                 it.hasNext();) {
                const auto m = it.next();
                tallest = std::max(tallest, m.captured(2).toDouble() - m.captured(1).toDouble());
            }
            return tallest;
        };
        view_->export_to(out_ + "/fonts-screen.pdf", screen);
        view_->export_to(out_ + "/fonts-print.pdf", print);
        const double on_screen = tallest_word(out_ + "/fonts-screen.pdf"),
                     printed = tallest_word(out_ + "/fonts-print.pdf");
        QVERIFY2(on_screen > 5 && std::abs(printed / on_screen - 1) < 0.1,
                 qPrintable(QString("tallest word %1 pt in print, %2 pt on screen")
                                .arg(printed)
                                .arg(on_screen)));
    }

    void pdfPageIsThePresetSize() {
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 9;
        const QString path = out_ + "/kernels-single.pdf";
        view_->export_to(path, o);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray pdf = f.readAll();
        const QRegularExpression box(R"(/MediaBox\s*\[\s*0\s+0\s+([0-9.]+)\s+([0-9.]+)\s*\])");
        const auto m = box.match(QString::fromLatin1(pdf));
        QVERIFY2(m.hasMatch(), "no /MediaBox");
        const double w_pt = 89.0 / 25.4 * 72, h_pt = kernel_print_height_mm(89) / 25.4 * 72;
        // Qt writes the page in whole points (QPageSize keeps points as integers).
        QVERIFY2(std::abs(m.captured(1).toDouble() - w_pt) <= 0.5, qPrintable(m.captured(1)));
        QVERIFY2(std::abs(m.captured(2).toDouble() - h_pt) <= 0.5, qPrintable(m.captured(2)));
        // Text as text: the PDF embeds or names fonts.
        QVERIFY(pdf.contains("/Font"));
    }

    void pngOfAPresetHasItsPixelsAtTheDpi() {
        FigureExportOptions o;
        o.width_mm = kDoubleColumnMm;
        o.font_pt = 8;
        o.dpi = 300;
        const QString path = out_ + "/kernels-double.png";
        view_->export_to(path, o);
        const QImage png(path);
        QVERIFY(!png.isNull());
        QCOMPARE(png.width(), qRound(183.0 / 25.4 * 300));
        QCOMPARE(qRound(png.dotsPerMeterX() * 0.0254), 300);
    }

    void badPresetsAreErrors() {
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, figure_width_mm_from_text("wide"));
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, figure_width_mm_from_text("5"));
        FigureExportOptions o;
        o.font_pt = 100;
        QVERIFY_THROWS_EXCEPTION(routescope::ConfigError, view_->export_to(out_ + "/never.svg", o));
        QVERIFY(!QFileInfo::exists(out_ + "/never.svg"));
    }

    // The round-ticks hook of chart_panel follows every range; a range 10^7 times wider than the
    // last one must not be laid out with the old step (it hung test_birdie_mixture_view).
    void aWideRangeAfterANarrowOneIsQuick() {
        QChartView* chart = make_chart_view("ticks", nullptr);
        std::unique_ptr<QChartView> owner(chart);
        add_line(chart, "line", {0.0, 1.0}, {0.0, 1.0});
        chart->resize(400, 300);
        chart->show();
        QVERIFY(QTest::qWaitForWindowExposed(chart));
        x_axis(chart)->setRange(0, 1);
        QElapsedTimer t;
        t.start();
        x_axis(chart)->setRange(0, 1e7);
        QCoreApplication::processEvents();
        QVERIFY2(t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
        // The round step of 5 ticks, or a coarser round one where the labels need the room
        // (FigureChartView thins ticks whose labels would crowd each other).
        auto round_step = [](double step, double want) {
            return step == want || std::abs(step - 2.5 * want) < 1e-9 * want ||
                   std::abs(step - 5 * want) < 1e-9 * want;
        };
        QVERIFY2(round_step(x_axis(chart)->tickInterval(), 2e6),
                 qPrintable(QString::number(x_axis(chart)->tickInterval())));
        x_axis(chart)->setRange(0, 1e-3);
        QCoreApplication::processEvents();
        QVERIFY2(round_step(x_axis(chart)->tickInterval(), 2e-4),
                 qPrintable(QString::number(x_axis(chart)->tickInterval())));
    }

    // Issue 26, acceptance 1, the test of the test: the export check passes a figure whose
    // labels read and fails each way a label can be lost, from the layout and from the renderings.
    void theExportCheckFailsOnAnUnreadableLabel_data() {
        QTest::addColumn<int>("fault");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<bool>("rendered");  // the rendering shows it too
        using F = LabelFigure::Fault;
        QTest::newRow("clipped") << int(F::Clipped) << "is clipped" << false;
        QTest::newRow("past the edge") << int(F::PastTheEdge) << "runs off the page" << true;
        QTest::newRow("on the plot") << int(F::OnThePlot) << "lies on a plot" << false;
        QTest::newRow("overlapping") << int(F::Overlapping) << "overlaps" << false;
        QTest::newRow("elided") << int(F::Elided) << "is elided" << false;
        QTest::newRow("colour bar of one value")
            << int(F::ColourBarOfOneValue) << "colour bar" << false;
        QTest::newRow("broken inside a word")
            << int(F::BrokenInsideAWord) << "'‖Δh‖ / ‖h^(ℓ−1)‖' is broken inside a word" << false;
    }
    void theExportCheckFailsOnAnUnreadableLabel() {
        QFETCH(int, fault);
        QFETCH(QString, expected);
        QFETCH(bool, rendered);
        if (const QString missing = view_test::renderers_missing(); !missing.isEmpty())
            QSKIP(qPrintable(missing));
        const QString dir = out_ + "/label_check";
        QDir().mkpath(dir);
        FigureExportOptions o;
        o.width_mm = 0;
        // The sound figure passes every check.
        LabelFigure good;
        const FigureLayout sound = figure_layout(good, o);
        QCOMPARE(sound.texts.size(), std::size_t(3));
        QCOMPARE(sound.plot_areas.size(), std::size_t(1));
        QVERIFY2(figure_layout_problems(sound).isEmpty(),
                 qPrintable(figure_layout_problems(sound).join("\n")));
        export_figure(good, dir + "/good.svg", o);
        export_figure(good, dir + "/good.pdf", o);
        QStringList seen = view_test::svg_rendering_problems(sound, dir + "/good.svg", dir) +
                           view_test::pdf_rendering_problems(sound, dir + "/good.pdf", dir);
        QVERIFY2(seen.isEmpty(), qPrintable(seen.join("\n")));

        LabelFigure bad;
        bad.fault = static_cast<LabelFigure::Fault>(fault);
        const FigureLayout layout = figure_layout(bad, o);
        const QStringList problems = figure_layout_problems(layout);
        QVERIFY2(problems.filter(expected).size() >= 1,
                 qPrintable(expected + " not among: " + problems.join("; ")));
        export_figure(bad, dir + "/bad.svg", o);
        const QStringList shown = view_test::svg_rendering_problems(layout, dir + "/bad.svg", dir);
        if (rendered)  // the page's edge cuts the label in librsvg's rendering too
            QVERIFY2(shown.filter("shows only").size() + shown.filter("does not show").size() >= 1,
                     qPrintable(shown.join("; ")));
        else
            QVERIFY2(shown.filter("where the layout has none").isEmpty(),
                     qPrintable(shown.join("; ")));
    }

    // Row labels in CJK (tokens of a Japanese or Chinese vocabulary) drawn whole: the fallback
    // font makes the line taller than the label's rectangle, and the check called every such label
    // clipped (exit 4 on a correct figure; figure probe, session 31). The glyphs are whole in
    // librsvg's rendering of the SVG, which the check must agree with.
    void cjkLabelsDrawnWholeAreNotCalledClipped() {
        if (QFontDatabase::families(QFontDatabase::Japanese).isEmpty())
            QSKIP("no font with Japanese glyphs on this machine");
        struct CjkFigure : FigureSource {
            std::unique_ptr<HeatmapWidget> heatmap = std::make_unique<HeatmapWidget>();
            CjkFigure() {
                HeatmapData d;
                d.rows = 6;
                d.columns = 6;
                for (int i = 0; i < 36; ++i)
                    d.values.push_back(i);
                for (int r = 0; r < 6; ++r)
                    d.row_labels << QString::fromUtf8("日本語%1").arg(r + 10);
                d.title = "cjk";
                heatmap->set_data(std::move(d));
            }
            QSize figure_size() const override { return {480, 360}; }
            void paint_figure(QPainter& p, const QRect& target) const override {
                p.fillRect(target, Qt::white);
                heatmap->paint(p, target);
            }
            routescope::analysis::CsvTable figure_table() const override { return {}; }
            nlohmann::json figure_provenance() const override { return nlohmann::json::object(); }
            QString figure_name() const override { return "cjk"; }
        } figure;
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 8;
        const FigureLayout layout = figure_layout(figure, o);
        QVERIFY2(figure_layout_problems(layout).filter("clipped").isEmpty(),
                 qPrintable(figure_layout_problems(layout).join("\n")));
        const QString dir = out_ + "/cjk";
        QDir().mkpath(dir);
        export_figure(figure, dir + "/cjk.svg", o);
        const QStringList seen = view_test::svg_rendering_problems(layout, dir + "/cjk.svg", dir);
        QVERIFY2(seen.filter("shows only").isEmpty() && seen.filter("does not show").isEmpty(),
                 qPrintable(seen.join("\n")));
    }

    // Session 28: a colour bar labels both ends of its range, and round values between when there
    // is room. Before, it was ticked only at round values: a range holding one (a gate's 0.43 to
    // 0.57, a signed matrix's -3.6 to 3.6) carried one label, "0.5" or "0", and no scale. The
    // labels are read back from the PDF by poppler.
    void colourBarsLabelBothEndsOfTheirRange_data() {
        QTest::addColumn<double>("lo");
        QTest::addColumn<double>("hi");
        QTest::addColumn<bool>("diverging");
        QTest::addColumn<int>("height");  // of the figure: a short bar has room for its ends only
        QTest::newRow("one round value inside") << 0.4312 << 0.5687 << false << 130;
        QTest::newRow("signed, about 0") << -3.6 << 3.6 << true << 130;
        QTest::newRow("probabilities") << 0.035 << 0.089 << false << 130;
        QTest::newRow("one value") << 0.5 << 0.5 << false << 130;
        QTest::newRow("tiny") << 1e-30 << 4e-30 << false << 130;
        // A tall bar of a narrow range: round values every 5e-5, each written apart from the
        // next (they read "0.0314" three times).
        QTest::newRow("narrow, tall") << 0.030925 << 0.031639 << false << 700;
    }
    void colourBarsLabelBothEndsOfTheirRange() {
        QFETCH(double, lo);
        QFETCH(double, hi);
        QFETCH(bool, diverging);
        QFETCH(int, height);
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        HeatmapData d;
        d.rows = 3;
        d.columns = 4;
        for (int i = 0; i < 12; ++i)
            d.values.push_back(lo + (hi - lo) * i / 11.0);
        d.diverging = diverging;
        const ShortHeatmapFigure figure(std::move(d), height);
        for (const double width : {0.0, kSingleColumnMm}) {
            FigureExportOptions o;
            o.width_mm = width;
            if (width > 0) o.font_pt = 8;
            const QString pdf = out_ + QStringLiteral("/colour-bar-%1.pdf").arg(width);
            export_figure(figure, pdf, o);
            QString error;
            const std::vector<double> numbers = numbers_on_page(pdf, &error);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QString read;
            for (double v : numbers)
                read += QString::number(v) + " ";
            QVERIFY2(numbers.size() >= 2, qPrintable("the bar reads: " + read));
            for (std::size_t i = 1; i < numbers.size(); ++i)  // no value written twice
                QVERIFY2(std::count(numbers.begin(), numbers.end(), numbers[i]) == 1,
                         qPrintable("the bar reads: " + read));
            const double low = *std::min_element(numbers.begin(), numbers.end());
            const double high = *std::max_element(numbers.begin(), numbers.end());
            if (hi > lo) {  // both ends, to a hundredth of the range
                const double tolerance = 0.01 * (hi - lo);
                QVERIFY2(
                    std::abs(low - lo) <= tolerance && std::abs(high - hi) <= tolerance,
                    qPrintable(
                        QString("range %1 to %2, the bar reads: %3").arg(lo).arg(hi).arg(read)));
            } else {  // one value: a range about it
                QVERIFY2(low < lo && high > hi, qPrintable("the bar reads: " + read));
            }
            // The export check agrees: the bar has its values and every label reads.
            const FigureLayout layout = figure_layout(figure, o);
            QCOMPARE(layout.colour_bars.size(), std::size_t(1));
            QVERIFY(colour_bar_labels(layout, layout.colour_bars.front()).size() >= 2);
            QVERIFY2(figure_layout_problems(layout).isEmpty(),
                     qPrintable(figure_layout_problems(layout).join("\n")));
        }
    }

    void cleanupTestCase() { view_.reset(); }
};

QTEST_MAIN(TestFigureExport)
#include "test_figure_export.moc"
