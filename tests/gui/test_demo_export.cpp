// Acceptance 4 of the workbench issue: `routescope --export` regenerates the demo project's
// figures headless, as CI runs it. The demo project is built by the demo's own script
// (scripts/make_demo_project.sh) with a few training steps, then exported without a display; every
// view of the project must have written a PNG that decodes, an SVG that parses and draws vectors,
// a PDF, a CSV with a header and rows, and a provenance JSON beside each that names its inputs.
#include <QtTest>

#include <QChartView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTransform>
#include <QValueAxis>
#include <QXYSeries>
#include <QXmlStreamReader>

#include "app/gui/main_window.hpp"
#include "figure_render_check.hpp"
#include "view_test_support.hpp"
#include "views/analysis_view.hpp"
#include "views/chart_panel.hpp"
#include "views/figure_export.hpp"
#include "views/figure_layout.hpp"
#include "views/interval_bar_chart.hpp"

namespace {
// Small enough to build in well under a minute on two loaded cores, large enough that every view
// has something to draw (several length bins, gates, both models' layers).
const QStringList kDemoSettings = {"--steps", "20", "--examples", "48", "--threads", "2"};

// The views resources/demo/demo.rsproj opens, by the stem prefix of their figures.
const QStringList kViewKinds = {"kernels",     "gates",           "anisotropy", "pca",
                                "transitions", "length_accuracy", "efficiency", "training"};

QJsonObject read_json(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Issue 18, acceptance 3: every text of an exported figure is a label in full. The labels each
// view of the demo must show, as patterns (numbers measured on the demo's data are \d); the SVG
// holds them in document order, split where the painter changes font (a "Δ" from a fallback
// font) or wraps a line, so they are matched on the concatenated text without white space.
struct FigureLabels {
    QString kind;
    QStringList labels;  ///< each must appear in full
    QString ticks;       ///< what a tick or a cell label may be, besides a number
};
const QString kNumber = QStringLiteral(R"([−-]?\d+(\.\d+)?(e[+−-]?\d+)?)");
const QList<FigureLabels> kLabels = {
    {"kernels",
     // Both models by their display names (the file names are both model.ckpt.h5): since the
     // views ask the loader for each input first, every file they read has its run's name;
     // compared, the panels say which is A and which B, as the curves' legends call them.
     {R"(A: bigs · induction · step 0)",
      R"(B: bigs · induction · step \d+)",
      R"(relative position r \(< 0: tokens before\))",
      R"(r = 0: mean of K_f\[0\] \+ D_f and K_b\[0\] \+ D_b \(lag 0 is in both directions\))",
      "layer",
      R"(\|kernel\|, min-max per layer)",
      "A − B",
      R"(Layer \d+ kernel — effective length \(90% of Σ\|K\|\): A \d+ \| B \d+)",
      "lag l",
      R"(K\[l\])",
      R"(A K_f \(tokens to the left\))",
      R"(A K_b \(tokens to the right\))",
      R"(B K_f \(tokens to the left\))",
      R"(B K_b \(tokens to the right\))",
      R"(Frequency response \|rfft\(K\)\|)",
      R"(frequency \(cycles per token\))",
      R"(\|rfft\(K\)\|)",
      "A forward",
      "A backward",
      "B forward",
      "B backward",
      R"(Layer \d+ poles exp\(ΔA_n\) \(\|λ\| → 1: long memory\))",
      "Re λ",
      "Im λ",
      R"(\|λ\| = 1)"},
     {}},
    {"gates",
     {R"(Layer \d+ gate u_b, example \d+)", "token", "channel", "gate value",
      R"(Layer \d+ u_b: mean \d\.\d{3}, std \d\.\d{3} · < 0\.1: \d+\.\d%, > 0\.9: \d+\.\d%)",
      R"(gate value \(data range\))", "fraction of values", "u_b"},
     R"(\[CLS\]|\[SEP\]|\[PAD\]|\[MASK\]|s\d+|trigger)"},
    {"anisotropy",
     {R"(Layer \d+, token vectors \(one random token per sentence\))", "cosine",
      // The models' workspace names (derived: architecture · task).
      "fraction of pairs", R"(bigs · induction \(mean −?\d\.\d{3}\))",
      R"(bert · induction \(mean −?\d\.\d{3}\))", R"(Layer \d+, sentence vectors)"},
     {}},
    {"pca",
     {"Mean cumulative explained variance", "components k", R"(explained variance \(σ²\))",
      "layer 0", "layer 1", "layer 2", R"(Mean k\(0\.90\) of all sentences)", "layer ℓ",
      R"(mean k\(0\.90\))", "bigs · induction"},
     {}},
    {"transitions",
     {R"(Layer transitions: ‖Δh‖ / ‖h\^\(ℓ−1\)‖)", "layer ℓ", R"(‖Δh‖ / ‖h\^\(ℓ−1\)‖)",
      "bigs · induction tokens", "bigs · induction sentences", "bert · induction tokens",
      "bert · induction sentences"},
     {}},
    {"length_accuracy",
     {"Accuracy by length", "accuracy", R"(input length \(tokens\), bin)", "B − A",
      "bigs · induction", "bert · induction", "whiskers: 95% Wilson interval"},
     R"(n=\d+|p=[\d.e−-]+|\d+(\.\d+)?(–\d+(\.\d+)?)?)"},
    {"efficiency",
     {R"(FLOPs per sequence against L \(2 FLOPs per multiply-accumulate\))", "sequence length L",
      "FLOPs, forward", R"(bigs \(2 layers, d = 128\))", R"(bert \(2 layers, d = 128\))",
      R"(Measured time against L \((crossover at L = \d+|no crossover in the lengths run)\))",
      R"(measured time per sequence \(ms, forward\))", "bigs", "bert"},
     {}},
    {"training",
     {"Loss", "step", R"(loss \(nats\))", "bigs train", "bigs held-out", "bert train",
      "bert held-out", "Learning rate", "learning rate", "Gradient norm", "‖g‖₂ before clipping",
      "Tokens per second", R"(tokens / s)", "bigs", "bert"},
     {}},
};

QString without_space(QString s) {
    s.remove(QRegularExpression(R"(\s)"));
    return s;
}

/// The text of every <text> element of an SVG, in document order.
QStringList svg_texts(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QXmlStreamReader xml(&f);
    QStringList out;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
            out << xml.readElementText(QXmlStreamReader::IncludeChildElements);
    return xml.hasError() ? QStringList{"<XML error: " + xml.errorString() + ">"} : out;
}

/// "matrix(a,b,c,d,e,f)" (QSvgGenerator's only transform) as a QTransform; identity otherwise.
QTransform svg_transform(QStringView attribute) {
    static const QRegularExpression matrix(R"(matrix\(([^)]*)\))");
    const auto m = matrix.match(attribute);
    if (!m.hasMatch()) return {};
    const QStringList v = m.captured(1).split(QRegularExpression("[ ,]+"), Qt::SkipEmptyParts);
    if (v.size() != 6) return {};
    return QTransform(v[0].toDouble(), v[1].toDouble(), v[2].toDouble(), v[3].toDouble(),
                      v[4].toDouble(), v[5].toDouble());
}

/// Bounding boxes (in the SVG's own coordinates) of the <path>s drawn by a pen of `stroke` with a
/// dash pattern and at least `min_points` vertices: the pole plot's dashed grey unit circle.
QList<QRectF> dashed_paths(const QString& path, const QString& stroke, int min_points) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QXmlStreamReader xml(&f);
    struct Group {
        QTransform transform;
        bool dashed_stroke;
    };
    QList<Group> groups{{QTransform(), false}};
    QList<QRectF> out;
    static const QRegularExpression number(R"([−-]?\d+(\.\d+)?(e[+-]?\d+)?)");
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::EndElement && xml.name() == QLatin1String("g"))
            groups.removeLast();
        if (token != QXmlStreamReader::StartElement) continue;
        const auto a = xml.attributes();
        if (xml.name() == QLatin1String("g")) {
            const bool dashed = a.value("stroke") == stroke && a.hasAttribute("stroke-dasharray");
            groups.append({svg_transform(a.value("transform")) * groups.last().transform,
                           dashed || (groups.last().dashed_stroke && !a.hasAttribute("stroke"))});
            continue;
        }
        if (xml.name() != QLatin1String("path") || !groups.last().dashed_stroke) continue;
        QList<double> v;
        for (auto it = number.globalMatch(a.value("d").toString()); it.hasNext();)
            v << it.next().captured(0).toDouble();
        if (v.size() / 2 < min_points) continue;
        QPolygonF polygon;
        for (qsizetype i = 0; i + 1 < v.size(); i += 2)
            polygon << QPointF(v[i], v[i + 1]);
        out << groups.last().transform.map(polygon).boundingRect();
    }
    return out;
}

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
}  // namespace

class TestDemoExport : public QObject {
    Q_OBJECT

    QString demo_, figures_, output_;

    /// The one figure of view `kind` with `suffix` ("kernels-bigs-init-vs-bigs.svg").
    QString figure(const QString& kind, const QString& suffix) const {
        const QStringList files =
            QDir(figures_).entryList({kind + "-*" + suffix}, QDir::Files, QDir::Name);
        return files.size() == 1 ? figures_ + "/" + files[0] : QString();
    }

private slots:
    void initTestCase() {
        const QString data = view_test::data_dir("demo_export");
        QDir(data).removeRecursively();
        demo_ = data + "/demo";
        figures_ = data + "/figures";

        QElapsedTimer clock;
        clock.start();
        QProcess make;
        make.setProcessChannelMode(QProcess::MergedChannels);
        make.start(
            QStringLiteral(ROUTESCOPE_SOURCE_DIR "/scripts/make_demo_project.sh"),
            QStringList{"--out", demo_, "--cli", QStringLiteral(ROUTESCOPE_CLI)} + kDemoSettings);
        QVERIFY(make.waitForFinished(300000));
        const QString made = QString::fromUtf8(make.readAll());
        QVERIFY2(make.exitStatus() == QProcess::NormalExit && make.exitCode() == 0,
                 qPrintable(made));
        const QString project = demo_ + "/demo.rsproj";
        QVERIFY2(made.trimmed().endsWith(project), qPrintable(made));
        qInfo("demo project built in %.1f s", clock.elapsed() / 1000.0);

        clock.restart();
        QProcess exporter;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        exporter.setProcessEnvironment(env);
        exporter.start(QStringLiteral(ROUTESCOPE_GUI_BIN),
                       {"--export", project, "--out", figures_, "--dpi", "96"});
        QVERIFY(exporter.waitForFinished(300000));
        output_ =
            QString::fromUtf8(exporter.readAllStandardOutput() + exporter.readAllStandardError());
        QCOMPARE(exporter.exitStatus(), QProcess::NormalExit);
        QVERIFY2(exporter.exitCode() == 0, qPrintable(output_));
        qInfo("routescope --export wrote the demo's figures in %.1f s", clock.elapsed() / 1000.0);
    }

    void everyTextOfTheExportedSvgsIsALabelInFull() {
        for (const FigureLabels& expected : kLabels) {
            const QString svg = figure(expected.kind, ".svg");
            QVERIFY2(!svg.isEmpty(), qPrintable(expected.kind));
            const QStringList texts = svg_texts(svg);
            QVERIFY2(texts.size() > 5, qPrintable(svg));
            // Nothing elided: Qt Charts shortens with "...", QFontMetrics::elidedText with "…".
            for (const QString& t : texts)
                QVERIFY2(!t.contains(QChar(0x2026)) && !t.contains("..."),
                         qPrintable(svg + ": elided text '" + t + "'"));
            // Every label in full, in the figure's text read in order.
            const QString all = without_space(texts.join(QString()));
            QStringList found;
            for (const QString& label : expected.labels) {
                const QRegularExpression re(without_space(label));
                QVERIFY2(re.isValid(), qPrintable(label));
                const auto m = re.match(all);
                QVERIFY2(m.hasMatch(), qPrintable(svg + ": no '" + label +
                                                  "' in full; the text "
                                                  "is: " +
                                                  texts.join(" | ")));
                for (auto it = re.globalMatch(all); it.hasNext();)
                    found << it.next().captured(0);
            }
            // Every text is a piece of one of those labels, a tick's number or a cell's label:
            // nothing shortened, nothing the figure should not hold.
            const QRegularExpression tick(
                "^(" + kNumber + (expected.ticks.isEmpty() ? "" : "|" + expected.ticks) + ")$");
            for (const QString& t : texts) {
                const QString piece = without_space(t);
                if (piece.isEmpty() || tick.match(piece).hasMatch()) continue;
                bool in_label = false;
                for (const QString& label : found)
                    in_label = in_label || label.contains(piece);
                QVERIFY2(in_label, qPrintable(svg + ": the text '" + t +
                                              "' is no part of a label the figure should hold"));
            }
        }
    }

    void thePolePlotsUnitCircleIsACircle() {
        const QString svg = figure("kernels", ".svg");
        QVERIFY(!svg.isEmpty());
        // The circle |λ| = 1 is drawn dashed in Qt::gray (#a0a0a4) with 129 vertices; its legend
        // swatch is a 2-point line.
        const QList<QRectF> circles = dashed_paths(svg, "#a0a0a4", 100);
        QCOMPARE(circles.size(), 1);
        const QRectF box = circles[0];
        QVERIFY2(box.width() > 50, qPrintable(QString::number(box.width())));
        QVERIFY2(std::abs(box.width() / box.height() - 1) < 0.01,
                 qPrintable(QString("the unit circle is %1 × %2 in the SVG")
                                .arg(box.width())
                                .arg(box.height())));
    }

    void axesOfFractionsAndProbabilitiesNeverGoBelowZero() {
        // The demo opened in a window as the export opens it; every axis that shows a fraction,
        // a probability or an accuracy starts at 0 or above (a histogram's empty bins are 0).
        routescope::gui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        window.open_project(demo_ + "/demo.rsproj");
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 300000);
        static const QRegularExpression fraction(
            "fraction|accuracy|explained|probability|mixture weight");
        QStringList checked;
        for (routescope::views::AnalysisView* view : window.analysis_views()) {
            QVERIFY2(view->has_result(), qPrintable(view->title() + ": " + view->error()));
            for (QChartView* chart : view->figure()->findChildren<QChartView*>())
                for (QAbstractAxis* axis : chart->chart()->axes()) {
                    auto* value = qobject_cast<QValueAxis*>(axis);
                    if (!value || !fraction.match(value->titleText()).hasMatch()) continue;
                    checked << view->kind() + ": " + value->titleText();
                    QVERIFY2(value->min() >= 0,
                             qPrintable(QString("%1: axis '%2' from %3")
                                            .arg(view->title(), value->titleText())
                                            .arg(value->min())));
                }
            for (auto* bars : view->figure()->findChildren<routescope::views::IntervalBarChart*>())
                if (fraction.match(bars->data().y_label).hasMatch()) {
                    checked << view->kind() + ": " + bars->data().y_label;
                    QVERIFY2(bars->data().y_lo >= 0, qPrintable(view->title()));
                }
        }
        // anisotropy ×2 (fraction of pairs), gates (fraction of values), pca (explained
        // variance), length_accuracy (accuracy).
        for (const QString kind : {"anisotropy", "gates", "pca", "length_accuracy"})
            QVERIFY2(checked.filter(QRegularExpression("^" + kind + ":")).size() >= 1,
                     qPrintable(kind + " has no fraction axis among: " + checked.join("; ")));
    }

    // Issue 26, acceptance 1: every view of the demo, exported at a journal's single (89 mm) and
    // double (183 mm) column with 8 pt text, reads in full: no text elided, clipped, off the page,
    // on another text or on a plot, by the figure's own layout and by independent renderings of
    // the SVG (librsvg) and the PDF (poppler). Layout alone at 7 and 10 pt too.
    void everyViewReadsAtJournalSizes() {
        if (const QString missing = view_test::renderers_missing(); !missing.isEmpty())
            QSKIP(qPrintable(missing));
        routescope::gui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        window.open_project(demo_ + "/demo.rsproj");
        // The views the demo project does not open, on its dumps.
        const QString bigs = demo_ + "/bigs.dump.h5", bert = demo_ + "/bert.dump.h5";
        QVERIFY(window.open_analysis("similarity", {bigs, bert}));
        QVERIFY(window.open_analysis("implicit_attention", {bigs}));
        QVERIFY(window.open_analysis("array_browser", {bigs}));
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 300000);
        const QString work = figures_ + "-journal";
        QDir(work).removeRecursively();
        QStringList problems, checked;
        for (routescope::views::AnalysisView* view : window.analysis_views()) {
            QVERIFY2(view->has_result(), qPrintable(view->title() + ": " + view->error()));
            window.show_view(view);
            for (const double mm :
                 {routescope::views::kSingleColumnMm, routescope::views::kDoubleColumnMm})
                for (const double pt : {7.0, 8.0, 10.0}) {
                    routescope::views::FigureExportOptions o;
                    o.width_mm = mm;
                    o.font_pt = pt;
                    const QString stem = QStringLiteral("%1/%2-%3mm-%4pt")
                                             .arg(work, view->figure_name())
                                             .arg(mm)
                                             .arg(pt);
                    const auto layout = routescope::views::figure_layout(*view, o);
                    QVERIFY2(layout.texts.size() >= 5, qPrintable(stem));
                    for (const QString& p : routescope::views::figure_layout_problems(layout))
                        problems << stem + ": " + p;
                    if (pt != 8.0) continue;
                    QDir().mkpath(work);
                    view->export_to(stem + ".svg", o);
                    view->export_to(stem + ".pdf", o);
                    problems << view_test::svg_rendering_problems(layout, stem + ".svg", work)
                             << view_test::pdf_rendering_problems(layout, stem + ".pdf", work);
                    checked << stem;
                }
        }
        QVERIFY2(checked.size() == 2 * (kViewKinds.size() + 3), qPrintable(checked.join("\n")));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    }

    // Issue 26, acceptance 3: at the window's default size (1200 × 760) and at 1024 × 700, no
    // text of any view of the demo is elided (shortened with "…" or "..."): the window as it
    // draws itself, recorded text by text (views/figure_layout.hpp), and a screenshot of each
    // view saved beside the figures.
    void noTextIsElidedAtTheDefaultWindowSizes() {
        routescope::gui::MainWindow window;
        window.show();
        window.open_project(demo_ + "/demo.rsproj");
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 300000);
        const QString shots = figures_ + "-screens";
        QDir().mkpath(shots);
        QStringList elided;
        for (const QSize size : {QSize(1200, 760), QSize(1024, 700)}) {
            window.resize(size);
            QApplication::processEvents();
            for (routescope::views::AnalysisView* view : window.analysis_views()) {
                window.show_view(view);
                QTest::qWait(50);
                const auto layout = routescope::views::record_figure_layout(
                    QSizeF(view->size()), [&](QPainter& p) { view->render(&p); });
                QVERIFY2(layout.texts.size() > 10, qPrintable(view->title()));
                // A field's placeholder ("Search examples …") and an action's name ("Export…")
                // end in an ellipsis by convention: they are not shortened.
                QStringList conventional;
                for (auto* edit : view->findChildren<QLineEdit*>())
                    conventional << edit->placeholderText();
                for (const auto& t : layout.texts)
                    if ((t.text.contains(QChar(0x2026)) || t.text.contains("...")) &&
                        !conventional.contains(t.text))
                        elided << QStringLiteral("%1 × %2, %3: '%4'")
                                      .arg(size.width())
                                      .arg(size.height())
                                      .arg(view->kind(), t.text);
                window.grab().save(QStringLiteral("%1/%2-%3x%4.png")
                                       .arg(shots, view->kind())
                                       .arg(size.width())
                                       .arg(size.height()));
            }
        }
        QFile list(shots + "/elided.txt");
        if (list.open(QIODevice::WriteOnly)) list.write(elided.join("\n").toUtf8());
        QVERIFY2(elided.isEmpty(),
                 qPrintable(QString::number(elided.size()) + " elided texts (" + shots +
                            "/elided.txt): " + elided.mid(0, 12).join("\n")));
    }

    // Issue 26: a model has one colour in every chart of every view: the demo's BiGS (the
    // first model wherever it is compared) blue, its BERT orange.
    void eachModelHasOneColourInEveryView() {
        routescope::gui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        window.open_project(demo_ + "/demo.rsproj");
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 300000);
        QStringList checked;
        for (routescope::views::AnalysisView* view : window.analysis_views())
            for (QChartView* chart : view->figure()->findChildren<QChartView*>())
                for (QAbstractSeries* s : chart->chart()->series()) {
                    auto* xy = qobject_cast<QXYSeries*>(s);
                    if (!xy || xy->name().isEmpty()) continue;  // a raw curve under a smoothed one
                    const int model = xy->name().startsWith("bigs")   ? 0
                                      : xy->name().startsWith("bert") ? 1
                                                                      : -1;
                    if (model < 0) continue;
                    const QColor want = routescope::views::model_colour(std::size_t(model));
                    QVERIFY2(xy->pen().color().rgb() == want.rgb(),
                             qPrintable(QString("%1: '%2' is %3, not %4")
                                            .arg(view->kind(), xy->name(), xy->pen().color().name(),
                                                 want.name())));
                    checked << view->kind() + ": " + xy->name();
                }
        // anisotropy, transitions, efficiency and training draw both models by name.
        for (const QString kind : {"anisotropy", "transitions", "efficiency", "training"})
            QVERIFY2(checked.filter(QRegularExpression("^" + kind + ": bert")).size() >= 1,
                     qPrintable(kind + ": " + checked.join("; ")));
    }

    // Issue 18 through the headless flags: --width single --font-pt 8 gives every SVG a declared
    // width of 89 mm and every PDF a page 89 mm (252.3 pt) wide; a bad preset is refused.
    void headlessExportTakesTheSizePresets() {
        const QString out = figures_ + "-single";
        QDir(out).removeRecursively();
        QProcess exporter;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        exporter.setProcessEnvironment(env);
        exporter.start(QStringLiteral(ROUTESCOPE_GUI_BIN),
                       {"--export", demo_ + "/demo.rsproj", "--out", out, "--dpi", "96", "--width",
                        "single", "--font-pt", "8"});
        QVERIFY(exporter.waitForFinished(300000));
        const QString log =
            QString::fromUtf8(exporter.readAllStandardOutput() + exporter.readAllStandardError());
        QVERIFY2(exporter.exitCode() == 0, qPrintable(log));
        const auto svgs = QDir(out).entryList({"*.svg"});
        const auto pdfs = QDir(out).entryList({"*.pdf"});
        QVERIFY(!svgs.isEmpty());
        QCOMPARE(pdfs.size(), svgs.size());
        for (const QString& name : svgs) {
            QFile f(out + "/" + name);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY2(f.read(400).contains("width=\"89mm\""), qPrintable(name));
        }
        const QRegularExpression box(R"(/MediaBox\s*\[\s*0\s+0\s+([0-9.]+))");
        for (const QString& name : pdfs) {
            QFile f(out + "/" + name);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const auto m = box.match(QString::fromLatin1(f.readAll()));
            QVERIFY2(m.hasMatch(), qPrintable(name));
            QVERIFY2(std::abs(m.captured(1).toDouble() - 89 / 25.4 * 72) <= 0.5,
                     qPrintable(name + ": " + m.captured(1)));
        }
        QProcess bad;
        bad.setProcessEnvironment(env);
        bad.start(QStringLiteral(ROUTESCOPE_GUI_BIN),
                  {"--export", demo_ + "/demo.rsproj", "--out", out, "--width", "wide"});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(QString::fromUtf8(bad.readAllStandardError()).contains("figure width 'wide'"));
    }

    void theDemoProjectExportsEveryViewHeadless() {
        const QString demo = demo_, figures = figures_, output = output_;
        const QString bigs_hash = view_test::sha256_of(demo + "/bigs.dump.h5");
        const QStringList pngs = QDir(figures).entryList({"*.png"}, QDir::Files, QDir::Name);
        for (const QString& kind : kViewKinds) {
            QStringList mine;
            for (const QString& png : pngs)
                if (png.startsWith(kind + "-")) mine << png;
            QVERIFY2(mine.size() == 1, qPrintable(kind + ": " + pngs.join(", ") + "\n" + output));
            const QString base = figures + "/" + mine[0].chopped(4);

            const QImage png(base + ".png");
            QVERIFY2(!png.isNull() && png.width() >= 300 && png.height() >= 200,
                     qPrintable(base + ".png"));
            const QByteArray svg = read_all(base + ".svg");
            QVERIFY2(svg.contains("<path") || svg.contains("<polyline"), qPrintable(base + ".svg"));
            QVERIFY2(QSvgRenderer(svg).isValid(), qPrintable(base + ".svg"));
            QVERIFY2(read_all(base + ".pdf").startsWith("%PDF"), qPrintable(base + ".pdf"));
            const QList<QByteArray> csv = read_all(base + ".csv").trimmed().split('\n');
            QVERIFY2(csv.size() >= 2, qPrintable(base + ".csv"));
            for (const QString suffix : {".png", ".svg", ".pdf", ".csv"}) {
                const QJsonObject prov = read_json(base + suffix + ".provenance.json");
                QVERIFY2(prov.value("view").toString() == kind,
                         qPrintable(base + suffix + ".provenance.json"));
            }
            // The views of the BiGS dump name its hash, so a figure can be traced to its data.
            if (kind == "gates" || kind == "pca" || kind == "anisotropy")
                QVERIFY2(read_all(base + ".png.provenance.json").contains(bigs_hash.toUtf8()),
                         qPrintable(base));
        }
    }
};

QTEST_MAIN(TestDemoExport)
#include "test_demo_export.moc"
