// Every op's backward against central finite differences in double precision on tiny shapes
// (tolerance kFdTolerance = relative 1e-6, finite_difference.hpp). Each check covers every float
// input and parameter of the op, and — through the prefilled gradient buffers — that the backward
// accumulates instead of overwriting.
#include <QtTest>

#include <cstdint>
#include <vector>

#include "engine/core/thread_pool.hpp"
#include "engine/ops/attention.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/ops/dense.hpp"
#include "engine/ops/dropout.hpp"
#include "engine/ops/elementwise.hpp"
#include "engine/ops/embedding.hpp"
#include "engine/ops/flip.hpp"
#include "engine/ops/gelu.hpp"
#include "engine/ops/layernorm.hpp"
#include "engine/ops/mean_pool.hpp"
#include "engine/ops/sigmoid.hpp"
#include "engine/ops/tanh.hpp"
#include "finite_difference.hpp"

using namespace routescope;
using namespace routescope::test;
using Vec = std::vector<double>;

#define CHECK_GRAD(x, analytic, loss)                                                         \
    do {                                                                                      \
        std::string where_;                                                                   \
        const double err_ = fd_max_error(x, analytic, loss, &where_);                         \
        QVERIFY2(err_ <= kFdTolerance, qPrintable(QString("%1: scaled error %2 > %3 at %4")   \
                                                      .arg(#analytic)                         \
                                                      .arg(err_)                              \
                                                      .arg(kFdTolerance)                      \
                                                      .arg(QString::fromStdString(where_)))); \
    } while (0)

class TestOpGradients : public QObject {
    Q_OBJECT

    std::mt19937 gen{20240611};
    ThreadPool pool2{2};  // run the checks through the threaded paths

private slots:
    void dense() {
        const int rows = 5, in = 4, out = 3;
        Vec x = random_vector(rows * in, gen), w = random_vector(out * in, gen),
            b = random_vector(out, gen), r = random_vector(rows * out, gen), y(rows * out);
        auto loss = [&] {
            ops::dense_forward(y.data(), x.data(), w.data(), b.data(), rows, in, out, pool2);
            return dot(y, r);
        };
        Vec dx = prefilled(x.size()), dw = prefilled(w.size()), db = prefilled(b.size());
        loss();
        ops::dense_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), rows, in,
                            out, pool2);
        CHECK_GRAD(x, dx, loss);
        CHECK_GRAD(w, dw, loss);
        CHECK_GRAD(b, db, loss);
    }

    void denseWithMoreFeaturesThanRows() {  // the column-partitioned GEMM path
        const int rows = 2, in = 5, out = 7;
        Vec x = random_vector(rows * in, gen), w = random_vector(out * in, gen),
            b = random_vector(out, gen), r = random_vector(rows * out, gen), y(rows * out);
        auto loss = [&] {
            ops::dense_forward(y.data(), x.data(), w.data(), b.data(), rows, in, out, pool2);
            return dot(y, r);
        };
        Vec dx = prefilled(x.size()), dw = prefilled(w.size()), db = prefilled(b.size());
        ops::dense_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), rows, in,
                            out, pool2);
        CHECK_GRAD(x, dx, loss);
        CHECK_GRAD(w, dw, loss);
        CHECK_GRAD(b, db, loss);
    }

    void embedding() {
        const int vocab = 5, d = 3, n = 6;
        const std::vector<std::int32_t> ids = {0, 3, 3, 1, 4, 3};  // repeats must accumulate
        Vec table = random_vector(vocab * d, gen), r = random_vector(n * d, gen), out(n * d);
        auto loss = [&] {
            ops::embedding_forward(out.data(), ids.data(), table.data(), n, vocab, d, pool2);
            return dot(out, r);
        };
        Vec dtable = prefilled(table.size());
        ops::embedding_backward(dtable.data(), r.data(), ids.data(), n, vocab, d, pool2);
        CHECK_GRAD(table, dtable, loss);
    }

    void layernorm() {
        const int rows = 4, d = 5;
        Vec x = random_vector(rows * d, gen, 2.0), w = random_vector(d, gen),
            b = random_vector(d, gen), r = random_vector(rows * d, gen), out(rows * d), mean(rows),
            rstd(rows);
        for (int i = 0; i < d; ++i)
            x[i] += 3.0;  // one row far from zero mean
        auto loss = [&] {
            ops::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(),
                                   b.data(), rows, d, 1e-5, pool2);
            return dot(out, r);
        };
        loss();
        Vec dx = prefilled(x.size()), dw = prefilled(d), db = prefilled(d);
        ops::layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(),
                                mean.data(), rstd.data(), rows, d, pool2);
        CHECK_GRAD(x, dx, loss);
        CHECK_GRAD(w, dw, loss);
        CHECK_GRAD(b, db, loss);
    }

    void geluTanh() {
        unary(ops::gelu_tanh_forward<double>, ops::gelu_tanh_backward<double>, false);
    }
    void geluErf() { unary(ops::gelu_erf_forward<double>, ops::gelu_erf_backward<double>, false); }
    void tanh() { unary(ops::tanh_forward<double>, ops::tanh_backward<double>, true); }
    void sigmoid() { unary(ops::sigmoid_forward<double>, ops::sigmoid_backward<double>, true); }

    void add() {
        const int n = 7;
        Vec a = random_vector(n, gen), b = random_vector(n, gen), r = random_vector(n, gen), out(n);
        auto loss = [&] {
            ops::add_forward(out.data(), a.data(), b.data(), n, pool2);
            return dot(out, r);
        };
        Vec da = prefilled(n), db = prefilled(n);
        ops::add_backward(da.data(), db.data(), r.data(), n, pool2);
        CHECK_GRAD(a, da, loss);
        CHECK_GRAD(b, db, loss);
    }

    void mul() {
        const int n = 7;
        Vec a = random_vector(n, gen), b = random_vector(n, gen), r = random_vector(n, gen), out(n);
        auto loss = [&] {
            ops::mul_forward(out.data(), a.data(), b.data(), n, pool2);
            return dot(out, r);
        };
        Vec da = prefilled(n), db = prefilled(n);
        ops::mul_backward(da.data(), db.data(), r.data(), a.data(), b.data(), n, pool2);
        CHECK_GRAD(a, da, loss);
        CHECK_GRAD(b, db, loss);
    }

    void mulOfATensorWithItself() {  // x ⊙ x: both gradient contributions land in one buffer
        const int n = 5;
        Vec a = random_vector(n, gen), r = random_vector(n, gen), out(n);
        auto loss = [&] {
            ops::mul_forward(out.data(), a.data(), a.data(), n, pool2);
            return dot(out, r);
        };
        Vec da = prefilled(n);
        ops::mul_backward(da.data(), da.data(), r.data(), a.data(), a.data(), n, pool2);
        CHECK_GRAD(a, da, loss);
    }

    void flip() {
        const int B = 2, L = 3, d = 2;
        Vec x = random_vector(B * L * d, gen), r = random_vector(B * L * d, gen), out(B * L * d);
        auto loss = [&] {
            ops::flip_forward(out.data(), x.data(), B, L, d, pool2);
            return dot(out, r);
        };
        Vec dx = prefilled(x.size());
        ops::flip_backward(dx.data(), r.data(), B, L, d, pool2);
        CHECK_GRAD(x, dx, loss);
    }

    void attentionWithPadding_data() {
        QTest::addColumn<bool>("causal");
        QTest::newRow("padding mask") << false;
        QTest::newRow("padding and causal mask") << true;
    }
    void attentionWithPadding() {
        QFETCH(bool, causal);
        const int B = 3, L = 4, d = 6, H = 2;
        const std::vector<std::int32_t> lengths = {4, 2, 1};
        Vec q = random_vector(B * L * d, gen), k = random_vector(B * L * d, gen),
            v = random_vector(B * L * d, gen), r = random_vector(B * L * d, gen), out(B * L * d),
            probs(B * H * L * L), scratch(ops::attention_backward_scratch_size(L, pool2));
        auto loss = [&] {
            ops::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(),
                                   lengths.data(), B, L, d, H, causal, pool2);
            return dot(out, r);
        };
        loss();
        Vec dq = prefilled(q.size()), dk = prefilled(k.size()), dv = prefilled(v.size());
        ops::attention_backward(dq.data(), dk.data(), dv.data(), scratch.data(), r.data(),
                                probs.data(), q.data(), k.data(), v.data(), lengths.data(), B, L, d,
                                H, causal, pool2);
        CHECK_GRAD(q, dq, loss);
        CHECK_GRAD(k, dk, loss);  // pad keys: zero gradient, and FD agrees (masked out)
        CHECK_GRAD(v, dv, loss);
    }

    void crossEntropyWithIgnoredTargets() {
        const int rows = 5, V = 4;
        const std::vector<std::int32_t> targets = {2, ops::kIgnoreIndex, 0, 3, ops::kIgnoreIndex};
        const double dloss = 0.7;  // an upstream scale, as under loss scaling or accumulation
        Vec logits = random_vector(rows * V, gen, 2.0), lse(rows);
        auto loss = [&] {
            return dloss * ops::cross_entropy_forward(lse.data(), logits.data(), targets.data(),
                                                      rows, V, pool2);
        };
        loss();
        Vec dlogits = prefilled(logits.size());
        ops::cross_entropy_backward(dlogits.data(), logits.data(), lse.data(), targets.data(), rows,
                                    V, dloss, pool2);
        CHECK_GRAD(logits, dlogits, loss);
    }

    void dropout() {
        const int n = 40;
        const ops::DropoutSite site{0.3f, 99, 5, 2};
        Vec x = random_vector(n, gen), r = random_vector(n, gen), out(n);
        auto loss = [&] {
            ops::dropout_forward(out.data(), x.data(), n, site, pool2);
            return dot(out, r);
        };
        Vec dx = prefilled(n);
        ops::dropout_backward(dx.data(), r.data(), n, site, pool2);
        CHECK_GRAD(x, dx, loss);
    }

    void meanPool() {
        const int B = 3, L = 4, d = 2;
        const std::vector<std::int32_t> lengths = {4, 1, 0};
        Vec x = random_vector(B * L * d, gen), r = random_vector(B * d, gen), out(B * d);
        auto loss = [&] {
            ops::mean_pool_forward(out.data(), x.data(), lengths.data(), B, L, d, pool2);
            return dot(out, r);
        };
        Vec dx = prefilled(x.size());
        ops::mean_pool_backward(dx.data(), r.data(), lengths.data(), B, L, d, pool2);
        CHECK_GRAD(x, dx, loss);
    }

private:
    using Fwd = void (*)(double*, const double*, std::int64_t, ThreadPool&);
    using Bwd = void (*)(double*, const double*, const double*, std::int64_t, ThreadPool&);

    // backward_reads_output: tanh and sigmoid take the forward's output, gelus take the input.
    void unary(Fwd forward, Bwd backward, bool backward_reads_output) {
        const int n = 11;
        Vec x = random_vector(n, gen, 1.5), r = random_vector(n, gen), out(n);
        x[0] = 0.0;
        auto loss = [&] {
            forward(out.data(), x.data(), n, pool2);
            return dot(out, r);
        };
        loss();
        Vec dx = prefilled(n);
        backward(dx.data(), r.data(), backward_reads_output ? out.data() : x.data(), n, pool2);
        CHECK_GRAD(x, dx, loss);
    }
};

QTEST_APPLESS_MAIN(TestOpGradients)
#include "test_op_gradients.moc"
