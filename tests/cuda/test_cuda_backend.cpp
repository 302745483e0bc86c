// The CUDA backend against plain CPU loops: elementwise AXPY and the cuFFT causal convolution.
// Without a device the tests report SKIP with the runtime's reason (CTest shows them as skipped).
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "engine/backend/cuda/cuda_backend.hpp"

using namespace routescope;

// QSKIP returns from the calling function, so this is a macro used at the top of each test.
#define REQUIRE_CUDA_DEVICE()                                                             \
    do {                                                                                  \
        const auto info_ = cuda::query_devices();                                         \
        if (info_.count == 0)                                                             \
            QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + info_.reason))); \
    } while (0)

class TestCudaBackend : public QObject {
    Q_OBJECT

private slots:
    void queryNeverThrows() {
        const auto info = cuda::query_devices();
        QVERIFY(info.count >= 0);
        if (info.count == 0) QVERIFY(!info.reason.empty());
    }

    void axpyMatchesLoop() {
        REQUIRE_CUDA_DEVICE();
        std::vector<float> x(10007), y(10007), expected(10007);
        std::mt19937 gen(1);
        std::normal_distribution<float> dist;
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = dist(gen);
            y[i] = dist(gen);
            expected[i] = y[i] + 0.75f * x[i];
        }
        cuda::axpy(0.75f, x.data(), y.data(), x.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            QVERIFY(std::fabs(y[i] - expected[i]) <= 1e-6f * (1 + std::fabs(expected[i])));
    }

    void fftConvMatchesDirectConvolution() {
        REQUIRE_CUDA_DEVICE();
        const int L = 300, channels = 5;
        std::vector<float> u(L * channels), k(L * channels), y(L * channels);
        std::mt19937 gen(2);
        std::normal_distribution<float> dist;
        for (auto& v : u)
            v = dist(gen);
        for (auto& v : k)
            v = dist(gen) * 0.1f;
        cuda::fft_causal_conv(u.data(), k.data(), y.data(), L, channels);
        double err = 0, ref = 0;
        for (int c = 0; c < channels; ++c)
            for (int t = 0; t < L; ++t) {
                double s = 0;
                for (int j = 0; j <= t; ++j)
                    s += double(k[c * L + j]) * u[c * L + t - j];
                err += (s - y[c * L + t]) * (s - y[c * L + t]);
                ref += s * s;
            }
        QVERIFY2(err / ref < 1e-10, qPrintable(QString("normalised MSE %1").arg(err / ref)));
    }

    // The timed variant (bench conv) repeats the transforms on resident data: same result as the
    // direct convolution, every phase timed; an odd length and one channel exercise the strided
    // copies into and out of the padded rows.
    void timedConvMatchesDirectConvolution() {
        REQUIRE_CUDA_DEVICE();
        for (const auto& [L, channels] : {std::pair{257, 1}, std::pair{1000, 3}}) {
            std::vector<float> u(L * channels), k(L * channels), y(L * channels, -1.0f);
            std::mt19937 gen(3);
            std::normal_distribution<float> dist;
            for (auto& v : u)
                v = dist(gen);
            for (auto& v : k)
                v = dist(gen) * 0.1f;
            const auto t =
                cuda::fft_causal_conv_timed(u.data(), k.data(), y.data(), L, channels, 3);
            QVERIFY(t.upload_ms > 0 && t.compute_ms > 0 && t.download_ms > 0);
            double err = 0, ref = 0;
            for (int c = 0; c < channels; ++c)
                for (int s = 0; s < L; ++s) {
                    double sum = 0;
                    for (int j = 0; j <= s; ++j)
                        sum += double(k[c * L + j]) * u[c * L + s - j];
                    err += (sum - y[c * L + s]) * (sum - y[c * L + s]);
                    ref += sum * sum;
                }
            QVERIFY2(err / ref < 1e-10,
                     qPrintable(QString("L=%1: normalised MSE %2").arg(L).arg(err / ref)));
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
