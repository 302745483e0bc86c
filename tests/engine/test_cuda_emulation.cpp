// The CUDA backend's code on the host (engine/backend/emulated_cuda_backend.hpp: its op table and
// flat-buffer operations through HostExec) against the CPU backend: every op spec, tiny and odd
// sizes, every output and input gradient within the op's tolerance (op_specs.hpp, the table the GPU
// suite uses); AdamW, Σx², scaling and the read-outs against the CPU backend. What this cannot show
// (the launches, cuBLAS, cuFFT, memory errors) is test_backend_conformance's on a GPU.
// Reduced precision (train.precision tf32 | bf16-mixed): the rounding of the GEMMs' inputs against
// Eigen's bfloat16 and a frexp/nearbyint computation, and the GEMM ops within their per-precision
// tolerance (op_tolerance(op, p)) but not at fp32's agreement.
#include <QtTest>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/emulated_cuda_backend.hpp"
#include "engine/backend/op_specs.hpp"
#include "op_spec_rows.hpp"

using namespace routescope;

namespace {
/// A host vector's copy in a backend's device memory, released at the end of the scope.
struct DeviceCopy {
    template <class T>
    DeviceCopy(Backend& b, const std::vector<T>& v) : backend(b), bytes(v.size() * sizeof(T)) {
        p = b.allocate(bytes);
        b.copy(p, v.data(), bytes, Backend::CopyKind::host_to_device);
    }
    ~DeviceCopy() { backend.release(p); }
    DeviceCopy(const DeviceCopy&) = delete;
    DeviceCopy& operator=(const DeviceCopy&) = delete;
    float* f() const { return static_cast<float*>(p); }
    template <class T>
    std::vector<T> back() const {
        std::vector<T> v(bytes / sizeof(T));
        backend.copy(v.data(), p, bytes, Backend::CopyKind::device_to_host);
        return v;
    }
    Backend& backend;
    std::size_t bytes;
    void* p = nullptr;
};
}  // namespace

class TestCudaEmulation : public QObject {
    Q_OBJECT

private slots:
    void everyOpHasAKernelAndATolerance() {
        EmulatedCudaBackend emu;
        QStringList missing;
        for (const ops::OpDef& def : ops::op_defs()) {
            (void)op_tolerance(def.id);  // throws for an op without one
            QVERIFY2(!op_specs(def.id, SpecSize::odd).empty(),
                     qPrintable(QString("op %1 has no odd-size spec").arg(def.name)));
            if (!emu.supports(def.id, DType::f32)) missing << def.name;
        }
        QVERIFY2(missing.isEmpty(), qPrintable("no CUDA kernel for: " + missing.join(", ")));
    }

    void opsMatchTheCpu_data() { test::add_op_spec_rows({SpecSize::tiny, SpecSize::odd}); }

    void opsMatchTheCpu() {
        QFETCH(int, op);
        QFETCH(int, size);
        QFETCH(int, which);
        const auto id = static_cast<ops::OpId>(op);
        EmulatedCudaBackend emu;
        if (!emu.supports(id, DType::f32))
            QSKIP("no CUDA kernel for this op yet (everyOpHasAKernelAndATolerance fails for it)");
        const OpSpec spec = op_specs(id, static_cast<SpecSize>(size))[which];
        ThreadPool pool(2);
        CpuBackend cpu(pool);
        const OpTolerance tol = op_tolerance(id);
        for (const Agreement& a : conformance_run(spec, cpu, emu))
            QVERIFY2(a.within(tol), qPrintable(QString("%1: nmse %2 (tolerance %3), max |Δ| %4 "
                                                       "(tolerance %5 × scale %7) at element %6")
                                                   .arg(QString::fromStdString(a.what))
                                                   .arg(a.nmse)
                                                   .arg(tol.nmse)
                                                   .arg(a.max_abs)
                                                   .arg(tol.max_abs)
                                                   .arg(a.worst)
                                                   .arg(a.scale)));
    }

    // On the GPU a launch's indices run concurrently; the host runs them in a loop. An op whose
    // body reads what another index of the same launch writes (an in-place update read by a
    // neighbour, a reduction that two indices share) would pass against the CPU in the loop's
    // order and race on the GPU. So every spec runs again with the indices (and reduce_rows' rows)
    // visited backwards and scattered: the outputs and gradients must be the same bits.
    void opsDoNotDependOnTheOrderOfIndices_data() {
        test::add_op_spec_rows({SpecSize::tiny, SpecSize::odd});
    }

    void opsDoNotDependOnTheOrderOfIndices() {
        QFETCH(int, op);
        QFETCH(int, size);
        QFETCH(int, which);
        const auto id = static_cast<ops::OpId>(op);
        EmulatedCudaBackend forward;
        forward.set_index_order(cuda::HostExec::Order::forward);
        if (!forward.supports(id, DType::f32)) QSKIP("no CUDA kernel for this op yet");
        const OpSpec spec = op_specs(id, static_cast<SpecSize>(size))[which];
        for (const auto& [order, name] :
             {std::pair{cuda::HostExec::Order::reverse, "backwards"},
              std::pair{cuda::HostExec::Order::scattered, "scattered"}}) {
            EmulatedCudaBackend other;
            other.set_index_order(order);
            for (const Agreement& a : conformance_run(spec, forward, other))
                QVERIFY2(a.max_abs == 0 && a.nmse == 0,
                         qPrintable(QString("%1 with the indices visited %2: max |Δ| %3 at "
                                            "element %4 — a body depends on another index of its "
                                            "launch (a race on the GPU)")
                                        .arg(QString::fromStdString(a.what), name)
                                        .arg(a.max_abs)
                                        .arg(a.worst)));
        }
    }

    // The host executor's orders are permutations: every index once.
    void hostOrdersVisitEveryIndexOnce() {
        for (const auto order : {cuda::HostExec::Order::forward, cuda::HostExec::Order::reverse,
                                 cuda::HostExec::Order::scattered})
            for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{97},
                                         std::int64_t{1000003}, std::int64_t{2000006}}) {
                cuda::HostExec host;
                host.set_order(order);
                std::vector<int> seen(static_cast<std::size_t>(n), 0);
                struct Mark {
                    int* seen;
                    void operator()(std::int64_t i) const { ++seen[i]; }
                };
                host.each(n, Mark{seen.data()});
                QVERIFY(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
                if (order == cuda::HostExec::Order::scattered && n == 97) {
                    // Not the memory order: the second index visited is not 1.
                    std::vector<std::int64_t> visits;
                    struct Record {
                        std::vector<std::int64_t>* v;
                        void operator()(std::int64_t i) const { v->push_back(i); }
                    };
                    host.each(n, Record{&visits});
                    QVERIFY(visits[1] != 1 && visits[1] != n - 2);
                }
            }
    }

    void flatBuffersMatchTheCpu() {
        ThreadPool pool(2);
        CpuBackend cpu(pool);
        EmulatedCudaBackend emu;
        std::mt19937 gen(5);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const std::size_t n = 3 * cuda::kReduceChunk + 77;
        std::vector<float> x(n);
        for (float& v : x)
            v = normal(gen);
        // Σx²: both in double, in different orders (the GPU's chunks, then the chunks' sums).
        // The emulated device takes device memory only (as a GPU's kernels do).
        DeviceCopy dx(emu, x);
        const double want = cpu.sum_squares(x.data(), n), got = emu.sum_squares(dx.f(), n);
        QVERIFY(std::fabs(got - want) <= 1e-12 * want);

        // AdamW over three spans with different rates and decays, two updates: bit-identical
        // (the same element function, the same float coefficients).
        std::vector<float> p1 = x, p2 = x, m1(n, 0.f), m2(n, 0.f), v1(n, 0.f), v2(n, 0.f), g(n);
        for (float& v : g)
            v = normal(gen);
        const std::size_t cut[] = {0, 1000, 9000, n};
        for (int update = 1; update <= 2; ++update) {
            std::vector<AdamWSpan> a(3), b(3);
            for (int k = 0; k < 3; ++k) {
                const std::size_t o = cut[k], len = cut[k + 1] - cut[k];
                a[k] = {p1.data() + o,  g.data() + o,        m1.data() + o, v1.data() + o, len,
                        1e-3 * (k + 1), k == 1 ? 0.0 : 0.01, 0.9,           0.999,         1e-8,
                        update};
                b[k] = a[k];
                b[k].params = p2.data() + o;
                b[k].m = m2.data() + o;
                b[k].v = v2.data() + o;
                cpu.adamw(a[k]);
            }
            cuda::HostExec host;
            host.set_order(cuda::HostExec::Order::scattered);  // as the GPU: any order
            cuda::flat::adamw(host, b.data(), b.size());       // one launch for the three spans
        }
        QVERIFY(p1 == p2);
        QVERIFY(m1 == m2);
        QVERIFY(v1 == v2);

        std::vector<float> s1 = x;
        cpu.scale(s1.data(), 0.37f, n);
        emu.scale(dx.f(), 0.37f, n);
        QVERIFY(s1 == dx.back<float>());

        // Read-outs: the first maximum (ties planted), the NLL in double, NaN where ignored.
        const std::int64_t rows = 9, width = 131;
        std::vector<float> logits(static_cast<std::size_t>(rows * width));
        for (float& v : logits)
            v = normal(gen);
        logits[2 * width + 5] = logits[2 * width + 77] = 9.0f;
        // A NaN is never the maximum (row 3 starts with one, row 7 holds one beside the largest
        // value), and a row of NaN predicts 0 (row 8): the CUDA reduction's tree order and the
        // CPU's scan agree on these too.
        const float nan = std::numeric_limits<float>::quiet_NaN();
        logits[3 * width] = nan;
        logits[7 * width + 10] = 50.0f;
        logits[7 * width + 11] = nan;
        for (std::int64_t j = 0; j < width; ++j)
            logits[8 * width + j] = nan;
        std::int64_t row3 = 1;
        for (std::int64_t j = 2; j < width; ++j)
            if (logits[3 * width + j] > logits[3 * width + row3]) row3 = j;
        std::vector<std::int32_t> targets = {0, 5, 77, -100, 130, 131, 3, 4, 5};
        std::vector<std::int32_t> am1(rows);
        std::vector<double> nll1(rows);
        cpu.row_readout(logits.data(), targets.data(), rows, width, am1.data(), nll1.data());
        DeviceCopy dlogits(emu, logits), dtargets(emu, targets),
            dam(emu, std::vector<std::int32_t>(rows)), dnll(emu, std::vector<double>(rows));
        emu.row_readout(dlogits.f(), static_cast<const std::int32_t*>(dtargets.p), rows, width,
                        static_cast<std::int32_t*>(dam.p), static_cast<double*>(dnll.p));
        const auto am2 = dam.back<std::int32_t>();
        const auto nll2 = dnll.back<double>();
        QCOMPARE(am2, am1);
        QCOMPARE(am2[2], 5);
        QCOMPARE(am2[3], static_cast<std::int32_t>(row3));
        QCOMPARE(am2[7], 10);
        QCOMPARE(am2[8], 0);
        QVERIFY(std::isnan(nll2[7]) && std::isnan(nll2[8]));
        for (std::int64_t r = 0; r < rows; ++r) {
            if (std::isnan(nll1[r])) {
                QVERIFY(std::isnan(nll2[r]));
                continue;
            }
            QVERIFY(std::fabs(nll1[r] - nll2[r]) <= 1e-12 * std::max(1.0, nll1[r]));
        }
    }

    // A GPU's kernels fault on host memory, and cudaMemcpy refuses a copy whose kind does not
    // match its pointers; the host loops would not. The emulated device refuses both, naming the
    // operation and the operand, so the device suite (every command on cuda-emulated) shows that
    // the engine hands the CUDA backend device memory only.
    void hostMemoryHandedToTheDeviceIsRefused() {
        EmulatedCudaBackend emu;
        std::vector<float> host(64, 1.0f);
        DeviceCopy dev(emu, host);
        const auto refused = [](auto&& f, const char* words) {
            try {
                f();
            } catch (const Error& e) {
                return QString(e.what()).contains(words) ? QString() : QString(e.what());
            }
            return QString("accepted");
        };
        QCOMPARE(refused([&] { emu.sum_squares(host.data(), host.size()); },
                         "sum_squares() (256 bytes at"),
                 QString());
        QCOMPARE(refused([&] { emu.scale(host.data(), 2.0f, host.size()); }, "not device memory"),
                 QString());
        // One element past the allocation's end.
        QCOMPARE(refused([&] { emu.scale(dev.f() + 1, 2.0f, host.size()); },
                         "runs past the end of its device allocation"),
                 QString());
        QCOMPARE(refused([&] { emu.zero(host.data(), 4); }, "zero()"), QString());
        emu.zero(nullptr, 4);  // nothing to zero: a no-op, as on the device
        // Copies: a kind that does not match where its ends live.
        QCOMPARE(refused([&] { emu.copy(dev.p, dev.p, 16, Backend::CopyKind::host_to_device); },
                         "the source"),
                 QString());
        QCOMPARE(refused(
                     [&] {
                         emu.copy(host.data(), host.data() + 8, 16,
                                  Backend::CopyKind::device_to_device);
                     },
                     "a device → device copy: the destination"),
                 QString());
        QCOMPARE(
            refused([&] { emu.copy(dev.p, host.data(), 16, Backend::CopyKind::device_to_host); },
                    "is device memory"),
            QString());
        // An op whose input is host memory: dense with x on the host, the weight on the device.
        DeviceCopy w(emu, std::vector<float>(4 * 4, 0.5f)), y(emu, std::vector<float>(2 * 4));
        ops::OpCall c;
        c.op = ops::OpId::dense;
        c.i[0] = 2;  // rows
        c.i[1] = 4;  // in
        c.i[2] = 4;  // out
        ops::Layout layout(DType::f32);
        ops::op_def(c.op).layout(c, layout);
        c.n_operands = static_cast<std::uint8_t>(layout.size());
        for (int k = 0; k < layout.size(); ++k) {
            Tensor& t = c.t[static_cast<std::size_t>(k)];
            t.dtype = layout[k].dtype;
            t.rank = layout[k].rank;
            t.shape = layout[k].shape;
            if (layout[k].role != ops::Role::output && layout[k].role != ops::Role::saved)
                ++c.n_inputs;
        }
        c.t[0].data = host.data();  // x: on the host
        c.t[1].data = w.p;
        c.t[c.n_operands - 1].data = y.p;
        const QString message = refused([&] { emu.forward(c); }, "dense forward: the x");
        QVERIFY2(message.isEmpty(), qPrintable(message));
        c.t[0].data = w.p;  // now every operand on the device: it runs
        emu.forward(c);
    }

    // The GEMM helper's row-major mapping, against a direct row-major product, all four
    // transpose combinations and a batch: the layouts every GEMM-based op relies on.
    void rowMajorGemmIsTheRowMajorProduct() {
        const int M = 5, N = 7, K = 3, batch = 2;
        std::mt19937 gen(3);
        std::normal_distribution<double> normal(0.0, 1.0);
        for (cuda::Trans ta : {cuda::Trans::n, cuda::Trans::t})
            for (cuda::Trans tb : {cuda::Trans::n, cuda::Trans::t}) {
                // A stored [M, K] (n) or [K, M] (t), padded rows to check the strides.
                const int lda = (ta == cuda::Trans::n ? K : M) + 2;
                const int ldb = (tb == cuda::Trans::n ? N : K) + 1;
                const int ldc = N + 3;
                const int arows = ta == cuda::Trans::n ? M : K,
                          brows = tb == cuda::Trans::n ? K : N;
                std::vector<double> A(static_cast<std::size_t>(batch * arows * lda)),
                    B(static_cast<std::size_t>(batch * brows * ldb)),
                    C(static_cast<std::size_t>(batch * M * ldc), 0.5);
                for (double& v : A)
                    v = normal(gen);
                for (double& v : B)
                    v = normal(gen);
                std::vector<double> want = C;
                for (int b = 0; b < batch; ++b)
                    for (int i = 0; i < M; ++i)
                        for (int j = 0; j < N; ++j) {
                            double s = 0;
                            for (int p = 0; p < K; ++p) {
                                const double a = ta == cuda::Trans::n
                                                     ? A[b * arows * lda + i * lda + p]
                                                     : A[b * arows * lda + p * lda + i];
                                const double bb = tb == cuda::Trans::n
                                                      ? B[b * brows * ldb + p * ldb + j]
                                                      : B[b * brows * ldb + j * ldb + p];
                                s += a * bb;
                            }
                            double& c = want[static_cast<std::size_t>(b * M * ldc + i * ldc + j)];
                            c = 2.0 * s + 0.5 * c;
                        }
                cuda::HostExec host;
                host.gemm(cuda::row_major_gemm_batched<double>(
                    ta, tb, M, N, K, 2.0, A.data(), lda, arows * lda, B.data(), ldb, brows * ldb,
                    0.5, C.data(), ldc, M * ldc, batch));
                for (std::size_t i = 0; i < C.size(); ++i)
                    QVERIFY(std::fabs(C[i] - want[i]) < 1e-12);
            }
    }

    // round_mantissa(x, 7) is the float → bfloat16 conversion (round to nearest, ties to even):
    // Eigen's Eigen::bfloat16 as the reference, on random values of many magnitudes, exact ties
    // and values next to them; round_mantissa(x, 10) (TF32) against frexp and nearbyint
    // (the default rounding mode is to nearest even) at 11 significant bits.
    void inputRoundingIsRoundToNearestEven() {
        std::mt19937 gen(11);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_int_distribution<int> exponent(-30, 30);
        std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.0f, 3.0f, 65504.0f, 1e-30f};
        for (int i = 0; i < 20000; ++i)
            xs.push_back(std::ldexp(normal(gen), exponent(gen)));
        // ties and their neighbours: 1 + (2k + 1)·2⁻⁸ is halfway between two bfloat16 values
        for (int k = 0; k < 64; ++k) {
            const float tie = 1.0f + static_cast<float>(2 * k + 1) / 256.0f;
            xs.insert(xs.end(), {tie, -tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 4.0f)});
        }
        for (float x : xs) {
            const float want = static_cast<float>(Eigen::bfloat16(x));
            QVERIFY2(cuda::round_mantissa(x, 7) == want,
                     qPrintable(QString("bf16(%1): %2, Eigen %3")
                                    .arg(double(x), 0, 'g', 9)
                                    .arg(double(cuda::round_mantissa(x, 7)), 0, 'g', 9)
                                    .arg(double(want), 0, 'g', 9)));
            int e = 0;
            const double m = std::frexp(static_cast<double>(x), &e);  // x = m·2^e, |m| ∈ [0.5, 1)
            const auto tf32 =
                static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 11)), e - 11));
            QVERIFY2(cuda::round_mantissa(x, 10) == tf32,
                     qPrintable(QString("tf32(%1)").arg(double(x), 0, 'g', 9)));
            QCOMPARE(cuda::round_mantissa(x, 23), x);
        }
        QVERIFY(std::isnan(cuda::round_mantissa(std::nanf(""), 7)));
        QCOMPARE(cuda::round_mantissa(INFINITY, 7), INFINITY);
    }

    // The emulated CUDA backend at train.precision tf32 and bf16-mixed: dense, attention and
    // spatial_mix (the ops that run GEMMs on float32 data) within op_tolerance(op, p) of the CPU's
    // fp32, every output and input gradient, at the tiny and odd sizes; and the rounding takes
    // effect (dense at the odd size differs by more than fp32 does). A non-GEMM op keeps fp32's
    // tolerance. What cuBLAS's tensor cores do is checked by test_backend_conformance on a GPU.
    void reducedPrecisionGemmsStayWithinTheirTolerance() {
        ThreadPool pool(2);
        CpuBackend cpu(pool);
        for (Precision p : {Precision::tf32, Precision::bf16_mixed}) {
            EmulatedCudaBackend emu;
            emu.set_precision(p);
            QCOMPARE(emu.precision(), p);
            double dense_odd = 0;
            for (ops::OpId id : {ops::OpId::dense, ops::OpId::attention, ops::OpId::spatial_mix,
                                 ops::OpId::layernorm})
                for (SpecSize size : {SpecSize::tiny, SpecSize::odd})
                    for (const OpSpec& spec : op_specs(id, size)) {
                        const OpTolerance tol = op_tolerance(id, p);
                        double worst = 0;
                        for (const Agreement& a : conformance_run(spec, cpu, emu)) {
                            worst = std::max(worst, a.nmse);
                            QVERIFY2(a.within(tol),
                                     qPrintable(
                                         QString("%1 %2 (%3): %4")
                                             .arg(precision_name(p))
                                             .arg(ops::op_def(id).name)
                                             .arg(QString::fromStdString(spec.label))
                                             .arg(QString::fromStdString(agreement_text(a, tol)))));
                        }
                        if (id == ops::OpId::dense && size == SpecSize::odd)
                            dense_odd = std::max(dense_odd, worst);
                        qInfo("%s %s (%s): worst nmse %.3g (tolerance %.1g)", precision_name(p),
                              ops::op_def(id).name, spec.label.c_str(), worst, tol.nmse);
                    }
            QVERIFY2(dense_odd > 1e-9, qPrintable(QString("%1 not applied: dense nmse %2")
                                                      .arg(precision_name(p))
                                                      .arg(dense_odd)));
        }
    }

    // The host FFTs are cuFFT's transforms: irfft(rfft(x)) = n·x for even and odd n.
    void hostFftsRoundTrip() {
        for (int n : {8, 9}) {
            std::vector<double> x(static_cast<std::size_t>(2 * n)), y(x.size());
            for (std::size_t i = 0; i < x.size(); ++i)
                x[i] = std::sin(0.7 * static_cast<double>(i)) + 0.1 * static_cast<double>(i);
            std::vector<cuda::Complex<double>> X(static_cast<std::size_t>(2 * (n / 2 + 1)));
            cuda::HostExec host;
            host.rfft(x.data(), X.data(), n, 2);
            QVERIFY(std::fabs(X[0].re - [&] {
                        double s = 0;
                        for (int j = 0; j < n; ++j)
                            s += x[static_cast<std::size_t>(j)];
                        return s;
                    }()) < 1e-12);
            host.irfft(X.data(), y.data(), n, 2);
            for (std::size_t i = 0; i < x.size(); ++i)
                QVERIFY(std::fabs(y[i] - n * x[i]) < 1e-9);
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaEmulation)
#include "test_cuda_emulation.moc"
