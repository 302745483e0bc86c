// The backend conformance suite (ggml's test-backend-ops idea), driven by one spec per op
// (engine/backend/op_specs.hpp):
//   (a) every op's backward on the CPU backend in double precision against central finite
//       differences of ℓ = Σ r ⊙ outputs (cross_entropy: ℓ = its loss), every float input;
//   (b) every other backend present against the CPU backend: test_backend_conformance.cpp;
//   and a spec must exist for every op of the op table (the suite fails for an op without one).
// Timing is `routescope-cli bench ops` over the same table at benchmark sizes.
#include <QtTest>

#include <cmath>
#include <random>
#include <string>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/op_specs.hpp"
#include "engine/ops/element_math.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/sigmoid.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;

namespace {

bool is_output(const ops::OperandSpec& s) {
    return s.role == ops::Role::output;
}
bool is_float_input(const ops::OperandSpec& s) {
    return s.role == ops::Role::input || s.role == ops::Role::optional;
}

// ℓ of the instance's current inputs: a forward, then Σ r_k ⊙ y_k over the outputs (or the loss).
double objective(CpuBackend& cpu, OpInstance& inst, const std::vector<std::vector<double>>& r) {
    cpu.forward(inst.call());
    const ops::Layout& l = inst.layout();
    double total = 0;
    for (int k = 0; k < l.size(); ++k) {
        if (is_output(l[k])) total += dot(inst.values(k), r[static_cast<std::size_t>(k)]);
        if (l[k].role == ops::Role::saved && std::string(l[k].name) == "loss")
            total += inst.values(k)[0];
    }
    return total;
}

}  // namespace

class TestOpConformance : public QObject {
    Q_OBJECT

private slots:
    void everyOpHasASpecAndACpuKernel() {
        CpuBackend cpu(ThreadPool::serial());
        for (const ops::OpDef& def : ops::op_defs()) {
            QVERIFY2(!op_specs(def.id, SpecSize::tiny).empty(),
                     qPrintable(QString("op %1 has no tiny conformance spec").arg(def.name)));
            QVERIFY2(!op_specs(def.id, SpecSize::bench).empty(),
                     qPrintable(QString("op %1 has no benchmark spec").arg(def.name)));
            QVERIFY(cpu.supports(def.id, DType::f32));
            QVERIFY(cpu.supports(def.id, DType::f64));
        }
    }

    void cpuGradientsMatchFiniteDifferences_data() {
        QTest::addColumn<int>("op");
        QTest::addColumn<int>("which");
        for (const ops::OpDef& def : ops::op_defs()) {
            const auto specs = op_specs(def.id, SpecSize::tiny);
            for (std::size_t s = 0; s < specs.size(); ++s)
                QTest::newRow(qPrintable(
                    QString("%1 (%2)").arg(def.name).arg(QString::fromStdString(specs[s].label))))
                    << static_cast<int>(def.id) << static_cast<int>(s);
        }
    }

    void cpuGradientsMatchFiniteDifferences() {
        QFETCH(int, op);
        QFETCH(int, which);
        const OpSpec spec = op_specs(static_cast<ops::OpId>(op), SpecSize::tiny)[which];
        ThreadPool pool(2);
        CpuBackend cpu(pool);
        OpInstance inst(spec, DType::f64, cpu, 1234);
        const ops::Layout& l = inst.layout();

        std::mt19937 gen(99);
        std::vector<std::vector<double>> r(static_cast<std::size_t>(l.size()));
        for (int k = 0; k < l.size(); ++k)
            if (is_output(l[k]))
                r[static_cast<std::size_t>(k)] =
                    random_vector(static_cast<std::size_t>(l[k].numel), gen);

        // Analytic: forward, seed the outputs' gradients with r, prefill inputs, backward.
        objective(cpu, inst, r);
        for (int k = 0; k < l.size(); ++k) {
            if (is_output(l[k])) inst.set_gradient(k, r[static_cast<std::size_t>(k)]);
            if (is_float_input(l[k]))
                inst.set_gradient(k, prefilled(static_cast<std::size_t>(l[k].numel)));
        }
        cpu.backward(inst.call());

        int checked = 0;
        for (int k = 0; k < l.size(); ++k) {
            if (!is_float_input(l[k])) continue;
            const std::vector<double> analytic = inst.gradient(k);
            std::vector<double> x = inst.values(k);
            std::string where;
            const double err = fd_max_error(
                x, analytic,
                [&] {
                    inst.set_values(k, x);
                    return objective(cpu, inst, r);
                },
                &where);
            inst.set_values(k, x);
            QVERIFY2(err <= kFdTolerance, qPrintable(QString("%1: input %2: error %3 at %4")
                                                         .arg(ops::op_def(spec.op).name)
                                                         .arg(l[k].name)
                                                         .arg(err)
                                                         .arg(where.c_str())));
            ++checked;
        }
        QVERIFY2(checked > 0, "no differentiable input was checked");
    }

    // The shared element math (written once for every backend) is what the CPU's vectorised
    // kernels compute: forward and derivative, float32, x in [−6, 6].
    void elementMathMatchesTheCpuKernels() {
        const int n = 1201;
        std::vector<float> x(n), y(n), dy(n, 1.0f), dx(n);
        for (int i = 0; i < n; ++i)
            x[i] = -6.0f + 12.0f * static_cast<float>(i) / (n - 1);
        struct Case {
            const char* name;
            void (*fwd)(float*, const float*, std::int64_t, ThreadPool&);
            void (*bwd)(float*, const float*, const float*, std::int64_t, ThreadPool&);
            double (*f)(double);
            double (*df)(double);
        };
        const Case cases[] = {
            {"gelu_tanh", ops::gelu_tanh_forward<float>, ops::gelu_tanh_backward<float>,
             ops::element::gelu_tanh<double>, ops::element::gelu_tanh_grad<double>},
            {"gelu_erf", ops::gelu_erf_forward<float>, ops::gelu_erf_backward<float>,
             ops::element::gelu_erf<double>, ops::element::gelu_erf_grad<double>},
        };
        for (const Case& c : cases) {
            c.fwd(y.data(), x.data(), n, ThreadPool::serial());
            std::fill(dx.begin(), dx.end(), 0.0f);
            c.bwd(dx.data(), dy.data(), x.data(), n, ThreadPool::serial());
            for (int i = 0; i < n; ++i) {
                const double f = c.f(x[i]), df = c.df(x[i]);
                // float kernels (Eigen's vectorised tanh/erf/exp) against the double definition
                QVERIFY2(
                    std::fabs(y[i] - f) <= 1e-5 * std::max(1.0, std::fabs(f)),
                    qPrintable(QString("%1(%2): %3 vs %4").arg(c.name).arg(x[i]).arg(y[i]).arg(f)));
                QVERIFY2(
                    std::fabs(dx[i] - df) <= 1e-5 * std::max(1.0, std::fabs(df)),
                    qPrintable(
                        QString("%1'(%2): %3 vs %4").arg(c.name).arg(x[i]).arg(dx[i]).arg(df)));
            }
        }
        ops::sigmoid_forward(y.data(), x.data(), n, ThreadPool::serial());
        for (int i = 0; i < n; ++i)
            QVERIFY(std::fabs(y[i] - ops::element::sigmoid<double>(x[i])) <= 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestOpConformance)
#include "test_op_conformance.moc"
