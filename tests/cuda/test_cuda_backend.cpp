// The CUDA backend against plain CPU loops: elementwise AXPY and the cuFFT causal convolution.
// Without a device the tests report SKIP with the runtime's reason (CTest shows them as skipped).
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include <cublas_v2.h>
#include <cufft.h>

#include "engine/backend/cuda/cuda_backend.hpp"

using namespace routescope;

// QSKIP returns from the calling function, so this is a macro used at the top of each test.
#define REQUIRE_CUDA_DEVICE()                                                             \
    do {                                                                                  \
        const auto info_ = cuda::query_devices();                                         \
        if (info_.count == 0)                                                             \
            QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + info_.reason))); \
    } while (0)

namespace {

// Random signals u and small kernels k, [channels, L] each, from `seed`.
struct ConvInputs {
    std::vector<float> u, k;
    ConvInputs(int L, int channels, unsigned seed) : u(L * channels), k(L * channels) {
        std::mt19937 gen(seed);
        std::normal_distribution<float> dist;
        for (auto& v : u)
            v = dist(gen);
        for (auto& v : k)
            v = dist(gen) * 0.1f;
    }
};

// ‖y − direct‖² / ‖direct‖² against the O(L²) causal sum, in double.
double normalised_error(const ConvInputs& in, const std::vector<float>& y, int L, int channels) {
    double err = 0, ref = 0;
    for (int c = 0; c < channels; ++c)
        for (int t = 0; t < L; ++t) {
            double s = 0;
            for (int j = 0; j <= t; ++j)
                s += double(in.k[c * L + j]) * in.u[c * L + t - j];
            err += (s - y[c * L + t]) * (s - y[c * L + t]);
            ref += s * s;
        }
    return err / ref;
}

}  // namespace

class TestCudaBackend : public QObject {
    Q_OBJECT

private slots:
    // cuBLAS and cuFFT are loaded by the backend's first call to them (engine/backend/cuda/
    // cuda_libraries.cpp), not at start: a process that never calls them does not map them (they
    // cost 0.4 s and 225 MB at start), and one that does gets the real functions. Runs without a
    // device too: the calls then return the libraries' own error statuses, which proves the
    // forwarding reached them. First, before anything here calls the libraries.
    void librariesLoadWhenFirstCalled() {
        auto mapped = [](const char* name) {
            QFile maps("/proc/self/maps");
            if (!maps.open(QIODevice::ReadOnly)) return false;
            return maps.readAll().contains(name);
        };
        QVERIFY2(!mapped("libcublas.so"), "cuBLAS is mapped before any call to it");
        QVERIFY2(!mapped("libcufft.so"), "cuFFT is mapped before any call to it");
        cublasHandle_t handle = nullptr;
        const cublasStatus_t status = cublasCreate(&handle);
        qInfo("cublasCreate: status %d", static_cast<int>(status));
        if (status == CUBLAS_STATUS_SUCCESS) QCOMPARE(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
        QVERIFY(mapped("libcublas.so"));
        QVERIFY(mapped("libcublasLt.so"));
        cufftHandle plan = 0;
        const cufftResult planned = cufftPlan1d(&plan, 16, CUFFT_R2C, 1);
        qInfo("cufftPlan1d: result %d", static_cast<int>(planned));
        if (planned == CUFFT_SUCCESS) QCOMPARE(cufftDestroy(plan), CUFFT_SUCCESS);
        QVERIFY(mapped("libcufft.so"));
    }

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
        const ConvInputs in(L, channels, 2);
        std::vector<float> y(L * channels);
        cuda::fft_causal_conv(in.u.data(), in.k.data(), y.data(), L, channels);
        const double e = normalised_error(in, y, L, channels);
        QVERIFY2(e < 1e-10, qPrintable(QString("normalised MSE %1").arg(e)));
    }

    // The timed variant (bench conv) repeats the transforms on resident data: same result as the
    // direct convolution, every phase timed; an odd length and one channel exercise the strided
    // copies into and out of the padded rows.
    void timedConvMatchesDirectConvolution() {
        REQUIRE_CUDA_DEVICE();
        for (const auto& [L, channels] : {std::pair{257, 1}, std::pair{1000, 3}}) {
            const ConvInputs in(L, channels, 3);
            std::vector<float> y(L * channels, -1.0f);
            const auto t =
                cuda::fft_causal_conv_timed(in.u.data(), in.k.data(), y.data(), L, channels, 3);
            QVERIFY(t.upload_ms > 0 && t.compute_ms > 0 && t.download_ms > 0);
            const double e = normalised_error(in, y, L, channels);
            QVERIFY2(e < 1e-10, qPrintable(QString("L=%1: normalised MSE %2").arg(L).arg(e)));
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaBackend)
#include "test_cuda_backend.moc"
