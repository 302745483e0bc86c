// BERT WordPiece on a small vocab.txt written here; the expected ids are worked out by hand from
// BERT-uncased's rules (lower-case, strip accents, split punctuation, greedy longest match, "##").
#include <QtTest>

#include <QTemporaryDir>
#include <algorithm>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
// id = line number.
const char* kVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"  // 0..4
    "the\nun\n##aff\n##able\nrunn\n"        // 5..9
    "##ing\n,\n.\n!\ncafe\n"                // 10..14
    "hello\nworld\n##s\n$\nnaive\n"         // 15..19
    "\xE4\xB8\xAD\nrun\n[unused0]\n"        // 20 中, 21, 22
    "uber\n\xE1\x84\x92\n";                 // 23 über→uber, 24 Hangul jamo ᄒ (U+1112)

using Ids = std::vector<std::int32_t>;
}  // namespace

class TestWordPieceTokenizer : public QObject {
    Q_OBJECT
private slots:
    void readsSpecialIdsFromVocab() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.vocab_size(), 25);
        QCOMPARE(t.specials().pad, 0);
        QCOMPARE(t.specials().unk, 1);
        QCOMPARE(t.specials().cls, 2);
        QCOMPARE(t.specials().sep, 3);
        QCOMPARE(t.specials().mask, 4);
        QVERIFY(t.is_special(22));  // [unused0]
        QVERIFY(!t.is_special(5));
    }
    // A vocab.txt saved "UTF-8 with BOM": the mark is no part of "[PAD]" (training said "no
    // [PAD]" of a file whose first line is [PAD]).
    void aByteOrderMarkIsNoPartOfTheFirstPiece() {
        WordPieceTokenizer t(std::string("\xEF\xBB\xBF") + kVocab);
        QCOMPARE(t.vocab_size(), 25);
        QCOMPARE(t.specials().pad, 0);
        QCOMPARE(t.serialize(), WordPieceTokenizer(kVocab).serialize());
    }
    // Lines ended by CR alone (classic Mac OS): Python's text mode (transformers' load_vocab)
    // splits them as lines; read as one line there was "no [UNK] piece among 1 lines". The same
    // ids as the LF file; a CRLF file too.
    void crOnlyAndCrlfLineEndsReadAsPythonReadsThem() {
        std::string cr = kVocab, crlf;
        std::replace(cr.begin(), cr.end(), '\n', '\r');
        for (const char c : std::string(kVocab))
            crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        for (const std::string& text : {cr, crlf}) {
            WordPieceTokenizer t(text);
            QCOMPARE(t.vocab_size(), 25);
            QCOMPARE(t.vocabulary(), WordPieceTokenizer(kVocab).vocabulary());
            QCOMPARE(t.encode("Running worlds!"),
                     WordPieceTokenizer(kVocab).encode("Running worlds!"));
        }
    }
    // A vocab.txt saved as UTF-16 (Windows' "Unicode"): named with the iconv command that
    // converts it, as corpora are (it said "invalid UTF-8 byte 0xFF").
    void aUtf16VocabIsNamedWithItsConversion() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("vocab16.txt").toStdString();
        std::string utf16 = "\xFF\xFE";
        for (const char c : std::string("[PAD]\n[UNK]\nthe\n")) {
            utf16 += c;
            utf16 += '\0';
        }
        std::ofstream(path, std::ios::binary) << utf16;
        std::string message;
        try {
            load_tokenizer_file("wordpiece", path);
        } catch (const FormatError& e) {
            message = e.what();
        }
        QVERIFY2(message.find("UTF-16") != std::string::npos &&
                     message.find("iconv") != std::string::npos,
                 message.c_str());
    }
    void greedyLongestMatchWithContinuations() {
        WordPieceTokenizer t(kVocab);
        // unaffable → un ##aff ##able; running → runn ##ing (longest first: "runn" beats "run").
        QCOMPARE(t.encode("unaffable running"), (Ids{6, 7, 8, 9, 10}));
        QCOMPARE(t.encode("worlds"), (Ids{16, 17}));
    }
    void lowerCasesStripsAccentsAndSplitsPunctuation() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.encode("UNaffable Running!"), (Ids{6, 7, 8, 9, 10, 13}));
        QCOMPARE(t.encode("Caf\xC3\xA9, NA\xC3\x8FVE."), (Ids{14, 11, 19, 12}));  // Café, NAÏVE.
        QCOMPARE(t.encode("\xC3\x9C"
                          "ber"),
                 (Ids{23}));  // Über
        // ASCII symbols are punctuation in BERT: "$5" → "$", "5" (5 is not in the vocabulary).
        QCOMPARE(t.encode("$5"), (Ids{18, 1}));
    }
    // Python's str.lower(), which BERT's BasicTokenizer applies to each whitespace token, maps a
    // capital sigma to the final form ς when a cased letter precedes it and none follows
    // (Unicode's Final_Sigma; case-ignorable characters, the full stop, the apostrophe and
    // combining marks among them, skipped): it was σ everywhere. The expected tokens are
    // tests/reference/bert_uncased_tokenizer.py's basic_tokens of each string (Python 3.11,
    // Unicode 14), e.g. "ΑΣ.Α".lower() == "ασ.α" but "ΑΣ,Β".lower() == "ας,β".
    void uncasedLowersAWordFinalSigmaAsPythonDoes() {
        const WordPieceTokenizer t(kVocab);
        using Words = std::vector<std::string>;
        QCOMPARE(t.basic_tokens("ΟΔΟΣ ΣΟΦΟΣ"), (Words{"οδος", "σοφος"}));
        QCOMPARE(t.basic_tokens("ΑΣΑ Σ ΣΣ 1Σ"), (Words{"ασα", "σ", "σς", "1σ"}));
        QCOMPARE(t.basic_tokens("ΑΣ. ΑΣ.Α ΑΣ,Β"),
                 (Words{"ας", ".", "ασ", ".", "α", "ας", ",", "β"}));
        // A combining acute (Mn, case-ignorable) before or after the sigma, stripped after.
        QCOMPARE(t.basic_tokens("Α\u0301Σ ΑΣ\u0301 ΑΣ\u0301Α"), (Words{"ας", "ας", "ασα"}));
        QCOMPARE(t.basic_tokens("ΑΣ'Σ ΑΣ\u4E2D"), (Words{"ασ", "'", "ς", "ας", "\u4E2D"}));
        // Cased text keeps the capital.
        QCOMPARE(WordPieceTokenizer(kVocab, Casing::cased).basic_tokens("ΟΔΟΣ"), (Words{"ΟΔΟΣ"}));
    }
    void casedKeepsCaseAndAccents() {
        // transformers' BasicTokenizer(do_lower_case=False) examples: " \tHeLLo!how  \n Are yoU?  "
        // → HeLLo ! how Are yoU ?, and "HäLLo" keeps its umlaut.
        const WordPieceTokenizer t(kVocab, Casing::cased);
        QCOMPARE(t.kind(), std::string("wordpiece_cased"));
        QCOMPARE(t.basic_tokens(" \tHeLLo!how  \n Are yoU?  "),
                 (std::vector<std::string>{"HeLLo", "!", "how", "Are", "yoU", "?"}));
        QCOMPARE(t.basic_tokens(" \tH\xC3\xA4LLo!how  \n Are yoU?  "),
                 (std::vector<std::string>{"H\xC3\xA4LLo", "!", "how", "Are", "yoU", "?"}));
        // The vocabulary's lower-case pieces no longer match capitalised words; accents stay.
        QCOMPARE(t.encode("Running running"), (Ids{1, 9, 10}));
        QCOMPARE(t.encode("caf\xC3\xA9 cafe"), (Ids{1, 14}));
        // Controls, CJK spacing and literal specials are as uncased.
        QCOMPARE(t.encode("the\x07\xE4\xB8\xAD[MASK]"), (Ids{5, 20, 4}));
        // The checkpoint kind round-trips the casing.
        const auto back = load_tokenizer(t.kind(), t.serialize());
        QCOMPARE(back->encode("Running"), (Ids{1}));
        QCOMPARE(load_tokenizer("wordpiece", t.serialize())->encode("Running"), (Ids{9, 10}));
    }
    void wordWithoutFullSegmentationIsOneUnknown() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.encode("helloz"), (Ids{1}));  // "hello" matches but "##z" does not
        QCOMPARE(t.encode("xyz the"), (Ids{1, 5}));
        QCOMPARE(t.encode(std::string(101, 'a')), (Ids{1}));  // over 100 characters
    }
    void cjkIdeographsAreSeparateWords() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.basic_tokens("the\xE4\xB8\xAD\xE6\x96\x87"),
                 (std::vector<std::string>{"the", "\xE4\xB8\xAD", "\xE6\x96\x87"}));  // the中文
        QCOMPARE(t.encode("the\xE4\xB8\xAD\xE6\x96\x87"), (Ids{5, 20, 1}));
    }
    void hangulSyllablesDecomposeIntoJamo() {
        WordPieceTokenizer t(kVocab);
        // 하 U+D558 = ᄒ U+1112 + ᅡ U+1161 (Unicode §3.12: L = 10584 / 588 = 18, V = 0, T = 0).
        QCOMPARE(t.basic_tokens("\xED\x95\x98"),
                 (std::vector<std::string>{"\xE1\x84\x92\xE1\x85\xA1"}));
    }
    void controlCharactersVanishAndWhitespaceSplits() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.encode("the\x01\tworld\n"), (Ids{5, 16}));
        QCOMPARE(t.basic_tokens("  "), (std::vector<std::string>{}));
    }
    void lineAndParagraphSeparatorsSplitWords() {
        // Python's str.split (BERT's whitespace_tokenize) splits at U+2028 and U+2029, which
        // _clean_text keeps: "hello\u2028world".split() == ["hello", "world"].
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.encode("hello\xE2\x80\xA8world"), (Ids{15, 16}));
        QCOMPARE(t.encode("hello\xE2\x80\xA9world"), (Ids{15, 16}));
    }
    void literalSpecialsStayWhole() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.encode("hello[MASK]world"), (Ids{15, 4, 16}));
        QCOMPARE(t.encode("[CLS] the [SEP]"), (Ids{2, 5, 3}));
        // Lower-case "[mask]" is not the special: it splits into "[", "mask", "]".
        QCOMPARE(t.encode("[mask]"), (Ids{1, 1, 1}));
        // Specials interleaved, each found in order whatever the others (the search of each
        // special is resumed, not restarted: session 32).
        std::string many;
        Ids want;
        for (int i = 0; i < 200; ++i) {
            many += i % 3 == 0 ? "the [MASK] " : i % 3 == 1 ? "hello[SEP]" : "[CLS]world ";
            const Ids part = i % 3 == 0 ? Ids{5, 4} : i % 3 == 1 ? Ids{15, 3} : Ids{2, 16};
            want.insert(want.end(), part.begin(), part.end());
        }
        QCOMPARE(t.encode(many), want);
    }
    // A piece holding a NUL byte is refused naming its line: a dump's /vocab cut "x\0y" to a
    // second "x" (session 32).
    void aPieceWithANulIsRefused() {
        const std::string text = std::string(kVocab) + std::string("x\0y\n", 4);
        try {
            WordPieceTokenizer t(text);
            QFAIL("accepted");
        } catch (const routescope::FormatError& e) {
            QVERIFY2(std::string(e.what()).find("line 26") != std::string::npos &&
                         std::string(e.what()).find("NUL") != std::string::npos,
                     e.what());
        }
    }
    void decodeGluesContinuationsAndSkipsPadding() {
        WordPieceTokenizer t(kVocab);
        QCOMPARE(t.decode(Ids{2, 6, 7, 8, 9, 10, 3, 0, 0}),
                 std::string("[CLS] unaffable running [SEP]"));
        QCOMPARE(t.decode(t.encode("the unaffable world")), std::string("the unaffable world"));
    }
    void serializesToTheVocabFileAndReloads() {
        WordPieceTokenizer t(kVocab);
        const auto bytes = t.serialize();
        QCOMPARE(std::string(bytes.begin(), bytes.end()), std::string(kVocab));
        auto back = load_tokenizer("wordpiece", bytes);
        QCOMPARE(back->vocabulary(), t.vocabulary());
        QCOMPARE(back->encode("Running worlds!"), t.encode("Running worlds!"));

        QTemporaryDir dir;
        const std::string path = dir.filePath("vocab.txt").toStdString();
        std::ofstream(path) << kVocab;
        QCOMPARE(load_tokenizer_file("wordpiece", path)->vocab_size(), 25);
        QVERIFY_THROWS_EXCEPTION(IoError, load_tokenizer_file("wordpiece", path + ".missing"));
    }
    void vocabWithoutUnknownIsRejected() {
        QVERIFY_THROWS_EXCEPTION(FormatError, WordPieceTokenizer("[PAD]\nthe\n"));
    }
    // A SentencePiece ModelProto (field 1, a piece: tag 0x0A, its length, then the piece's own
    // fields) is recognised as such, the file and the text alike; the WordPiece reader's own
    // message keeps train's advice (tokenizer.kind), while import says its own (test_importers).
    void aSentencePieceModelIsRecognised() {
        // "[PAD]", score -1.5f (00 00 C0 BF: not UTF-8), type 3 — written out by hand.
        const std::string spiece("\x0A\x0E\x0A\x05[PAD]\x15\x00\x00\xC0\xBF\x18\x03", 16);
        QVERIFY(sentencepiece_model_bytes(spiece));
        QVERIFY(!sentencepiece_model_bytes(kVocab));
        QVERIFY(!sentencepiece_model_bytes(std::string("\n[UNK]\n")));  // an empty first piece
        QVERIFY(!sentencepiece_model_bytes(std::string("[UNK]\nwor\xff") + "ld\n"));
        QTemporaryDir dir;
        const std::string path = dir.filePath("spiece.vocab").toStdString();
        std::ofstream(path, std::ios::binary) << spiece;
        std::string message;
        try {
            WordPieceTokenizer::from_file(path);
        } catch (const FormatError& e) {
            message = e.what();
        }
        QVERIFY2(message.find(path + ": a binary file (a SentencePiece .model") == 0 &&
                     message.find("tokenizer.kind=sentencepiece") != std::string::npos,
                 message.c_str());
    }
    // Issue 17 class 8: a vocab.txt with invalid UTF-8 is rejected naming the file and the line
    // (as corpora are), not loaded with pieces no text can ever match.
    void vocabWithInvalidUtf8NamesFileAndLine() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("bad-vocab.txt").toStdString();
        std::ofstream(path, std::ios::binary) << "[PAD]\n[UNK]\nthe\nwor\xff"
                                                 "ld\n##s\n";
        std::string message;
        try {
            load_tokenizer_file("wordpiece", path);
        } catch (const FormatError& e) {
            message = e.what();
        }
        QVERIFY2(message.find(path + ":4:") != std::string::npos, message.c_str());
        QVERIFY2(message.find("invalid UTF-8 byte 0xFF") != std::string::npos, message.c_str());
        // The same check on the text stored in a checkpoint (no file name to give).
        QVERIFY_THROWS_EXCEPTION(FormatError, WordPieceTokenizer("[UNK]\n\xc3\x28\n"));
    }
};

QTEST_APPLESS_MAIN(TestWordPieceTokenizer)
#include "test_wordpiece_tokenizer.moc"
