// The scan of Birdie's gated linear recurrence (engine/ops/linear_scan.hpp) against a plain loop
// written here from MODELS.md's formulas, in double precision:
//
//   forward  h_t = f_t ⊙ h_{t−1} + x_t        reverse  h_t = f_t ⊙ h_{t+1} + x_t
//
// with the carry cut (f_t treated as 0) where keep_t = 0. Covered: both directions, resets,
// partial channel ranges, L = 16384 in float and double, long runs with f near 0 and near 1
// (nothing may underflow or drift), the backward by central finite differences on small shapes
// and, at L = 16384, by identities that need no second implementation of the backward: h is
// linear in x, so ⟨dh, h⟩ = ⟨dx, x⟩ exactly; and ⟨df, δ⟩ is a directional finite difference.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/linear_scan.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using ops::ScanDirection;
using Vec = std::vector<double>;

namespace {

// The recurrence exactly as MODELS.md writes it, one channel at a time, positions in scan order.
Vec plain_loop(const Vec& f, const Vec& x, const std::vector<std::int32_t>& keep, int B, int L,
               int N, int c0, int c1, ScanDirection dir, const Vec& untouched) {
    Vec h = untouched;
    for (int b = 0; b < B; ++b)
        for (int c = c0; c < c1; ++c) {
            double state = 0;  // h_{−1} = 0 (forward), h_L = 0 (reverse)
            for (int s = 0; s < L; ++s) {
                const int t = dir == ScanDirection::forward ? s : L - 1 - s;
                const std::size_t i = (std::size_t(b) * L + t) * N + c;
                const bool cut = !keep.empty() && keep[std::size_t(b) * L + t] == 0;
                state = (cut ? 0.0 : f[i] * state) + x[i];
                h[i] = state;
            }
        }
    return h;
}

template <class T>
std::vector<T> cast(const Vec& v) {
    return std::vector<T>(v.begin(), v.end());
}

Vec uniform(std::size_t n, double lo, double hi, std::mt19937& gen) {
    std::uniform_real_distribution<double> d(lo, hi);
    Vec v(n);
    for (auto& e : v)
        e = d(gen);
    return v;
}

// keep [B, L] with roughly one cut every `period` positions (never at t = 0, where it is moot).
std::vector<std::int32_t> random_keep(int B, int L, int period, std::mt19937& gen) {
    std::vector<std::int32_t> k(std::size_t(B) * L, 1);
    for (auto& e : k)
        if (gen() % period == 0) e = 0;
    return k;
}

double max_abs(const Vec& v) {
    double m = 0;
    for (double e : v)
        m = std::max(m, std::fabs(e));
    return m;
}

template <class T>
double max_diff(const std::vector<T>& a, const Vec& b) {
    double m = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
        m = std::max(m, std::fabs(double(a[i]) - b[i]));
    return m;
}

}  // namespace

class TestLinearScan : public QObject {
    Q_OBJECT

    std::mt19937 gen{20261122};
    ThreadPool pool2{2};

private slots:
    void matchesThePlainLoopInBothDirectionsWithResets_data() {
        QTest::addColumn<bool>("reverse");
        QTest::addColumn<bool>("resets");
        QTest::newRow("forward") << false << false;
        QTest::newRow("reverse") << true << false;
        QTest::newRow("forward, resets") << false << true;
        QTest::newRow("reverse, resets") << true << true;
    }
    void matchesThePlainLoopInBothDirectionsWithResets() {
        QFETCH(bool, reverse);
        QFETCH(bool, resets);
        const auto dir = reverse ? ScanDirection::reverse : ScanDirection::forward;
        // N = 150 spans three channel blocks of the op; [5, 140) leaves channels on both sides.
        const int B = 3, L = 40, N = 150, c0 = 5, c1 = 140;
        const Vec f = uniform(std::size_t(B) * L * N, 0.0, 1.0, gen);
        const Vec x = random_vector(f.size(), gen);
        const auto keep = resets ? random_keep(B, L, 5, gen) : std::vector<std::int32_t>{};
        const Vec sentinel(f.size(), 7.0);  // channels outside [c0, c1) must keep it
        const Vec ref = plain_loop(f, x, keep, B, L, N, c0, c1, dir, sentinel);
        Vec h = sentinel;
        ops::linear_scan_forward(h.data(), f.data(), x.data(), resets ? keep.data() : nullptr, B, L,
                                 N, c0, c1, dir, pool2);
        QVERIFY(max_diff(h, ref) <= 1e-14 * max_abs(ref));
    }

    // A cut position restarts the state: h_t = x_t there, and nothing before it is seen.
    void aResetRestartsTheState() {
        const int L = 6, N = 1;
        const Vec f{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, x{1, 2, 3, 4, 5, 6};
        const std::vector<std::int32_t> keep{1, 1, 1, 0, 1, 1};
        Vec h(L);
        ops::linear_scan_forward(h.data(), f.data(), x.data(), keep.data(), 1, L, N, 0, 1,
                                 ScanDirection::forward);
        // Closed forms: 1; 0.5 + 2; 1.25 + 3; cut → 4; 2 + 5; 3.5 + 6.
        QCOMPARE(h, (Vec{1, 2.5, 4.25, 4, 7, 9.5}));
        ops::linear_scan_forward(h.data(), f.data(), x.data(), keep.data(), 1, L, N, 0, 1,
                                 ScanDirection::reverse);
        // Right to left the carry into t comes from t + 1: h_5 = 6; h_4 = 3 + 5 = 8; the cut at
        // t = 3 gives h_3 = x_3 = 4; h_2 = 2 + 3 = 5; h_1 = 2.5 + 2 = 4.5; h_0 = 2.25 + 1.
        QCOMPARE(h, (Vec{3.25, 4.5, 5, 4, 8, 6}));
    }

    // L = 16384: the float op stays within float rounding of the double loop, the double op
    // within double rounding, for f spread over (0, 1) and for f ≈ 1 − 1e-4 (memory ≈ 10⁴ steps,
    // the state grows to ~10⁴·|x|).
    void longSequenceMatchesTheDoubleLoop_data() {
        QTest::addColumn<double>("f_lo");
        QTest::addColumn<double>("f_hi");
        QTest::newRow("f in (0, 1)") << 0.0 << 1.0;
        QTest::newRow("f near 1") << 1.0 - 2e-4 << 1.0 - 1e-5;
        QTest::newRow("f near 0") << 1e-30 << 1e-20;
    }
    void longSequenceMatchesTheDoubleLoop() {
        QFETCH(double, f_lo);
        QFETCH(double, f_hi);
        const int B = 2, L = 16384, N = 8;
        const Vec f = uniform(std::size_t(B) * L * N, f_lo, f_hi, gen);
        const Vec x = random_vector(f.size(), gen);
        const auto keep = random_keep(B, L, 4096, gen);
        for (auto dir : {ScanDirection::forward, ScanDirection::reverse}) {
            const Vec ref = plain_loop(f, x, keep, B, L, N, 0, N, dir, Vec(f.size(), 0.0));
            const double scale = max_abs(ref);
            Vec hd(f.size());
            ops::linear_scan_forward(hd.data(), f.data(), x.data(), keep.data(), B, L, N, 0, N, dir,
                                     pool2);
            QVERIFY(max_diff(hd, ref) <= 1e-12 * scale);
            const auto ff = cast<float>(f), xf = cast<float>(x);
            std::vector<float> hf(f.size());
            ops::linear_scan_forward(hf.data(), ff.data(), xf.data(), keep.data(), B, L, N, 0, N,
                                     dir, pool2);
            // Inputs rounded to float (relative 6e-8 each) and float accumulation: with f ≈ 1 the
            // state is a sum of ~1/(1−f) terms, so allow 1e-4 of the state's scale.
            const double err = max_diff(hf, ref);
            qDebug(
                "L = %d, f in [%g, %g], %s: float op vs double loop max |Δ| %.2e of max |h| %.2e",
                L, f_lo, f_hi, dir == ScanDirection::forward ? "forward" : "reverse", err, scale);
            QVERIFY(std::isfinite(err));
            QVERIFY(err <= 1e-4 * scale);
        }
    }

    // Backward against central finite differences (double), both directions, with resets, on
    // a partial channel range; the prefilled buffers also prove the backward accumulates.
    void backwardMatchesFiniteDifferences_data() {
        QTest::addColumn<bool>("reverse");
        QTest::addColumn<bool>("resets");
        QTest::newRow("forward") << false << false;
        QTest::newRow("reverse") << true << false;
        QTest::newRow("forward, resets") << false << true;
        QTest::newRow("reverse, resets") << true << true;
    }
    void backwardMatchesFiniteDifferences() {
        QFETCH(bool, reverse);
        QFETCH(bool, resets);
        const auto dir = reverse ? ScanDirection::reverse : ScanDirection::forward;
        const int B = 2, L = 7, N = 5, c0 = 1, c1 = 4;
        Vec f = uniform(std::size_t(B) * L * N, 0.05, 0.95, gen);
        Vec x = random_vector(f.size(), gen);
        const Vec r = random_vector(f.size(), gen);
        std::vector<std::int32_t> keep;
        if (resets) keep = {1, 1, 0, 1, 1, 0, 1, /**/ 1, 0, 1, 1, 1, 1, 0};
        const std::int32_t* k = resets ? keep.data() : nullptr;
        Vec h(f.size());
        auto loss = [&] {  // ℓ = Σ r ⊙ h over the scanned channels
            ops::linear_scan_forward(h.data(), f.data(), x.data(), k, B, L, N, c0, c1, dir, pool2);
            double s = 0;
            for (int row = 0; row < B * L; ++row)
                for (int c = c0; c < c1; ++c)
                    s += r[std::size_t(row) * N + c] * h[std::size_t(row) * N + c];
            return s;
        };
        loss();
        Vec df = prefilled(f.size()), dx = prefilled(f.size());
        ops::linear_scan_backward(df.data(), dx.data(), r.data(), h.data(), f.data(), k, B, L, N,
                                  c0, c1, dir, pool2);
        std::string where;
        const double ef = fd_max_error(f, df, loss, &where);
        QVERIFY2(ef <= kFdTolerance,
                 qPrintable(QString("df: %1 at %2").arg(ef).arg(where.c_str())));
        const double ex = fd_max_error(x, dx, loss, &where);
        QVERIFY2(ex <= kFdTolerance,
                 qPrintable(QString("dx: %1 at %2").arg(ex).arg(where.c_str())));
    }

    // L = 16384 backward, f near 0 and near 1: finite, and exact by two identities.
    void longSequenceBackwardHoldsItsIdentities_data() {
        QTest::addColumn<double>("f_lo");
        QTest::addColumn<double>("f_hi");
        QTest::newRow("f near 1") << 1.0 - 2e-4 << 1.0 - 1e-5;
        QTest::newRow("f near 0") << 1e-30 << 1e-20;
    }
    void longSequenceBackwardHoldsItsIdentities() {
        QFETCH(double, f_lo);
        QFETCH(double, f_hi);
        const int B = 1, L = 16384, N = 4;
        Vec f = uniform(std::size_t(B) * L * N, f_lo, f_hi, gen);
        const Vec x = random_vector(f.size(), gen), dh = random_vector(f.size(), gen);
        const auto keep = random_keep(B, L, 4096, gen);
        for (auto dir : {ScanDirection::forward, ScanDirection::reverse}) {
            Vec h(f.size()), df(f.size(), 0.0), dx(f.size(), 0.0);
            ops::linear_scan_forward(h.data(), f.data(), x.data(), keep.data(), B, L, N, 0, N, dir);
            ops::linear_scan_backward(df.data(), dx.data(), dh.data(), h.data(), f.data(),
                                      keep.data(), B, L, N, 0, N, dir);
            QVERIFY(std::isfinite(max_abs(df)) && std::isfinite(max_abs(dx)));
            // h = M x with M fixed by f: ⟨dh, M x⟩ = ⟨Mᵀ dh, x⟩.
            const double lhs = dot(dh, h), rhs = dot(dx, x);
            QVERIFY2(std::fabs(lhs - rhs) <= 1e-10 * (std::fabs(lhs) + max_abs(h)),
                     qPrintable(QString("<dh, h> %1 vs <dx, x> %2").arg(lhs).arg(rhs)));
            // ⟨df, δ⟩ against (ℓ(f + εδ) − ℓ(f − εδ)) / 2ε, ℓ = ⟨dh, h(f)⟩, a polynomial in f
            // (the recurrence is defined for any real f, so f − εδ < 0 near 0 is fine). ε = 2e-8
            // keeps the truncation ε²·ℓ''' small even with ~10⁴-step chains at f ≈ 1, and the
            // rounding ~1e-16·|ℓ|/ε ≈ 5e-9·|ℓ|.
            const Vec delta = random_vector(f.size(), gen);
            const double eps = 2e-8;
            auto loss_at = [&](double sign) {
                Vec fs = f, hs(f.size());
                for (std::size_t i = 0; i < fs.size(); ++i)
                    fs[i] += sign * eps * delta[i];
                ops::linear_scan_forward(hs.data(), fs.data(), x.data(), keep.data(), B, L, N, 0, N,
                                         dir);
                return dot(dh, hs);
            };
            const double numeric = (loss_at(1) - loss_at(-1)) / (2 * eps);
            const double analytic = dot(df, delta);
            QVERIFY2(std::fabs(numeric - analytic) <= 1e-5 * std::fabs(analytic) + 1e-9,
                     qPrintable(QString("<df, d> %1 vs finite difference %2")
                                    .arg(analytic, 0, 'g', 12)
                                    .arg(numeric, 0, 'g', 12)));
        }
    }

    // Static partitioning: two threads give bit-identical results to one.
    void threadsDoNotChangeTheResult() {
        const int B = 3, L = 50, N = 130;
        const auto f = cast<float>(uniform(std::size_t(B) * L * N, 0, 1, gen));
        const auto x = cast<float>(random_vector(f.size(), gen));
        const auto dh = cast<float>(random_vector(f.size(), gen));
        const auto keep = random_keep(B, L, 7, gen);
        auto run = [&](ThreadPool& pool) {
            std::vector<float> h(f.size()), df(f.size()), dx(f.size());
            ops::linear_scan_forward(h.data(), f.data(), x.data(), keep.data(), B, L, N, 0, N / 2,
                                     ScanDirection::forward, pool);
            ops::linear_scan_forward(h.data(), f.data(), x.data(), keep.data(), B, L, N, N / 2, N,
                                     ScanDirection::reverse, pool);
            ops::linear_scan_backward(df.data(), dx.data(), dh.data(), h.data(), f.data(),
                                      keep.data(), B, L, N, 0, N / 2, ScanDirection::forward, pool);
            ops::linear_scan_backward(df.data(), dx.data(), dh.data(), h.data(), f.data(),
                                      keep.data(), B, L, N, N / 2, N, ScanDirection::reverse, pool);
            h.insert(h.end(), df.begin(), df.end());
            h.insert(h.end(), dx.begin(), dx.end());
            return h;
        };
        QVERIFY(run(ThreadPool::serial()) == run(pool2));
    }
};

QTEST_GUILESS_MAIN(TestLinearScan)
#include "test_linear_scan.moc"
