// SentencePiece trained by the engine: the Routescope special layout, round trips, checkpoint
// bytes, and ids identical to Python's sentencepiece encoding the same sentences with the same
// model (/usr/bin/python3, the library the researchers' own scripts use).
#include <QtTest>

#include <QProcess>
#include <QTemporaryDir>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "corpus_writer.hpp"
#include "engine/core/error.hpp"
#include "engine/data/sentencepiece_tokenizer.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/data/tokenizer.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
// A few thousand varied sentences from a fixed word list (deterministic, no randomness needed).
std::string make_corpus() {
    const char* subjects[] = {"the gated model", "a state space layer", "the attention baseline",
                              "our encoder",     "every kernel",        "the bidirectional scan"};
    const char* verbs[] = {"routes", "mixes", "forgets", "remembers", "learns", "smooths"};
    const char* objects[] = {"long sequences", "distant tokens", "local context",
                             "the question",   "hidden states",  "frequency bands"};
    const char* tails[] = {"quickly.",        "over many layers.",     "without attention.",
                           "in linear time.", "as the paper reports.", "during pretraining."};
    std::string text;
    // Pseudo-words from syllables (a 32-bit LCG, Numerical Recipes' constants) give the trainer
    // enough distinct pieces for a few hundred ids.
    const char* syllables[] = {"ka",  "lo", "mi",  "ren", "tas", "vu", "por", "sel", "dim", "an",
                               "que", "zo", "bri", "ul",  "fen", "go", "ish", "tra", "ne",  "wy"};
    std::uint32_t state = 12345;
    for (int i = 0; i < 2000; ++i) {
        for (int w = 0; w < 8; ++w) {
            state = state * 1664525u + 1013904223u;
            const int n = 1 + static_cast<int>(state >> 30) % 3;
            for (int k = 0; k < n; ++k) {
                state = state * 1664525u + 1013904223u;
                text += syllables[(state >> 16) % 20];
            }
            text += w == 7 ? ".\n" : " ";
        }
    }
    for (int i = 0; i < 3000; ++i) {
        text += std::string(subjects[i % 6]) + " " + verbs[(i / 6) % 6] + " " +
                objects[(i / 36) % 6] + " " + tails[(i * 7 + i / 216) % 6] + "\n";
    }
    return text;
}

const std::vector<std::string> kSentences = {
    "the gated model routes long sequences quickly.",
    "A completely unseen sentence, with Capitals and numbers 12345!",
    "every kernel smooths frequency bands [MASK] in linear time.",
    "   spaces   collapse   ",
    "caf\xC3\xA9 na\xC3\xAFve \xE2\x86\x92 \xE4\xB8\xAD\xE6\x96\x87",
};

std::vector<std::vector<std::int32_t>> python_ids(const QString& model_path) {
    // The sentences go through JSON on stdin so no quoting issue can change them.
    const char* script =
        "import json, sys, sentencepiece as spm\n"
        "sp = spm.SentencePieceProcessor(model_file=sys.argv[1])\n"
        "print(json.dumps([sp.encode(s) for s in json.load(sys.stdin)]))\n";
    QProcess py;
    py.start(ROUTESCOPE_PYTHON, {"-c", script, model_path});
    if (!py.waitForStarted()) qFatal("cannot start %s", ROUTESCOPE_PYTHON);
    py.write(QByteArray::fromStdString(nlohmann::json(kSentences).dump()));
    py.closeWriteChannel();
    py.waitForFinished(60000);
    if (py.exitCode() != 0) qFatal("python failed: %s", py.readAllStandardError().constData());
    return nlohmann::json::parse(py.readAllStandardOutput().toStdString())
        .get<std::vector<std::vector<std::int32_t>>>();
}

// A protobuf varint.
std::string varint(std::uint64_t v) {
    std::string out;
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    return out + static_cast<char>(v);
}

// A NormalizerSpec whose precompiled_charsmap is `blob`, appended to a serialized ModelProto as
// another normalizer_spec (field 3): protobuf merges repeated message fields, so the library uses
// this charsmap (built by hand below, not by the code under test).
std::vector<std::uint8_t> with_charsmap(const std::vector<std::uint8_t>& model,
                                        const std::string& blob) {
    // (appends, not "\x12" + ...: GCC 12 warns wrongly on a literal plus a string)
    std::string spec(1, '\x12');
    spec += varint(blob.size());
    spec += blob;
    std::vector<std::uint8_t> out = model;
    std::string tail(1, '\x1a');
    tail += varint(spec.size());
    tail += spec;
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

// A darts-clone double array (the unit layout of darts.h) that maps "A" to the string at offset
// `value`: the root (unit 0) has its children at 256; "A" (0x41) is unit 256 ^ 0x41 = 321, with
// a leaf, its children at `child`; the leaf unit at `child` holds the value. Units no search
// reaches carry labels that never match the byte that would lead there.
struct HandTrie {
    std::uint32_t trie_bytes_override = 0;  // 0: the real size
    std::uint32_t root_base = 256;
    std::uint32_t child = 512;
    bool leaf = true;
    std::uint32_t value = 0;
    std::string strings = std::string("a\0", 2);
    std::string blob() const {
        std::vector<std::uint32_t> u(768, 0);
        for (std::uint32_t p = 256; p < 768; ++p)
            u[p] = (p ^ (p < 512 ? 256u : 512u) ^ 1u) & 0xFF;
        u[0] = root_base << 10;
        u[321] = ((321u ^ child) << 10) | (leaf ? 1u << 8 : 0u) | 0x41;
        if (child < u.size()) u[child] = 0x80000000u | value;
        std::string out(4 + u.size() * 4, '\0');
        const std::uint32_t size = trie_bytes_override ? trie_bytes_override : u.size() * 4;
        std::memcpy(out.data(), &size, 4);
        std::memcpy(out.data() + 4, u.data(), u.size() * 4);
        return out + strings;
    }
};
}  // namespace

class TestSentencePieceTokenizer : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string corpus_path_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        corpus_path_ = write_test_file(dir_.filePath("corpus.txt"), make_corpus());
    }
    // A corpus of one document per line whose long documents (over the library's 4192-byte
    // max_sentence_length) use letters the short ones do not: the trainer skipped every long
    // document without a word, so those letters had no piece and encoded to [UNK]. A corpus of
    // one 2 MB line (no line under the limit) failed with "[!sentences_.empty()]".
    void documentsLongerThanTheLibrarysLimitAreTrainedOn() {
        std::string text;
        for (int i = 0; i < 200; ++i)
            text += "abc acab bac cab abba\n";
        std::string long_doc;
        while (long_doc.size() < 6000)
            long_doc += "xyz zyx wvu vuw xwv ";
        for (int i = 0; i < 200; ++i)
            text += long_doc + "\n";
        TextCorpus mixed(write_test_file(dir_.filePath("long-documents.txt"), text));
        const auto t = train_sentencepiece(mixed, {.vocab_size = 24});
        for (const char* word : {"xyz", "wvu", "abc"}) {
            const auto ids = t->encode(word);
            QVERIFY2(
                !ids.empty() && std::find(ids.begin(), ids.end(), t->specials().unk) == ids.end(),
                word);
        }
        std::string one_line;
        while (one_line.size() < (2u << 20))
            one_line += "qrs srq tsr ";
        TextCorpus single(write_test_file(dir_.filePath("one-line.txt"), one_line + "\n"));
        const auto u = train_sentencepiece(single, {.vocab_size = 14});
        const auto ids = u->encode("qrs tsr");
        QVERIFY(std::find(ids.begin(), ids.end(), u->specials().unk) == ids.end());
    }

    void trainedModelHasTheRoutescopeSpecialLayout() {
        TextCorpus corpus(corpus_path_);
        auto t = train_sentencepiece(corpus, {.vocab_size = 200});
        QCOMPARE(t->vocab_size(), 200);
        QCOMPARE(t->piece(0), std::string("[PAD]"));
        QCOMPARE(t->piece(1), std::string("[UNK]"));
        QCOMPARE(t->piece(2), std::string("[CLS]"));
        QCOMPARE(t->piece(3), std::string("[SEP]"));
        QCOMPARE(t->piece(4), std::string("[MASK]"));
        const SpecialIds s = t->specials();
        QCOMPARE(s.pad, 0);
        QCOMPARE(s.unk, 1);
        QCOMPARE(s.cls, 2);
        QCOMPARE(s.sep, 3);
        QCOMPARE(s.mask, 4);
        QCOMPARE(s.bos, -1);
        QCOMPARE(s.eos, -1);
        for (int id = 0; id < 5; ++id)
            QVERIFY(t->is_special(id));
        for (int id = 5; id < t->vocab_size(); ++id)
            QVERIFY(!t->is_special(id));
        // A literal [MASK] in text is the mask token (user-defined symbol).
        const auto ids = t->encode("routes [MASK] tokens");
        QVERIFY(std::find(ids.begin(), ids.end(), 4) != ids.end());
    }
    void idsMatchPythonSentencePieceForUnigramAndBpe() {
        for (const char* type : {"unigram", "bpe"}) {
            TextCorpus corpus(corpus_path_);
            auto t = train_sentencepiece(corpus, {.vocab_size = 150, .model_type = type});
            const QString model_path = dir_.filePath(QString("%1.model").arg(type));
            const auto bytes = t->serialize();
            std::ofstream(model_path.toStdString(), std::ios::binary)
                .write(reinterpret_cast<const char*>(bytes.data()),
                       static_cast<std::streamsize>(bytes.size()));
            const auto expected = python_ids(model_path);
            QCOMPARE(expected.size(), kSentences.size());
            for (std::size_t i = 0; i < kSentences.size(); ++i) {
                QCOMPARE(t->encode(kSentences[i]), expected[i]);
            }
            // The .model file on disk loads to the same tokenizer.
            auto loaded = load_tokenizer_file("sentencepiece", model_path.toStdString());
            QCOMPARE(loaded->encode(kSentences[0]), t->encode(kSentences[0]));
        }
    }
    void roundTripsNormalisedTextAndCheckpointBytes() {
        TextCorpus corpus(corpus_path_);
        auto t = train_sentencepiece(corpus, {.vocab_size = 200, .model_type = "bpe"});
        const std::string text = "the gated model learns distant tokens without attention.";
        QCOMPARE(t->decode(t->encode(text)), text);
        auto back = load_tokenizer("sentencepiece", t->serialize());
        QCOMPARE(back->kind(), std::string("sentencepiece"));
        QCOMPARE(back->vocabulary(), t->vocabulary());
        QCOMPARE(back->encode(text), t->encode(text));
        // Padding vanishes in decoding; [CLS]/[SEP] are user-defined pieces and are written out.
        std::vector<std::int32_t> framed = {2};
        const auto body = t->encode("the gated model");
        framed.insert(framed.end(), body.begin(), body.end());
        framed.insert(framed.end(), {3, 0, 0});
        QCOMPARE(t->decode(framed), std::string("[CLS] the gated model[SEP]"));
    }
    // The usual mix-up: a SentencePiece .model given where a WordPiece vocab.txt is expected
    // (tokenizer.kind=wordpiece, or a name that does not say). It was "invalid UTF-8 byte 0x.. at
    // byte 8 of line 14"; it is named as the binary model it is, with the setting to change.
    void aSentencePieceModelGivenAsWordPieceIsNamed() {
        TextCorpus corpus(corpus_path_);
        const auto model = train_sentencepiece(corpus, {.vocab_size = 150})->serialize();
        const QString path = dir_.filePath("sp.spm");
        {
            std::ofstream out(path.toStdString(), std::ios::binary);
            out.write(reinterpret_cast<const char*>(model.data()),
                      static_cast<std::streamsize>(model.size()));
        }
        try {
            (void)load_tokenizer_file("wordpiece", path.toStdString());
            QFAIL("no error");
        } catch (const FormatError& e) {
            QVERIFY2(
                std::string(e.what()).find("a SentencePiece .model") != std::string::npos &&
                    std::string(e.what()).find("tokenizer.kind=sentencepiece") != std::string::npos,
                e.what());
        }
    }

    void corruptedCharsmapsAreRefusedBeforeTheLibrary() {
        // docs/reliability.md finding 3: libsentencepiece reads outside a corrupted precompiled
        // charsmap. A hand-built map that is sound is used by the library ("A" becomes "a");
        // each corruption of it is a FormatError naming the charsmap, never a library call.
        TextCorpus corpus(corpus_path_);
        const auto model = train_sentencepiece(corpus, {.vocab_size = 150})->serialize();
        const auto good = load_tokenizer("sentencepiece", with_charsmap(model, HandTrie{}.blob()));
        QCOMPARE(good->encode("Aa gated"), good->encode("aa gated"));
        QVERIFY(load_tokenizer("sentencepiece", model)->encode("A") !=
                load_tokenizer("sentencepiece", model)->encode("a"));

        const auto refused = [&](const std::string& blob, const char* what) {
            try {
                (void)load_tokenizer("sentencepiece", with_charsmap(model, blob));
            } catch (const FormatError& e) {
                QVERIFY2(std::string(e.what()).find("charsmap") != std::string::npos, e.what());
                QVERIFY2(std::string(e.what()).find(what) != std::string::npos, e.what());
                return;
            }
            QFAIL(what);
        };
        refused(HandTrie{.value = 1000}.blob(), "offset 1000");                // past the strings
        refused(HandTrie{.strings = "a"}.blob(), "offset 0");                  // no NUL after it
        refused(HandTrie{.child = 5000}.blob(), "unit 5000");                  // child outside
        refused(HandTrie{.root_base = 4096}.blob(), "root");                   // root outside
        refused(HandTrie{.trie_bytes_override = 1 << 20}.blob(), "declares");  // trie > blob
        // Below the blob's size but past its end once the 4-byte header is counted (the
        // library's own check lets it through; fuzz_sentencepiece's third finding).
        refused(HandTrie{.trie_bytes_override = 768 * 4 + 3}.blob(), "declares");
        refused(HandTrie{.trie_bytes_override = 3}.blob(), "empty trie");  // 0 units
        refused(HandTrie{.child = 256, .leaf = false}.blob(), "cycle");    // "AAAA..." loops
        refused(std::string("\x05\0\0", 3), "too short");

        // The input fuzz_sentencepiece found (a heap-use-after-free read under ASan in
        // Normalizer::NormalizePrefix during encode): refused before the library sees it.
        QFile known(ROUTESCOPE_SOURCE_DIR
                    "/tests/fuzz/regressions/fuzz_sentencepiece/charsmap-use-after-free.model");
        QVERIFY(known.open(QIODevice::ReadOnly));
        const QByteArray bytes = known.readAll();
        try {
            (void)load_tokenizer("sentencepiece",
                                 std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
            QFAIL("the fuzz finding was accepted");
        } catch (const FormatError& e) {
            QVERIFY2(std::string(e.what()).find("charsmap") != std::string::npos, e.what());
        }
    }
    void aModelTheLibraryThrowsOnIsAFormatError() {
        // fuzz_sentencepiece's later findings, each a FormatError now: a piece of length zero
        // makes darts-clone (inside libsentencepiece) throw its own exception while the model
        // loads (it escaped as a Darts::Details::Exception); a charsmap whose trie runs past the
        // blob made the charsmap check's own substr throw std::out_of_range.
        for (const char* name :
             {"zero-length-piece-darts-exception.model", "charsmap-trie-past-the-blob.model"}) {
            QFile known(QStringLiteral(ROUTESCOPE_SOURCE_DIR
                                       "/tests/fuzz/regressions/fuzz_sentencepiece/") +
                        name);
            QVERIFY(known.open(QIODevice::ReadOnly));
            const QByteArray bytes = known.readAll();
            try {
                (void)load_tokenizer("sentencepiece",
                                     std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
                QFAIL(name);
            } catch (const FormatError& e) {
                QVERIFY2(std::string(e.what()).find("sentencepiece") != std::string::npos,
                         e.what());
            }
        }
    }
    // A well-formed model with one very long piece: libsentencepiece builds its trie of pieces a
    // recursion level per byte and a 200,000-byte piece overflowed the stack (SIGSEGV; Python's
    // sentencepiece 0.1.97 crashes on the same file). Pieces longer than 4096 bytes are refused
    // before the library sees them; one of 4096 bytes loads. (The piece is appended by hand as a
    // ModelProto.pieces message: 1 piece, 2 score as a float, 3 type NORMAL.)
    void aModelWithAnOverlongPieceIsRefusedBeforeTheLibrary() {
        TextCorpus corpus(corpus_path_);
        const std::vector<std::uint8_t> model =
            train_sentencepiece(corpus, {.vocab_size = 120})->serialize();
        const auto with_piece = [&](std::size_t bytes) {
            std::string piece(1, '\x0a');
            piece += varint(bytes);
            piece += std::string(bytes, 'q');
            piece += std::string("\x15\x00\x00\xa0\xc0", 5);  // score -5.0f
            piece += std::string("\x18\x01", 2);              // type NORMAL
            std::string field(1, '\x0a');
            field += varint(piece.size());
            field += piece;
            std::vector<std::uint8_t> out(field.begin(), field.end());
            out.insert(out.end(), model.begin(), model.end());  // the new piece comes first
            return out;
        };
        const auto fits = load_tokenizer("sentencepiece", with_piece(4096));
        QCOMPARE(fits->vocab_size(), 121);
        try {
            (void)load_tokenizer("sentencepiece", with_piece(200000));
            QFAIL("a 200,000-byte piece was handed to the library");
        } catch (const FormatError& e) {
            QVERIFY2(
                std::string(e.what()).find("piece 0 is 200000 bytes long") != std::string::npos,
                e.what());
        }
    }
    void trainingIsDeterministic() {
        TextCorpus a(corpus_path_), b(corpus_path_);
        QCOMPARE(train_sentencepiece(a, {.vocab_size = 120})->serialize(),
                 train_sentencepiece(b, {.vocab_size = 120})->serialize());
    }
    void badInputsAreClearErrors() {
        TextCorpus corpus(corpus_path_);
        QVERIFY_THROWS_EXCEPTION(
            ConfigError, train_sentencepiece(corpus, {.vocab_size = 100, .model_type = "wp"}));
        try {
            train_sentencepiece(corpus, {.vocab_size = 100000});
            QFAIL("a vocabulary larger than the corpus supports must fail");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("corpus.txt") != std::string::npos, e.what());
        }
        // Too small for the corpus's characters: the advice names Routescope's option, not the
        // library's --character_coverage, which no command has.
        try {
            train_sentencepiece(corpus, {.vocab_size = 8});
            QFAIL("a vocabulary smaller than the corpus's characters must fail");
        } catch (const ConfigError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("--vocab-size") != std::string::npos &&
                         m.find("character_coverage") == std::string::npos,
                     e.what());
        }
        const std::vector<std::uint8_t> junk = {1, 2, 3, 4, 5};
        QVERIFY_THROWS_EXCEPTION(FormatError, load_tokenizer("sentencepiece", junk));
    }
};

QTEST_APPLESS_MAIN(TestSentencePieceTokenizer)
#include "test_sentencepiece_tokenizer.moc"
