// Compare mode across depths (ISSUE 6: "models of different depth aligned by relative depth as an
// option"): the Layer Transitions view draws a 2-layer and a 4-layer model either against the layer
// index or against relative depth ℓ / n_layers, where both end at 1; the choice is a view setting
// (projects, undo) and the CSV names each model's depth.
#include <QtTest>

#include <QChartView>
#include <QComboBox>
#include <QLineSeries>

#include "view_test_support.hpp"
#include "views/transitions_view.hpp"

using namespace routescope::views;

namespace {
/// The x values of the series called `name`.
QList<double> xs_of(QChartView* chart, const QString& name) {
    QList<double> out;
    for (QAbstractSeries* s : chart->chart()->series())
        if (s->name() == name)
            for (const QPointF& p : static_cast<QXYSeries*>(s)->points())
                out << p.x();
    return out;
}
}  // namespace

class TestRelativeDepth : public QObject {
    Q_OBJECT

private slots:
    void modelsOfDifferentDepthAlignByRelativeDepth() {
        const QString dir = view_test::data_dir("relative_depth");
        const QString shallow = view_test::sample_dump(dir, "shallow.dump.h5", {"--layers", "2"});
        const QString deep = view_test::sample_dump(dir, "deep.dump.h5", {"--layers", "4"});
        QVERIFY(!shallow.isEmpty() && !deep.isEmpty());
        TransitionsViewSettings s;
        s.dumps = {shallow, deep};
        TransitionsView view(s);
        view.resize(900, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));

        // By layer: ℓ = 1..n for each model.
        QCOMPARE(xs_of(view.chart(), "shallow tokens"), (QList<double>{1, 2}));
        QCOMPARE(xs_of(view.chart(), "deep tokens"), (QList<double>{1, 2, 3, 4}));

        // By relative depth, chosen in the view's own control: ℓ / n, both models end at 1.
        auto* along = view.findChild<QComboBox*>("xAxis");
        QVERIFY(along);
        along->setCurrentIndex(along->findData("depth"));
        QCOMPARE(xs_of(view.chart(), "shallow tokens"), (QList<double>{0.5, 1.0}));
        QCOMPARE(xs_of(view.chart(), "deep sentences"), (QList<double>{0.25, 0.5, 0.75, 1.0}));
        QCOMPARE(view.settings()["x"].get<std::string>(), std::string("depth"));
        QVERIFY(view_test::screenshot(&view, "view_transitions_relative_depth"));

        // The CSV keeps the layer index and names each model's depth, so ℓ / n can be recomputed.
        const auto table = view.figure_table();
        const auto col = [&](const std::string& name) {
            return std::find(table.columns.begin(), table.columns.end(), name) -
                   table.columns.begin();
        };
        QVERIFY(col("n_layers") < static_cast<long>(table.columns.size()));
        QCOMPARE(table.rows.size(), std::size_t(6));
        QCOMPARE(table.rows.front()[col("n_layers")].get<std::int64_t>(), std::int64_t(2));
        QCOMPARE(table.rows.back()[col("n_layers")].get<std::int64_t>(), std::int64_t(4));

        // Restoring settings (a project, undo) switches back without recomputing.
        nlohmann::json j = view.settings();
        j["x"] = "layer";
        view.restore_settings(j);
        QVERIFY(!view.busy());
        QCOMPARE(along->currentData().toString(), QString("layer"));
        QCOMPARE(xs_of(view.chart(), "deep tokens"), (QList<double>{1, 2, 3, 4}));
    }
};

QTEST_MAIN(TestRelativeDepth)
#include "test_relative_depth.moc"
