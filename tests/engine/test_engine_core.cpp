// The engine core: the deterministic thread pool, Philox4x32-10, the parameter store and the
// activation arena.
#include <QtTest>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine/core/arena.hpp"
#include "engine/core/error.hpp"
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
};

QTEST_APPLESS_MAIN(TestEngineCore)
#include "test_engine_core.moc"
