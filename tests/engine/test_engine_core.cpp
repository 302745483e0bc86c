// The engine core: the deterministic thread pool, Philox4x32-10, the parameter store, the
// activation arena, the configuration's parameter-memory estimate and the process's memory limit.
#include <sys/resource.h>
#include <QtTest>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine/core/arena.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/param_store.hpp"
#include "engine/core/philox.hpp"
#include "engine/core/thread_pool.hpp"

using namespace routescope;

class TestEngineCore : public QObject {
    Q_OBJECT

private slots:
    void poolCoversEveryIndexExactlyOnceInStaticChunks() {
        ThreadPool pool(3);
        QCOMPARE(pool.size(), 3);
        std::vector<int> owner(100, -1);
        std::vector<std::atomic<int>> hits(100);
        pool.parallel_for(100, [&](std::int64_t b, std::int64_t e, int t) {
            for (std::int64_t i = b; i < e; ++i) {
                hits[i]++;
                owner[i] = t;
            }
        });
        for (int i = 0; i < 100; ++i) {
            QCOMPARE(hits[i].load(), 1);
            // chunk t = [n·t/T, n·(t+1)/T): 0..32 → 0, 33..65 → 1, 66..99 → 2
            QCOMPARE(owner[i], i < 33 ? 0 : (i < 66 ? 1 : 2));
        }
    }

    void poolRunsNestedLoopsInline() {
        ThreadPool pool(2);
        std::atomic<int> total{0};
        pool.parallel_for(4, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i) {
                pool.parallel_for(10, [&](std::int64_t ib, std::int64_t ie) {
                    total += static_cast<int>(ie - ib);
                });
            }
        });
        QCOMPARE(total.load(), 40);
    }

    void poolRethrowsAWorkersException() {
        ThreadPool pool(2);
        bool caught = false;
        try {
            pool.parallel_for(10, [&](std::int64_t b, std::int64_t) {
                if (b > 0) throw Error("chunk failed");
            });
        } catch (const Error& e) {
            caught = QString(e.what()) == "chunk failed";
        }
        QVERIFY(caught);
        int calls = 0;  // the pool stays usable after an exception
        pool.parallel_for(2, [&](std::int64_t, std::int64_t) { ++calls; });
        QCOMPARE(calls, 2);
    }

    void philoxMatchesRandom123KnownAnswers() {
        // Random123 tests/kat_vectors, philox4x32 10 rounds.
        QVERIFY((philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
                 PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
        QVERIFY((philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                               {0xffffffffu, 0xffffffffu}) ==
                 PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
        QVERIFY((philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                               {0xa4093822u, 0x299f31d0u}) ==
                 PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
    }

    void philoxUniformsHaveMeanOneHalf() {
        double sum = 0;
        const int n = 200000;
        for (int i = 0; i < n; ++i)
            sum += uniform_from_bits(philox_bits(7, 0, 0, i));
        // standard error of the mean of U(0,1): 1/√(12n) ≈ 6.5e-4; 5 of them
        QVERIFY(std::fabs(sum / n - 0.5) < 5 * 6.5e-4);
    }

    void paramStorePacksTensorsInRegistrationOrder() {
        ParamStore store;
        store.add("embeddings.word.weight", {10, 4});
        store.add("layers.0.dv.weight", {6, 4});
        store.add("layers.0.dv.bias", {6});
        store.allocate();
        QCOMPARE(store.size(), std::size_t(40 + 24 + 6));
        QCOMPARE(store.entries().size(), std::size_t(3));
        QCOMPARE(store.entry("layers.0.dv.weight").offset, std::size_t(40));
        QCOMPARE(store.entry("layers.0.dv.bias").offset, std::size_t(64));
        QCOMPARE(store.param("layers.0.dv.bias"), store.data() + 64);
        QCOMPARE(store.grad("layers.0.dv.bias"), store.grad_data() + 64);
        QVERIFY((store.entry("layers.0.dv.weight").shape == std::vector<std::int64_t>{6, 4}));
        for (std::size_t i = 0; i < store.size(); ++i)
            QCOMPARE(store.data()[i], 0.0f);
    }

    void paramStoreZeroGradClearsEveryGradient() {
        ParamStore store;
        store.add("a", {3});
        store.add("b", {2, 2});
        store.allocate();
        for (std::size_t i = 0; i < store.size(); ++i)
            store.grad_data()[i] = 1.5f;
        store.param("a")[0] = 2.0f;
        store.zero_grad();
        for (std::size_t i = 0; i < store.size(); ++i)
            QCOMPARE(store.grad_data()[i], 0.0f);
        QCOMPARE(store.param("a")[0], 2.0f);  // parameters untouched
    }

    void paramStoreRejectsMisuse() {
        ParamStore store;
        store.add("a", {3});
        QVERIFY_THROWS_EXCEPTION(Error, store.add("a", {2}));
        QVERIFY_THROWS_EXCEPTION(Error, store.data());
        store.allocate();
        QVERIFY_THROWS_EXCEPTION(Error, store.add("b", {2}));
        QVERIFY_THROWS_EXCEPTION(Error, store.param("missing"));
    }

    void arenaHandsOutAlignedBlocksAndResets() {
        Arena arena(1000);
        float* a = arena.alloc<float>(3, "a");
        double* b = arena.alloc<double>(5, "b");
        QCOMPARE(reinterpret_cast<std::uintptr_t>(a) % 64, std::uintptr_t(0));
        QCOMPARE(reinterpret_cast<std::uintptr_t>(b) % 64, std::uintptr_t(0));
        QCOMPARE(reinterpret_cast<unsigned char*>(b) - reinterpret_cast<unsigned char*>(a), 64);
        QCOMPARE(arena.used(), std::size_t(128));
        arena.reset();
        QCOMPARE(arena.used(), std::size_t(0));
        QCOMPARE(arena.alloc<float>(1), a);  // the same memory again next step
        QCOMPARE(arena.high_water(), std::size_t(128));
    }

    void arenaOutOfMemoryNamesTheTensor() {
        Arena arena(Arena::footprint<float>(16));
        arena.alloc<float>(16);
        try {
            arena.alloc<float>(1, "layers.2.attention.probs");
            QFAIL("expected an Error");
        } catch (const Error& e) {
            QVERIFY(QString(e.what()).contains("layers.2.attention.probs"));
        }
    }

    // docs/config.md: the parameters are estimated from model.* and refused above 64 GiB (16
    // bytes each). The position table max_len × d_model exists only with
    // model.position_embeddings (and never in gMLP): d_model = 16 and max_len = 2^31 − 1 is
    // 16 · 16 · (2^31 − 1) bytes ≈ 512 GiB with the table, a few thousand parameters without it.
    void parameterEstimateCountsThePositionTableOnlyWhenTheModelHasOne() {
        nlohmann::json j = {{"model",
                             {{"arch", "bigs"},
                              {"d_model", 16},
                              {"n_layers", 1},
                              {"max_len", 2147483647},
                              {"ssm", {{"n_modes", 4}}}}},
                            {"data", {{"train", "builtin:grammar"}, {"seq_len", 16}}}};
        try {
            (void)RunConfig::from_json(j);
            QFAIL("expected the position table of 2^31 − 1 rows to be refused");
        } catch (const ConfigError& e) {
            QVERIFY2(QString(e.what()).startsWith("model.max_len: the model would need about"),
                     e.what());
        }
        j["model"]["position_embeddings"] = false;
        const RunConfig c = RunConfig::from_json(j);
        QCOMPARE(c.model.max_len, 2147483647);
        QVERIFY(!c.model.position_embeddings);
    }

    // The memory pre-checks compare against what the process may use: a soft RLIMIT_AS below
    // every other limit is the limit, said as `ulimit -v`.
    void memoryLimitIsTheProcesssAddressSpaceLimit() {
        const MemoryLimit before = memory_limit();
        QVERIFY(before.bytes > 0);
        struct rlimit saved {};
        QCOMPARE(::getrlimit(RLIMIT_AS, &saved), 0);
        const rlim_t lowered = static_cast<rlim_t>(before.bytes / 2) & ~rlim_t{(1 << 20) - 1};
        if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < lowered)
            QSKIP("the hard RLIMIT_AS is already lower");
        struct rlimit low = saved;
        low.rlim_cur = lowered;
        QCOMPARE(::setrlimit(RLIMIT_AS, &low), 0);
        const MemoryLimit under = memory_limit();
        const double physical = physical_memory_bytes();
        QCOMPARE(::setrlimit(RLIMIT_AS, &saved), 0);
        QCOMPARE(under.bytes, static_cast<double>(lowered));
        QCOMPARE(physical, static_cast<double>(lowered));
        QVERIFY2(QString::fromStdString(under.text())
                     .startsWith("the process's memory limit (ulimit -v) of "),
                 under.text().c_str());
        QCOMPARE(memory_limit().bytes, before.bytes);  // restored
    }
};

QTEST_APPLESS_MAIN(TestEngineCore)
#include "test_engine_core.moc"
