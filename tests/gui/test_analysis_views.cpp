// Each analysis view renders a fixture and draws exactly the analysis result. Screenshots of every
// view go to ROUTESCOPE_TEST_OUTPUT.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>

#include "view_test_support.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"

using namespace routescope::views;

namespace {
QList<QLineSeries*> lines(QChartView* v) {
    QList<QLineSeries*> out;
    for (auto* s : v->chart()->series())
        if (auto* l = qobject_cast<QLineSeries*>(s); l && !qobject_cast<QScatterSeries*>(s))
            out << l;
    return out;
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
