// The S-LSTM's ops (MODELS.md "S-LSTM"; engine/ops/{neighbour_shift, gate_softmax,
// sequence_softmax, weighted_sequence_sum, sequence_broadcast, column_concat}): each forward
// against its defining formula written out as a plain loop here, each backward against central
// finite differences (finite_difference.hpp, relative 1e-6) for every float input. Lengths
// include a full row, a short one and a row of length 1, so the pad rules (zero neighbours, no
// weight, no gradient) are covered; gradient buffers are prefilled, so accumulation is checked too.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/column_concat.hpp"
#include "engine/ops/gate_softmax.hpp"
#include "engine/ops/neighbour_shift.hpp"
#include "engine/ops/op_table.hpp"
#include "engine/ops/sequence_broadcast.hpp"
#include "engine/ops/sequence_softmax.hpp"
#include "engine/ops/weighted_sequence_sum.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using Vec = std::vector<double>;

#define CHECK_GRAD(x, analytic, loss)                                                         \
    do {                                                                                      \
        std::string where_;                                                                   \
        const double err_ = fd_max_error(x, analytic, loss, &where_);                         \
        QVERIFY2(err_ <= kFdTolerance, qPrintable(QString("%1: scaled error %2 > %3 at %4")   \
                                                      .arg(#analytic)                         \
                                                      .arg(err_)                              \
                                                      .arg(kFdTolerance)                      \
                                                      .arg(QString::fromStdString(where_)))); \
    } while (0)

namespace {
constexpr int kB = 3, kL = 5, kD = 4;
const std::vector<std::int32_t> kLengths = {5, 3, 1};

std::size_t at(int b, int t, int j) {
    return (std::size_t(b) * kL + t) * kD + j;
}
}  // namespace

class TestSlstmOps : public QObject {
    Q_OBJECT

    std::mt19937 gen{20261122};
    ThreadPool pool2{2};

    void neighbour(int offset) {
        Vec x = random_vector(kB * kL * kD, gen), r = random_vector(x.size(), gen), y(x.size());
        ops::neighbour_shift_forward(y.data(), x.data(), kLengths.data(), kB, kL, kD, offset,
                                     pool2);
        for (int b = 0; b < kB; ++b)
            for (int t = 0; t < kL; ++t)
                for (int j = 0; j < kD; ++j) {
                    const int s = t + offset;
                    const double want = s >= 0 && s < kLengths[b] ? x[at(b, s, j)] : 0.0;
                    QCOMPARE(y[at(b, t, j)], want);
                }
        auto loss = [&] {
            ops::neighbour_shift_forward(y.data(), x.data(), kLengths.data(), kB, kL, kD, offset,
                                         pool2);
            return dot(y, r);
        };
        Vec dx = prefilled(x.size());
        ops::neighbour_shift_backward(dx.data(), r.data(), kLengths.data(), kB, kL, kD, offset,
                                      pool2);
        CHECK_GRAD(x, dx, loss);
    }

private slots:
    void leftNeighbourIsThePreviousRealTokenOrZero() { neighbour(-1); }
    void rightNeighbourIsTheNextRealTokenOrZero() { neighbour(+1); }

    void neighbourShiftRejectsAnOffsetOtherThanOne() {
        Vec x(kB * kL * kD), y(x.size());
        QVERIFY_THROWS_EXCEPTION(
            Error, ops::neighbour_shift_forward(y.data(), x.data(), kLengths.data(), kB, kL, kD, 2,
                                                pool2));
    }

    void gateSoftmaxNormalisesAcrossTheFiveGates() {
        const int K = 5, n = 7;
        std::vector<Vec> x(K), y(K, Vec(n)), r(K), dx(K, prefilled(n));
        for (int k = 0; k < K; ++k) {
            x[k] = random_vector(n, gen);
            r[k] = random_vector(n, gen);
        }
        auto run = [&] {
            std::vector<double*> yp;
            std::vector<const double*> xp;
            for (int k = 0; k < K; ++k) {
                yp.push_back(y[k].data());
                xp.push_back(x[k].data());
            }
            ops::gate_softmax_forward(yp.data(), xp.data(), K, n, pool2);
            double l = 0;
            for (int k = 0; k < K; ++k)
                l += dot(y[k], r[k]);
            return l;
        };
        run();
        for (int j = 0; j < n; ++j) {
            double z = 0;
            for (int k = 0; k < K; ++k)
                z += std::exp(x[k][j]);
            for (int k = 0; k < K; ++k)
                QVERIFY(std::abs(y[k][j] - std::exp(x[k][j]) / z) <= 1e-15);
        }
        std::vector<double*> dxp;
        std::vector<const double*> rp, yp;
        for (int k = 0; k < K; ++k) {
            dxp.push_back(dx[k].data());
            rp.push_back(r[k].data());
            yp.push_back(y[k].data());
        }
        ops::gate_softmax_backward(dxp.data(), rp.data(), yp.data(), K, n, pool2);
        for (int k = 0; k < K; ++k)
            CHECK_GRAD(x[k], dx[k], run);
    }

    void sequenceSoftmaxSpansRealTokensAndTheNodeItself() {
        Vec x = random_vector(kB * kL * kD, gen), own = random_vector(kB * kD, gen),
            r = random_vector(x.size(), gen), r_own = random_vector(own.size(), gen), w(x.size()),
            w_own(own.size());
        auto loss = [&] {
            ops::sequence_softmax_forward(w.data(), w_own.data(), x.data(), own.data(),
                                          kLengths.data(), kB, kL, kD, pool2);
            return dot(w, r) + dot(w_own, r_own);
        };
        loss();
        for (int b = 0; b < kB; ++b)
            for (int j = 0; j < kD; ++j) {
                double z = std::exp(own[std::size_t(b) * kD + j]);
                for (int t = 0; t < kLengths[b]; ++t)
                    z += std::exp(x[at(b, t, j)]);
                for (int t = 0; t < kL; ++t) {
                    const double want = t < kLengths[b] ? std::exp(x[at(b, t, j)]) / z : 0.0;
                    QVERIFY(std::abs(w[at(b, t, j)] - want) <= 1e-15);
                }
                QVERIFY(std::abs(w_own[std::size_t(b) * kD + j] -
                                 std::exp(own[std::size_t(b) * kD + j]) / z) <= 1e-15);
            }
        Vec dx = prefilled(x.size()), dx_own = prefilled(own.size());
        ops::sequence_softmax_backward(dx.data(), dx_own.data(), r.data(), r_own.data(), w.data(),
                                       w_own.data(), kLengths.data(), kB, kL, kD, pool2);
        CHECK_GRAD(x, dx, loss);
        CHECK_GRAD(own, dx_own, loss);
    }

    void weightedSequenceSumSkipsPads() {
        Vec w = random_vector(kB * kL * kD, gen), x = random_vector(w.size(), gen),
            r = random_vector(kB * kD, gen), y(kB * kD);
        auto loss = [&] {
            ops::weighted_sequence_sum_forward(y.data(), w.data(), x.data(), kLengths.data(), kB,
                                               kL, kD, pool2);
            return dot(y, r);
        };
        loss();
        for (int b = 0; b < kB; ++b)
            for (int j = 0; j < kD; ++j) {
                double want = 0;
                for (int t = 0; t < kLengths[b]; ++t)
                    want += w[at(b, t, j)] * x[at(b, t, j)];
                QVERIFY(std::abs(y[std::size_t(b) * kD + j] - want) <= 1e-14);
            }
        Vec dw = prefilled(w.size()), dx = prefilled(x.size());
        ops::weighted_sequence_sum_backward(dw.data(), dx.data(), r.data(), w.data(), x.data(),
                                            kLengths.data(), kB, kL, kD, pool2);
        CHECK_GRAD(w, dw, loss);
        CHECK_GRAD(x, dx, loss);
    }

    void sequenceBroadcastCopiesToEveryPosition() {
        Vec x = random_vector(kB * kD, gen), r = random_vector(kB * kL * kD, gen), y(r.size());
        auto loss = [&] {
            ops::sequence_broadcast_forward(y.data(), x.data(), kB, kL, kD, pool2);
            return dot(y, r);
        };
        loss();
        for (int b = 0; b < kB; ++b)
            for (int t = 0; t < kL; ++t)
                for (int j = 0; j < kD; ++j)
                    QCOMPARE(y[at(b, t, j)], x[std::size_t(b) * kD + j]);
        Vec dx = prefilled(x.size());
        ops::sequence_broadcast_backward(dx.data(), r.data(), kB, kL, kD, pool2);
        CHECK_GRAD(x, dx, loss);
    }

    void columnConcatPlacesPiecesSideBySide() {
        const int rows = 6;
        const int cols[3] = {2, 3, 1};
        Vec a = random_vector(rows * 2, gen), b = random_vector(rows * 3, gen),
            c = random_vector(rows * 1, gen), r = random_vector(rows * 6, gen), y(rows * 6);
        auto loss = [&] {
            const double* x[3] = {a.data(), b.data(), c.data()};
            ops::column_concat_forward(y.data(), x, cols, 3, rows, pool2);
            return dot(y, r);
        };
        loss();
        for (int i = 0; i < rows; ++i) {
            QCOMPARE(y[i * 6 + 0], a[i * 2 + 0]);
            QCOMPARE(y[i * 6 + 1], a[i * 2 + 1]);
            for (int j = 0; j < 3; ++j)
                QCOMPARE(y[i * 6 + 2 + j], b[i * 3 + j]);
            QCOMPARE(y[i * 6 + 5], c[i]);
        }
        Vec da = prefilled(a.size()), db = prefilled(b.size()), dc = prefilled(c.size());
        double* dx[3] = {da.data(), db.data(), dc.data()};
        ops::column_concat_backward(dx, r.data(), cols, 3, rows, pool2);
        CHECK_GRAD(a, da, loss);
        CHECK_GRAD(b, db, loss);
        CHECK_GRAD(c, dc, loss);
    }

    // Costs from the shapes alone: copies cost no flops; the softmaxes 4 per element.
    void costsFollowTheShapes() {
        const std::vector<std::int64_t> bld = {2, 8, 16};
        QCOMPARE(ops::op_cost("neighbour_shift", bld).flops, 0.0);
        QCOMPARE(ops::op_cost("neighbour_shift", bld).bytes, 2.0 * 4 * 2 * 8 * 16);
        QCOMPARE(ops::op_cost("sequence_softmax", bld).flops, 4.0 * 2 * 9 * 16);
        QCOMPARE(ops::op_cost("weighted_sequence_sum", bld).flops, 2.0 * 2 * 8 * 16);
        const std::vector<std::int64_t> kn = {5, 100};
        QCOMPARE(ops::op_cost("gate_softmax", kn).flops, 4.0 * 5 * 100);
        const std::vector<std::int64_t> rc = {10, 7};
        QCOMPARE(ops::op_cost("column_concat", rc).bytes, 2.0 * 4 * 10 * 7);
    }
};

QTEST_APPLESS_MAIN(TestSlstmOps)
#include "test_slstm_ops.moc"
