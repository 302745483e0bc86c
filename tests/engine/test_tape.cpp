// The tape is data: it keeps OpCall records and plays them in reverse through a backend; a
// two-op composition's gradients through the tape and the CPU backend match central finite
// differences (finite_difference.hpp tolerance).
#include <QtTest>

#include <string>
#include <tuple>
#include <vector>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/tape.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using Vec = std::vector<double>;

namespace {

// Remembers the order in which backward() is called; runs nothing.
class OrderBackend final : public Backend {
public:
    std::string order;
    const char* name() const override { return "order"; }
    Device device() const override { return Device::cpu; }
    bool supports(ops::OpId, DType) const override { return true; }
    void* allocate(std::size_t) override { return nullptr; }
    void release(void*) noexcept override {}
    void zero(void*, std::size_t) override {}
    void copy(void*, const void*, std::size_t, CopyKind) override {}
    void synchronize() override {}
    void prepare(const ops::OpCall&) override {}
    void forward(const ops::OpCall&) override {}
    void backward(const ops::OpCall& c) override { order += ops::op_def(c.op).name[0]; }
    double sum_squares(const float*, std::size_t) override { return 0; }
    void scale(float*, float, std::size_t) override {}
    void adamw(const AdamWSpan&) override {}
    void row_readout(const float*, const std::int32_t*, std::int64_t, std::int64_t, std::int32_t*,
                     double*) override {}
    void to_half(const float*, std::uint16_t*, std::size_t) override {}
};

ops::OpCall make_call(ops::OpId op) {
    ops::OpCall c;
    c.op = op;
    return c;
}

// A double-precision operand k of call c with its gradient buffer.
void bind(ops::OpCall& c, int k, Vec& value, Vec* grad, std::initializer_list<std::int64_t> shape) {
    c.t[static_cast<std::size_t>(k)] = Tensor(value.data(), shape, DType::f64);
    c.grad[static_cast<std::size_t>(k)] = grad ? grad->data() : nullptr;
}

}  // namespace

class TestTape : public QObject {
    Q_OBJECT

private slots:
    void backwardRunsTheRecordedOpsInReverse() {
        Tape tape;
        tape.reserve(3);
        for (ops::OpId op : {ops::OpId::add, ops::OpId::mul, ops::OpId::tanh})
            tape.record(make_call(op));
        OrderBackend backend;
        tape.backward(backend);
        QCOMPARE(QString::fromStdString(backend.order), QString("tma"));
        QCOMPARE(tape.size(), std::size_t(3));
        tape.clear();
        QCOMPARE(tape.size(), std::size_t(0));
    }

    void nothingIsRecordedWhileRecordingIsOff() {
        Tape tape;
        tape.set_recording(false);
        tape.record(make_call(ops::OpId::add));
        QCOMPARE(tape.size(), std::size_t(0));
    }

    void aProfiledBackwardRecordsEveryOpWithItsCost() {
        Tape tape;
        ops::OpCall c = make_call(ops::OpId::add);
        c.i[0] = 1000;
        tape.record(c);
        OrderBackend backend;
        ops::OpProfile profile;
        tape.backward(backend, &profile);
        const auto stats = profile.stats();
        QCOMPARE(int(stats.size()), 1);
        QCOMPARE(QString::fromStdString(stats[0].name), QString("add backward"));
        QVERIFY(stats[0].bytes > 0);  // the cost is passed through (it printed 0 before)
    }

    // y = gelu_tanh(x Wᵀ + b) + x  (a dense, a gelu and a residual add: x is used twice, so its
    // gradient is the sum of two recorded contributions), as three OpCalls on the CPU backend.
    void denseGeluResidualGradientsMatchFiniteDifferences() {
        const int rows = 3, d = 4;
        std::mt19937 gen(7);
        Vec x = random_vector(rows * d, gen), w = random_vector(d * d, gen),
            b = random_vector(d, gen), r = random_vector(rows * d, gen);
        Vec h(rows * d), g(rows * d), y(rows * d);
        Vec dx = prefilled(x.size()), dw = prefilled(w.size()), db = prefilled(b.size());
        Vec dh(rows * d), dg(rows * d), dy(rows * d);

        CpuBackend backend(ThreadPool::serial());
        Tape tape;
        auto forward = [&] {
            auto dense = make_call(ops::OpId::dense);
            dense.i = {rows, d, d};
            dense.n_inputs = 3;
            dense.n_operands = 4;
            bind(dense, 0, x, &dx, {rows, d});
            bind(dense, 1, w, &dw, {d, d});
            bind(dense, 2, b, &db, {d});
            bind(dense, 3, h, &dh, {rows, d});
            ops::check_call(dense);
            backend.forward(dense);
            tape.record(dense);

            auto gelu = make_call(ops::OpId::gelu_tanh);
            gelu.i = {rows * d};
            gelu.n_inputs = 1;
            gelu.n_operands = 2;
            bind(gelu, 0, h, &dh, {rows * d});
            bind(gelu, 1, g, &dg, {rows * d});
            backend.forward(gelu);
            tape.record(gelu);

            auto add = make_call(ops::OpId::add);
            add.i = {rows * d};
            add.n_inputs = 2;
            add.n_operands = 3;
            bind(add, 0, g, &dg, {rows * d});
            bind(add, 1, x, &dx, {rows * d});
            bind(add, 2, y, &dy, {rows * d});
            backend.forward(add);
            tape.record(add);
            return dot(y, r);
        };
        forward();
        dy = r;  // ∂(Σ r ⊙ y)/∂y
        tape.backward(backend);
        QCOMPARE(tape.size(), std::size_t(3));

        tape.set_recording(false);  // the finite-difference forwards record nothing
        for (auto [param, grad, label] :
             {std::tuple{&x, &dx, "dx"}, std::tuple{&w, &dw, "dw"}, std::tuple{&b, &db, "db"}}) {
            std::string where;
            const double err = fd_max_error(*param, *grad, forward, &where);
            QVERIFY2(err <= kFdTolerance,
                     qPrintable(QString("%1: %2 at %3").arg(label).arg(err).arg(where.c_str())));
        }
        QCOMPARE(tape.size(), std::size_t(3));
    }
};

QTEST_APPLESS_MAIN(TestTape)
#include "test_tape.moc"
