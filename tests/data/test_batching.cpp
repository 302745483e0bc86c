// Packing a corpus into framed sequences, the held-out split, per-epoch shuffles and the
// resumable batcher (data_position).
#include <QtTest>

#include <QTemporaryDir>
#include <algorithm>
#include <numeric>
#include <set>

#include "corpus_writer.hpp"
#include "engine/core/error.hpp"
#include "engine/data/batcher.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/corpus_packing.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
using Ids = std::vector<std::int32_t>;
constexpr std::int32_t C = kClsId, S = kSepId;

std::vector<Ids> as_vectors(const SequenceSet& set) {
    std::vector<Ids> out;
    for (std::int64_t i = 0; i < set.size(); ++i)
        out.emplace_back(set[i].begin(), set[i].end());
    return out;
}

SequenceSet numbered(int n, int len) {  // sequence i = [CLS] (10 + i) × (1 + i mod len−2) [SEP]
    SequenceSet set;
    for (int i = 0; i < n; ++i) {
        Ids s{C};
        s.insert(s.end(), static_cast<std::size_t>(1 + i % (len - 2)), 10 + i);
        s.push_back(S);
        set.add(s);
    }
    return set;
}
}  // namespace

class TestBatching : public QObject {
    Q_OBJECT
private slots:
    void splitModeFramesEachDocumentAndContinuesLongOnes() {
        const std::vector<Ids> docs = {{5, 5, 5}, {}, {6, 6, 6, 6, 7, 7, 7}};
        const auto set = pack_documents(docs, 6, kStandardSpecials, PackMode::Split);
        QCOMPARE(as_vectors(set),
                 (std::vector<Ids>{{C, 5, 5, 5, S}, {C, 6, 6, 6, 6, S}, {C, 7, 7, 7, S}}));
    }
    void greedyModeSharesSequencesWhileDocumentsFit() {
        const std::vector<Ids> docs = {{5, 5}, {6}, {7, 7, 7, 7, 7}, {8, 8, 8, 8, 8, 8, 8, 8}};
        const auto set = pack_documents(docs, 8, kStandardSpecials, PackMode::Greedy);
        // [C 5 5 S 6 S] has 6 tokens; 7×5 needs 1 + 5 + 1 more → new sequence [C 7 7 7 7 7 S];
        // 8×8 does not fit either: [C 8×6 S] and then [C 8 8 S] (still open at the end).
        QCOMPARE(as_vectors(set), (std::vector<Ids>{{C, 5, 5, S, 6, S},
                                                    {C, 7, 7, 7, 7, 7, S},
                                                    {C, 8, 8, 8, 8, 8, 8, S},
                                                    {C, 8, 8, S}}));
        QCOMPARE(pack_documents({{5}, {6}}, 5, kStandardSpecials, PackMode::Greedy).size(),
                 std::int64_t(1));  // [C 5 S 6 S] is exactly 5
        QCOMPARE(pack_documents({{5}, {6}}, 4, kStandardSpecials, PackMode::Greedy).size(),
                 std::int64_t(2));
    }
    void packedCorpusKeepsEveryTokenInOrder() {
        QTemporaryDir dir;
        const auto path = write_test_file(dir.filePath("c.txt"),
                                          "short one\na much longer document that must be split\n"
                                          "x\n");
        TextCorpus corpus(path);
        ByteTokenizer bytes;
        for (const PackMode mode : {PackMode::Split, PackMode::Greedy}) {
            const auto set = pack_corpus(corpus, bytes, 16, mode);
            Ids content, expected;
            for (std::int64_t i = 0; i < set.size(); ++i) {
                const auto s = set[i];
                QVERIFY(s.size() <= 16);
                QCOMPARE(s.front(), C);
                QCOMPARE(s.back(), S);
                for (const auto t : s)
                    if (t != C && t != S) content.push_back(t);
            }
            for (const char* doc : {"short one", "a much longer document that must be split", "x"})
                for (const auto t : bytes.encode(doc))
                    expected.push_back(t);
            QCOMPARE(content, expected);
        }
        QVERIFY_THROWS_EXCEPTION(ConfigError, pack_corpus(corpus, bytes, 2, PackMode::Split));
    }
    void validationSplitIsDisjointDeterministicAndSized() {
        const auto a = split_validation(100, 0.1, 7);
        QCOMPARE(a.valid.size(), std::size_t(10));
        QCOMPARE(a.train.size(), std::size_t(90));
        std::set<std::int64_t> all(a.train.begin(), a.train.end());
        for (const auto v : a.valid)
            QVERIFY(all.insert(v).second);
        QCOMPARE(all.size(), std::size_t(100));
        QCOMPARE(split_validation(100, 0.1, 7).valid, a.valid);
        QVERIFY(split_validation(100, 0.1, 8).valid != a.valid);
        QCOMPARE(split_validation(3, 0.01, 1).valid.size(), std::size_t(1));  // at least one
        QCOMPARE(split_validation(10, 0.0, 1).valid.size(), std::size_t(0));
        QVERIFY_THROWS_EXCEPTION(ConfigError, split_validation(10, 1.0, 1));
    }
    void epochOrdersArePermutationsThatChangePerEpoch() {
        const auto e0 = epoch_order(50, 3, 0), e1 = epoch_order(50, 3, 1);
        Ids sorted0(e0.begin(), e0.end());
        std::sort(sorted0.begin(), sorted0.end());
        for (int i = 0; i < 50; ++i)
            QCOMPARE(sorted0[static_cast<std::size_t>(i)], i);
        QVERIFY(e0 != e1);
        QCOMPARE(epoch_order(50, 3, 1), e1);
    }
    void batchesPadCoverEachEpochOnceAndResume() {
        const auto set = numbered(12, 8);
        std::vector<std::int64_t> all(12);
        std::iota(all.begin(), all.end(), 0);
        Batcher a(set, all, 4, 8, kPadId, 11, true);
        QCOMPARE(a.batches_per_epoch(), std::int64_t(3));
        std::multiset<std::int64_t> epoch0;
        for (int k = 0; k < 3; ++k) {
            const Batch b = a.next();
            for (int r = 0; r < 4; ++r) {
                const std::int64_t s = b.sequence[static_cast<std::size_t>(r)];
                epoch0.insert(s);
                const auto len = static_cast<std::size_t>(b.lengths[static_cast<std::size_t>(r)]);
                QCOMPARE(len, set[s].size());
                for (std::size_t j = 0; j < 8; ++j) {
                    const auto id = b.ids[static_cast<std::size_t>(r) * 8 + j];
                    QCOMPARE(id, j < len ? set[s][j] : kPadId);
                }
            }
        }
        QCOMPARE(epoch0, std::multiset<std::int64_t>(all.begin(), all.end()));
        QCOMPARE(a.position(), std::int64_t(12));
        QCOMPARE(a.epoch(), std::int64_t(1));

        // Resuming at a recorded position gives the same batches as going on.
        a.next();
        const std::int64_t pos = a.position();
        const Batch expected = a.next();
        Batcher b(set, all, 4, 8, kPadId, 11, true);
        b.seek(pos);
        const Batch got = b.next();
        QCOMPARE(got.ids, expected.ids);
        QCOMPARE(got.sequence, expected.sequence);
    }
    void sequenceLongerThanTheBatchLengthIsRejected() {
        const auto set = numbered(3, 10);
        QVERIFY_THROWS_EXCEPTION(ConfigError, Batcher(set, {0, 1, 2}, 2, 4, kPadId, 1, false));
        QVERIFY_THROWS_EXCEPTION(ConfigError, Batcher(set, {}, 2, 10, kPadId, 1, false));
    }
};

QTEST_APPLESS_MAIN(TestBatching)
#include "test_batching.moc"
