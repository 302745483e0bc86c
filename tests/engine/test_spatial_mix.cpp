// gMLP's token-mixing op (engine/ops/spatial_mix) and the split of Z (engine/ops/column_slice):
// forward against the defining double sum written out as a plain loop, backward against central
// finite differences (finite_difference.hpp, relative 1e-6) for x, W and the bias, in both modes.
// The shapes cross the op's 64-row work blocks (L = 70) and use W sized n = 75 > L, so the checks
// also prove that rows/columns of W beyond L and, when causal, W's strict upper triangle are never
// read (their numeric gradient is 0, and the analytic one must be exactly the prefill).
#include <QtTest>

#include <cstdint>
#include <vector>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/column_slice.hpp"
#include "engine/ops/spatial_mix.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using Vec = std::vector<double>;

namespace {

constexpr int kB = 2, kL = 70, kC = 3, kN = 75;

// y[b, i, c] = Σ_{j < L, j ≤ i if causal} W[i, j] x[b, j, c] + bias[i] (MODELS.md's W · Z + b).
Vec mix_by_loop(const Vec& x, const Vec& w, const Vec& bias, bool causal) {
    Vec y(std::size_t(kB) * kL * kC);
    for (int b = 0; b < kB; ++b)
        for (int i = 0; i < kL; ++i)
            for (int c = 0; c < kC; ++c) {
                double s = bias[i];
                for (int j = 0; j < (causal ? i + 1 : kL); ++j)
                    s += w[std::size_t(i) * kN + j] * x[(std::size_t(b) * kL + j) * kC + c];
                y[(std::size_t(b) * kL + i) * kC + c] = s;
            }
    return y;
}

}  // namespace

class TestSpatialMix : public QObject {
    Q_OBJECT

    std::mt19937 gen{20261122};
    ThreadPool pool2{2};

    void check_forward(bool causal) {
        const Vec x = random_vector(std::size_t(kB) * kL * kC, gen),
                  w = random_vector(std::size_t(kN) * kN, gen), bias = random_vector(kN, gen);
        Vec y(x.size());
        ops::spatial_mix_forward(y.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN, causal,
                                 pool2);
        const Vec ref = mix_by_loop(x, w, bias, causal);
        for (std::size_t k = 0; k < y.size(); ++k)
            QVERIFY2(std::abs(y[k] - ref[k]) <= 1e-12 * (1 + std::abs(ref[k])),
                     qPrintable(QString("element %1: %2 vs %3").arg(k).arg(y[k]).arg(ref[k])));
    }

    void check_gradients(bool causal) {
        Vec x = random_vector(std::size_t(kB) * kL * kC, gen),
            w = random_vector(std::size_t(kN) * kN, gen), bias = random_vector(kN, gen),
            r = random_vector(x.size(), gen), y(x.size());
        auto loss = [&] {
            ops::spatial_mix_forward(y.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN,
                                     causal, pool2);
            return dot(y, r);
        };
        Vec dx = prefilled(x.size()), dw = prefilled(w.size()), db = prefilled(bias.size());
        ops::spatial_mix_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), kB,
                                  kL, kC, kN, causal, pool2);
        std::string where;
        QVERIFY2(fd_max_error(x, dx, loss, &where) <= kFdTolerance, where.c_str());
        QVERIFY2(fd_max_error(w, dw, loss, &where) <= kFdTolerance, where.c_str());
        QVERIFY2(fd_max_error(bias, db, loss, &where) <= kFdTolerance, where.c_str());
        // Untouched means untouched, not merely "small": exactly the prefill.
        for (int i = 0; i < kN; ++i)
            for (int j = 0; j < kN; ++j)
                if (i >= kL || j >= kL || (causal && j > i))
                    QCOMPARE(dw[std::size_t(i) * kN + j], kPrefill);
        for (int i = kL; i < kN; ++i)
            QCOMPARE(db[std::size_t(i)], kPrefill);
    }

private slots:
    void forwardIsTheSumOverAllPositions() { check_forward(false); }
    void causalForwardSumsOnlyOverEarlierPositions() { check_forward(true); }
    void gradientsMatchFiniteDifferences() { check_gradients(false); }
    void causalGradientsMatchFiniteDifferencesAndSkipTheUpperTriangle() { check_gradients(true); }

    // Changing x at position t changes no output at a position < t when causal.
    void causalOutputIgnoresLaterPositions() {
        const Vec w = random_vector(std::size_t(kN) * kN, gen), bias = random_vector(kN, gen);
        Vec x = random_vector(std::size_t(kB) * kL * kC, gen), y0(x.size()), y1(x.size());
        const int t = 66;  // inside the second 64-row block
        ops::spatial_mix_forward(y0.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN, true,
                                 pool2);
        for (int b = 0; b < kB; ++b)
            for (int c = 0; c < kC; ++c)
                x[(std::size_t(b) * kL + t) * kC + c] += 10.0;
        ops::spatial_mix_forward(y1.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN, true,
                                 pool2);
        for (int b = 0; b < kB; ++b)
            for (int i = 0; i < kL; ++i)
                for (int c = 0; c < kC; ++c) {
                    const std::size_t k = (std::size_t(b) * kL + i) * kC + c;
                    if (i < t)
                        QCOMPARE(y1[k], y0[k]);
                    else if (i == t)
                        QVERIFY(y1[k] != y0[k]);
                }
    }

    // A single thread and two threads give bit-identical results (static partitioning).
    void twoThreadsRepeatOneThreadBitForBit() {
        const Vec x = random_vector(std::size_t(kB) * kL * kC, gen),
                  w = random_vector(std::size_t(kN) * kN, gen), bias = random_vector(kN, gen),
                  r = random_vector(x.size(), gen);
        Vec y1(x.size()), y2(x.size()), dx1(x.size()), dx2(x.size()), dw1(w.size()), dw2(w.size()),
            db1(kN), db2(kN);
        ops::spatial_mix_forward(y1.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN, true);
        ops::spatial_mix_forward(y2.data(), x.data(), w.data(), bias.data(), kB, kL, kC, kN, true,
                                 pool2);
        ops::spatial_mix_backward(dx1.data(), dw1.data(), db1.data(), r.data(), x.data(), w.data(),
                                  kB, kL, kC, kN, true);
        ops::spatial_mix_backward(dx2.data(), dw2.data(), db2.data(), r.data(), x.data(), w.data(),
                                  kB, kL, kC, kN, true, pool2);
        QCOMPARE(y1, y2);
        QCOMPARE(dx1, dx2);
        QCOMPARE(dw1, dw2);
        QCOMPARE(db1, db2);
    }

    void columnSliceCopiesAndItsGradientAccumulates() {
        const int rows = 5, cols = 6, begin = 2, count = 3;
        Vec x = random_vector(rows * cols, gen), r = random_vector(rows * count, gen),
            y(rows * count);
        auto loss = [&] {
            ops::column_slice_forward(y.data(), x.data(), rows, cols, begin, count, pool2);
            return dot(y, r);
        };
        loss();
        for (int i = 0; i < rows; ++i)
            for (int k = 0; k < count; ++k)
                QCOMPARE(y[std::size_t(i) * count + k], x[std::size_t(i) * cols + begin + k]);
        Vec dx = prefilled(x.size());
        ops::column_slice_backward(dx.data(), r.data(), rows, cols, begin, count, pool2);
        std::string where;
        QVERIFY2(fd_max_error(x, dx, loss, &where) <= kFdTolerance, where.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSpatialMix)
#include "test_spatial_mix.moc"
