// The plain-text corpus of TASKS.md: files or directories, line or blank-line documents, UTF-8
// errors with file and line, the empty-corpus error, and resuming at a document position.
#include <QtTest>

#include <QTemporaryDir>

#include "corpus_writer.hpp"
#include "engine/core/error.hpp"
#include "engine/data/text_corpus.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
using Docs = std::vector<std::string>;

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

class TestTextCorpus : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string file(const QString& name, const std::string& bytes) {
        return write_test_file(dir_.filePath(name), bytes);
    }

private slots:
    void oneDocumentPerNonBlankLine() {
        const auto p = file("lines.txt", "first doc\n\n  \nsecond doc\r\nthird doc");
        TextCorpus c(p);
        QCOMPARE(c.size(), 3);
        QCOMPARE(c.read_all(), (Docs{"first doc", "second doc", "third doc"}));
    }
    void blankLinesSeparateMultiLineDocuments() {
        const auto p = file("blank.txt", "a1\na2\n\n\nb1\n \nc1\nc2\nc3\n");
        TextCorpus c(p, parse_doc_separator("blank"));
        QCOMPARE(c.read_all(), (Docs{"a1\na2", "b1", "c1\nc2\nc3"}));
        QVERIFY_THROWS_EXCEPTION(ConfigError, parse_doc_separator("para"));
    }
    void byteOrderMarkIsSkipped() {
        const auto p = file("bom.txt", "\xEF\xBB\xBFhello\nworld\n");
        TextCorpus c(p);
        QCOMPARE(c.read_all(), (Docs{"hello", "world"}));
    }
    void directoryIsReadRecursivelyInPathOrderSkippingHiddenFiles() {
        file("tree/b.txt", "b-one\nb-two\n");
        file("tree/a.txt", "a-one\n");
        file("tree/sub/c.txt", "c-one");
        file("tree/.hidden.txt", "never\n");
        file("tree/.git/x.txt", "never\n");
        TextCorpus c(dir_.filePath("tree").toStdString());
        QCOMPARE(c.files().size(), std::size_t(3));
        QCOMPARE(c.read_all(), (Docs{"a-one", "b-one", "b-two", "c-one"}));
    }
    void fileBoundaryEndsABlankSeparatedDocument() {
        file("tree2/a.txt", "a1\na2");
        file("tree2/b.txt", "b1\n");
        TextCorpus c(dir_.filePath("tree2").toStdString(), DocSeparator::Blank);
        QCOMPARE(c.read_all(), (Docs{"a1\na2", "b1"}));
    }
    void invalidUtf8IsReportedWithFileAndLine() {
        file("bad/a.txt", "fine\n");
        // Line 3 of b.txt: a lone continuation byte; line 2 is valid 2-byte UTF-8 (é).
        file("bad/b.txt", "ok\ncaf\xC3\xA9\nbad \x80 byte\n");
        const std::string msg = error_of([&] { TextCorpus(dir_.filePath("bad").toStdString()); });
        QVERIFY2(msg.find("b.txt:3:") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("0x80") != std::string::npos, msg.c_str());
        // Overlong encodings and surrogates are invalid too (RFC 3629).
        const auto overlong = file("overlong.txt", "x\n\xC0\xAF\n");
        QVERIFY(error_of([&] { TextCorpus{overlong}; }).find("overlong.txt:2:") !=
                std::string::npos);
        const auto surrogate = file("surrogate.txt", "\xED\xA0\x80\n");
        QVERIFY(error_of([&] { TextCorpus{surrogate}; }).find("surrogate.txt:1:") !=
                std::string::npos);
    }
    void emptyCorpusIsAnErrorNamingThePath() {
        const auto blank = file("empty.txt", "\n   \n\n");
        const std::string msg = error_of([&] { TextCorpus{blank}; });
        QVERIFY2(msg.find("empty.txt") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("empty corpus") != std::string::npos, msg.c_str());
        QDir(dir_.path()).mkpath("nothing");
        const std::string dir_msg =
            error_of([&] { TextCorpus(dir_.filePath("nothing").toStdString()); });
        QVERIFY2(dir_msg.find("nothing") != std::string::npos, dir_msg.c_str());
        QVERIFY_THROWS_EXCEPTION(FormatError, TextCorpus{blank});
        QVERIFY_THROWS_EXCEPTION(IoError, TextCorpus(dir_.filePath("missing").toStdString()));
    }
    void resumesAtARecordedPosition() {
        const auto p = file("resume.txt", "d0\nd1\n\nd2\nd3\nd4\n");
        TextCorpus first(p);
        std::string doc;
        for (int i = 0; i < 3; ++i)
            QVERIFY(first.next(doc));
        QCOMPARE(doc, std::string("d2"));
        const std::int64_t position = first.position();
        QCOMPARE(position, 3);

        TextCorpus resumed(p);
        resumed.seek(position);
        QVERIFY(resumed.next(doc));
        QCOMPARE(doc, std::string("d3"));
        QVERIFY(resumed.next(doc));
        QVERIFY(!resumed.next(doc));
        QCOMPARE(resumed.position(), 5);
        QVERIFY_THROWS_EXCEPTION(Error, resumed.seek(6));
    }
};

QTEST_APPLESS_MAIN(TestTextCorpus)
#include "test_text_corpus.moc"
