// A steady-state training step allocates nothing on the heap (engine issue; llm.c's discipline):
// for each of the seven architectures, after one warm-up step, a step — zero the gradients,
// forward, backward through the tape, clip, AdamW on the flat buffers — calls no allocator.
//
// The counter replaces the process's malloc family (and so operator new, Eigen's and FFTW's
// aligned allocations, std::function's heap): every call made while counting is counted, from any
// thread of the pool. Not built under the sanitizers, which own the allocator themselves.
#include <malloc.h>

#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/models/model.hpp"
#include "engine/train/adamw.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void count() {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) {
    count();
    return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
    count();
    return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
    count();
    return __libc_realloc(p, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
    count();
    return __libc_memalign(alignment, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
    count();
    return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
    count();
    void* p = __libc_memalign(alignment, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void* p) {
    __libc_free(p);
}
}

using namespace routescope;

namespace {

RunConfig tiny(const std::string& arch, int n_labels) {
    nlohmann::json model = {{"arch", arch},  {"d_model", 32},    {"n_layers", 2},
                            {"max_len", 16}, {"vocab_size", 50}, {"n_labels", n_labels},
                            {"dropout", 0.1}};
    if (arch == "bigs" || arch == "stack_ssm") model["ssm"] = {{"n_modes", 8}};
    if (arch == "bert" || arch == "gated_att") model["n_heads"] = 4;
    return RunConfig::from_json(
        {{"model", model},
         {"train", {{"batch_size", 2}, {"steps", 10}, {"clip_grad_norm", 1.0}, {"seed", 3}}}});
}

}  // namespace

class TestStepAllocations : public QObject {
    Q_OBJECT

private slots:
    void steadyStepAllocatesNothing_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<bool>("classify");
        for (const char* arch :
             {"bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp"})
            QTest::newRow(arch) << QString(arch) << false;
        QTest::newRow("bert classification") << QString("bert") << true;
        QTest::newRow("slstm classification") << QString("slstm") << true;
    }

    void steadyStepAllocatesNothing() {
        QFETCH(QString, arch);
        QFETCH(bool, classify);
        const int B = 2, L = 16;
        const RunConfig config = tiny(arch.toStdString(), classify ? 3 : 0);
        models::Model model(config, B, L, /*threads=*/2);
        model.init(1);
        train::AdamW adam(config.train, model.params());

        std::vector<std::int32_t> tokens(B * L), lengths = {L, L - 5}, labels(B * L, -100),
                                                 classes = {0, 2}, reset(B * L, 0);
        for (int i = 0; i < B * L; ++i) {
            tokens[i] = 4 + (i * 7) % 40;
            if (i % 3 == 0) labels[i] = tokens[i];
        }
        reset[0] = reset[L] = 1;  // Birdie: each row starts a packed sample
        models::Batch batch;
        batch.tokens = tokens.data();
        batch.lengths = lengths.data();
        (classify ? batch.class_labels : batch.labels) = classify ? classes.data() : labels.data();
        if (arch == "birdie") batch.reset_mask = reset.data();

        auto step = [&](std::uint32_t s) {
            model.params().zero_grad();
            const double loss = model.forward(batch, /*training=*/true, s);
            model.backward();
            adam.clip(model.params());
            adam.update(model.params());
            return loss;
        };
        step(0);  // warm-up: first-touch work (thread-local state, lazily built tables)
        g_allocations = 0;
        g_counting = true;
        const double loss = step(1);
        step(2);
        g_counting = false;
        QVERIFY(std::isfinite(loss));
        QVERIFY(model.tape().size() > 0);
        QCOMPARE(g_allocations.load(), 0L);
    }
};

QTEST_APPLESS_MAIN(TestStepAllocations)
#include "test_step_allocations.moc"
