// Each analysis view renders a fixture and draws exactly the analysis result. Screenshots of every
// view go to ROUTESCOPE_TEST_OUTPUT.
#include <QSignalSpy>
#include <QValueAxis>
#include <QtTest>

#include <H5Cpp.h>

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>

#include "analysis/dump_reader.hpp"
#include "engine/core/error.hpp"
#include "engine/io/dump_writer.hpp"
#include "view_test_support.hpp"
#include "views/anisotropy_view.hpp"
#include "views/array_browser_view.hpp"
#include "views/attention_view.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_options.hpp"
#include "views/display_name.hpp"
#include "views/efficiency_view.hpp"
#include "views/figure_export.hpp"
#include "views/figure_layout.hpp"
#include "views/gates_view.hpp"
#include "views/heatmap_widget.hpp"
#include "views/interval_bar_chart.hpp"
#include "views/kernel_view.hpp"
#include "views/length_accuracy_view.hpp"
#include "views/pca_view.hpp"
#include "views/similarity_view.hpp"
#include "views/transitions_view.hpp"
#include "views/work_thread_pool.hpp"

#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QThreadPool>
#include <QXmlStreamReader>

#include <algorithm>
#include <map>
#include <optional>

using namespace routescope::views;

namespace {
QList<QLineSeries*> lines(QChartView* v) {
    QList<QLineSeries*> out;
    for (auto* s : v->chart()->series())
        if (auto* l = qobject_cast<QLineSeries*>(s); l && !qobject_cast<QScatterSeries*>(s))
            out << l;
    return out;
}
/// The stroke of every line of an SVG, a <polyline> or a <path> (Qt writes a dashed curve as a
/// path): the colour and dash of its enclosing group, as QSvgGenerator writes them, in drawing
/// order.
struct SvgStroke {
    QColor colour;
    bool dashed = false;
};
std::vector<SvgStroke> polyline_strokes(const QString& svg) {
    std::vector<SvgStroke> out, stack;
    QFile f(svg);
    if (!f.open(QIODevice::ReadOnly)) return out;
    QXmlStreamReader xml(&f);
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::EndElement) {
            if (!stack.empty()) stack.pop_back();
            continue;
        }
        if (token != QXmlStreamReader::StartElement) continue;
        SvgStroke g = stack.empty() ? SvgStroke{} : stack.back();
        const auto a = xml.attributes();
        if (a.hasAttribute("stroke")) {
            g.colour = QColor(a.value("stroke").toString());
            g.dashed = a.hasAttribute("stroke-dasharray") &&
                       a.value("stroke-dasharray").toString() != QLatin1String("none");
        }
        const bool line = xml.name() == QLatin1String("polyline") ||
                          (xml.name() == QLatin1String("path") && !a.value("d").isEmpty());
        if (line && g.colour.isValid()) out.push_back(g);
        stack.push_back(g);
    }
    return out;
}

/// The distinct colours of the strokes that are not grey (axes, grid and text are), each once,
/// in the order first drawn.
std::vector<SvgStroke> chromatic_strokes(const std::vector<SvgStroke>& strokes) {
    std::vector<SvgStroke> out;
    for (const SvgStroke& s : strokes) {
        const QColor& c = s.colour;
        if (std::max({c.red(), c.green(), c.blue()}) - std::min({c.red(), c.green(), c.blue()}) <
            24)
            continue;
        bool seen = false;
        for (const SvgStroke& o : out)
            seen = seen || (o.colour == c && o.dashed == s.dashed);
        if (!seen) out.push_back(s);
    }
    return out;
}

double luma(const QColor& c) {  // Rec. 709 weights of the sRGB components
    return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();
}

/// A word of a PDF's page as poppler reads it (pdftotext -bbox), in points.
struct PdfWord {
    QString text;
    QRectF box;
};
struct PdfPage {
    QSizeF size;
    std::vector<PdfWord> words;
    QString error;
};
PdfPage read_pdf_words(const QString& pdf) {
    PdfPage page;
    const QString pdftotext = QStandardPaths::findExecutable("pdftotext");
    QProcess p;
    p.start(pdftotext, {"-bbox", pdf, "-"});
    if (!p.waitForFinished(30000) || p.exitCode() != 0) {
        page.error = "pdftotext failed on " + pdf;
        return page;
    }
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const auto size =
        QRegularExpression(R"re(<page width="([0-9.]+)" height="([0-9.]+)")re").match(out);
    page.size = QSizeF(size.captured(1).toDouble(), size.captured(2).toDouble());
    const QRegularExpression word(
        R"re(<word xMin="(-?[0-9.]+)" yMin="(-?[0-9.]+)" xMax="(-?[0-9.]+)" yMax="(-?[0-9.]+)">([^<]*)</word>)re");
    for (auto it = word.globalMatch(out); it.hasNext();) {
        const auto m = it.next();
        const QPointF a(m.captured(1).toDouble(), m.captured(2).toDouble());
        const QPointF b(m.captured(3).toDouble(), m.captured(4).toDouble());
        QString text = m.captured(5);
        text.replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"");
        page.words.push_back({text, QRectF(a, b)});
    }
    if (page.words.empty()) page.error = "no word on the page of " + pdf;
    return page;
}

// Print options of a journal figure: its width and the size of every text.
FigureExportOptions print_options(double width_mm, double font_pt) {
    FigureExportOptions o;
    o.width_mm = width_mm;
    o.font_pt = font_pt;
    return o;
}

// The view exported as a PDF with `o`, its words read back; error also when the page is not the
// width asked (1 pt of rounding).
PdfPage exported_pdf(AnalysisView& view, const QString& pdf, const FigureExportOptions& o) {
    view.export_to(pdf, o);
    PdfPage page = read_pdf_words(pdf);
    if (page.error.isEmpty() && std::abs(page.size.width() - o.width_mm / 25.4 * 72) > 1)
        page.error = QStringLiteral("%1: %2 pt wide, not %3 mm")
                         .arg(pdf)
                         .arg(page.size.width())
                         .arg(o.width_mm);
    return page;
}

/// A dump written by the project's own writer (engine/io/dump_writer.hpp): `examples` examples of
/// 5 tokens, d = 3, hidden states of layers 0..n_layers all equal to `hidden`; with `gate`, BiGS
/// gates u_f, u_b and v of layers 1..n_layers all equal to it. Empty when it cannot be written.
QString uniform_dump(const QString& path, int examples, int n_layers, float hidden,
                     std::optional<float> gate = std::nullopt) {
    try {
        routescope::DumpSpec spec;
        spec.arch = gate ? "bigs" : "external";
        spec.name = "uniform";
        spec.n_layers = n_layers;
        spec.d_model = 3;
        spec.examples = examples;
        spec.length = 5;
        for (int l = 0; l <= n_layers; ++l)
            spec.layers.push_back(l);
        if (gate) {
            spec.gates = {"u_f", "u_b", "v"};
            spec.gate_channels = 3;
        }
        routescope::DumpWriter w(path.toStdString(), spec);
        const std::vector<float> h(5 * 3, hidden), g(5 * 3, gate.value_or(0));
        for (int s = 0; s < examples; ++s) {
            routescope::ExampleRecord r;
            r.tokens = {1, 2, 3, 4, 5};
            r.length = 5;
            w.write_example(s, r);
            for (int l = 0; l <= n_layers; ++l) {
                w.write_hidden(l, s, h.data());
                if (gate && l > 0)
                    for (const auto& name : spec.gates)
                        w.write_gate(l, name, s, g.data());
            }
        }
        w.finish();
    } catch (const std::exception& e) {
        qWarning("%s", e.what());
        return {};
    }
    return path;
}
}  // namespace

class TestAnalysisViews : public QObject {
    Q_OBJECT
    QString dir_, dump_a_, dump_b_;

private slots:
    void initTestCase() {
        dir_ = view_test::data_dir("analysis_views");
        dump_a_ = view_test::sample_dump(dir_, "model_a.dump.h5");
        dump_b_ = view_test::sample_dump(dir_, "model_b.dump.h5", {"--seed", "2", "--layers", "4"});
        QVERIFY(!dump_a_.isEmpty() && !dump_b_.isEmpty());
    }

    void kernelViewFromADump() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_a_);
        KernelView view(s);
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result_a();
        QCOMPARE(view.heatmap_a()->data().rows, static_cast<int>(r->layers.size()));
        QCOMPARE(view.heatmap_a()->data().columns, 2 * r->radius + 1);
        QCOMPARE(view.heatmap_a()->image().size(),
                 QSize(2 * r->radius + 1, static_cast<int>(r->layers.size())));
        // Clicking the second row selects that layer and draws its full kernels.
        QSignalSpy spy(&view, &KernelView::layerSelected);
        emit view.heatmap_a()->rowClicked(1);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.first().at(0).toInt(), r->layers[1].layer);
        const auto curves = lines(view.curve_chart());
        QCOMPARE(curves.size(), 2);
        QCOMPARE(curves[0]->count(), static_cast<int>(r->layers[1].forward.size()));
        for (int i = 0; i < curves[0]->count(); ++i)
            QCOMPARE(curves[0]->at(i).y(), r->layers[1].forward[static_cast<std::size_t>(i)]);
        QVERIFY(
            view.effective_length_text().contains(QString::number(r->layers[1].effective_length)));
        QCOMPARE(lines(view.response_chart()).size(), 2);
        QVERIFY(view_test::screenshot(&view, "view_kernels_dump"));
        // Signed values: the diverging map, the raw relative kernel.
        view.set_scaling("signed");
        QVERIFY(view.heatmap_a()->data().diverging);
        QCOMPARE(view.heatmap_a()->data().values[0], r->layers[0].relative[0]);
    }

    // A dump shorter than the radius (L = 8, R = 10): the kernels reach r = −7..7 and the heatmap
    // shows those 15 columns (it drew "No data" while the CSV held them).
    void kernelViewOfADumpShorterThanTheRadius() {
        const QString shorter =
            view_test::sample_dump(dir_, "short.dump.h5", {"--length", "8", "--seed", "3"});
        QVERIFY(!shorter.isEmpty());
        KernelViewSettings s;
        s.a = KernelSource::from_path(shorter);
        s.radius = 10;
        KernelView view(s);
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result_a();
        QCOMPARE(r->layers.front().relative.size(), std::size_t(15));
        QCOMPARE(view.heatmap_a()->data().columns, 15);
        QCOMPARE(view.heatmap_a()->data().values.size(), r->layers.size() * 15);
        QCOMPARE(view.heatmap_a()->image().size(), QSize(15, static_cast<int>(r->layers.size())));
    }

    // A setting that names none of the view's choices is an error naming it, not the default
    // drawn under a provenance that records the unknown value.
    void aSettingOutsideTheChoicesIsRefused() {
        try {
            (void)TransitionsViewSettings::from_json({{"measure", "absolute"}});
            QFAIL("no exception");
        } catch (const std::exception& e) {
            QCOMPARE(QString(e.what()),
                     QString("settings.measure: 'absolute' is not one of relative, l2, angle, "
                             "positions"));
        }
        QCOMPARE(TransitionsViewSettings::from_json({{"x", "depth"}}).x, QString("depth"));
    }

    // Nine runs' names joined by "-vs-" made a file name longer than the 255 bytes a file system
    // holds, and the export failed: a long stem keeps its first 160 bytes and a hash of the whole
    // (two such stems that differ only at the end stay apart).
    void aLongFigureNameIsShortenedAndStaysUnique() {
        TransitionsViewSettings s;
        for (int i = 0; i < 9; ++i)
            s.dumps << QString("/data/run-%1-bigs-induction-lr0.001-seed0-μοντέλο.dump.h5").arg(i);
        TransitionsView a(s);
        s.dumps.back().replace("run-8", "run-9");
        TransitionsView b(s);
        const QString na = a.figure_name(), nb = b.figure_name();
        QVERIFY2(na.toUtf8().size() <= 180 && na.startsWith("transitions-run-0-bigs"),
                 qPrintable(na));
        QVERIFY(na != nb);
        QVERIFY((na + ".png.provenance.json").toUtf8().size() < 255);
    }

    void kernelViewFromACheckpointShowsPoles() {
        const QString ckpt = view_test::ssm_checkpoint(dir_, "before.ckpt.h5");
        QVERIFY(!ckpt.isEmpty());
        KernelViewSettings s;
        s.a = KernelSource::from_path(ckpt);
        QVERIFY(s.a.checkpoint);
        s.length = 64;
        KernelView view(s);
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result_a();
        QCOMPARE(static_cast<int>(r->layers.size()), 2);
        QCOMPARE(r->layers[0].forward.size(), std::size_t{64});
        view.select_layer(r->layers[0].layer);
        int scatter_points = 0;
        for (auto* series : view.pole_chart()->chart()->series())
            if (auto* sc = qobject_cast<QScatterSeries*>(series)) scatter_points += sc->count();
        QCOMPARE(scatter_points, static_cast<int>(r->layers[0].poles_forward.size() +
                                                  r->layers[0].poles_backward.size()));
        QVERIFY(view_test::screenshot(&view, "view_kernels_checkpoint"));
    }

    // A model with several kernels per SSM: the group box appears (0..H−1), and choosing a group
    // shows that group's kernels — the dump's <direction>_groups row — with the group named under
    // the heatmap; the choice is one settings edit (what the workspace's undo records), and
    // restoring the settings before it brings group 0 back.
    void kernelViewShowsAChosenChannelGroup() {
        const QString dump = view_test::arch_dump(
            dir_, "bigs_groups",
            R"({"arch": "bigs", "d_model": 16, "n_layers": 2, "max_len": 32, "ssm": {"n_modes": 8, "n_kernels": 4}})");
        QVERIFY(!dump.isEmpty());
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump);
        KernelView view(s);
        QSignalSpy edits(&view, &KernelView::settingsEdited);
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        auto* box = view.findChild<QSpinBox*>("kernelGroup");
        QVERIFY(box && box->isVisible());
        QCOMPARE(box->maximum(), 3);
        QCOMPARE(view.result_a()->groups, std::int64_t{4});
        box->setValue(2);
        QVERIFY(view_test::wait_for(&view));
        const routescope::analysis::DumpReader reader(dump.toStdString());
        const auto groups = reader.kernel_groups(2, true);
        const auto* layer2 = &view.result_a()->layers.back();
        QCOMPARE(layer2->layer, 2);
        for (Eigen::Index t = 0; t < groups.cols(); ++t)
            QCOMPARE(layer2->forward[static_cast<std::size_t>(t)], double(groups(2, t)));
        QVERIFY2(view.heatmap_a()->data().note.contains("channel group 2 of 4"),
                 qPrintable(view.heatmap_a()->data().note));
        QCOMPARE(view.settings()["group"].get<int>(), 2);
        QCOMPARE(edits.count(), 1);
        const auto before = edits.at(0).at(1).value<nlohmann::json>();
        QCOMPARE(before["group"].get<int>(), 0);
        view.restore_settings(before);
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(view.settings()["group"].get<int>(), 0);
        QCOMPARE(box->value(), 0);
    }

    void kernelCompareModeDrawsTheDifferenceAndLinksLayers() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_a_);
        s.b = KernelSource::from_path(dump_b_);
        s.scaling = "signed";
        KernelView view(s);
        view.resize(1300, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto& a = view.heatmap_a()->data();
        const auto& b = view.heatmap_b()->data();
        const auto& d = view.heatmap_difference()->data();
        QCOMPARE(d.rows, a.rows);
        for (std::size_t i = 0; i < d.values.size(); ++i)
            QCOMPARE(d.values[i], a.values[i] - b.values[i]);
        emit view.heatmap_b()->rowClicked(2);
        QCOMPARE(view.heatmap_a()->selected_row(), 2);
        QCOMPARE(view.heatmap_difference()->selected_row(), 2);
        QCOMPARE(lines(view.curve_chart()).size(), 4);  // A and B, forward and backward
        QVERIFY(view_test::screenshot(&view, "view_kernels_compare"));
    }

    void kernelViewOfAFileWithoutKernelsSaysWhy() {
        const QString ckpt = view_test::ssm_checkpoint(dir_, "before.ckpt.h5");
        KernelViewSettings s;
        s.a = {QFileInfo(ckpt).dir().filePath("equal.dump.h5"), false};
        KernelView view(s);
        QSignalSpy failed(&view, &AnalysisView::analysisFailed);
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(failed.count(), 1);
        QVERIFY(!view.has_result());
        QVERIFY2(view.error().contains("kernels", Qt::CaseInsensitive), qPrintable(view.error()));
    }

    void gatesViewShowsStatisticsHistogramAndATokenTimeline() {
        GatesView view({dump_a_, -1, {}, 3});
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result();
        QCOMPARE(view.table()->rowCount(), static_cast<int>(r->gates.size()));
        // Layers 1..4 × gates u_f, u_b of the sample dump.
        QCOMPARE(static_cast<int>(r->gates.size()), 8);
        // Timeline of example 3: channels × its real tokens, labelled with the tokens' words.
        const auto& t = view.timeline();
        QCOMPARE(t.example, 3);
        const auto& d = view.timeline_heatmap()->data();
        QCOMPARE(d.rows, 16);  // d_model channels
        QCOMPARE(d.columns, static_cast<int>(t.length));
        QCOMPARE(d.values[1 * d.columns + 2], static_cast<double>(t.values(2, 1)));
        QVERIFY(!d.column_labels.isEmpty());
        QVERIFY2(!d.column_labels[0].startsWith("["),
                 qPrintable(d.column_labels[0]));  // a word, not [PAD]
        // The histogram is the selected gate's, normalised to fractions.
        const auto& g = r->gates[0];
        const auto series = lines(view.histogram_chart());
        QCOMPARE(series.size(), 1);
        QCOMPARE(series[0]->count(), 2 * static_cast<int>(g.histogram.size()));
        QCOMPARE(series[0]->at(0).y(),
                 static_cast<double>(g.histogram[0]) / static_cast<double>(g.values));
        // Search narrows the example list to texts containing the word.
        view.search()->setText("kernels");
        for (int i = 0; i < view.example_box()->count(); ++i)
            QVERIFY(
                view.example_box()->itemData(i, Qt::ToolTipRole).toString().contains("kernels"));
        QVERIFY(view.example_box()->count() > 0);
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(view_test::screenshot(&view, "view_gates"));
    }

    // Probe Z7-01: the histogram of a gate whose values are all v, around 1e6 and beyond, labels
    // its x ticks apart (decisions.md: tick labels get as many digits as the step needs to write
    // each tick exactly and tell neighbours apart): every tick read "1e+06" (the view sets the
    // gate's range after fitting the axes). The axis's label format is checked at the axis's own
    // step and at the round step of a fifth of the range (1, 2 or 5 × 10^k, computed here): the
    // figure thins a crowded axis to a coarser step and goes back to the finer one when there is
    // room (chart_figure.cpp), so both must read. Each tick, a multiple of the step inside the
    // range printed with the axis's format, reads back as its value, and no two read the same.
    void gatesHistogramOfLargeGateValuesLabelsEachTickApart_data() {
        QTest::addColumn<double>("v");
        QTest::newRow("1e4") << 1e4;
        QTest::newRow("1e6") << 1e6;
        QTest::newRow("1e8") << 1e8;
        QTest::newRow("1e10") << 1e10;
        QTest::newRow("3.4e38") << 3.4e38;
    }
    void gatesHistogramOfLargeGateValuesLabelsEachTickApart() {
        QFETCH(double, v);
        const QString dump = uniform_dump(
            QDir(dir_).filePath(QStringLiteral("gates_%1.dump.h5").arg(QTest::currentDataTag())), 4,
            1, 1.0f, static_cast<float>(v));
        QVERIFY(!dump.isEmpty());
        GatesView view({dump, 1, "u_f", 0});
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        auto* axis = qobject_cast<QValueAxis*>(
            view.histogram_chart()->chart()->axes(Qt::Horizontal).front());
        QVERIFY(axis);
        // The range holds the gate's value (float32, as stored).
        const double stored = static_cast<float>(v);
        QVERIFY2(axis->min() < stored && stored < axis->max(),
                 qPrintable(QStringLiteral("%1 .. %2").arg(axis->min()).arg(axis->max())));
        const double raw = (axis->max() - axis->min()) / 5;
        const double decade = std::pow(10.0, std::floor(std::log10(raw)));
        const double round = raw <= decade       ? decade
                             : raw <= 2 * decade ? 2 * decade
                             : raw <= 5 * decade ? 5 * decade
                                                 : 10 * decade;
        for (const double step : {axis->tickInterval(), round}) {
            QStringList labels;
            for (double k = std::ceil(axis->min() / step); k * step <= axis->max(); ++k) {
                const double t = k * step;
                const QString label =
                    QString::asprintf(axis->labelFormat().toLatin1().constData(), t);
                QVERIFY2(std::abs(label.toDouble() - t) <= 0.01 * step,
                         qPrintable(axis->labelFormat() + ": " + label + " for " +
                                    QString::number(t, 'g', 17)));
                labels << label;
            }
            QVERIFY2(labels.size() == QSet<QString>(labels.begin(), labels.end()).size(),
                     qPrintable(axis->labelFormat() + ": " + labels.join(' ')));
            if (step == round) QVERIFY2(labels.size() >= 2, qPrintable(labels.join(' ')));
        }
    }

    // Probe Z7-04: an example the dump does not hold is said as Implicit Attention and Arrays say
    // it (its range), not blamed on an example_index the dump does not have.
    void gatesExampleOutsideTheDumpNamesTheRange() {
        const QString dump =
            uniform_dump(QDir(dir_).filePath("gates_one_example.dump.h5"), 1, 2, 1.0f, 0.5f);
        QVERIFY(!dump.isEmpty());
        GatesView view({dump, 2, "u_f", 7});
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.error().contains(dump + ": example 7 is outside 0..0"),
                 qPrintable(view.error()));
        QVERIFY2(!view.error().contains("example_index"), qPrintable(view.error()));
    }

    void anisotropyViewOverlaysDumpsPerLayer() {
        AnisotropyViewSettings s;
        s.dumps = {dump_a_, dump_b_};
        AnisotropyView view(s);
        view.resize(1100, 700);
        view.show();
        QSignalSpy progress(&view, &AnalysisView::progressChanged);
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(progress.count() >= 2);
        QCOMPARE(view.layers().size(), std::size_t{5});  // layers 0..4 in both
        QCOMPARE(view.selected_layer(), 4);
        const auto token = lines(view.token_chart());
        QCOMPARE(token.size(), 2);  // one per dump
        const auto& r = view.results()[1][4][0];
        QCOMPARE(token[1]->count(), static_cast<int>(r.stats.histogram.size()));
        for (int i = 0; i < token[1]->count(); ++i)
            QCOMPARE(token[1]->at(i).y(),
                     static_cast<double>(r.stats.histogram[static_cast<std::size_t>(i)]) /
                         r.stats.pairs);
        QCOMPARE(view.summary()->rowCount(), 2 * 5 * 2);
        view.select_layer(0);
        QCOMPARE(lines(view.sentence_chart()).size(), 2);
        QVERIFY(view_test::screenshot(&view, "view_anisotropy"));
        view.select_layer(4);
        QVERIFY(view_test::screenshot(&view, "view_anisotropy_layer4"));
    }

    void anisotropyCancelDropsTheResult() {
        AnisotropyViewSettings s;
        s.dumps = {dump_a_};
        AnisotropyView view(s);
        QSignalSpy cancelled(&view, &AnalysisView::analysisCancelled);
        view.start();
        view.cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!view.busy());
        QTest::qWait(500);
        QVERIFY(!view.has_result());
    }

    void pcaViewTabulatesKAndDrawsCurves() {
        PcaViewSettings s;
        s.dumps = {dump_a_};
        PcaView view(s);
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results().size(), std::size_t{1});
        QCOMPARE(view.results()[0].size(), std::size_t{5});
        const auto curves = lines(view.chart());
        QCOMPARE(curves.size(), 5);
        const auto& r = view.results()[0][2];
        QCOMPARE(curves[2]->count(), static_cast<int>(r.mean_curve.size()));
        QCOMPARE(curves[2]->at(0).y(), r.mean_curve[0]);
        std::size_t rows = 0;
        for (const auto& x : view.results()[0])
            rows += x.table().rows.size();
        QCOMPARE(view.table()->rowCount(), static_cast<int>(rows));
        QVERIFY(view_test::screenshot(&view, "view_pca"));
    }

    // Session 28: the layers of a published-size model (24 hidden states) are coloured on a
    // sequential map ordered by depth with a key "layer 0 [bar] 23" under the chart, not one legend
    // entry each in Qt's five theme colours (layers 0, 5, 10, 15 and 20 shared one); compared
    // with a 13-layer model, each model has one legend entry (its line style) beside the key,
    // where 37 entries pushed the plots off the page at every width. Read from the exported SVG
    // (its strokes) and the figure's layout at 89 and 183 mm.
    void pcaColoursManyLayersByDepth() {
        const QString deep =
            view_test::sample_dump(dir_, "deep23.dump.h5", {"--layers", "23", "--seed", "4"});
        const QString mid =
            view_test::sample_dump(dir_, "deep12.dump.h5", {"--layers", "12", "--seed", "5"});
        QVERIFY(!deep.isEmpty() && !mid.isEmpty());
        PcaViewSettings s;
        s.dumps = {deep};
        PcaView view(s);
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view, 120000));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results()[0].size(), std::size_t{24});
        FigureExportOptions o;
        o.width_mm = kSingleColumnMm;
        o.font_pt = 8;
        const QString svg = dir_ + "/pca-deep.svg";
        view.export_to(svg, o);
        // 24 curves in 24 colours (and the k(p) chart's model colour), drawn layer by layer from
        // dark to light: viridis' lightness grows along the map.
        const auto colours = chromatic_strokes(polyline_strokes(svg));
        QVERIFY2(colours.size() >= 24, qPrintable(QString::number(colours.size())));
        for (std::size_t i = 1; i < 24; ++i)
            QVERIFY2(luma(colours[i].colour) > luma(colours[i - 1].colour),
                     qPrintable(QString("layer %1 %2 after %3")
                                    .arg(i)
                                    .arg(colours[i].colour.name(), colours[i - 1].colour.name())));
        // The legend: a key labelled at the first and last layer, no entry per layer.
        const FigureLayout layout = figure_layout(view, o);
        const QRegularExpression layer_entry(R"(^layer \d+$|ℓ\d)");
        for (const FigureText& t : layout.texts)
            QVERIFY2(!layer_entry.match(t.text.trimmed()).hasMatch(), qPrintable(t.text));
        QCOMPARE(layout.colour_bars.size(), std::size_t{1});
        QCOMPARE(colour_bar_labels(layout, layout.colour_bars.front()), (QStringList{"0", "23"}));
        QStringList problems = view_test::journal_layout_problems(view);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        QVERIFY(view_test::screenshot(&view, "view_pca_24_layers"));

        // Compare mode, 24 and 13 hidden states at relative depth.
        s.dumps = {deep, mid};
        s.x = "depth";
        PcaView both(s);
        both.resize(1000, 700);
        both.show();
        both.start();
        QVERIFY(view_test::wait_for(&both, 120000));
        QVERIFY2(both.has_result(), qPrintable(both.error()));
        const QString svg2 = dir_ + "/pca-deep-vs-mid.svg";
        both.export_to(svg2, o);
        // A's layers solid, B's dashed, each in colours of its depth.
        int solid = 0, dashed = 0;
        for (const SvgStroke& c : chromatic_strokes(polyline_strokes(svg2)))
            (c.dashed ? dashed : solid) += 1;
        QVERIFY2(solid >= 24 && dashed >= 13,
                 qPrintable(QString("%1 solid, %2 dashed colours").arg(solid).arg(dashed)));
        for (const double width : {kSingleColumnMm, kDoubleColumnMm}) {
            o.width_mm = width;
            const FigureLayout l = figure_layout(both, o);
            int entries = 0;
            for (const FigureText& t : l.texts) {
                QVERIFY2(!layer_entry.match(t.text.trimmed()).hasMatch(), qPrintable(t.text));
                entries += t.text.trimmed() == display_stem(deep) ? 1 : 0;
            }
            QCOMPARE(entries, 2);  // the model's legend entry in each chart
            QCOMPARE(l.colour_bars.size(), std::size_t{1});
            QCOMPARE(colour_bar_labels(l, l.colour_bars.front()), (QStringList{"0", "1"}));
        }
        problems = view_test::journal_layout_problems(both);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        QVERIFY(view_test::screenshot(&both, "view_pca_24_vs_13_layers"));
    }

    // Session 37: the PCA view at 183 mm and 14 pt drew its first panel ("Mean cumulative
    // explained variance", the chart with a colour key) 2.6 times too large, its texts at 36 pt,
    // cropped by the page and over the next panel: Qt Charts kept the chart at its layout's
    // minimum size, which grew with the print's fonts, not at the panel's size (and its view kept
    // that minimum after the export). Read back from the PDF by poppler: every horizontal word is
    // as high as the size asked (a sans face's ascent and descent are 1.0 to 1.3 em; DejaVu Sans'
    // 1.164), and on the 183 mm page.
    void pcaPrintTextsAreTheSizeAsked() {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        const QString dump = view_test::sample_dump(
            dir_, "pca14.dump.h5", {"--examples", "64", "--layers", "4", "--state-seed", "3"});
        QVERIFY(!dump.isEmpty());
        PcaViewSettings s;
        s.dumps = {dump};
        PcaView view(s);
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        // A chart view raises its minimum size to its chart's, which the print's fonts grew, and
        // never lowers it: after a print, the window could no longer shrink the chart.
        const QSize minimum = view.chart()->minimumSize();
        for (const double pt : {14.0, 20.0}) {
            const FigureExportOptions o = print_options(kDoubleColumnMm, pt);
            const PdfPage page =
                exported_pdf(view, dir_ + QStringLiteral("/pca-%1pt.pdf").arg(pt), o);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            int horizontal = 0;
            bool title = false;
            for (const PdfWord& w : page.words) {
                const double h = w.box.height();
                title = title || w.text == "cumulative";
                if (w.box.width() <= 0.6 * h) continue;  // a turned word (an axis title) or a digit
                ++horizontal;
                QVERIFY2(h >= 1.0 * pt && h <= 1.3 * pt,
                         qPrintable(QString("'%1' is %2 pt high (%3 em) at --font-pt %4")
                                        .arg(w.text)
                                        .arg(h)
                                        .arg(h / pt)
                                        .arg(pt)));
                QVERIFY2(w.box.left() >= -0.5 && w.box.right() <= page.size.width() + 0.5 &&
                             w.box.top() >= -0.5 && w.box.bottom() <= page.size.height() + 0.5,
                         qPrintable(QString("'%1' runs off the page").arg(w.text)));
            }
            QVERIFY2(title, "the first panel's title is not on the page");
            QVERIFY(horizontal > 20);
            QCOMPARE(view.chart()->minimumSize(), minimum);
            const QStringList problems = figure_layout_problems(figure_layout(view, o));
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        }
    }

    // Session 37: a transitions view of two models with long (spaced) names at 89 mm and 10 pt:
    // the legend's four entries took the panel's fixed height, the plot was a sliver and the y
    // title "‖Δh‖ / ‖h^(ℓ−1)‖" came out one glyph a line, which the export check did not list.
    // The panel now grows until the plot holds each word of the title on a line: poppler reads
    // the turned title's words whole from the PDF, and the check finds nothing.
    void aCrowdedPrintPanelGrowsSoItsYTitleReads() {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        const QString a = view_test::sample_dump(dir_, "crowded_a.dump.h5", {"--layers", "6"});
        const QString b = view_test::sample_dump(dir_, "crowded_b.dump.h5",
                                                 {"--layers", "6", "--state-seed", "2"});
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        set_display_name(a,
                         "Ablation: BiGS with 24 layers, no gating, long context window (seed 1)");
        set_display_name(b, "Baseline BiGS-24 trained on the full corpus for 10000 steps (seed 2)");
        TransitionsViewSettings s;
        s.dumps = {a, b};
        TransitionsView view(s);
        view.resize(900, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const FigureExportOptions o = print_options(kSingleColumnMm, 10);
        const PdfPage page = exported_pdf(view, dir_ + "/transitions-crowded.pdf", o);
        const QStringList problems = figure_layout_problems(figure_layout(view, o));
        set_display_name(a, {});
        set_display_name(b, {});
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
        // The y title's words, turned (taller than wide), left of the plot: each one whole.
        const QString y_title = QStringLiteral("‖Δh‖ / ‖h^(ℓ−1)‖");
        // A line of text is as high as the most common word's box (every text is 10 pt); a
        // turned word's box is that wide and not that high.
        std::map<int, int> heights;
        for (const PdfWord& w : page.words)
            ++heights[qRound(w.box.height() * 10)];
        const double line = std::max_element(heights.begin(), heights.end(),
                                             [](auto x, auto y) { return x.second < y.second; })
                                ->first /
                            10.0;
        QStringList turned;
        for (const PdfWord& w : page.words)
            if (std::abs(w.box.width() - line) <= 0.05 * line &&
                std::abs(w.box.height() - line) > 0.05 * line)
                turned << w.text;
        QStringList words = y_title.split(' ');
        QStringList found = turned;
        words.sort();
        found.sort();
        QVERIFY2(found == words, qPrintable("the turned words read: " + turned.join(" | ")));
    }

    // Probe Y2 (D2): a legend of long names over more rows than the panel is high (transitions
    // of 4 models, anisotropy of 8, names of 60 characters, 89 mm at 8 pt) left the panel at its
    // 0.62 × width and drew the legend over the plot, its tick labels and the title: once the
    // texts' room exceeded the panel, Qt Charts kept its last plot area, which looked large
    // enough. User guide, "Print layout": the panel grows, not the text shrinks. Read back from
    // the PDF by poppler: no word on another, the page taller than 0.62 × its width, every name's
    // words on the page; and the export's check finds nothing. Beyond 2.5 × its width (names of
    // 400 characters at 10 pt) the panel grows no further and the check reports the legend.
    void aLegendTallerThanThePanelGrowsIt() {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        QStringList dumps;
        for (int i = 1; i <= 8; ++i) {
            dumps << view_test::sample_dump(
                dir_, QStringLiteral("legend_%1.dump.h5").arg(i),
                {"--examples", "20", "--length", "12", "--d-model", "8", "--layers", "2", "--seed",
                 "1", "--state-seed", QString::number(i)});
            QVERIFY(!dumps.back().isEmpty());
        }
        auto name_all = [&](int length) {
            for (int i = 0; i < dumps.size(); ++i) {
                QString name = QStringLiteral("BiGS-large seed %1 lr 3e-4 warmup 10k").arg(i);
                while (name.size() < length)
                    name += QStringLiteral(" ablation%1").arg(name.size() % 7);
                set_display_name(dumps[i], name.left(length));
            }
        };
        auto forget_names = [&] {
            for (const QString& d : dumps)
                set_display_name(d, {});
        };
        struct Case {
            QString kind;
            int models, name_length;
            double pt;
            bool capped;
        };
        for (const Case& c :
             {Case{"transitions", 4, 60, 8, false}, Case{"anisotropy", 8, 60, 8, false},
              Case{"transitions", 4, 400, 10, true}}) {
            name_all(c.name_length);
            std::unique_ptr<AnalysisView> view;
            if (c.kind == "transitions") {
                TransitionsViewSettings s;
                s.dumps = dumps.mid(0, c.models);
                view = std::make_unique<TransitionsView>(s);
            } else {
                AnisotropyViewSettings s;
                s.dumps = dumps.mid(0, c.models);
                view = std::make_unique<AnisotropyView>(s);
            }
            // The size of `routescope --export`'s window: the plot Qt Charts kept from the
            // screen was then higher than the print asks, and the panel did not grow.
            view->resize(1400, 900);
            view->show();
            view->start();
            QVERIFY(view_test::wait_for(view.get()));
            QVERIFY2(view->has_result(), qPrintable(view->error()));
            const QString what = QStringLiteral("%1 of %2 models, names of %3 characters, %4 pt")
                                     .arg(c.kind)
                                     .arg(c.models)
                                     .arg(c.name_length)
                                     .arg(c.pt);
            const FigureExportOptions o = print_options(kSingleColumnMm, c.pt);
            const PdfPage page = exported_pdf(
                *view, dir_ + QStringLiteral("/legend-%1-%2.pdf").arg(c.kind).arg(c.name_length),
                o);
            const QStringList problems = figure_layout_problems(figure_layout(*view, o));
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            const double width = page.size.width(), height = page.size.height();
            if (c.capped) {
                // 2.5 × 89 mm, within Qt's whole points of the page size.
                QVERIFY2(std::abs(height - 2.5 * width) <= 1.5,
                         qPrintable(QString("%1: %2 × %3 pt").arg(what).arg(width).arg(height)));
                QVERIFY2(!problems.isEmpty(), qPrintable(what + ": the check finds nothing"));
                continue;
            }
            QVERIFY2(height > 0.62 * width + 2,
                     qPrintable(QString("%1: the panel did not grow (%2 × %3 pt)")
                                    .arg(what)
                                    .arg(width)
                                    .arg(height)));
            QStringList over;
            for (std::size_t i = 0; i < page.words.size(); ++i)
                for (std::size_t j = i + 1; j < page.words.size(); ++j) {
                    const QRectF common = page.words[i].box & page.words[j].box;
                    if (common.width() > 1 && common.height() > 2)
                        over << page.words[i].text + " / " + page.words[j].text;
                }
            QVERIFY2(over.isEmpty(), qPrintable(what + ": words overlap: " + over.join(", ")));
            QStringList words;
            for (const PdfWord& w : page.words)
                words << w.text;
            for (const QString& word : display_stem(dumps[c.models - 1]).split(' '))
                QVERIFY2(words.contains(word),
                         qPrintable(what + ": '" + word + "' is not on the page"));
            QVERIFY2(problems.isEmpty(), qPrintable(what + ":\n" + problems.join("\n")));
        }
        forget_names();
    }

    void transitionsViewDrawsACurvePerModelAndVectorKind() {
        TransitionsViewSettings s;
        s.dumps = {dump_a_, dump_b_};
        TransitionsView view(s);
        view.resize(900, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto curves = lines(view.chart());
        QCOMPARE(curves.size(), 4);
        const auto& r = view.results()[0];
        QCOMPARE(curves[0]->count(), static_cast<int>(r.layers.size()));
        QCOMPARE(curves[0]->at(0).y(), r.layers[0].tokens.relative);
        // The layer axis ends at the last layer (nice numbers took 23 layers to 30, a quarter of
        // the plot empty).
        const auto* x =
            qobject_cast<QValueAxis*>(view.chart()->chart()->axes(Qt::Horizontal).front());
        QVERIFY(x);
        int last = 0;
        for (const auto& result : view.results())
            last = std::max(last, result.layers.back().layer);
        QCOMPARE(x->max(), static_cast<double>(last));
        {  // the published BiGS's depth: 23 layers, where Qt's nice numbers gave 30
            TransitionsViewSettings deep;
            deep.dumps = {view_test::arch_dump(
                dir_, "bigs23", R"({"arch": "bigs", "d_model": 8, "n_layers": 23, "max_len": 32,
                                   "d_inner": 8, "ln_eps": 1e-5})",
                /*gates=*/false)};
            QVERIFY(!deep.dumps.front().isEmpty());
            TransitionsView v23(deep);
            v23.resize(900, 600);
            v23.show();
            v23.start();
            QVERIFY(view_test::wait_for(&v23));
            QVERIFY2(v23.has_result(), qPrintable(v23.error()));
            const auto* x23 =
                qobject_cast<QValueAxis*>(v23.chart()->chart()->axes(Qt::Horizontal).front());
            QVERIFY(x23);
            QCOMPARE(x23->max(), 23.0);
        }
        view.set_measure("angle");
        QCOMPARE(lines(view.chart())[1]->at(1).y(), r.layers[1].sentences.angle_degrees);
        QVERIFY(view_test::screenshot(&view, "view_transitions"));

        // Layers are whole numbers: the printed figure's x tick labels (the numbers just under
        // the plot) are integers, also after the print's 5% margins widened the range and when
        // zoomed to two layers (they read 1.0, 1.5, 2.0 and 1.0, 1.2, … before).
        for (const double mm : {kSingleColumnMm, kDoubleColumnMm, 0.0}) {
            if (mm == 0) {
                QVERIFY(set_axis_limits(view.chart(), 1, 2, 0, 90).isEmpty());
            }
            FigureExportOptions o;
            o.width_mm = mm > 0 ? mm : kSingleColumnMm;
            o.font_pt = 8;
            const FigureLayout layout = figure_layout(view, o);
            QVERIFY(!layout.plot_areas.empty());
            const QRectF plot = layout.plot_areas.front();
            QStringList ticks;
            for (const FigureText& t : layout.texts) {
                bool number = false;
                QString(t.text).replace(QChar(0x2212), '-').toDouble(&number);
                if (number && t.box.top() >= plot.bottom() - 1 &&
                    t.box.top() <= plot.bottom() + 2 * t.font_px)
                    ticks << t.text;
            }
            QVERIFY2(ticks.size() >= 2, qPrintable(ticks.join(", ")));
            for (const QString& t : ticks)
                QVERIFY2(!t.contains('.'),
                         qPrintable(QString("%1: x ticks %2")
                                        .arg(mm > 0 ? QString("%1 mm").arg(mm) : "zoomed")
                                        .arg(ticks.join(", "))));
        }
    }

    // Probe Z7-02: hidden states all zero have no relative change and no angle (analyses.md:
    // vectors of norm 0 are left out of both; every one left out, the value is null). The figure
    // says so instead of an empty chart; compared, the note names the model; the L2 change is
    // defined and drawn without a note.
    void transitionsOfAZeroDumpSayTheMeasureIsUndefined() {
        const QString zero = uniform_dump(QDir(dir_).filePath("zero.dump.h5"), 4, 2, 0.0f);
        QVERIFY(!zero.isEmpty());
        TransitionsViewSettings s;
        s.dumps = {zero};
        TransitionsView view(s);
        view.resize(900, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QString title = chart_title(view.chart());
        QVERIFY2(title.contains("layers ℓ = 1–2: every token and sentence vector has norm 0") &&
                     title.contains("the relative change is undefined"),
                 qPrintable(title));
        // Nothing is drawn, and the x axis still spans the layers the note names.
        QCOMPARE(lines(view.chart()).front()->count(), 0);
        const auto* x =
            qobject_cast<QValueAxis*>(view.chart()->chart()->axes(Qt::Horizontal).front());
        QVERIFY(x && x->min() <= 1 && x->max() >= 2);
        view.set_measure("angle");
        title = chart_title(view.chart());
        QVERIFY2(title.contains("norm 0") && title.contains("the angle is undefined"),
                 qPrintable(title));
        view.set_measure("l2");
        title = chart_title(view.chart());
        QVERIFY2(!title.contains("undefined"), qPrintable(title));
        QCOMPARE(lines(view.chart()).front()->count(), 2);  // 0 at layers 1 and 2
        // Compared with a model whose vectors are not zero: one line, naming the zero model.
        TransitionsViewSettings c;
        c.dumps = {dump_a_, zero};
        TransitionsView compared(c);
        compared.resize(900, 600);
        compared.show();
        compared.start();
        QVERIFY(view_test::wait_for(&compared));
        QVERIFY2(compared.has_result(), qPrintable(compared.error()));
        title = chart_title(compared.chart());
        QVERIFY2(title.contains(display_stem(zero).toHtmlEscaped() + " — layers ℓ = 1–2"),
                 qPrintable(title));
        QVERIFY2(!title.contains(display_stem(dump_a_).toHtmlEscaped()), qPrintable(title));
        QCOMPARE(title.count("undefined"), 1);
    }

    void accuracyViewComparesTwoModelsAndListsABinsExamples() {
        // Two models' predictions on the same examples (the analysis tests' numpy-written pair).
        const QString dir =
            QFileInfo(view_test::ssm_checkpoint(dir_, "before.ckpt.h5")).dir().path();
        LengthAccuracyView view(
            {dir + "/random.dump.h5", dir + "/random_b.dump.h5", "quantile", 4, 0});
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result();
        QVERIFY(r->compared);
        const auto& d = view.chart()->data();
        QCOMPARE(d.bins.size(), static_cast<int>(r->bins.size()));
        QCOMPARE(d.series.size(), std::size_t{2});
        for (std::size_t b = 0; b < r->bins.size(); ++b) {
            QCOMPARE(d.series[0].value[b], r->bins[b].a.accuracy);
            QCOMPARE(d.series[0].low[b], r->bins[b].a.wilson_low);
            QCOMPARE(d.series[1].count[b], r->bins[b].b.count);
            QCOMPARE(d.difference[b], r->bins[b].difference);
        }
        // A bin is [lo, hi) (the last [lo, hi]) of whole lengths: labelled by the first and last
        // length it holds ("15–164" read as closed, 164 in two bins). Enumerated here.
        for (std::size_t b = 0; b < r->bins.size(); ++b) {
            const bool last = b + 1 == r->bins.size();
            std::vector<long> held;
            for (long n = 0; n <= 4096; ++n)
                if (n >= r->bins[b].lo && (n < r->bins[b].hi || (last && n == r->bins[b].hi)))
                    held.push_back(n);
            QVERIFY(!held.empty());
            const QString want = held.size() == 1
                                     ? QString::number(held.front())
                                     : QStringLiteral("%1–%2").arg(held.front()).arg(held.back());
            QCOMPARE(d.bins[static_cast<int>(b)], want);
        }
        QTest::mouseClick(view.chart(), Qt::LeftButton, {}, view.chart()->bin_centre(1));
        QCOMPARE(view.chart()->selected_bin(), 1);
        QCOMPARE(view.examples()->rowCount(), static_cast<int>(r->bins[1].examples.size()));
        QCOMPARE(view.examples()->item(0, 0)->text().toLongLong(), r->bins[1].examples[0]);
        QVERIFY(view_test::screenshot(&view, "view_length_accuracy"));
    }

    // Probe Q3: a quantile bin holding no whole length was labelled by the length after it.
    // Lengths 4, 8, 9, 9, 9, 11, 13, 14 in 5 bins: numpy.quantile's edges (docs/analyses.md,
    // "The bins") at positions 7k/5 = 0, 1.4, 2.8, 4.2, 5.6, 7 of the sorted lengths are 4,
    // 8 + 0.4·1 = 8.4, 9 + 0.8·0 = 9, 9 + 0.2·2 = 9.4, 11 + 0.6·2 = 12.2 and 14. [8.4, 9) holds
    // no length and was labelled "9", as [9, 9.4) that holds the three 9s. A bin is labelled with
    // the first and last length it holds (user guide), one holding none by its range, the CSV's
    // edges.
    void accuracyBinHoldingNoLengthIsLabelledByItsRange() {
        const QString dump = view_test::sample_dump(
            dir_, "eight_lengths.dump.h5",
            {"--examples", "8", "--length", "16", "--layers", "2", "--state-seed", "1"});
        QVERIFY(!dump.isEmpty());
        {
            const routescope::analysis::DumpReader reader(dump.toStdString());
            std::vector<long> lengths(reader.lengths().begin(), reader.lengths().end());
            std::sort(lengths.begin(), lengths.end());
            QCOMPARE(lengths, (std::vector<long>{4, 8, 9, 9, 9, 11, 13, 14}));
        }
        LengthAccuracyView view({dump, {}, "quantile", 5, 0});
        view.resize(1000, 700);
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto* r = view.result();
        const std::vector<double> edges{4, 8.4, 9, 9.4, 12.2, 14};
        QCOMPARE(r->bins.size(), edges.size() - 1);
        for (std::size_t b = 0; b + 1 < edges.size(); ++b) {
            QVERIFY(std::abs(r->bins[b].lo - edges[b]) < 1e-9);
            QVERIFY(std::abs(r->bins[b].hi - edges[b + 1]) < 1e-9);
        }
        QCOMPARE(r->bins[1].a.count, std::int64_t{0});
        QCOMPARE(view.chart()->data().bins,
                 (QStringList{"4–8", "[8.4, 9)", "9", "10–12", "13–14"}));
    }

    // Session 37: the accuracy chart's legend entries did not wrap: two models named by long file
    // names (no spaces) ran off an 89 mm page (user guide: legends wrap, a word wider than the
    // line broken where the line ends, every label in full). Read back from the PDF by poppler:
    // every word on the 89 mm page, and each name whole in the page's text.
    void accuracyLegendOfLongNamesWrapsOnThePage() {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed");
        const QStringList extra{"--examples", "40", "--length", "16",
                                "--d-model",  "8",  "--layers", "2"};
        // The same examples (--seed), other hidden states: a compare-mode pair.
        const QString a = view_test::sample_dump(
            dir_, "run_a_with_a_rather_long_descriptive_name_for_the_ablation.dump.h5",
            extra + QStringList{"--seed", "1", "--state-seed", "1"});
        const QString b = view_test::sample_dump(
            dir_, "run_b_with_a_rather_long_descriptive_name_for_the_baseline.dump.h5",
            extra + QStringList{"--seed", "1", "--state-seed", "2"});
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        LengthAccuracyView view({a, b, "quantile", 5, 0});
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        for (const double pt : {8.0, 10.0}) {
            const FigureExportOptions o = print_options(kSingleColumnMm, pt);
            const PdfPage page = exported_pdf(
                view, dir_ + QStringLiteral("/accuracy-long-names-%1pt.pdf").arg(pt), o);
            QVERIFY2(page.error.isEmpty(), qPrintable(page.error));
            QString text;
            for (const PdfWord& w : page.words) {
                QVERIFY2(w.box.left() >= -0.5 && w.box.right() <= page.size.width() + 0.5,
                         qPrintable(QString("'%1' at x %2..%3 pt on a %4 pt page (%5 pt)")
                                        .arg(w.text)
                                        .arg(w.box.left())
                                        .arg(w.box.right())
                                        .arg(page.size.width())
                                        .arg(pt)));
                text += w.text;
            }
            for (const QString& path : {a, b}) {
                const QString name = QFileInfo(path).fileName().remove(".dump.h5");
                QVERIFY2(text.contains(name), qPrintable(name + " is not whole in: " + text));
            }
            const QStringList problems = figure_layout_problems(figure_layout(view, o));
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        }
    }

    void efficiencyViewPlotsTheFlopModel() {
        EfficiencyView view;
        view.resize(900, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.chart()->chart()->series().size(), 2);
        auto* bigs = qobject_cast<QLineSeries*>(view.chart()->chart()->series()[0]);
        QCOMPARE(bigs->count(), 6);
        // The BiGS paper's Table 8: 23-layer d = 1024 BiGS at L = 4096 ≈ 2.6e12 forward FLOPs
        // (±10%).
        QVERIFY(std::abs(bigs->at(5).y() / 2.6e12 - 1) < 0.10);
        QCOMPARE(bigs->at(5).y(), view.results()[0].rows[5].forward);
        QVERIFY(view_test::screenshot(&view, "view_efficiency"));
    }

    void similarityViewDrawsTheLayerMatrixAndTheDepthDiagonal() {
        // A model and a rotated, translated copy of its layers (make_similarity_dumps.py): CKA 1
        // on the diagonal, the layers' own structure off it.
        const QString sim_dir = QDir(dir_).filePath("similarity");
        QDir().mkpath(sim_dir);
        const QString first = view_test::similarity_dump(sim_dir, "a.dump.h5");
        const QString twin = view_test::similarity_dump(sim_dir, "rotated.dump.h5");
        QVERIFY(!first.isEmpty() && !twin.isEmpty());
        SimilarityViewSettings s;
        s.dump_a = first;
        s.dump_b = twin;
        s.permutations = 20;
        s.bootstrap = 20;
        SimilarityView view(s);
        view.resize(1100, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view, 120000));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto& r = view.result();
        const auto& d = view.heatmap()->data();
        QCOMPARE(d.rows, static_cast<int>(r.layers_a.size()));
        QCOMPARE(d.columns, static_cast<int>(r.layers_b.size()));
        QCOMPARE(d.values[1], r.values[0][0][1]);  // linear_cka first: the row-major cell (0, 1)
        QCOMPARE(lines(view.diagonal_chart()).size(), 5);
        for (std::size_t i = 0; i < r.layers_a.size(); ++i)
            QVERIFY(std::abs(r.values[0][i][i] - 1.0) < 1e-6);
        // A click on the cell (layer 0 of A, layer 2 of B): its first canonical pair as points,
        // one per vector, with ρ in the title; ρ is the points' own correlation (computed here).
        QVERIFY(!view.scatter_chart()->isVisible());
        const QRect plot = view.heatmap()->plot_rect(view.heatmap()->rect());
        const QPoint cell(plot.left() + plot.width() * 5 / (2 * d.columns),
                          plot.top() + plot.height() / (2 * d.rows));
        QCOMPARE(view.heatmap()->cell_at(cell), QPoint(2, 0));
        QTest::mouseClick(view.heatmap(), Qt::LeftButton, {}, cell);
        QVERIFY(view_test::wait_for(&view, 120000));
        QTRY_VERIFY(view.scatter_chart()->isVisible());
        const auto& sc = view.scatter();
        QCOMPARE(sc.layer_a, r.layers_a[0]);
        QCOMPARE(sc.layer_b, r.layers_b[2]);
        auto* points = qobject_cast<QXYSeries*>(view.scatter_chart()->chart()->series().value(0));
        QVERIFY(points);
        QCOMPARE(points->count(), static_cast<int>(sc.x.size()));
        double sx = 0, sy = 0, sxy = 0, sxx = 0, syy = 0;
        const auto n = static_cast<double>(points->count());
        for (const QPointF& p : points->points()) {
            sx += p.x();
            sy += p.y();
        }
        for (const QPointF& p : points->points()) {
            sxy += (p.x() - sx / n) * (p.y() - sy / n);
            sxx += (p.x() - sx / n) * (p.x() - sx / n);
            syy += (p.y() - sy / n) * (p.y() - sy / n);
        }
        QVERIFY(std::abs(sxy / std::sqrt(sxx * syy) - sc.rho) < 1e-9);
        QVERIFY2(chart_title(view.scatter_chart()).contains(QString::number(sc.rho, 'f', 3)),
                 qPrintable(chart_title(view.scatter_chart())));
        QCOMPARE(view.settings()["scatter"], nlohmann::json({sc.layer_a, sc.layer_b}));
        // Session 38: settings naming a cell of layers the result did not compare (here one past
        // the last layer of B, r.layers_b) are refused, as `analyze similarity --scatter` refuses
        // them, and the cell shown stays; 4294967297 is refused, not read as layer 1.
        {
            nlohmann::json bad = view.settings();
            bad["scatter"] = {r.layers_a.front(), r.layers_b.back() + 1};
            QVERIFY_THROWS_EXCEPTION(routescope::FormatError, view.restore_settings(bad));
            bad["scatter"] = {4294967297LL, 0};
            QVERIFY_THROWS_EXCEPTION(routescope::FormatError, view.restore_settings(bad));
            QCOMPARE(view.settings()["scatter"], nlohmann::json({sc.layer_a, sc.layer_b}));
        }
        QVERIFY(view_test::screenshot(&view, "view_similarity_scatter"));
        // A rename redraws the last result with the new name: nothing is computed again.
        {
            QSignalSpy started(&view, &AnalysisView::analysisStarted);
            routescope::views::set_display_name(first, "Model Alpha");
            view.restyle();
            QCOMPARE(started.count(), 0);
            QVERIFY2(view.heatmap()->data().title.contains("Model Alpha"),
                     qPrintable(view.heatmap()->data().title));
            QVERIFY(view.scatter_chart()->isVisible());
            auto* again =
                qobject_cast<QXYSeries*>(view.scatter_chart()->chart()->series().value(0));
            QVERIFY(again && again->count() == static_cast<int>(sc.x.size()));
            QTest::qWait(50);
            const QStringList named = view_test::journal_layout_problems(view);
            QVERIFY2(named.isEmpty(), qPrintable(named.join("\n")));
            // Names that look like markup are text: the chart and axis titles that carry them
            // (HTML to Qt Charts and to the figure) show them whole in the printed figure.
            const QString markup_a = "BERT <small> x<y", markup_b = "BiGS <v2> & <i>c</i>";
            routescope::views::set_display_name(first, markup_a);
            routescope::views::set_display_name(twin, markup_b);
            view.restyle();
            QTest::qWait(50);
            FigureExportOptions o;
            o.width_mm = kDoubleColumnMm;
            o.font_pt = 8;
            QStringList texts;
            for (const auto& t : figure_layout(view, o).texts)
                texts << t.text;
            const QString printed = texts.join(" ").simplified();
            for (const QString& want :
                 {QString("Each layer against %1's at the same depth").arg(markup_b),
                  QString("relative depth ℓ / n_layers of %1").arg(markup_a),
                  QString("%1, layer %2").arg(markup_a).arg(sc.layer_a),
                  QString("%1, layer %2").arg(markup_b).arg(sc.layer_b)})
                QVERIFY2(printed.contains(want), qPrintable(want + "\n  not in: " + printed));
            routescope::views::set_display_name(first, {});
            routescope::views::set_display_name(twin, {});
            view.restyle();
            QTest::qWait(50);  // let the redrawn charts lay out, as a shown view does
        }
        // With the scatter shown, the figure still reads at a journal's column widths.
        const QStringList problems = view_test::journal_layout_problems(view);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        // The same model's dump against itself: CKA 1 on the diagonal.
        SimilarityViewSettings self = s;
        self.dump_b = first;
        view.restore_settings(self.to_json());
        QVERIFY(view_test::wait_for(&view, 120000));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        for (std::size_t i = 0; i < view.result().layers_a.size(); ++i)
            QVERIFY(std::abs(view.result().values[0][i][i] - 1.0) < 1e-9);
        const auto curves = lines(view.diagonal_chart());
        // The score (all N), the Gram sample's score, its bootstrap interval, the null's mean.
        QCOMPARE(curves.size(), 5);
        QCOMPARE(curves[0]->count(), static_cast<int>(view.result().layers_a.size()));
        view.set_measure("procrustes");
        QCOMPARE(view.heatmap()->data().values[0], view.result().values[5][0][0]);
        const auto table = view.figure_table();
        QCOMPARE(table.columns[0], std::string("model_a"));
        // One dump only: a message that says what to select.
        SimilarityViewSettings one;
        one.dump_a = dump_a_;
        SimilarityView lone(one);
        // It reads that one dump: no empty path among its inputs (the workspace would add it as a
        // file, and a project would save it).
        QCOMPARE(static_cast<const AnalysisView&>(lone).input_files(), QStringList{dump_a_});
        lone.start();
        QVERIFY(view_test::wait_for(&lone));
        QVERIFY(!lone.has_result());
        QVERIFY2(lone.error().contains("two dumps"), qPrintable(lone.error()));
    }

    void similarityCancelStopsItsWorkerWithinASecond() {
        // docs/user-guide.md: an analysis runs in the background with its progress and a Cancel
        // button. A similarity whose permutation null takes minutes (50,000 permutations of a
        // 300-example Gram sample): its progress moves, and Cancel (or closing its view, as Quit
        // does) ends its worker within about a second, with no result.
        const QString a =
            view_test::sample_dump(dir_, "sim_cancel_a.dump.h5",
                                   {"--examples", "300", "--d-model", "32", "--layers", "2",
                                    "--seed", "1", "--state-seed", "2"});
        const QString b =
            view_test::sample_dump(dir_, "sim_cancel_b.dump.h5",
                                   {"--examples", "300", "--d-model", "32", "--layers", "2",
                                    "--seed", "1", "--state-seed", "3"});
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        SimilarityViewSettings s;
        s.dump_a = a;
        s.dump_b = b;
        s.gram_m = 300;
        s.permutations = 50000;
        s.bootstrap = 0;
        QVERIFY(routescope::views::work_thread_pool()->waitForDone(120000));  // earlier tests' work
        {
            SimilarityView view(s);
            QSignalSpy finished(&view, &AnalysisView::analysisFinished);
            QElapsedTimer running;
            running.start();
            view.start();
            // Into the permutations: the progress has moved.
            QTRY_VERIFY_WITH_TIMEOUT(view.progress().first > 0, 60000);
            QTest::qWait(300);
            const auto [done, total] = view.progress();
            QVERIFY(view.busy() && total > 0 && done > 0 && done < total);
            // The run uncancelled would take far longer than the bound below (projected from its
            // progress; ~100 s on the 2-core build machine).
            const double projected_ms =
                static_cast<double>(running.elapsed()) * total / static_cast<double>(done);
            QVERIFY2(projected_ms > 15000, qPrintable(QString::number(projected_ms)));
            QElapsedTimer stopping;
            stopping.start();
            view.cancel();
            QVERIFY(routescope::views::work_thread_pool()->waitForDone(120000));
            const qint64 ms = stopping.elapsed();
            QVERIFY2(ms < 3000, qPrintable(QString("the worker ran on for %1 ms").arg(ms)));
            qInfo(
                "cancelled at %d of %d steps: the worker stopped after %lld ms (uncancelled: "
                "about %.0f s)",
                done, total, ms, projected_ms / 1000);
            QTest::qWait(100);
            QVERIFY(!view.busy());
            QVERIFY(!view.has_result());
            QCOMPARE(finished.count(), 0);
            QVERIFY(view.result().layers_a.empty());
        }
        // Closing the view mid-run (what Quit does to every tab) stops its worker as promptly.
        auto* closing = new SimilarityView(s);
        closing->start();
        QTRY_VERIFY_WITH_TIMEOUT(closing->progress().first > 0, 60000);
        QElapsedTimer stopping;
        stopping.start();
        delete closing;
        QVERIFY(routescope::views::work_thread_pool()->waitForDone(120000));
        const qint64 ms = stopping.elapsed();
        QVERIFY2(ms < 3000, qPrintable(QString("the worker ran on for %1 ms").arg(ms)));
    }

    void attentionViewShowsTheExamplesTokensAndComparesTwoDumps() {
        AttentionViewSettings s;
        s.dump = dump_a_;
        s.layer = 2;
        s.example = 3;
        AttentionView view(s);
        view.resize(1300, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto& r = view.results().at(0);
        const auto& d = view.heatmap_a()->data();
        QCOMPARE(static_cast<std::int64_t>(d.rows), r.length);
        QCOMPARE(static_cast<std::int64_t>(d.columns), r.length);
        QCOMPARE(static_cast<std::int64_t>(d.row_labels.size()), r.length);  // the tokens
        QCOMPARE(d.values[1], r.matrix[1]);
        QVERIFY(d.note.contains("raw"));  // the normalisation is named on the figure
        QVERIFY(!view.heatmap_b()->isVisible());
        // Gated and normalised by the row sum: every row sums to 1.
        view.findChild<QComboBox*>("mode")->setCurrentIndex(
            view.findChild<QComboBox*>("mode")->findData("gated"));
        QVERIFY(view_test::wait_for(&view));
        view.findChild<QComboBox*>("normalise")
            ->setCurrentIndex(view.findChild<QComboBox*>("normalise")->findData("rownorm"));
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto& g = view.results().at(0);
        QCOMPARE(g.options.mode, std::string("gated"));
        for (std::int64_t t = 0; t < g.length; ++t) {
            double sum = 0;
            for (std::int64_t s2 = 0; s2 < g.length; ++s2)
                sum += g.matrix[static_cast<std::size_t>(t * g.length + s2)];
            QVERIFY(std::abs(sum - 1.0) < 1e-12);
        }
        QVERIFY(view.heatmap_a()->data().note.contains("row sum"));
        QVERIFY(view_test::screenshot(&view, "view_implicit_attention"));
        // Compare mode: A | B | A − B (a dump against itself: the difference is 0).
        AttentionViewSettings two = s;
        two.dump_b = dump_a_;
        AttentionView pair(two);
        pair.resize(1500, 600);
        pair.show();
        pair.start();
        QVERIFY(view_test::wait_for(&pair));
        QVERIFY2(pair.has_result(), qPrintable(pair.error()));
        QVERIFY(pair.heatmap_b()->isVisible() && pair.heatmap_difference()->isVisible());
        for (double v : pair.heatmap_difference()->data().values)
            QCOMPARE(v, 0.0);
        // A layer without kernels says so.
        AttentionViewSettings none = s;
        none.layer = 0;
        AttentionView refused(none);
        refused.start();
        QVERIFY(view_test::wait_for(&refused));
        QVERIFY(!refused.has_result());
        QVERIFY2(refused.error().contains("no SSM kernels"), qPrintable(refused.error()));
    }

    void arrayBrowserShowsAnyDatasetSliceByItsNamedAxes() {
        ArrayBrowserSettings s;
        s.file = dump_a_;
        s.dataset = "/layers/1/hidden";
        ArrayBrowserView view(s);
        view.resize(1100, 650);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const routescope::analysis::DumpReader dump(dump_a_.toStdString());
        // Rows: positions, columns: channels, rows axis fixed at 0: example 0's hidden states.
        const auto& d = view.heatmap()->data();
        QCOMPARE(d.rows, static_cast<int>(dump.padded_length()));
        QCOMPARE(d.columns, static_cast<int>(dump.width()));
        QCOMPARE(d.y_label, QString("positions"));
        QCOMPARE(d.x_label, QString("channels"));
        const auto h = dump.hidden_row(1, 0);
        QCOMPARE(d.values[static_cast<std::size_t>(2 * d.columns + 5)], double(h(2, 5)));
        QCOMPARE(static_cast<std::int64_t>(d.row_labels.size()), dump.padded_length());  // tokens
        // The slider of the rows axis: row 7.
        view.set_index(0, 7);
        QVERIFY(view_test::wait_for(&view));
        const auto h7 = dump.hidden_row(1, 7);
        QCOMPARE(view.heatmap()->data().values[1], double(h7(0, 1)));
        QVERIFY(view.heatmap()->data().title.contains("rows = 7"));
        // Rows and columns swapped: channels × positions, the same numbers transposed.
        view.set_axes(2, 1);
        QVERIFY(view_test::wait_for(&view));
        const auto& t = view.heatmap()->data();
        QCOMPARE(t.rows, static_cast<int>(dump.width()));
        QCOMPARE(t.values[static_cast<std::size_t>(1 * t.columns + 0)], double(h7(0, 1)));
        // A rank-1 dataset is one row.
        view.set_dataset("/data/lengths");
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.heatmap()->data().rows, 1);
        QCOMPARE(view.heatmap()->data().columns, static_cast<int>(dump.examples()));
        QCOMPARE(view.heatmap()->data().values[4], double(dump.lengths()[4]));
        // A project's settings naming a dataset but not its axes (docs/formats/project.md: an
        // omitted key keeps the view's default): a rank-1 dataset is one row (the axes 1 and 2
        // of the default read past its one axis name: SIGSEGV), a rank-3 one its last two axes;
        // axes given for a rank-1 dataset are those of its one row.
        for (const auto& [settings, rows, x_label] :
             {std::tuple{
                  nlohmann::json{{"file", dump_a_.toStdString()}, {"dataset", "/data/lengths"}}, 1,
                  QString("examples")},
              std::tuple{nlohmann::json{{"file", dump_a_.toStdString()},
                                        {"dataset", "/data/lengths"},
                                        {"row_axis", 1},
                                        {"column_axis", 2}},
                         1, QString("examples")},
              std::tuple{
                  nlohmann::json{{"file", dump_a_.toStdString()}, {"dataset", "/layers/1/hidden"}},
                  static_cast<int>(dump.padded_length()), QString("channels")},
              // One axis given: kept, the other the last one free (it replaced both).
              std::tuple{nlohmann::json{{"file", dump_a_.toStdString()},
                                        {"dataset", "/layers/1/hidden"},
                                        {"row_axis", 2}},
                         static_cast<int>(dump.width()), QString("positions")}}) {
            ArrayBrowserView restored(ArrayBrowserSettings::from_json(settings));
            restored.start();
            QVERIFY(view_test::wait_for(&restored));
            QVERIFY2(restored.has_result(), qPrintable(restored.error()));
            QCOMPARE(restored.heatmap()->data().rows, rows);
            QCOMPARE(restored.heatmap()->data().x_label, x_label);
        }

        // NaN is shown and marked (magenta), not refused.
        const QString fixtures = QDir(dir_).filePath("browser_fixtures");
        QDir().mkpath(fixtures);
        QVERIFY(!view_test::ssm_checkpoint(fixtures, "before.ckpt.h5").isEmpty());
        ArrayBrowserSettings n;
        n.file = QDir(fixtures).filePath("nan.dump.h5");
        n.dataset = "/layers/0/hidden";
        n.index = {7, 0, 0};
        ArrayBrowserView nan_view(n);
        nan_view.resize(900, 500);
        nan_view.show();
        nan_view.start();
        QVERIFY(view_test::wait_for(&nan_view));
        QVERIFY2(nan_view.has_result(), qPrintable(nan_view.error()));
        QCOMPARE(nan_view.slice().non_finite, std::int64_t{1});
        QVERIFY(std::isnan(nan_view.heatmap()->data().values[3]));
        QCOMPARE(nan_view.heatmap()->image().pixel(3, 0), qRgb(255, 0, 255));
        QVERIFY(nan_view.heatmap()->data().note.startsWith("1 NaN"));
        QVERIFY(view_test::screenshot(&nan_view, "view_array_browser"));
        // A checkpoint's parameters browse the same way.
        ArrayBrowserSettings c;
        c.file = QDir(fixtures).filePath("before.ckpt.h5");
        ArrayBrowserView ckpt(c);
        ckpt.start();
        QVERIFY(view_test::wait_for(&ckpt));
        QVERIFY2(ckpt.has_result(), qPrintable(ckpt.error()));
        QVERIFY(!ckpt.datasets().empty());

        // A [20000, 512, 1024] float16 dataset (chunks never written: 20 GB on paper, nothing on
        // disk): each new slice is one hyperslab read. Redraw times are printed, not asserted.
        const QString big = QDir(dir_).filePath("big.h5");
        {
            H5::H5File f(big.toStdString(), H5F_ACC_TRUNC);
            const hsize_t dims[3] = {20000, 512, 1024}, chunk[3] = {1, 512, 1024};
            H5::DSetCreatPropList plist;
            plist.setChunk(3, chunk);
            H5::FloatType half(H5::PredType::IEEE_F32LE);
            half.setFields(15, 10, 5, 0, 10);
            half.setEbias(15);
            half.setSize(2);
            f.createDataSet("values", half, H5::DataSpace(3, dims), plist);
        }
        ArrayBrowserSettings b;
        b.file = big;
        ArrayBrowserView browse(b);
        browse.resize(1100, 650);
        browse.show();
        browse.start();
        QVERIFY(view_test::wait_for(&browse));
        QVERIFY2(browse.has_result(), qPrintable(browse.error()));
        QCOMPARE(browse.heatmap()->data().rows, 512);
        QCOMPARE(browse.heatmap()->data().columns, 1024);
        // Each step as the user's spin box does it: the read in the worker, the redraw on return,
        // a repaint; the event loop spun without the fixed pauses of view_test::wait_for.
        QElapsedTimer clock;
        clock.start();
        const int frames = 20;
        double worker_and_redraw = 0;
        for (int i = 1; i <= frames; ++i) {
            browse.set_index(0, i * 997);
            while (browse.busy())
                QCoreApplication::processEvents(QEventLoop::AllEvents, 1);
            QCoreApplication::processEvents();
            browse.heatmap()->repaint();
            worker_and_redraw += browse.last_redraw_ms();
        }
        QVERIFY2(browse.has_result(), qPrintable(browse.error()));
        const double wall = static_cast<double>(clock.nsecsElapsed()) / 1e6;
        qInfo(
            "array browser, [20000, 512, 1024] float16: %d slices of 512 x 1024 in %.0f ms "
            "(%.1f per second, each step read + redraw + repaint); read + redraw alone %.1f ms "
            "per slice (%.1f per second)",
            frames, wall, 1000.0 * frames / wall, worker_and_redraw / frames,
            1000.0 * frames / worker_and_redraw);
    }

    void settingsRoundTripThroughJson() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(dump_a_);
        s.b = KernelSource::from_path(dump_b_);
        s.radius = 7;
        s.scaling = "magnitude";
        s.layer = 3;
        const auto back = KernelViewSettings::from_json(nlohmann::json::parse(s.to_json().dump()));
        QCOMPARE(back.to_json(), s.to_json());
        QCOMPARE(back.b->path, dump_b_);
    }
};

QTEST_MAIN(TestAnalysisViews)
#include "test_analysis_views.moc"
