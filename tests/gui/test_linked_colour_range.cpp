// Compare mode, linked axes (ISSUE 6): in the kernel browser A and B share one colour range, so
// that one colour means one value in both heatmaps: the union of the two kernels' values (symmetric
// about 0 for signed values). Min-max scaling stays [0, 1]; a single model keeps its own range.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "view_test_support.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"

using namespace routescope::views;

namespace {
std::pair<double, double> extent(const HeatmapData& d) {
    const auto [lo, hi] = std::minmax_element(d.values.begin(), d.values.end());
    return {*lo, *hi};
}
}  // namespace

class TestLinkedColourRange : public QObject {
    Q_OBJECT

private slots:
    void aAndBShareOneColourRange() {
        const QString dir = view_test::data_dir("linked_colour_range");
        const QString before = view_test::ssm_checkpoint(dir, "before.ckpt.h5");
        const QString after = view_test::ssm_checkpoint(dir, "after.ckpt.h5");
        QVERIFY(!before.isEmpty() && !after.isEmpty());
        KernelViewSettings s;
        s.a = KernelSource::from_path(before);
        s.b = KernelSource::from_path(after);
        s.length = 64;
        KernelView view(s);
        view.resize(1200, 800);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        HeatmapWidget *a = view.heatmap_a(), *b = view.heatmap_b();

        // Min-max per layer: [0, 1] in both, as before.
        QCOMPARE(a->range_lo(), 0.0);
        QCOMPARE(b->range_hi(), 1.0);

        view.set_scaling("magnitude");
        const auto [alo, ahi] = extent(a->data());
        const auto [blo, bhi] = extent(b->data());
        QVERIFY2(alo != blo || ahi != bhi, "the fixture's kernels should differ");
        QCOMPARE(a->range_lo(), std::min(alo, blo));
        QCOMPARE(a->range_hi(), std::max(ahi, bhi));
        QCOMPARE(b->range_lo(), a->range_lo());
        QCOMPARE(b->range_hi(), a->range_hi());

        view.set_scaling("signed");
        const auto [slo_a, shi_a] = extent(a->data());
        const auto [slo_b, shi_b] = extent(b->data());
        const double m =
            std::max({std::abs(slo_a), std::abs(shi_a), std::abs(slo_b), std::abs(shi_b)});
        QCOMPARE(a->range_lo(), -m);
        QCOMPARE(a->range_hi(), m);
        QCOMPARE(b->range_lo(), -m);
        QCOMPARE(b->range_hi(), m);

        // One model alone keeps its own range.
        KernelViewSettings single;
        single.a = KernelSource::from_path(before);
        single.length = 64;
        single.scaling = "magnitude";
        KernelView alone(single);
        alone.start();
        QVERIFY(view_test::wait_for(&alone));
        const auto [lo, hi] = extent(alone.heatmap_a()->data());
        QCOMPARE(alone.heatmap_a()->range_lo(), lo);
        QCOMPARE(alone.heatmap_a()->range_hi(), hi);
    }
};

QTEST_MAIN(TestLinkedColourRange)
#include "test_linked_colour_range.moc"
