// The tape replays recorded backwards in reverse; a two-op composition's gradients through the
// tape match central finite differences (finite_difference.hpp tolerance).
#include <QtTest>

#include <string>
#include <tuple>
#include <vector>

#include "engine/core/tape.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/gelu.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using Vec = std::vector<double>;

class TestTape : public QObject {
    Q_OBJECT

private slots:
    void backwardRunsTheRecordedOpsInReverse() {
        Tape tape;
        std::string order;
        tape.record("a", [&] { order += 'a'; });
        tape.record("b", [&] { order += 'b'; });
        tape.record("c", [&] { order += 'c'; });
        std::vector<std::string> timed;
        tape.backward([&](const char* name, double seconds) {
            timed.emplace_back(name);
            QVERIFY(seconds >= 0);
        });
        QCOMPARE(QString::fromStdString(order), QString("cba"));
        QVERIFY((timed == std::vector<std::string>{"c", "b", "a"}));
        tape.clear();
        QCOMPARE(tape.size(), std::size_t(0));
    }

    void nothingIsRecordedWhileRecordingIsOff() {
        Tape tape;
        tape.set_recording(false);
        tape.record("a", [] {});
        QCOMPARE(tape.size(), std::size_t(0));
    }

    // y = gelu_tanh(x Wᵀ + b) + x  (a dense, a gelu and a residual add: x is used twice, so its
    // gradient is the sum of two recorded contributions)
    void denseGeluResidualGradientsMatchFiniteDifferences() {
        const int rows = 3, d = 4;
        std::mt19937 gen(7);
        Vec x = random_vector(rows * d, gen), w = random_vector(d * d, gen),
            b = random_vector(d, gen), r = random_vector(rows * d, gen);
        Vec h(rows * d), g(rows * d), y(rows * d);
        Vec dx = prefilled(x.size()), dw = prefilled(w.size()), db = prefilled(b.size());
        Vec dh(rows * d), dg(rows * d), dy(rows * d);

        Tape tape;
        auto forward = [&] {
            ops::dense_forward(h.data(), x.data(), w.data(), b.data(), rows, d, d);
            tape.record("dense", [&] {
                ops::dense_backward(dx.data(), dw.data(), db.data(), dh.data(), x.data(), w.data(),
                                    rows, d, d);
            });
            ops::gelu_tanh_forward(g.data(), h.data(), rows * d);
            tape.record("gelu_tanh",
                        [&] { ops::gelu_tanh_backward(dh.data(), dg.data(), h.data(), rows * d); });
            ops::add_forward(y.data(), g.data(), x.data(), rows * d);
            tape.record("add",
                        [&] { ops::add_backward(dg.data(), dx.data(), dy.data(), rows * d); });
            return dot(y, r);
        };
        forward();
        dy = r;  // ∂(Σ r ⊙ y)/∂y
        tape.backward();
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
