// The result cache answers a repeated request without recomputing, keys on every option and on
// the input's content, evicts the least recently used entry, never caches a failure, and computes
// a result once when several threads ask for it at the same time.
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "analysis/cached_analyses.hpp"
#include "analysis/dump_reader.hpp"
#include "engine/core/error.hpp"
#include "engine/io/dump_writer.hpp"

using namespace routescope;
using namespace routescope::analysis;

namespace {

constexpr int kExamples = 12, kLength = 6, kDim = 5;

/// A small dump of Gaussian hidden states for layers 0 and 1; `seed` changes the values.
void write_dump(const std::string& path, unsigned seed) {
    DumpSpec spec;
    spec.arch = "bigs";
    spec.name = "cache-test";
    spec.n_layers = 1;
    spec.d_model = kDim;
    spec.examples = kExamples;
    spec.length = kLength;
    spec.layers = {0, 1};
    DumpWriter w(path, spec);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    for (int s = 0; s < kExamples; ++s) {
        ExampleRecord r;
        r.tokens.assign(kLength, 5);
        r.length = 2 + s % (kLength - 1);
        w.write_example(s, r);
        std::vector<float> h(kLength * kDim);
        for (int l : {0, 1}) {
            for (auto& x : h)
                x = normal(rng);
            w.write_hidden(l, s, h.data());
        }
    }
    w.finish();
}

}  // namespace

class TestResultCache : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const char* name) const { return (dir_.path() + "/" + name).toStdString(); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        write_dump(path("a.dump.h5"), 1);
    }

    void aRepeatedRequestIsAnsweredFromTheCache() {
        ResultCache cache;
        const DumpReader dump(path("a.dump.h5"));
        AnisotropyOptions o;
        o.layer = 1;
        o.bins = 20;
        const auto first = cached_anisotropy(dump, o, cache);
        const auto second = cached_anisotropy(dump, o, cache);
        QCOMPARE(first.get(), second.get());
        QCOMPARE(cache.misses(), 1);
        QCOMPARE(cache.hits(), 1);
        // The cached result is the analysis's own result.
        const AnisotropyResult direct = anisotropy(dump, o);
        QCOMPARE(first->stats.histogram, direct.stats.histogram);
        QCOMPARE(first->stats.mean, direct.stats.mean);
        // A second reader of the same file has the same fingerprint: still a hit.
        const DumpReader again(path("a.dump.h5"));
        QCOMPARE(cached_anisotropy(again, o, cache).get(), first.get());
    }

    void everyOptionIsPartOfTheKey() {
        ResultCache cache;
        const DumpReader dump(path("a.dump.h5"));
        AnisotropyOptions o;
        const auto base = cached_anisotropy(dump, o, cache);
        AnisotropyOptions other = o;
        other.bins = 10;
        QVERIFY(cached_anisotropy(dump, other, cache).get() != base.get());
        other = o;
        other.centred = true;
        QVERIFY(cached_anisotropy(dump, other, cache).get() != base.get());
        other = o;
        other.sentence_vectors = true;
        QVERIFY(cached_anisotropy(dump, other, cache).get() != base.get());
        QCOMPARE(cache.misses(), 4);
        QCOMPARE(cache.hits(), 0);
        // Different analyses of the same file do not collide either.
        PcaOptions p;
        p.global_m = 0;
        QVERIFY(cached_pca_redundancy(dump, p, cache));
        QVERIFY(cached_layer_transitions(dump, {}, cache));
        QCOMPARE(cache.size(), std::size_t{6});
    }

    void aRewrittenDumpIsRecomputed() {
        ResultCache cache;
        const std::string file = path("rewritten.dump.h5");
        write_dump(file, 2);
        AnisotropyOptions o;
        o.layer = 1;
        std::shared_ptr<const AnisotropyResult> before;
        {
            const DumpReader dump(file);
            before = cached_anisotropy(dump, o, cache);
        }
        write_dump(file, 3);
        const DumpReader dump(file);
        const auto after = cached_anisotropy(dump, o, cache);
        QVERIFY(after.get() != before.get());
        QCOMPARE(cache.misses(), 2);
        QVERIFY(after->stats.mean != before->stats.mean);
    }

    void theLeastRecentlyUsedEntryIsEvicted() {
        ResultCache cache(2);
        int computed = 0;
        auto get = [&](const char* k) {
            return *cache.get_or_compute<int>(ResultCache::key(k, {}, {}),
                                              [&] { return ++computed; });
        };
        QCOMPARE(get("a"), 1);
        QCOMPARE(get("b"), 2);
        QCOMPARE(get("a"), 1);  // a is now the most recent
        QCOMPARE(get("c"), 3);  // evicts b
        QCOMPARE(cache.size(), std::size_t{2});
        QCOMPARE(get("a"), 1);
        QCOMPARE(get("b"), 4);  // recomputed
    }

    void aFailureIsNotCached() {
        ResultCache cache;
        const DumpReader dump(path("a.dump.h5"));
        AnisotropyOptions o;
        o.layer = 7;  // not in the dump
        QVERIFY_THROWS_EXCEPTION(Error, cached_anisotropy(dump, o, cache));
        QVERIFY_THROWS_EXCEPTION(Error, cached_anisotropy(dump, o, cache));
        QCOMPARE(cache.misses(), 2);
        QCOMPARE(cache.size(), std::size_t{0});
    }

    void concurrentRequestsComputeOnce() {
        ResultCache cache;
        std::atomic<int> computed{0};
        std::vector<std::thread> threads;
        std::vector<int> seen(6, 0);
        for (int t = 0; t < 6; ++t)
            threads.emplace_back([&, t] {
                seen[t] = *cache.get_or_compute<int>("slow", [&] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    return 40 + ++computed;
                });
            });
        for (auto& th : threads)
            th.join();
        QCOMPARE(computed.load(), 1);
        for (int v : seen)
            QCOMPARE(v, 41);
        QCOMPARE(cache.hits() + cache.misses(), 6);
    }

    void aKeyHoldsOneType() {
        ResultCache cache;
        cache.get_or_compute<int>("k", [] { return 1; });
        QVERIFY_THROWS_EXCEPTION(Error, cache.get_or_compute<double>("k", [] { return 1.0; }));
    }
};

QTEST_APPLESS_MAIN(TestResultCache)
#include "test_result_cache.moc"
