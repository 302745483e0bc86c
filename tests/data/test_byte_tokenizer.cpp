// The byte tokenizer: layout [PAD] [UNK] [CLS] [SEP] [MASK] then byte b at 5 + b, exact round trips
// of any byte string, and its (empty) checkpoint model.
#include <QtTest>

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"

using namespace routescope;
using namespace routescope::data;

class TestByteTokenizer : public QObject {
    Q_OBJECT
private slots:
    void layoutPutsSpecialsFirstAndBytesAfter() {
        ByteTokenizer t;
        QCOMPARE(t.vocab_size(), 261);
        QCOMPARE(t.kind(), std::string("bytes"));
        const SpecialIds s = t.specials();
        QCOMPARE(s.pad, 0);
        QCOMPARE(s.unk, 1);
        QCOMPARE(s.cls, 2);
        QCOMPARE(s.sep, 3);
        QCOMPARE(s.mask, 4);
        QCOMPARE(s.bos, -1);
        QCOMPARE(t.piece(4), std::string("[MASK]"));
        QCOMPARE(t.piece(5 + 'A'), std::string("A"));
        QCOMPARE(t.piece(5 + ' '), std::string("<0x20>"));
        QCOMPARE(t.piece(5 + 0xFF), std::string("<0xFF>"));
        for (int id = 0; id < 5; ++id)
            QVERIFY(t.is_special(id));
        QVERIFY(!t.is_special(5));
    }
    void encodesEachByteAsFivePlusItsValue() {
        ByteTokenizer t;
        const std::vector<std::int32_t> expected = {5 + 'h', 5 + 'i', 5 + 0xC3, 5 + 0xA9};
        QCOMPARE(t.encode("hi\xC3\xA9"), expected);  // "hié": é is two UTF-8 bytes
    }
    void roundTripsAnyBytesExactly() {
        ByteTokenizer t;
        std::string all;
        for (int b = 0; b < 256; ++b)
            all.push_back(static_cast<char>(b));
        QCOMPARE(t.decode(t.encode(all)), all);
        QCOMPARE(t.decode(t.encode("Gated SSMs route \xE2\x86\x92 far.")),
                 std::string("Gated SSMs route \xE2\x86\x92 far."));
    }
    void decodeSkipsPaddingAndSpellsOtherSpecials() {
        ByteTokenizer t;
        const std::vector<std::int32_t> ids = {2, 5 + 'a', 4, 3, 0, 0};
        QCOMPARE(t.decode(ids), std::string("[CLS]a[MASK][SEP]"));
        const std::vector<std::int32_t> bad = {261};
        QVERIFY_THROWS_EXCEPTION(Error, t.decode(bad));
    }
    void checkpointModelIsEmptyAndReloads() {
        ByteTokenizer t;
        QVERIFY(t.serialize().empty());
        auto back = load_tokenizer("bytes", {});
        QCOMPARE(back->kind(), std::string("bytes"));
        QCOMPARE(back->vocab_size(), 261);
        QCOMPARE(back->vocabulary(), t.vocabulary());
        QVERIFY_THROWS_EXCEPTION(ConfigError, load_tokenizer("bpe-bytes", {}));
    }
};

QTEST_APPLESS_MAIN(TestByteTokenizer)
#include "test_byte_tokenizer.moc"
