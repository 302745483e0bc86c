// Op forward values against closed forms and PyTorch values, determinism under threads, and the
// op table's costs.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/op.hpp"
#include "engine/ops/op_table.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/tanh.hpp"

using namespace routescope;

namespace {
std::vector<float> random_floats(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist;
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(gen);
    return v;
}
}  // namespace

class TestOpForward : public QObject {
    Q_OBJECT

private slots:
    void denseMatchesATripleLoop() {
        const int rows = 37, in = 19, out = 23;
        const auto x = random_floats(rows * in, 1), w = random_floats(out * in, 2),
                   b = random_floats(out, 3);
        std::vector<float> y(rows * out);
        ThreadPool pool(2);
        ops::dense_forward(y.data(), x.data(), w.data(), b.data(), rows, in, out, pool);
        for (int r = 0; r < rows; ++r) {
            for (int o = 0; o < out; ++o) {
                double s = b[o];
                for (int i = 0; i < in; ++i)
                    s += double(x[r * in + i]) * w[o * in + i];
                QVERIFY(std::fabs(y[r * out + o] - s) <= 1e-5 * (1 + std::fabs(s)));
            }
        }
    }

    void denseIsBitIdenticalRunTwiceWithTheSameThreadCount() {
        const int rows = 300, in = 64, out = 96;
        const auto x = random_floats(rows * in, 4), w = random_floats(out * in, 5),
                   b = random_floats(out, 6), dy = random_floats(rows * out, 7);
        ThreadPool pool(2);
        std::vector<float> y1(rows * out), y2(rows * out);
        std::vector<float> dw1(out * in, 0.f), dw2(out * in, 0.f), dx1(rows * in, 0.f),
            dx2(rows * in, 0.f);
        ops::dense_forward(y1.data(), x.data(), w.data(), b.data(), rows, in, out, pool);
        ops::dense_forward(y2.data(), x.data(), w.data(), b.data(), rows, in, out, pool);
        QVERIFY(y1 == y2);
        ops::dense_backward(dx1.data(), dw1.data(), nullptr, dy.data(), x.data(), w.data(), rows,
                            in, out, pool);
        ops::dense_backward(dx2.data(), dw2.data(), nullptr, dy.data(), x.data(), w.data(), rows,
                            in, out, pool);
        QVERIFY(dw1 == dw2);
        QVERIFY(dx1 == dx2);
    }

    void dropoutMaskIsTheSameForOneAndTwoThreads() {
        const std::int64_t n = 100003;  // odd: the chunk boundary falls inside a Philox block
        const auto x = random_floats(n, 8);
        const ops::DropoutSite site{0.1f, 1234, 17, 3};
        std::vector<float> y1(n), y2(n);
        ThreadPool one(1), two(2);
        ops::dropout_forward(y1.data(), x.data(), n, site, one);
        ops::dropout_forward(y2.data(), x.data(), n, site, two);
        QVERIFY(y1 == y2);
        for (std::int64_t i = 0; i < n; i += 997)
            QCOMPARE(y1[i] != 0.f, ops::dropout_keeps(site, i));
    }

    // Data-parallel ranks: a tensor holding elements [offset, offset + n) of a larger one gets
    // exactly that slice of the larger tensor's mask (offsets not a multiple of the Philox block
    // of 4 included), which is what lets N ranks reproduce one process's dropout.
    void dropoutWithAnOffsetIsTheSliceOfTheWholeMask() {
        const std::int64_t n = 5003;
        const auto x = random_floats(n, 9);
        ops::DropoutSite whole{0.3f, 99, 5, 1};
        std::vector<float> y(n);
        ops::dropout_forward(y.data(), x.data(), n, whole);
        for (const std::int64_t first : {std::int64_t(0), std::int64_t(1), std::int64_t(2501)}) {
            ops::DropoutSite part = whole;
            part.offset = static_cast<std::uint64_t>(first);
            const std::int64_t m = n - first;
            std::vector<float> z(m), dz(m, 0.f), ones(m, 1.f);
            ops::dropout_forward(z.data(), x.data() + first, m, part);
            ops::dropout_backward(dz.data(), ones.data(), m, part);
            for (std::int64_t i = 0; i < m; ++i) {
                QCOMPARE(z[i], y[first + i]);
                QCOMPARE(dz[i] != 0.f, ops::dropout_keeps(whole, first + i));
            }
        }
    }

    void dropoutKeepsOneMinusPAndScalesByItsInverse() {
        const std::int64_t n = 100000;
        std::vector<float> x(n, 1.0f), y(n);
        const ops::DropoutSite site{0.1f, 42, 0, 0};
        ops::dropout_forward(y.data(), x.data(), n, site);
        std::int64_t kept = 0;
        for (float v : y) {
            if (v != 0.f) {
                ++kept;
                QCOMPARE(v, 1.0f / 0.9f);
            }
        }
        // binomial std of the kept fraction: √(p(1−p)/n) ≈ 9.5e-4; allow 5 of them
        QVERIFY(std::fabs(double(kept) / n - 0.9) < 5 * 9.5e-4);
    }

    void dropoutMasksDifferAcrossStepsAndStreams() {
        const ops::DropoutSite a{0.5f, 1, 0, 0}, next_step{0.5f, 1, 1, 0}, other{0.5f, 1, 0, 1};
        int same_step = 0, same_stream = 0;
        for (int i = 0; i < 1000; ++i) {
            same_step += ops::dropout_keeps(a, i) == ops::dropout_keeps(next_step, i);
            same_stream += ops::dropout_keeps(a, i) == ops::dropout_keeps(other, i);
        }
        // independent masks at p = 0.5 agree on about half the elements
        QVERIFY(same_step > 400 && same_step < 600);
        QVERIFY(same_stream > 400 && same_stream < 600);
    }

    void dropoutRejectsAProbabilityOfOne() {
        float x = 1, y = 0;
        QVERIFY_THROWS_EXCEPTION(Error, ops::dropout_forward(&y, &x, 1, {1.0f, 0, 0, 0}));
    }

    void layernormOutputHasZeroMeanAndUnitVariance() {
        const int rows = 6, d = 32;
        auto x = random_floats(rows * d, 9);
        for (auto& v : x)
            v = 5.0f + 3.0f * v;
        std::vector<double> xd(x.begin(), x.end()), out(rows * d), mean(rows), rstd(rows),
            w(d, 1.0), b(d, 0.0);
        ops::layernorm_forward(out.data(), mean.data(), rstd.data(), xd.data(), w.data(), b.data(),
                               rows, d, 1e-12);
        for (int r = 0; r < rows; ++r) {
            double m = 0, v = 0;
            for (int c = 0; c < d; ++c)
                m += out[r * d + c];
            m /= d;
            for (int c = 0; c < d; ++c)
                v += (out[r * d + c] - m) * (out[r * d + c] - m);
            v /= d;
            QVERIFY(std::fabs(m) < 1e-12);
            QVERIFY(std::fabs(v - 1.0) < 1e-10);
        }
    }

    void geluMatchesPyTorch() {
        // torch 1.13, float64: F.gelu(x) and F.gelu(x, approximate='tanh')
        const std::vector<double> x = {-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0};
        const std::vector<double> erf_ref = {
            -0.00404969409489031, -0.15865525393145702, -0.15426876936299344, 0.0,
            0.34573123063700656,  0.841344746068543,    1.9544997361036416,   3.9998733150326675};
        const std::vector<double> tanh_ref = {
            -0.0036373920817729943, -0.1588080093917233, -0.15428599017485606, 0.0,
            0.34571400982514394,    0.8411919906082768,  1.954597694087775,    3.9999297540518075};
        std::vector<double> y(x.size());
        ops::gelu_erf_forward(y.data(), x.data(), std::int64_t(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY(std::fabs(y[i] - erf_ref[i]) < 1e-14);
        ops::gelu_tanh_forward(y.data(), x.data(), std::int64_t(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY(std::fabs(y[i] - tanh_ref[i]) < 1e-14);
    }

    void floatActivationsAgreeWithTheDoublePathWithinFloatPrecision() {
        // The float paths use Eigen's vectorised tanh/erf/exp approximations; they must stay
        // within a few float ulps of the double results. ½x(1 + f) with f = tanh or erf near −1
        // cancels: its absolute error is ~½|x| times f's absolute error (a few ulp(1) = 1.2e-7),
        // hence the bound 4e-7 · (1 + |x| + |y|).
        const int n = 4001;
        std::vector<double> xd(n), yd(n);
        std::vector<float> xf(n), yf(n);
        for (int i = 0; i < n; ++i)
            xf[i] = static_cast<float>(-10.0 + 20.0 * i / (n - 1));
        for (int i = 0; i < n; ++i)
            xd[i] = xf[i];
        auto check = [&](auto fwd_f, auto fwd_d, const char* name) {
            fwd_f(yf.data(), xf.data(), std::int64_t(n), ThreadPool::serial());
            fwd_d(yd.data(), xd.data(), std::int64_t(n), ThreadPool::serial());
            for (int i = 0; i < n; ++i) {
                QVERIFY2(
                    std::fabs(yf[i] - yd[i]) <= 4e-7 * (1 + std::fabs(xd[i]) + std::fabs(yd[i])),
                    qPrintable(
                        QString("%1(%2): %3 vs %4").arg(name).arg(xd[i]).arg(yf[i]).arg(yd[i])));
            }
        };
        check(ops::gelu_tanh_forward<float>, ops::gelu_tanh_forward<double>, "gelu_tanh");
        check(ops::gelu_erf_forward<float>, ops::gelu_erf_forward<double>, "gelu_erf");
        check(ops::tanh_forward<float>, ops::tanh_forward<double>, "tanh");
        check(ops::sigmoid_forward<float>, ops::sigmoid_forward<double>, "sigmoid");
    }

    void attentionOverOneTokenReturnsItsValue() {
        const int B = 2, L = 3, d = 4, H = 2;
        const auto q = random_floats(B * L * d, 10), k = random_floats(B * L * d, 11),
                   v = random_floats(B * L * d, 12);
        const std::vector<std::int32_t> lengths = {1, 1};
        std::vector<float> out(B * L * d), probs(B * H * L * L);
        ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(),
                               lengths.data(), B, L, d, H, false);
        // every query (pads too) sees only token 0: out[b, l] = v[b, 0]
        for (int b = 0; b < B; ++b) {
            for (int l = 0; l < L; ++l) {
                for (int c = 0; c < d; ++c)
                    QCOMPARE(out[(b * L + l) * d + c], v[b * L * d + c]);
            }
        }
    }

    void attentionWithEqualScoresAveragesTheValidValues() {
        const int B = 1, L = 4, d = 2, H = 1;
        const std::vector<double> q(B * L * d, 0.0), k = {1, 2, 3, 4, 5, 6, 7, 8};
        const std::vector<double> v = {1, 10, 2, 20, 3, 30, 100, 1000};
        const std::vector<std::int32_t> lengths = {3};  // token 3 is a pad
        std::vector<double> out(B * L * d), probs(H * L * L);
        ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(),
                               lengths.data(), B, L, d, H, false);
        for (int l = 0; l < L; ++l) {
            QVERIFY(std::fabs(out[l * d] - 2.0) < 1e-14);       // (1 + 2 + 3) / 3
            QVERIFY(std::fabs(out[l * d + 1] - 20.0) < 1e-13);  // (10 + 20 + 30) / 3
            QCOMPARE(probs[l * L + 3], 0.0);                    // the pad key is never attended
        }
    }

    // Causal: query i averages the valid values at positions ≤ i (equal scores), the keys after it
    // get probability exactly 0.
    void causalAttentionAveragesTheValidValuesUpToEachPosition() {
        const int B = 1, L = 4, d = 2, H = 1;
        const std::vector<double> q(B * L * d, 0.0), k = {1, 2, 3, 4, 5, 6, 7, 8};
        const std::vector<double> v = {1, 10, 2, 20, 3, 30, 100, 1000};
        const std::vector<std::int32_t> lengths = {3};  // token 3 is a pad
        std::vector<double> out(B * L * d), probs(H * L * L);
        ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(),
                               lengths.data(), B, L, d, H, true);
        const double want[L] = {1.0, 1.5, 2.0, 2.0};  // the pad query sees keys 0..2
        for (int l = 0; l < L; ++l) {
            QVERIFY(std::fabs(out[l * d] - want[l]) < 1e-14);
            QVERIFY(std::fabs(out[l * d + 1] - 10 * want[l]) < 1e-13);
            for (int j = l + 1; j < L; ++j)
                QCOMPARE(probs[l * L + j], 0.0);
        }
    }

    void attentionRejectsWidthNotDivisibleByHeads() {
        float x[6] = {};
        float p[9] = {};
        QVERIFY_THROWS_EXCEPTION(Error,
                                 ops::attention_forward(x, p, x, x, x, nullptr, 1, 1, 6, 4, false));
    }

    void crossEntropyOfUniformLogitsIsLogV() {
        const int rows = 4, V = 7;
        std::vector<double> logits(rows * V, 0.3), lse(rows);
        const std::vector<std::int32_t> targets = {1, ops::kIgnoreIndex, 6, 0};
        const double loss =
            ops::cross_entropy_forward(lse.data(), logits.data(), targets.data(), rows, V);
        QVERIFY(std::fabs(loss - std::log(7.0)) < 1e-14);
        QCOMPARE(ops::cross_entropy_count(targets.data(), rows), std::int64_t(3));
    }

    void crossEntropyAveragesOnlyNonIgnoredRows() {
        // row 0: logits (0, ln 3) target 1 → −ln(3/4); row 1 ignored (would be huge)
        const std::vector<double> logits = {0.0, std::log(3.0), 50.0, -50.0};
        const std::vector<std::int32_t> targets = {1, ops::kIgnoreIndex};
        std::vector<double> lse(2);
        const double loss =
            ops::cross_entropy_forward(lse.data(), logits.data(), targets.data(), 2, 2);
        QVERIFY(std::fabs(loss + std::log(0.75)) < 1e-14);
    }

    void crossEntropyLossIsTheSameForOneAndTwoThreads() {
        const int rows = 301, V = 50;
        const auto logits = random_floats(rows * V, 13);
        std::vector<std::int32_t> targets(rows);
        for (int r = 0; r < rows; ++r)
            targets[r] = r % 7 == 0 ? ops::kIgnoreIndex : (r * 13) % V;
        std::vector<float> lse1(rows), lse2(rows);
        ThreadPool one(1), two(2);
        const double l1 =
            ops::cross_entropy_forward(lse1.data(), logits.data(), targets.data(), rows, V, one);
        const double l2 =
            ops::cross_entropy_forward(lse2.data(), logits.data(), targets.data(), rows, V, two);
        QCOMPARE(l1, l2);  // exact: the mean is one serial pass
    }

    void crossEntropyRejectsATargetOutsideTheVocabulary() {
        std::vector<float> logits(6), lse(2);
        const std::vector<std::int32_t> targets = {1, 3};
        QVERIFY_THROWS_EXCEPTION(
            Error, ops::cross_entropy_forward(lse.data(), logits.data(), targets.data(), 2, 3));
    }

    void embeddingCopiesTableRowsAndRejectsUnknownIds() {
        const std::vector<float> table = {0, 1, 10, 11, 20, 21};
        const std::vector<std::int32_t> ids = {2, 0, 2};
        std::vector<float> out(6);
        ops::embedding_forward(out.data(), ids.data(), table.data(), 3, 3, 2);
        QVERIFY((out == std::vector<float>{20, 21, 0, 1, 20, 21}));
        const std::vector<std::int32_t> bad = {3};
        QVERIFY_THROWS_EXCEPTION(
            Error, ops::embedding_forward(out.data(), bad.data(), table.data(), 1, 3, 2));
    }

    void flipReversesTheFullPaddedLength() {
        const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // B = 2, L = 3, d = 1
        std::vector<float> y(6);
        ops::flip_forward(y.data(), x.data(), 2, 3, 1);
        QVERIFY((y == std::vector<float>{3, 2, 1, 6, 5, 4}));
    }

    void meanPoolAveragesNonPadTokens() {
        const std::vector<float> x = {1, 2, 3, 100, 4, 5, 6, 7};  // B = 2, L = 4, d = 1
        const std::vector<std::int32_t> lengths = {3, 0};
        std::vector<float> out(2, -1.f);
        ops::mean_pool_forward(out.data(), x.data(), lengths.data(), 2, 4, 1);
        QCOMPARE(out[0], 2.0f);
        QCOMPARE(out[1], 0.0f);
    }

    void denseCostIsTwoBLInOutFlops() {
        const int B = 8, L = 512, in = 256, out = 768;
        QCOMPARE(ops::dense_cost(std::int64_t(B) * L, in, out).flops, 2.0 * B * L * in * out);
        const std::vector<std::int64_t> dims = {B * L, in, out};
        QCOMPARE(ops::op_cost("dense", dims).flops, 2.0 * B * L * in * out);
    }

    void opTableCoversEveryOpAndRejectsUnknownNames() {
        QCOMPARE(int(ops::op_defs().size()), ops::kOpCount);  // engine/ops/op.hpp's table
        const std::vector<std::int64_t> dims = {1, 2};
        QVERIFY_THROWS_EXCEPTION(Error, ops::op_cost("convolution", dims));
        QVERIFY_THROWS_EXCEPTION(Error, ops::op_cost("dense", dims));  // needs 3 dims
    }

    void opProfileAccumulatesCallsTimeAndCost() {
        ops::OpProfile profile;
        profile.record("dense_forward", 0.5, {100, 10});
        profile.record("dense_forward", 0.25, {100, 10});
        profile.record("gelu_forward", 1.0, {5, 1});
        const auto stats = profile.stats();
        QCOMPARE(int(stats.size()), 2);
        QCOMPARE(QString::fromStdString(stats[0].name), QString("gelu_forward"));  // slowest first
        QCOMPARE(stats[1].calls, std::int64_t(2));
        QCOMPARE(stats[1].seconds, 0.75);
        QCOMPARE(stats[1].flops, 200.0);
        QVERIFY(QString::fromStdString(profile.report()).contains("dense_forward"));
    }
};

QTEST_APPLESS_MAIN(TestOpForward)
#include "test_op_forward.moc"
