// The training data's packing and order (engine/train/packed_sequences.hpp), against its file
// comment: documents concatenated with [SEP] after each, cut into chunks of seq_len − 1, each
// sequence [CLS] + chunk padded with [PAD]; every 20th document held out; the run's k-th sequence
// a per-epoch permutation that is a pure function of (seed, k). The expected sequences are written
// out by hand here. (These replace the checks test_batching made on the removed engine/data twins.)
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/train/packed_sequences.hpp"

using namespace routescope;

namespace {
using Ids = std::vector<std::int32_t>;
constexpr std::int32_t C = data::kClsId, S = data::kSepId, P = data::kPadId;

Ids row(const train::SequenceSet& set, std::int64_t i) {
    return Ids(set.ids(i), set.ids(i) + set.seq_len());
}
}  // namespace

class TestPackedSequences : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void documentsAreConcatenatedWithSepAndCutBehindCls() {
        train::SequenceSet set(4, P);
        set.pack({{101, 102, 103}, {104, 105}}, C, S);
        // Stream 101 102 103 SEP 104 105 SEP, chunks of 3, each behind [CLS].
        QCOMPARE(set.size(), std::int64_t(3));
        QCOMPARE(row(set, 0), (Ids{C, 101, 102, 103}));
        QCOMPARE(row(set, 1), (Ids{C, S, 104, 105}));
        QCOMPARE(row(set, 2), (Ids{C, S, P, P}));
        QCOMPARE(set.length(0), 4);
        QCOMPARE(set.length(2), 2);
        QCOMPARE(set.tokens(), std::int64_t(10));
    }

    void addPadsAndRefusesWhatDoesNotFit() {
        train::SequenceSet set(5, P);
        set.add({C, 7, S});
        QCOMPARE(row(set, 0), (Ids{C, 7, S, P, P}));
        QCOMPARE(set.length(0), 3);
        QVERIFY_THROWS_EXCEPTION(Error, set.add({C, 1, 2, 3, 4, S}));
        QVERIFY_THROWS_EXCEPTION(Error, set.add({}));
    }

    void everyTwentiethDocumentIsHeldOut() {
        const std::string path = dir_.filePath("corpus.txt").toStdString();
        {
            std::ofstream out(path);
            for (int d = 0; d < 45; ++d)
                out << "doc" << d << "\n";
        }
        const data::ByteTokenizer bytes;
        const train::PackedCorpus c = train::pack_corpus(path, nullptr, "line", 16, bytes);
        QCOMPARE(c.valid_documents, std::int64_t(2));  // documents 19 and 39
        QCOMPARE(c.train_documents, std::int64_t(43));
        QVERIFY(!c.valid_is_train);
        // The held-out part holds exactly "doc19" and "doc39", in order.
        std::string held;
        for (std::int64_t i = 0; i < c.valid.size(); ++i)
            for (int t = 1; t < c.valid.length(i); ++t)
                held += c.valid.ids(i)[t] == S
                            ? '|'
                            : char(c.valid.ids(i)[t] - data::ByteTokenizer::kByteOffset);
        QCOMPARE(QString::fromStdString(held), QString("doc19|doc39|"));
    }

    void tooShortASequenceLengthIsAConfigError() {
        const std::string path = dir_.filePath("one.txt").toStdString();
        std::ofstream(path) << "a document\n";
        const data::ByteTokenizer bytes;
        QVERIFY_THROWS_EXCEPTION(ConfigError, train::pack_documents(path, "line", 1, bytes));
        QVERIFY_THROWS_EXCEPTION(ConfigError, train::pack_corpus(path, nullptr, "line", 1, bytes));
    }

    // A tokenizer without [PAD] (a SentencePiece model with the library's defaults): the message
    // names the key and the piece that is missing (it said "lacks one").
    void aTokenizerWithoutPadIsNamedWithThePieceItLacks() {
        struct NoPad : data::Tokenizer {
            data::ByteTokenizer bytes;
            std::string kind() const override { return "sentencepiece"; }
            std::vector<std::int32_t> encode(std::string_view t) const override {
                return bytes.encode(t);
            }
            std::string decode(std::span<const std::int32_t> ids) const override {
                return bytes.decode(ids);
            }
            std::string piece(std::int32_t id) const override { return bytes.piece(id); }
            std::int32_t vocab_size() const override { return bytes.vocab_size(); }
            data::SpecialIds specials() const override {
                data::SpecialIds s = bytes.specials();
                s.pad = -1;
                return s;
            }
            bool is_special(std::int32_t id) const override { return bytes.is_special(id); }
            std::vector<std::uint8_t> serialize() const override { return bytes.serialize(); }
        };
        const std::string path = dir_.filePath("nopad.txt").toStdString();
        std::ofstream(path) << "a document\n";
        const NoPad tokenizer;
        for (const bool documents : {false, true}) {
            try {
                if (documents)
                    (void)train::pack_documents(path, "line", 16, tokenizer);
                else
                    (void)train::pack_corpus(path, nullptr, "line", 16, tokenizer);
                QFAIL("no error");
            } catch (const ConfigError& e) {
                const std::string what = e.what();
                QVERIFY2(what.find("tokenizer.model:") == 0 &&
                             what.find("has no [PAD]") != std::string::npos,
                         what.c_str());
            }
        }
    }

    void theOrderIsAPermutationPerEpochAndAFunctionOfSeedAndPosition() {
        const std::int64_t n = 37;
        train::SequenceOrder order(n, 5);
        std::vector<std::int64_t> seen;
        for (std::int64_t k = 0; k < 3 * n; ++k)
            seen.push_back(order.at(k));
        for (int e = 0; e < 3; ++e) {
            std::vector<std::int64_t> epoch(seen.begin() + e * n, seen.begin() + (e + 1) * n);
            std::sort(epoch.begin(), epoch.end());
            std::vector<std::int64_t> all(static_cast<std::size_t>(n));
            std::iota(all.begin(), all.end(), 0);
            QCOMPARE(epoch, all);
        }
        QVERIFY(!std::equal(seen.begin(), seen.begin() + n, seen.begin() + n));  // reshuffled
        // Resuming at any position gives what an uninterrupted run sees.
        train::SequenceOrder resumed(n, 5);
        for (std::int64_t k : {2 * n + 3, std::int64_t(5), n + 1})
            QCOMPARE(resumed.at(k), seen[static_cast<std::size_t>(k)]);
        train::SequenceOrder other(n, 6);
        std::vector<std::int64_t> first;
        for (std::int64_t k = 0; k < n; ++k)
            first.push_back(other.at(k));
        QVERIFY(!std::equal(first.begin(), first.end(), seen.begin()));
    }
};

QTEST_GUILESS_MAIN(TestPackedSequences)
#include "test_packed_sequences.moc"
