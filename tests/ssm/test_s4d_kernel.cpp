// The S4D kernel (MODELS.md, "The SSM of BiGS"):
//   A_n = min(A_re_n, −1e−4) + i·A_im_n,  Δ = exp(log_step),
//   K[l] = Re( Σ_n C_n · (exp(Δ·A_n) − 1) / A_n · exp(l·Δ·A_n) )
// against a plain std::complex evaluation written here, against numpy, and its gradient against
// central finite differences in double.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <sstream>
#include <vector>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/hippo.hpp"
#include "engine/ops/s4d_kernel.hpp"
#include "python_runner.hpp"

using namespace routescope;
using namespace routescope::ops;

namespace {

struct Params {
    int H, N, L;
    std::vector<double> A_re, A_im, C, log_step;
};

// Random parameters in the ranges training sees: A_re around −0.5 with a few modes above the clip
// (positive, and between −1e−4 and 0), A_im spread like HiPPO's low modes, Δ in [0.01, 1].
Params random_params(int H, int N, int L, unsigned seed) {
    Params p{H, N, L, {}, {}, {}, {}};
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> re(-1.0, -0.05), im(-12.0, 12.0), c(-1.0, 1.0),
        ls(std::log(0.01), 0.0);
    for (int i = 0; i < H * N; ++i) {
        p.A_re.push_back(re(gen));
        p.A_im.push_back(im(gen));
        p.C.push_back(c(gen));
        p.C.push_back(c(gen));
    }
    for (int h = 0; h < H; ++h)
        p.log_step.push_back(ls(gen));
    if (H * N > 3) {
        p.A_re[1] = 0.3;    // clipped: a positive real part
        p.A_re[3] = -5e-5;  // clipped: just above the clip value
    }
    return p;
}

// The formula of MODELS.md, literally, with std::complex<double>.
std::vector<double> reference_kernel(const Params& p) {
    using cd = std::complex<double>;
    std::vector<double> K(std::size_t(p.H) * p.L);
    for (int h = 0; h < p.H; ++h) {
        const double dt = std::exp(p.log_step[h]);
        for (int l = 0; l < p.L; ++l) {
            cd sum = 0;
            for (int n = 0; n < p.N; ++n) {
                const int i = h * p.N + n;
                const cd A(std::min(p.A_re[i], -1e-4), p.A_im[i]);
                const cd C(p.C[2 * i], p.C[2 * i + 1]);
                sum += C * (std::exp(dt * A) - 1.0) / A * std::exp(double(l) * dt * A);
            }
            K[std::size_t(h) * p.L + l] = sum.real();
        }
    }
    return K;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
    return std::vector<T>(v.begin(), v.end());
}

template <typename T>
std::vector<T> engine_kernel(const Params& p, ThreadPool& pool) {
    std::vector<T> K(std::size_t(p.H) * p.L), A_re = cast<T>(p.A_re), A_im = cast<T>(p.A_im),
                                              C = cast<T>(p.C), ls = cast<T>(p.log_step);
    s4d_kernel_forward(K.data(), A_re.data(), A_im.data(), C.data(), ls.data(), p.H, p.N, p.L,
                       pool);
    return K;
}

double max_abs(const std::vector<double>& v) {
    double m = 0;
    for (double x : v)
        m = std::max(m, std::fabs(x));
    return m;
}

}  // namespace

class TestS4dKernel : public QObject {
    Q_OBJECT

private slots:
    void forwardMatchesComplexLoopsInDoubleWithClipAndSeveralKernels() {
        const Params p = random_params(3, 16, 100, 1);
        const std::vector<double> ref = reference_kernel(p);
        const std::vector<double> K = engine_kernel<double>(p, ThreadPool::serial());
        const double scale = max_abs(ref);
        for (std::size_t i = 0; i < K.size(); ++i)
            QVERIFY2(std::fabs(K[i] - ref[i]) <= 1e-12 * scale,
                     qPrintable(QString("K[%1] = %2, reference %3").arg(i).arg(K[i]).arg(ref[i])));
    }

    // The float kernel of float parameters is the exact kernel rounded once to float, even where
    // the phase l·Δ·A_im is large (HiPPO N = 64, Δ = 1, L = 512: up to 6.7e5 rad).
    void floatKernelIsTheDoubleKernelOfTheFloatParametersRounded() {
        Params p{1, 64, 512, {}, {}, {}, {}};
        std::vector<float> A_re(64), A_im(64), C(128), D(1), ls(1);
        SsmInitConfig cfg;
        ssm_init(A_re.data(), A_im.data(), C.data(), D.data(), ls.data(), cfg, std::uint64_t(3));
        ls[0] = 0.0f;
        p.A_re.assign(A_re.begin(), A_re.end());
        p.A_im.assign(A_im.begin(), A_im.end());
        p.C.assign(C.begin(), C.end());
        p.log_step.assign(ls.begin(), ls.end());
        const std::vector<double> ref = reference_kernel(p);
        const std::vector<float> K = engine_kernel<float>(p, ThreadPool::serial());
        const double scale = max_abs(ref);
        for (std::size_t i = 0; i < K.size(); ++i)
            QVERIFY2(std::fabs(K[i] - ref[i]) <= 1e-6 * scale,
                     qPrintable(QString("K[%1] = %2, reference %3").arg(i).arg(K[i]).arg(ref[i])));
    }

    void clippedRealPartsGiveTheKernelOfMinusOneEMinusFour() {
        Params a = random_params(1, 6, 50, 2), b = a;
        a.A_re[0] = 0.7;
        a.A_re[2] = 0.0;
        b.A_re[0] = -1e-4;
        b.A_re[2] = -1e-4;
        QVERIFY(engine_kernel<double>(a, ThreadPool::serial()) ==
                engine_kernel<double>(b, ThreadPool::serial()));
    }

    void forwardMatchesNumpy() {
        const Params p = random_params(2, 8, 40, 3);
        std::ostringstream js;
        js.precision(17);
        auto arr = [&js](const char* name, const std::vector<double>& v) {
            js << '"' << name << "\": [";
            for (std::size_t i = 0; i < v.size(); ++i)
                js << (i ? ", " : "") << v[i];
            js << "], ";
        };
        arr("A_re", p.A_re);
        arr("A_im", p.A_im);
        arr("C", p.C);
        arr("log_step", p.log_step);
        const std::string input = "{" + js.str() + "\"H\": 2, \"N\": 8, \"L\": 40}";
        QString error;
        const std::vector<double> ref =
            test::run_python_reference("s4d_kernel_reference.py", {}, input, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const std::vector<double> K = engine_kernel<double>(p, ThreadPool::serial());
        QCOMPARE(ref.size(), K.size());
        const double scale = max_abs(ref);
        for (std::size_t i = 0; i < K.size(); ++i)
            QVERIFY2(std::fabs(K[i] - ref[i]) <= 1e-12 * scale,
                     qPrintable(QString("K[%1] = %2, numpy %3").arg(i).arg(K[i]).arg(ref[i])));
    }

    // loss = Σ w·K; every parameter against a central difference with step 1e−6. Truncation
    // (≈ step²) and round-off (≈ 1e−16·|loss|/step) stay far below the tolerance
    // |fd − analytic| ≤ 1e−7·max(1, |analytic|).
    void gradientMatchesCentralDifferencesForEveryParameter() {
        Params p = random_params(2, 5, 24, 4);
        const int H = p.H, N = p.N, L = p.L;
        std::mt19937 gen(5);
        std::normal_distribution<double> nd;
        std::vector<double> w(std::size_t(H) * L);
        for (auto& x : w)
            x = nd(gen);
        auto loss = [&](const Params& q) {
            const std::vector<double> K = engine_kernel<double>(q, ThreadPool::serial());
            double s = 0;
            for (std::size_t i = 0; i < K.size(); ++i)
                s += w[i] * K[i];
            return s;
        };
        // Accumulation: gradients start at 1 and must come back as 1 + gradient.
        std::vector<double> dA_re(H * N, 1.0), dA_im(H * N, 1.0), dC(2 * H * N, 1.0), dls(H, 1.0),
            scratch(s4d_kernel_scratch_size(H, N));
        s4d_kernel_backward(dA_re.data(), dA_im.data(), dC.data(), dls.data(), w.data(),
                            p.A_re.data(), p.A_im.data(), p.C.data(), p.log_step.data(), H, N, L,
                            scratch.data(), ThreadPool::serial());
        const double eps = 1e-6;
        auto check = [&](const char* name, std::vector<double> Params::*field,
                         const std::vector<double>& grad) {
            for (std::size_t i = 0; i < grad.size(); ++i) {
                Params plus = p, minus = p;
                (plus.*field)[i] += eps;
                (minus.*field)[i] -= eps;
                const double fd = (loss(plus) - loss(minus)) / (2 * eps);
                const double an = grad[i] - 1.0;
                QVERIFY2(std::fabs(fd - an) <= 1e-7 * std::max(1.0, std::fabs(an)),
                         qPrintable(QString("%1[%2]: analytic %3, finite difference %4")
                                        .arg(name)
                                        .arg(i)
                                        .arg(an, 0, 'g', 12)
                                        .arg(fd, 0, 'g', 12)));
            }
        };
        check("A_re", &Params::A_re, dA_re);
        check("A_im", &Params::A_im, dA_im);
        check("C", &Params::C, dC);
        check("log_step", &Params::log_step, dls);
        // Clipped modes get exactly no gradient to A_re.
        QCOMPARE(dA_re[1], 1.0);
        QCOMPARE(dA_re[3], 1.0);
    }

    void resultsAreBitIdenticalWithOneAndTwoThreads() {
        const Params p = random_params(3, 64, 300, 6);
        ThreadPool one(1), two(2);
        const std::vector<float> K1 = engine_kernel<float>(p, one),
                                 K2 = engine_kernel<float>(p, two);
        QVERIFY(K1 == K2);
        const int H = p.H, N = p.N, L = p.L;
        auto grads = [&](ThreadPool& pool) {
            std::vector<float> A_re = cast<float>(p.A_re), A_im = cast<float>(p.A_im),
                               C = cast<float>(p.C), ls = cast<float>(p.log_step);
            std::vector<float> g(std::size_t(4) * H * N + H, 0.0f);
            std::vector<double> scratch(s4d_kernel_scratch_size(H, N));
            s4d_kernel_backward(g.data(), g.data() + H * N, g.data() + 2 * H * N,
                                g.data() + 4 * H * N, K1.data(), A_re.data(), A_im.data(), C.data(),
                                ls.data(), H, N, L, scratch.data(), pool);
            return g;
        };
        QVERIFY(grads(one) == grads(two));
    }

    void costCountsEveryModeAndPosition() {
        const OpCost c = s4d_kernel_cost(1, 64, 512, sizeof(float));
        QVERIFY(c.flops >= 64.0 * 512 * 7);
        QCOMPARE(c.bytes, 4.0 * (64 * 4 + 1 + 512));
    }
};

QTEST_APPLESS_MAIN(TestS4dKernel)
#include "test_s4d_kernel.moc"
