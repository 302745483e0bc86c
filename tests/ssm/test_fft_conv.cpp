// The causal long convolution with the D skip (MODELS.md, "The SSM of BiGS"):
//   y = irfft( rfft(pad(u, 2L)) · rfft(pad(K, 2L)) )[0:L] + D·u
// i.e. y[b, t, c] = Σ_{j ≤ t} K[g][j]·u[b, t−j, c] + D[g]·u[b, t, c] with g = c / (d/H), checked
// against that O(L²) sum, and its backward against central finite differences in double.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/fft_conv.hpp"

using namespace routescope;
using namespace routescope::ops;

namespace {

struct Shape {
    int B, L, d, H;
};

struct Data {
    std::vector<double> u, K, D;
};

Data make_data(const Shape& s, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> nd;
    Data x;
    x.u.resize(std::size_t(s.B) * s.L * s.d);
    x.K.resize(std::size_t(s.H) * s.L);
    x.D.resize(s.H);
    for (auto& v : x.u)
        v = nd(gen);
    // A decaying kernel like an SSM's, so late taps are small but not zero.
    for (int h = 0; h < s.H; ++h)
        for (int l = 0; l < s.L; ++l)
            x.K[std::size_t(h) * s.L + l] = nd(gen) * std::exp(-0.02 * l);
    for (auto& v : x.D)
        v = nd(gen);
    return x;
}

std::vector<double> direct_convolution(const Shape& s, const Data& x) {
    const int gs = s.d / s.H;
    std::vector<double> y(x.u.size());
    for (int b = 0; b < s.B; ++b)
        for (int t = 0; t < s.L; ++t)
            for (int c = 0; c < s.d; ++c) {
                const int g = c / gs;
                auto at = [&](int tt) { return x.u[(std::size_t(b) * s.L + tt) * s.d + c]; };
                double acc = x.D[g] * at(t);
                for (int j = 0; j <= t; ++j)
                    acc += x.K[std::size_t(g) * s.L + j] * at(t - j);
                y[(std::size_t(b) * s.L + t) * s.d + c] = acc;
            }
    return y;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
    return std::vector<T>(v.begin(), v.end());
}

template <typename T>
std::vector<T> engine_forward(const Shape& s, const Data& x, ThreadPool& pool, int ws_threads) {
    FftConvWorkspace<T> ws(s.B, s.L, s.d, s.H, ws_threads);
    std::vector<T> u = cast<T>(x.u), K = cast<T>(x.K), D = cast<T>(x.D), y(u.size());
    fft_conv_forward(y.data(), u.data(), K.data(), D.data(), s.B, s.L, s.d, s.H, ws, pool);
    return y;
}

// du, dK, dD concatenated, accumulated onto `start`.
template <typename T>
std::vector<T> engine_backward(const Shape& s, const Data& x, const std::vector<double>& dy,
                               ThreadPool& pool, int ws_threads, T start = T(0)) {
    FftConvWorkspace<T> ws(s.B, s.L, s.d, s.H, ws_threads);
    std::vector<T> u = cast<T>(x.u), K = cast<T>(x.K), D = cast<T>(x.D), g = cast<T>(dy);
    std::vector<T> out(u.size() + K.size() + D.size(), start);
    T* du = out.data();
    T* dK = du + u.size();
    T* dD = dK + K.size();
    fft_conv_backward(du, dK, dD, g.data(), u.data(), K.data(), D.data(), s.B, s.L, s.d, s.H, ws,
                      pool);
    return out;
}

template <typename T>
void check_forward(const Shape& s, double tol) {
    const Data x = make_data(s, 11);
    const std::vector<double> ref = direct_convolution(s, x);
    const std::vector<T> y = engine_forward<T>(s, x, ThreadPool::serial(), 1);
    double scale = 0;
    for (double v : ref)
        scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < y.size(); ++i)
        QVERIFY2(std::fabs(y[i] - ref[i]) <= tol * scale,
                 qPrintable(QString("B=%1 L=%2 d=%3 H=%4: y[%5] = %6, direct %7")
                                .arg(s.B)
                                .arg(s.L)
                                .arg(s.d)
                                .arg(s.H)
                                .arg(i)
                                .arg(double(y[i]), 0, 'g', 10)
                                .arg(ref[i], 0, 'g', 10)));
}

// L not a power of two; d = 40 with H = 5 has groups of 8 that the 32-channel blocks cut through,
// and a narrower last block; H = d gives every channel its own kernel.
const Shape kForwardShapes[] = {
    {2, 37, 5, 1}, {3, 100, 40, 5}, {1, 300, 64, 2}, {2, 33, 12, 12}, {1, 1, 3, 1}};

}  // namespace

class TestFftConv : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesDirectConvolutionInDouble() {
        for (const Shape& s : kForwardShapes)
            check_forward<double>(s, 1e-12);
    }

    // float FFTs of size 2L ≤ 600: errors of a few float ulps of the largest output.
    void forwardMatchesDirectConvolutionInFloat() {
        for (const Shape& s : kForwardShapes)
            check_forward<float>(s, 2e-6);
    }

    // loss = Σ w·y is bilinear in (u, K) and (u, D), so a central difference is exact up to
    // round-off: |fd − analytic| ≤ 1e−8·max(1, |analytic|).
    void gradientMatchesCentralDifferencesForUKAndD() {
        for (const Shape& s : {Shape{2, 9, 6, 3}, Shape{2, 11, 4, 1}}) {
            Data x = make_data(s, 21);
            std::mt19937 gen(22);
            std::normal_distribution<double> nd;
            std::vector<double> w(x.u.size());
            for (auto& v : w)
                v = nd(gen);
            auto loss = [&](const Data& q) {
                const std::vector<double> y = engine_forward<double>(s, q, ThreadPool::serial(), 1);
                double sum = 0;
                for (std::size_t i = 0; i < y.size(); ++i)
                    sum += w[i] * y[i];
                return sum;
            };
            // Accumulation: gradients start at 1 and come back as 1 + gradient.
            const std::vector<double> g =
                engine_backward<double>(s, x, w, ThreadPool::serial(), 1, 1.0);
            const double eps = 1e-5;
            std::size_t offset = 0;
            for (auto [name, field] :
                 {std::pair{"u", &Data::u}, std::pair{"K", &Data::K}, std::pair{"D", &Data::D}}) {
                for (std::size_t i = 0; i < (x.*field).size(); ++i) {
                    Data plus = x, minus = x;
                    (plus.*field)[i] += eps;
                    (minus.*field)[i] -= eps;
                    const double fd = (loss(plus) - loss(minus)) / (2 * eps);
                    const double an = g[offset + i] - 1.0;
                    QVERIFY2(std::fabs(fd - an) <= 1e-8 * std::max(1.0, std::fabs(an)),
                             qPrintable(QString("H=%1 d%2[%3]: analytic %4, finite difference %5")
                                            .arg(s.H)
                                            .arg(name)
                                            .arg(i)
                                            .arg(an, 0, 'g', 12)
                                            .arg(fd, 0, 'g', 12)));
                }
                offset += (x.*field).size();
            }
        }
    }

    // The float backward is the double backward rounded: dK sums B·(d/H)·L products.
    void floatBackwardMatchesDoubleBackward() {
        const Shape s{3, 100, 40, 5};
        const Data x = make_data(s, 31);
        const Data g = make_data(s, 32);
        const std::vector<double> ref = engine_backward<double>(s, x, g.u, ThreadPool::serial(), 1);
        const std::vector<float> got = engine_backward<float>(s, x, g.u, ThreadPool::serial(), 1);
        const std::size_t nu = x.u.size(), nk = x.K.size();
        auto check = [&](std::size_t begin, std::size_t end, const char* name) {
            double scale = 0;
            for (std::size_t i = begin; i < end; ++i)
                scale = std::max(scale, std::fabs(ref[i]));
            for (std::size_t i = begin; i < end; ++i)
                QVERIFY2(std::fabs(got[i] - ref[i]) <= 2e-6 * scale,
                         qPrintable(QString("%1[%2]: float %3, double %4")
                                        .arg(name)
                                        .arg(i - begin)
                                        .arg(got[i])
                                        .arg(ref[i])));
        };
        check(0, nu, "du");
        check(nu, nu + nk, "dK");
        check(nu + nk, ref.size(), "dD");
    }

    void resultsAreBitIdenticalWithOneAndTwoThreads() {
        const Shape s{3, 64, 72, 3};
        const Data x = make_data(s, 41), g = make_data(s, 42);
        ThreadPool one(1), two(2);
        QVERIFY(engine_forward<float>(s, x, one, 1) == engine_forward<float>(s, x, two, 2));
        QVERIFY(engine_backward<float>(s, x, g.u, one, 1) ==
                engine_backward<float>(s, x, g.u, two, 2));
    }

    void badShapesAreErrorsNamingTheShape() {
        QVERIFY_THROWS_EXCEPTION(ConfigError, FftConvWorkspace<float>(1, 8, 10, 3, 1));
        QVERIFY_THROWS_EXCEPTION(Error, FftConvWorkspace<float>(1, 0, 8, 1, 1));
        FftConvWorkspace<float> ws(1, 8, 4, 1, 1);
        std::vector<float> u(64), y(64), K(16), D(2);
        try {
            fft_conv_forward(y.data(), u.data(), K.data(), D.data(), 2, 8, 4, 1, ws,
                             ThreadPool::serial());
            QFAIL("no exception");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("workspace made for 1, 8, 4, 1"), e.what());
        }
        ThreadPool two(2);
        QVERIFY_THROWS_EXCEPTION(
            Error, fft_conv_forward(y.data(), u.data(), K.data(), D.data(), 1, 8, 4, 1, ws, two));
    }
};

QTEST_APPLESS_MAIN(TestFftConv)
#include "test_fft_conv.moc"
