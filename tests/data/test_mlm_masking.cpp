// MLM masking (TASKS.md): 15% of non-special positions chosen, 80/10/10 of them → [MASK] / random
// non-special token / unchanged, labels −100 elsewhere, never a special or pad, at least one
// target per sequence, and a pure function of (seed, step, example). Rates are checked over
// 100k positions against the binomial closed form within 4σ.
#include <QtTest>

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/mlm_masking.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
constexpr std::int32_t kVocab = 50;  // ids 0..4 special (Routescope layout), 5..49 regular
constexpr std::int32_t kRegular = kVocab - 5;

std::vector<bool> specials() {
    std::vector<bool> s(kVocab, false);
    for (int i = 0; i < 5; ++i)
        s[static_cast<std::size_t>(i)] = true;
    return s;
}

// [CLS] regular tokens… [SEP] then padding up to len; the token draws use a stream of their own.
struct Row {
    std::vector<std::int32_t> ids;
    std::int32_t length;
};
Row make_row(int len, int length, std::uint32_t which) {
    RandomStream rng(99, 0, which);
    Row r{std::vector<std::int32_t>(static_cast<std::size_t>(len), kPadId), length};
    r.ids[0] = kClsId;
    for (int j = 1; j + 1 < length; ++j)
        r.ids[static_cast<std::size_t>(j)] = 5 + static_cast<std::int32_t>(rng.below(kRegular));
    r.ids[static_cast<std::size_t>(length - 1)] = kSepId;
    return r;
}

bool within_4_sigma(double count, double n, double p) {
    const double sigma = std::sqrt(n * p * (1 - p));
    return std::abs(count - n * p) <= 4 * sigma;
}
}  // namespace

class TestMlmMasking : public QObject {
    Q_OBJECT
private slots:
    void ratesMatchTheBinomialExpectations() {
        const MlmMasker masker(kMaskId, specials());
        const int len = 1100, rows = 100;
        double positions = 0, chosen = 0, masked = 0, replaced = 0, unchanged = 0;
        std::vector<std::int32_t> in(len), lab(len);
        for (int r = 0; r < rows; ++r) {
            const Row row = make_row(len, 1002, static_cast<std::uint32_t>(r));  // 1000 real
            masker.apply(row.ids, row.length, in, lab, 1234, 7, static_cast<std::uint32_t>(r));
            for (int j = 0; j < len; ++j) {
                const auto u = static_cast<std::size_t>(j);
                const bool real = j < row.length && row.ids[u] >= 5;
                positions += real;
                if (lab[u] == kIgnoreLabel) {
                    QCOMPARE(in[u], row.ids[u]);  // not chosen: untouched
                    continue;
                }
                QVERIFY2(real, "a special or padding position was chosen");
                QCOMPARE(lab[u], row.ids[u]);
                ++chosen;
                if (in[u] == kMaskId) {
                    ++masked;
                } else if (in[u] != row.ids[u]) {
                    ++replaced;
                    QVERIFY2(in[u] >= 5 && in[u] < kVocab, "random token is a special");
                } else {
                    ++unchanged;
                }
            }
        }
        QCOMPARE(positions, 100000.0);
        QVERIFY2(within_4_sigma(chosen, positions, 0.15), qPrintable(QString::number(chosen)));
        QVERIFY2(within_4_sigma(masked, chosen, 0.8), qPrintable(QString::number(masked)));
        // A random draw equals the original token with probability 1/45, which then reads as
        // "unchanged": P(replaced by another token) = 0.1·44/45.
        const double p_replaced = 0.1 * (kRegular - 1) / kRegular;
        QVERIFY2(within_4_sigma(replaced, chosen, p_replaced),
                 qPrintable(QString::number(replaced)));
        QVERIFY2(within_4_sigma(unchanged, chosen, 1 - 0.8 - p_replaced),
                 qPrintable(QString::number(unchanged)));
    }
    void randomTokensCoverTheRegularVocabularyOnly() {
        ByteTokenizer bytes;
        const MlmMasker masker(bytes, {.choose = 1.0, .to_mask = 0.0, .to_random = 1.0});
        QCOMPARE(masker.replacement_ids().size(), std::size_t(256));
        std::vector<std::int32_t> ids(4000, 5 + 'a'), in(4000), lab(4000);
        masker.apply(ids, 4000, in, lab, 5, 0, 0);
        std::vector<int> seen(261, 0);
        for (const auto t : in)
            ++seen[static_cast<std::size_t>(t)];
        for (int id = 0; id < 5; ++id)
            QCOMPARE(seen[static_cast<std::size_t>(id)], 0);
        int distinct = 0;
        for (int id = 5; id < 261; ++id)
            distinct += seen[static_cast<std::size_t>(id)] > 0;
        QVERIFY(distinct > 240);  // 4000 uniform draws over 256 miss a given id w.p. e^-15.6
    }
    void everySequenceWithARealTokenGetsATarget() {
        const MlmMasker masker(kMaskId, specials());
        std::vector<std::int32_t> ids = {kClsId, 17, kSepId, kPadId}, in(4), lab(4);
        for (std::uint32_t seed = 0; seed < 200; ++seed) {
            masker.apply(ids, 3, in, lab, seed, 0, 0);
            QCOMPARE(lab,
                     (std::vector<std::int32_t>{kIgnoreLabel, 17, kIgnoreLabel, kIgnoreLabel}));
        }
        // Only specials: nothing can be chosen.
        std::vector<std::int32_t> empty = {kClsId, kSepId, kPadId, kPadId};
        masker.apply(empty, 2, in, lab, 1, 0, 0);
        QCOMPARE(lab, std::vector<std::int32_t>(4, kIgnoreLabel));
        QCOMPARE(in, empty);
    }
    void masksArePureFunctionsOfSeedStepAndExample() {
        const MlmMasker masker(kMaskId, specials());
        const int B = 4, L = 64;
        std::vector<std::int32_t> ids, lengths;
        for (int b = 0; b < B; ++b) {
            const Row row = make_row(L, 40 + b * 5, static_cast<std::uint32_t>(b));
            ids.insert(ids.end(), row.ids.begin(), row.ids.end());
            lengths.push_back(row.length);
        }
        std::vector<std::int32_t> in1(B * L), lab1(B * L), in2(B * L), lab2(B * L);
        masker.apply_batch(ids.data(), lengths.data(), B, L, in1.data(), lab1.data(), 42, 3);
        masker.apply_batch(ids.data(), lengths.data(), B, L, in2.data(), lab2.data(), 42, 3);
        QCOMPARE(in1, in2);
        QCOMPARE(lab1, lab2);
        // Row 2 alone, as example 2, is row 2 of the batch.
        std::vector<std::int32_t> in_row(L), lab_row(L);
        masker.apply({ids.data() + 2 * L, L}, lengths[2], in_row, lab_row, 42, 3, 2);
        QVERIFY(std::equal(in_row.begin(), in_row.end(), in1.begin() + 2 * L));
        QVERIFY(std::equal(lab_row.begin(), lab_row.end(), lab1.begin() + 2 * L));
        // Another step or seed gives other masks.
        masker.apply_batch(ids.data(), lengths.data(), B, L, in2.data(), lab2.data(), 42, 4);
        QVERIFY(lab1 != lab2);
        masker.apply_batch(ids.data(), lengths.data(), B, L, in2.data(), lab2.data(), 43, 3);
        QVERIFY(lab1 != lab2);
    }
    void tokenizerWithoutMaskIsAConfigError() {
        WordPieceTokenizer no_mask("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n");
        QVERIFY_THROWS_EXCEPTION(ConfigError, MlmMasker{no_mask});
        QVERIFY_THROWS_EXCEPTION(ConfigError, MlmMasker(kMaskId, specials(), {.choose = 0.0}));
    }
};

QTEST_APPLESS_MAIN(TestMlmMasking)
#include "test_mlm_masking.moc"
