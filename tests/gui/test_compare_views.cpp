// Compare mode of every view (issue 6, acceptance 1): each renders a fixture pair offscreen and
// writes a screenshot (ROUTESCOPE_TEST_OUTPUT/compare_*.png).
// - Gates: two dumps of the same examples with different values (`sample-dump --state-seed`), A | B
//   on one colour range with the example, layer and gate selection linked and A − B cell for cell;
//   models of different depth aligned by relative depth; a BiGS and a Birdie dump (the project's
//   own CLI, `train` with 0 steps then `dump --gates`) side by side without a difference.
// - PCA: curves per layer and model, the k(p) table with a model column, relative depth.
// - Kernels, anisotropy, transitions, accuracy by length, efficiency and training: a pair each.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QLineSeries>
#include <QProcess>
#include <QScatterSeries>

#include "view_test_support.hpp"
#include "views/anisotropy_view.hpp"
#include "views/attention_view.hpp"
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
#include "views/training_view.hpp"
#include "views/transitions_view.hpp"

#include <QComboBox>
#include <QLineEdit>
#include <QTableWidget>

using namespace routescope::views;

namespace {

QList<QLineSeries*> lines(QChartView* v) {
    QList<QLineSeries*> out;
    for (auto* s : v->chart()->series())
        if (auto* l = qobject_cast<QLineSeries*>(s); l && !qobject_cast<QScatterSeries*>(s))
            out << l;
    return out;
}

// A run directory whose log.jsonl holds `steps` step records of a loss decaying at `rate`.
QString fake_run(const QString& dir, const QString& name, int steps, double rate) {
    const QString run = QDir(dir).filePath(name);
    QDir().mkpath(run);
    QFile f(run + "/log.jsonl");
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    for (int s = 1; s <= steps; ++s) {
        const double loss = 2.0 + 6.0 * std::exp(-rate * s);
        f.write(QStringLiteral("{\"type\": \"step\", \"step\": %1, \"elapsed\": %2, \"loss\": %3, "
                               "\"lr\": %4, \"grad_norm\": %5, \"tokens_per_s\": %6}\n")
                    .arg(s)
                    .arg(0.1 * s)
                    .arg(loss)
                    .arg(1e-3 * std::min(1.0, s / 20.0))
                    .arg(1.0 + 0.5 * std::exp(-0.05 * s))
                    .arg(9000 + 100 * (s % 7))
                    .toUtf8());
        if (s % 25 == 0)
            f.write(QStringLiteral("{\"type\": \"eval\", \"step\": %1, \"loss\": %2, "
                                   "\"accuracy\": %3}\n")
                        .arg(s)
                        .arg(loss + 0.1)
                        .arg(0.3 + 0.4 * (1 - std::exp(-rate * s)))
                        .toUtf8());
    }
    return run;
}

// The cells of a CSV file, a row per line; a quoted cell may hold commas and doubled quotes.
QList<QStringList> read_csv(const QString& path) {
    QList<QStringList> rows;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return rows;
    for (const QString& line : QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts)) {
        QStringList cells{QString()};
        bool quoted = false;
        for (int i = 0; i < line.size(); ++i) {
            const QChar c = line[i];
            if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                cells.back() += line[++i];
            else if (c == '"')
                quoted = !quoted;
            else if (c == ',' && !quoted)
                cells << QString();
            else if (c != '\r')
                cells.back() += c;
        }
        rows << cells;
    }
    return rows;
}

}  // namespace

class TestCompareViews : public QObject {
    Q_OBJECT
    QString dir_, same_a_, same_b_, shallow_, dump_a_, dump_b_;

private slots:
    void initTestCase() {
        dir_ = view_test::data_dir("compare_views");
        // The same 60 examples (--seed 1), values from --state-seed: two "checkpoints" of one
        // architecture; `shallow` is a 2-layer model of the same examples.
        same_a_ = view_test::sample_dump(dir_, "ckpt_a.dump.h5", {"--state-seed", "1"});
        same_b_ = view_test::sample_dump(dir_, "ckpt_b.dump.h5", {"--state-seed", "2"});
        shallow_ =
            view_test::sample_dump(dir_, "shallow.dump.h5", {"--state-seed", "3", "--layers", "2"});
        dump_a_ = view_test::sample_dump(dir_, "model_a.dump.h5");
        dump_b_ = view_test::sample_dump(dir_, "model_b.dump.h5", {"--seed", "2", "--layers", "2"});
        QVERIFY(!same_a_.isEmpty() && !same_b_.isEmpty() && !shallow_.isEmpty());
        QVERIFY(!dump_a_.isEmpty() && !dump_b_.isEmpty());
    }

    void gatesCompareLinksSelectionAndDrawsTheDifference() {
        GatesViewSettings s;
        s.dump = same_a_;
        s.dump_b = same_b_;
        s.example = 3;
        GatesView view(s);
        view.resize(1300, 900);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(view_test::wait_for(&view));  // the timelines' own worker
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view.comparing());
        QVERIFY(view.result_b());
        QVERIFY(view.title().contains("|"));
        // Readable in a journal's columns at 7–10 pt (at 183 mm and 10 pt the histogram's four
        // title lines left its y title clipped).
        const QStringList problems = view_test::journal_layout_problems(view);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
        // Both tables under a model column.
        QCOMPARE(view.table()->rowCount(), 16);
        QCOMPARE(view.table()->horizontalHeaderItem(0)->text(), QString("model"));
        // Linked example and gate: B shows the same example, layer and gate.
        QCOMPARE(view.timeline().example, 3);
        QCOMPARE(view.timeline_b().example, 3);
        QCOMPARE(view.timeline_b().layer, view.timeline().layer);
        QCOMPARE(view.timeline_b().gate, view.timeline().gate);
        // One colour range for A and B.
        QCOMPARE(view.timeline_heatmap()->range_lo(), view.timeline_heatmap_b()->range_lo());
        QCOMPARE(view.timeline_heatmap()->range_hi(), view.timeline_heatmap_b()->range_hi());
        // A − B cell for cell.
        QVERIFY(view.difference_shown());
        QVERIFY(view.difference_heatmap()->isVisible());
        const auto& a = view.timeline_heatmap()->data();
        const auto& b = view.timeline_heatmap_b()->data();
        const auto& d = view.difference_heatmap()->data();
        QCOMPARE(d.rows, a.rows);
        QCOMPARE(d.columns, a.columns);
        QVERIFY(d.diverging);
        double largest = 0;
        for (std::size_t i = 0; i < d.values.size(); ++i) {
            QCOMPARE(d.values[i], a.values[i] - b.values[i]);
            largest = std::max(largest, std::abs(d.values[i]));
        }
        QVERIFY(largest > 0);  // different values, not the same dump twice
        QCOMPARE(static_cast<float>(b.values[1 * b.columns + 2]), view.timeline_b().values(2, 1));
        // B's histogram over A's.
        QCOMPARE(lines(view.histogram_chart()).size(), 2);
        // Picking another gate moves B with it.
        view.select_gate(3, "u_b");
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(view.timeline_b().layer, 3);
        QCOMPARE(view.timeline_b().gate, QString("u_b"));
        // Searching A's examples selects the same example in B.
        view.search()->setText("kernels");
        QVERIFY(view_test::wait_for(&view));
        const qint64 picked = view.example_box()->currentData().toLongLong();
        QVERIFY(view.example_box()
                    ->itemData(view.example_box()->currentIndex(), Qt::ToolTipRole)
                    .toString()
                    .contains("kernels"));
        QCOMPARE(view.timeline().example, picked);
        QCOMPARE(view.timeline_b().example, picked);
        QVERIFY(view.difference_shown());
        QVERIFY(view_test::screenshot(&view, "compare_gates"));
        // Settings: B and the alignment in the JSON; an old project's JSON (no dump_b) is A only.
        const auto j = view.settings();
        QCOMPARE(QString::fromStdString(j.at("dump_b").get<std::string>()), same_b_);
        const auto old = GatesViewSettings::from_json(
            {{"dump", "x.dump.h5"}, {"layer", 2}, {"gate", "u_f"}, {"example", 4}});
        QVERIFY(old.dump_b.isEmpty());
        QCOMPARE(old.align, QString("layer"));
        QCOMPARE(old.example, 4);
    }

    void gatesCompareAlignsModelsOfDifferentDepth() {
        GatesViewSettings s;
        s.dump = same_a_;     // layers 1..4
        s.dump_b = shallow_;  // layers 1..2
        s.layer = 4;
        s.gate = "u_f";
        GatesView view(s);
        view.resize(1300, 900);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        // By layer: B has no layer 4.
        QCOMPARE(view.gate_b().first, -1);
        QVERIFY(!view.difference_shown());
        QVERIFY(view.difference_note().contains("layer 4"));
        // By relative depth: 4/4 ↔ 2/2, 2/4 ↔ 1/2.
        view.set_align("depth");
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(view.gate_b(), std::make_pair(2, QString("u_f")));
        QCOMPARE(view.timeline_b().layer, 2);
        QCOMPARE(view.timeline_b().example, view.timeline().example);
        QVERIFY(!view.difference_shown());  // the layers differ: no A − B
        QVERIFY2(view.difference_note().contains("linked layer is 2"),
                 qPrintable(view.difference_note()));
        view.select_gate(2, "u_b");
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(view.gate_b(), std::make_pair(1, QString("u_b")));
        QCOMPARE(view.settings().at("align").get<std::string>(), std::string("depth"));
        QVERIFY(view_test::screenshot(&view, "compare_gates_relative_depth"));
    }

    void gatesCompareOfTwoArchitecturesHasNoDifference() {
        const QString bigs =
            view_test::arch_dump(dir_, "bigs", R"({"arch": "bigs", "d_model": 16, "n_layers": 2,
                                        "max_len": 64, "d_inner": 16, "ln_eps": 1e-5})");
        const QString birdie =
            view_test::arch_dump(dir_, "birdie", R"({"arch": "birdie", "d_model": 16, "n_layers": 2,
                                          "max_len": 64, "d_inner": 16, "ln_eps": 1e-5,
                                          "birdie": {"mode": "prefix"}})");
        QVERIFY(!bigs.isEmpty() && !birdie.isEmpty());
        GatesViewSettings s;
        s.dump = bigs;
        s.dump_b = birdie;
        s.example = 2;
        GatesView view(s);
        view.resize(1300, 900);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        // Side by side: B's timeline of the same example and layer, no A − B.
        QCOMPARE(view.timeline_b().example, 2);
        QCOMPARE(view.timeline_b().layer, view.timeline().layer);
        QVERIFY(view.timeline_heatmap_b()->data().rows > 0);
        QVERIFY(!view.difference_shown());
        QVERIFY(!view.difference_heatmap()->isVisible());
        QVERIFY2(view.difference_note().contains("gates differ"),
                 qPrintable(view.difference_note()));
        QVERIFY(view_test::screenshot(&view, "compare_gates_architectures"));
    }

    // Session 28: a BiGS's implicit attention (a signed convolution matrix) beside a BERT's
    // attention probabilities. Before, one colour range (A's, symmetric about 0) drew B as one
    // flat colour and A − B subtracted probabilities from convolution weights, its bar labelled
    // as A's quantity. Now each has its own range and bar, no A − B, and a note naming the kinds;
    // two matrices of one kind keep one range and A − B, labelled as a difference.
    void implicitAttentionOfDifferentKindsKeepsTheirOwnRanges() {
        const QString bigs =
            view_test::arch_dump(dir_, "bigs", R"({"arch": "bigs", "d_model": 16, "n_layers": 2,
                                        "max_len": 64, "d_inner": 16, "ln_eps": 1e-5})");
        const QString bert = view_test::arch_dump(
            dir_, "bert_attention",
            R"({"arch": "bert", "d_model": 16, "n_layers": 2, "max_len": 64, "n_heads": 2})",
            /*gates=*/false, {"--attention"});
        QVERIFY(!bigs.isEmpty() && !bert.isEmpty());
        AttentionViewSettings s;
        s.dump = bigs;
        s.dump_b = bert;
        s.layer = 1;
        s.example = 2;
        AttentionView view(s);
        view.resize(1300, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results()[1].source, std::string("attention"));
        QVERIFY(view.results()[0].source != "attention");
        QVERIFY(!view.heatmap_difference()->isVisible());
        QVERIFY2(view.difference_note().contains("A − B is not drawn") &&
                     view.difference_note().contains("convolution") &&
                     view.difference_note().contains("attention probabilities"),
                 qPrintable(view.difference_note()));
        // B on the range of its own values: probabilities, within [0, 1].
        const auto& pb = view.results()[1].matrix;
        QCOMPARE(view.heatmap_b()->range_lo(), *std::min_element(pb.begin(), pb.end()));
        QCOMPARE(view.heatmap_b()->range_hi(), *std::max_element(pb.begin(), pb.end()));
        QVERIFY(view.heatmap_a()->range_lo() < 0);  // A's signed convolution
        // The printed figure: two colour bars, B's labelled with probabilities only.
        for (const double width : {kSingleColumnMm, kDoubleColumnMm}) {
            FigureExportOptions o;
            o.width_mm = width;
            o.font_pt = 8;
            const FigureLayout layout = figure_layout(view, o);
            QCOMPARE(layout.colour_bars.size(), std::size_t{2});
            // A's panel is drawn first, then B's.
            const QStringList labels = colour_bar_labels(layout, layout.colour_bars[1]);
            QVERIFY2(labels.size() >= 2, qPrintable(labels.join(", ")));
            for (const QString& l : labels)
                QVERIFY2(l.toDouble() >= 0 && l.toDouble() <= 1, qPrintable(labels.join(", ")));
            QVERIFY2(figure_layout_problems(layout).isEmpty(),
                     qPrintable(figure_layout_problems(layout).join("\n")));
        }
        QVERIFY(view_test::screenshot(&view, "compare_attention_kinds"));

        // Two convolutions: one range, A − B on a bar labelled as the difference.
        s.dump = same_a_;
        s.dump_b = same_b_;
        s.layer = 1;
        s.example = 0;
        AttentionView same(s);
        same.resize(1300, 700);
        same.show();
        same.start();
        QVERIFY(view_test::wait_for(&same));
        QVERIFY2(same.has_result(), qPrintable(same.error()));
        QVERIFY(same.heatmap_difference()->isVisible());
        QVERIFY(same.difference_note().isEmpty());
        QCOMPARE(same.heatmap_a()->range_hi(), same.heatmap_b()->range_hi());
        QVERIFY2(same.heatmap_difference()->data().value_label.startsWith("A − B"),
                 qPrintable(same.heatmap_difference()->data().value_label));
    }

    void pcaComparesModelsPerLayerAndByRelativeDepth() {
        PcaViewSettings s;
        s.dumps = {dump_a_, dump_b_};  // layers 0..4 and 0..2
        PcaView view(s);
        view.resize(1300, 800);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results().size(), std::size_t{2});
        QCOMPARE(view.results()[0].size(), std::size_t{5});
        QCOMPARE(view.results()[1].size(), std::size_t{3});
        // A cumulative curve per layer and model (and, empty, each model's legend entry: its line
        // style beside the key of the layers' colours).
        QList<QLineSeries*> curves;
        for (auto* l : lines(view.chart()))
            if (l->count() > 0) curves << l;
        QCOMPARE(curves.size(), 8);
        QCOMPARE(lines(view.chart()).size(), 10);
        const auto& r = view.results()[1][2];
        QCOMPARE(curves[7]->count(), static_cast<int>(r.mean_curve.size()));
        QCOMPARE(curves[7]->at(0).y(), r.mean_curve[0]);
        QVERIFY(curves[7]->name().contains("model_b"));
        // The k(p) table under a model column.
        QCOMPARE(view.table()->horizontalHeaderItem(0)->text(), QString("model"));
        std::size_t rows = 0;
        for (const auto& m : view.results())
            for (const auto& x : m)
                rows += x.table().rows.size();
        QCOMPARE(view.table()->rowCount(), static_cast<int>(rows));
        // Mean k(0.90) per layer, then by relative depth: B's last layer at 1 like A's.
        auto k = lines(view.k_chart());
        QCOMPARE(k.size(), 2);
        QCOMPARE(k[1]->count(), 3);
        QCOMPARE(k[1]->at(2).x(), 2.0);
        QCOMPARE(k[1]->at(2).y(), view.results()[1][2].overall.mean_k[0]);
        view.set_x("depth");
        k = lines(view.k_chart());
        QCOMPARE(k[0]->at(4).x(), 1.0);
        QCOMPARE(k[1]->at(2).x(), 1.0);
        QCOMPARE(k[1]->at(1).x(), 0.5);
        view.set_p(0.98);
        QCOMPARE(lines(view.k_chart())[0]->at(4).y(), view.results()[0][4].overall.mean_k[4]);
        QVERIFY(view_test::screenshot(&view, "compare_pca"));
        // Settings: the list of dumps; a project file with a single "dump" still opens.
        const auto back = PcaViewSettings::from_json(nlohmann::json::parse(view.settings().dump()));
        QCOMPARE(back.dumps, s.dumps);
        QCOMPARE(back.x, QString("depth"));
        const auto old = PcaViewSettings::from_json(
            {{"dump", "old.dump.h5"}, {"energy", true}, {"max_sentences", 10}});
        QCOMPARE(old.dumps, QStringList{"old.dump.h5"});
        QVERIFY(old.energy);
        QCOMPARE(old.max_sentences, 10);
    }

    void kernelsCompareScreenshot() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(same_a_);
        s.b = KernelSource::from_path(dump_b_);
        KernelView view(s);
        view.resize(1300, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view.result_b());
        // Layers 1..4 against 1..2: no A − B, one colour range.
        QCOMPARE(view.heatmap_difference()->data().rows, 0);
        QCOMPARE(view.heatmap_a()->range_hi(), view.heatmap_b()->range_hi());
        emit view.heatmap_a()->rowClicked(1);
        QCOMPARE(view.heatmap_b()->selected_row(), 1);
        QVERIFY(view_test::screenshot(&view, "compare_kernels"));
    }

    void anisotropyCompareScreenshot() {
        AnisotropyViewSettings s;
        s.dumps = {same_a_, same_b_, shallow_};
        AnisotropyView view(s);
        view.resize(1200, 750);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results().size(), std::size_t{3});
        QCOMPARE(lines(view.token_chart()).size(), 3);
        QVERIFY(view_test::screenshot(&view, "compare_anisotropy"));
    }

    void transitionsCompareScreenshot() {
        TransitionsViewSettings s;
        s.dumps = {same_a_, shallow_};
        s.x = "depth";
        TransitionsView view(s);
        view.resize(1000, 650);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto curves = lines(view.chart());
        QCOMPARE(curves.size(), 4);
        QCOMPARE(curves.back()->at(curves.back()->count() - 1).x(), 1.0);
        QVERIFY(view_test::screenshot(&view, "compare_transitions"));
    }

    void lengthAccuracyCompareScreenshot() {
        const QString dir =
            QFileInfo(view_test::ssm_checkpoint(dir_, "before.ckpt.h5")).dir().path();
        const QString a = dir + "/random.dump.h5", b = dir + "/random_b.dump.h5";
        LengthAccuracyView view({a, b, "quantile", 4, 0});
        view.resize(1000, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view.result()->compared);
        QCOMPARE(view.chart()->data().series.size(), std::size_t{2});
        QCOMPARE(view.chart()->data().difference.size(), view.result()->bins.size());
        QVERIFY(view_test::screenshot(&view, "compare_length_accuracy"));

        // Probe Y2 (D5): the CSV had "accuracy" and "accuracy_b" and named neither model. User
        // guide, "Names": in a comparison's CSV the `model` column holds each model's name as its
        // legend shows it (the name given in the Workspace), so the two models' rows can be told
        // apart; as in the transitions view's CSV, the model column comes first, a row per model
        // and bin. Read back from the exported file (a name with a comma is quoted).
        const QString name_a = QStringLiteral("Alpha, ablated"), name_b = QStringLiteral("Beta");
        set_display_name(a, name_a);
        set_display_name(b, name_b);
        const QString path = dir_ + "/length_accuracy_compare.csv";
        view.export_to(path);
        set_display_name(a, {});
        set_display_name(b, {});
        const QList<QStringList> rows = read_csv(path);
        QVERIFY(!rows.isEmpty());
        const QStringList header = rows.front();
        QCOMPARE(header.value(0), QStringLiteral("model"));
        for (const char* column : {"bin_low", "bin_high", "count", "accuracy", "wilson_low",
                                   "wilson_high", "difference", "mcnemar_p"})
            QVERIFY2(header.contains(column), qPrintable(header.join(",")));
        QVERIFY2(!header.contains("accuracy_b"), qPrintable(header.join(",")));
        const auto& bins = view.result()->bins;
        QCOMPARE(rows.size(), 1 + 2 * static_cast<int>(bins.size()));
        const int accuracy = static_cast<int>(header.indexOf("accuracy"));
        const int low = static_cast<int>(header.indexOf("bin_low"));
        const int p = static_cast<int>(header.indexOf("mcnemar_p"));
        for (int m = 0; m < 2; ++m)
            for (std::size_t b = 0; b < bins.size(); ++b) {
                const QStringList& row = rows[1 + m * static_cast<int>(bins.size()) + int(b)];
                QCOMPARE(row.value(0), m == 0 ? name_a : name_b);
                QCOMPARE(row.value(low).toDouble(), bins[b].lo);
                const double want = m == 0 ? bins[b].a.accuracy : bins[b].b.accuracy;
                QVERIFY(std::abs(row.value(accuracy).toDouble() - want) < 1e-12);
                QVERIFY(std::abs(row.value(p).toDouble() - bins[b].p_value) < 1e-12);
            }
        // One model: its CSV as before, without a model column (as the gates, kernels and PCA
        // views write one model's).
        LengthAccuracyView one({a, {}, "quantile", 4, 0});
        one.resize(1000, 700);
        one.show();
        one.start();
        QVERIFY(view_test::wait_for(&one));
        QVERIFY2(one.has_result(), qPrintable(one.error()));
        QCOMPARE(one.figure_table().columns.front(), std::string("bin_low"));
    }

    void efficiencyCompareScreenshot() {
        EfficiencyViewSettings s;
        s.models = {{"bigs", 23, 1024, 0, 64},
                    {"bert", 24, 1024, 0, 64},
                    {"birdie", 24, 1024, 0, 0},
                    {"gmlp", 24, 1024, 0, 64}};
        EfficiencyView view(s);
        view.resize(1000, 650);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.results().size(), std::size_t{4});
        QVERIFY(view.chart()->chart()->series().size() >= 4);
        QVERIFY(view_test::screenshot(&view, "compare_efficiency"));
    }

    void trainingCompareScreenshot() {
        const QString a = fake_run(dir_, "run_a", 200, 0.02);
        const QString b = fake_run(dir_, "run_b", 150, 0.035);
        TrainingView view(TrainingViewSettings{{a, b}, "step"});
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QCOMPARE(view.logs().size(), std::size_t{2});
        QCOMPARE(view.logs()[1].steps.size(), std::size_t{150});
        QVERIFY(lines(view.chart("loss")).size() >= 2);
        QVERIFY(view_test::screenshot(&view, "compare_training"));
    }

    // A long run (20 000 steps, like the small preset's 10 000 and more) is drawn with at most
    // 2000 points per series that keep every bucket's lowest and highest value; the log and the CSV
    // keep every record. Live records refill the series. Prints the GUI thread's time per live
    // update and per full redraw (docs/benchmarks.md); asserts no speed.
    void trainingViewDrawsALongRunWithBoundedPoints() {
        const QString dir = fake_run(dir_, "long_run", 20000, 0.0005);
        TrainingView view(TrainingViewSettings{{dir}, "step"});
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view, 60000));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const auto& log = view.logs().at(0);
        QCOMPARE(log.steps.size(), std::size_t{20000});
        QCOMPARE(view.figure_table().rows.size(), log.steps.size() + log.evals.size());
        auto check = [&] {
            auto* loss = lines(view.chart("loss")).at(0);
            QVERIFY(loss->count() <= 2000);
            double lo = INFINITY, hi = -INFINITY, series_lo = INFINITY, series_hi = -INFINITY;
            for (const auto& st : view.logs().at(0).steps) {
                lo = std::min(lo, st.loss);
                hi = std::max(hi, st.loss);
            }
            for (const QPointF& p : loss->points()) {
                series_lo = std::min(series_lo, p.y());
                series_hi = std::max(series_hi, p.y());
            }
            QCOMPARE(series_lo, lo);
            QCOMPARE(series_hi, hi);
            QCOMPARE(loss->points().front().x(), view.logs().at(0).steps.front().step);
            QCOMPARE(loss->points().back().x(), view.logs().at(0).steps.back().step);
        };
        check();
        std::vector<double> live, full;
        for (int k = 0; k < 5; ++k) {
            for (int j = 0; j < 50; ++j) {
                const int step = 20001 + 50 * k + j;
                view.append_record(dir, QJsonObject{{"type", "step"},
                                                    {"step", step},
                                                    {"elapsed", step * 0.1},
                                                    {"loss", j == 7 ? 0.5 : 2.0},  // a new low
                                                    {"lr", 1e-3},
                                                    {"grad_norm", 1.0},
                                                    {"tokens_per_s", 9000}});
            }
            QElapsedTimer t;
            t.start();
            view.draw_pending();
            live.push_back(t.nsecsElapsed() / 1e6);
            check();
            t.restart();
            view.set_x("step");  // a full redraw
            full.push_back(t.nsecsElapsed() / 1e6);
            QTest::qWait(20);
        }
        QCOMPARE(view.logs().at(0).steps.size(), std::size_t{20250});
        std::sort(live.begin(), live.end());
        std::sort(full.begin(), full.end());
        qInfo(
            "training view at 20000 steps, GUI thread per live update of 50 records: median %.1f "
            "ms, max %.1f ms; per full redraw: median %.1f ms, max %.1f ms",
            live[2], live[4], full[2], full[4]);
    }
};

QTEST_MAIN(TestCompareViews)
#include "test_compare_views.moc"
