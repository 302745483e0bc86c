// The GEMM benchmark functions run and report positive figures on a tiny shape. (The figures
// themselves are measured by bench_gemm and recorded in docs/benchmarks.md, never asserted.)
#include <QtTest>

#include "engine/backend/cpu/gemm_bench.hpp"
#include "engine/core/error.hpp"

using namespace routescope;

class TestGemmBench : public QObject {
    Q_OBJECT

private slots:
    void benchGemmRunsOnATinyShape() {
        const auto r = cpu::bench_gemm(16, 8, 4, 2, 0.01);
        QCOMPARE(r.m, 16);
        QCOMPARE(r.threads, 2);
        QVERIFY(r.iterations >= 2);
        QVERIFY(r.seconds > 0);
        QVERIFY(r.gflops > 0);
    }

    void fmaPeakIsPositive() {
        QVERIFY(cpu::measure_fma_peak_gflops(1, 0.02) > 0);
        QVERIFY(QString(cpu::fma_peak_isa()).size() > 0);
    }

    void benchGemmRejectsEmptyShapes() {
        QVERIFY_THROWS_EXCEPTION(Error, cpu::bench_gemm(0, 8, 4, 1, 0.01));
    }
};

QTEST_APPLESS_MAIN(TestGemmBench)
#include "test_gemm_bench.moc"
