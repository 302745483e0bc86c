// The plain-text corpus of TASKS.md: files or directories, line or blank-line documents, JSON
// Lines records, WikiExtractor's <doc> files, UTF-8 errors with file and line, compressed files
// refused, the empty-corpus error, resuming at a document position, symbolic links to folders
// followed (a loop refused), and a folder that cannot be listed named.
#include <QtTest>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <QProcess>
#include <QTemporaryDir>

#include "corpus_writer.hpp"
#include "engine/core/error.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/data/utf8.hpp"

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
        // A line of Unicode whitespace (Python's str.isspace: U+3000, U+00A0, U+2003) is blank
        // too (session 32: Japanese text's ideographic space did not end a document).
        const auto u =
            file("unicode-blank.txt", "段落\n続き\n\u3000\n第二\n\u00a0 \u2003\nthird\n");
        TextCorpus cu(u, parse_doc_separator("blank"));
        QCOMPARE(cu.read_all(), (Docs{"段落\n続き", "第二", "third"}));
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
    // A linked folder of documents (`ln -s /data/wiki corpus/wiki`) is read as a linked file is:
    // its documents in path order under the link's name (they were left out without a word). A
    // link back to a folder that holds it (a loop) is refused naming the link.
    void symbolicLinksToFoldersAreFollowedAndALoopIsRefused() {
        file("linked/corpus/a.txt", "a-one\n");
        file("linked/elsewhere/wiki/b.txt", "b-one\nb-two\n");
        file("linked/elsewhere/c.txt", "c-one\n");
        const std::filesystem::path root = dir_.filePath("linked").toStdString();
        std::filesystem::create_directory_symlink(root / "elsewhere/wiki", root / "corpus/wiki");
        std::filesystem::create_symlink(root / "elsewhere/c.txt", root / "corpus/c.txt");
        TextCorpus c((root / "corpus").string());
        QCOMPARE(c.files(), (std::vector<std::string>{(root / "corpus/a.txt").string(),
                                                      (root / "corpus/c.txt").string(),
                                                      (root / "corpus/wiki/b.txt").string()}));
        QCOMPARE(c.read_all(), (Docs{"a-one", "c-one", "b-one", "b-two"}));

        // A folder or file reached by a second route is read once, by the first name in sorted
        // order (a `current -> v3` link beside v3 read every document of v3 twice).
        file("linked/versions/v3/d.txt", "d-one\n");
        const std::filesystem::path versions = root / "versions";
        std::filesystem::create_directory_symlink(versions / "v3", versions / "current");
        std::filesystem::create_symlink(versions / "v3/d.txt", versions / "v3/also-d.txt");
        TextCorpus twice(versions.string());
        QCOMPARE(twice.files(),
                 (std::vector<std::string>{(versions / "current/also-d.txt").string()}));
        QCOMPARE(twice.read_all(), (Docs{"d-one"}));

        std::filesystem::create_directory_symlink(root / "corpus", root / "elsewhere/wiki/up");
        const std::string loop = error_of([&] { TextCorpus((root / "corpus").string()); });
        QVERIFY2(loop.find((root / "corpus/wiki/up").string() + ": a symbolic link to") == 0,
                 loop.c_str());
        QVERIFY_THROWS_EXCEPTION(IoError, TextCorpus((root / "corpus").string()));
    }
    // A folder of the corpus the user may not list was skipped: the run trained on the rest with
    // exit 0. An IoError names the folder and the system's reason. Root lists any folder, so
    // under root the corpus is read by a child process as user nobody.
    void aFolderThatCannotBeListedIsAnErrorNamingIt() {
        QTemporaryDir shared;  // a tree another user may enter
        QVERIFY(shared.isValid());
        const std::string root = shared.path().toStdString();
        write_test_file(shared.filePath("corpus/a.txt"), "a-one\n");
        write_test_file(shared.filePath("corpus/sub/b.txt"), "b-one\n");
        ::chmod(root.c_str(), 0755);
        ::chmod((root + "/corpus").c_str(), 0755);
        ::chmod((root + "/corpus/a.txt").c_str(), 0644);
        ::chmod((root + "/corpus/sub").c_str(), 0);
        const auto read = [&] { return error_of([&] { TextCorpus(root + "/corpus"); }); };
        std::string msg;
        if (::geteuid() != 0) {
            msg = read();
        } else {
            int fds[2];
            QVERIFY(::pipe(fds) == 0);
            const pid_t child = ::fork();
            QVERIFY(child >= 0);
            if (child == 0) {
                ::close(fds[0]);
                if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
                    ::_exit(3);
                const std::string m = read();
                (void)!::write(fds[1], m.data(), m.size());
                ::_exit(0);
            }
            ::close(fds[1]);
            char buf[1024];
            for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
                msg.append(buf, static_cast<std::size_t>(n));
            ::close(fds[0]);
            int status = 0;
            ::waitpid(child, &status, 0);
            QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        ::chmod((root + "/corpus/sub").c_str(), 0755);  // so that the folder can be removed
        QVERIFY2(msg == root + "/corpus/sub: cannot list directory (Permission denied)",
                 msg.c_str());
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
    // JSON Lines corpora (C4, The Pile, Hugging Face datasets' to_json): one record per line, its
    // "text" the document whatever data.doc_sep says, the other fields ignored; in a directory
    // beside plain text files. Expected documents are the JSON strings' values as written here.
    void jsonLinesRecordsAreDocuments() {
        const auto c4 =
            file("c4/c4-train.00000-of-01024.json",
                 "{\"text\": \"First line.\\nSecond line \\u00e9.\", \"timestamp\": "
                 "\"2019-04-25T12:57:54Z\", \"url\": \"https://example.com/a\"}\n"
                 "\n"
                 "{\"text\": \"   \", \"url\": \"blank text, skipped\"}\n"
                 "{\"meta\": {\"pile_set_name\": \"Pile-CC\"}, \"text\": \"Third.\"}\n");
        file("c4/notes.txt", "plain one\nplain two\n");
        for (const auto sep : {DocSeparator::Line, DocSeparator::Blank}) {
            TextCorpus corpus(dir_.filePath("c4").toStdString(), sep);
            const Docs want = {"First line.\nSecond line \xC3\xA9.", "Third."};
            Docs docs = corpus.read_all();
            QCOMPARE(Docs(docs.begin(), docs.begin() + 2), want);
            QCOMPARE(docs.size(), sep == DocSeparator::Line ? std::size_t(4) : std::size_t(3));
        }
        TextCorpus single(c4);
        QCOMPARE(single.size(), 2);
        single.seek(1);
        std::string doc;
        QVERIFY(single.next(doc));
        QCOMPARE(doc, std::string("Third."));
    }
    // WikiExtractor's two outputs, as its README gives them: files AA/wiki_00, AA/wiki_01, … (no
    // extension) holding `<doc id="…" url="…" title="…">`, the title, the article, `</doc>`; or,
    // with --json, one {"id", "revid", "url", "title", "text"} object per line. Each article is one
    // document whatever data.doc_sep says; the expected documents are the articles as written here.
    void wikiExtractorOutputIsReadByArticle() {
        file("wiki/AA/wiki_00",
             "<doc id=\"12\" url=\"https://en.wikipedia.org/wiki?curid=12\" title=\"Anarchism\">\n"
             "Anarchism\n"
             "\n"
             "Anarchism is a political philosophy.\n"
             "It is sceptical of authority.\n"
             "</doc>\n"
             "<doc id=\"25\" url=\"https://en.wikipedia.org/wiki?curid=25\" title=\"Empty\">\n"
             "</doc>\n"
             "<doc id=\"39\" url=\"https://en.wikipedia.org/wiki?curid=39\" title=\"Albedo\">\n"
             "Albedo\n"
             "\n"
             "Albedo is the fraction of light reflected.\n"
             "</doc>\n");
        file("wiki/AB/wiki_00",
             "{\"id\": \"290\", \"revid\": \"1\", \"url\": "
             "\"https://en.wikipedia.org/wiki?curid=290\", "
             "\"title\": \"A\", \"text\": \"A\\n\\nA is the first letter.\"}\n"
             "{\"id\": \"303\", \"revid\": \"2\", \"url\": \"u\", \"title\": \"Alabama\", "
             "\"text\": \"Alabama is a state.\"}\n");
        for (const auto sep : {DocSeparator::Line, DocSeparator::Blank}) {
            TextCorpus c(dir_.filePath("wiki").toStdString(), sep);
            QCOMPARE(c.formats(), (std::vector<CorpusFileFormat>{CorpusFileFormat::doc_tagged,
                                                                 CorpusFileFormat::json_lines}));
            QCOMPARE(c.read_all(),
                     (Docs{"Anarchism\nAnarchism is a political philosophy.\nIt is sceptical of "
                           "authority.",
                           "Albedo\nAlbedo is the fraction of light reflected.",
                           "A\n\nA is the first letter.", "Alabama is a state."}));
            c.seek(2);
            std::string doc;
            QVERIFY(c.next(doc));
            QCOMPARE(doc, std::string("A\n\nA is the first letter."));
        }
        // Prose that merely begins with a brace or an angle bracket stays text.
        const auto prose = file("prose.txt", "{not json} at all\n<document> is a word here\n");
        TextCorpus p(prose);
        QCOMPARE(p.formats(), (std::vector<CorpusFileFormat>{CorpusFileFormat::text}));
        QCOMPARE(p.size(), 2);
    }
    void brokenWikiExtractorFilesNameFileAndLine_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("needle");
        QTest::newRow("text outside") << "<doc id=\"1\" title=\"a\">\na\n</doc>\nstray line\n"
                                      << "wiki_09:4: text outside <doc>";
        QTest::newRow("not closed") << "<doc id=\"1\" title=\"a\">\na\n</doc>\n"
                                       "<doc id=\"2\" title=\"b\">\nb\n"
                                    << "wiki_09:4: <doc> not closed";
        QTest::newRow("nested") << "<doc id=\"1\" title=\"a\">\na\n<doc id=\"2\" title=\"b\">\n"
                                << "wiki_09:3: <doc> inside the <doc> opened at line 1";
        QTest::newRow("close without open") << "<doc id=\"1\" title=\"a\">\na\n</doc>\n</doc>\n"
                                            << "wiki_09:4: </doc> without a <doc>";
    }
    void brokenWikiExtractorFilesNameFileAndLine() {
        QFETCH(QString, body);
        QFETCH(QString, needle);
        const auto p = file("broken/wiki_09", body.toStdString());
        const std::string msg = error_of([&] { TextCorpus{p}; });
        QVERIFY2(msg.find(needle.toStdString()) != std::string::npos, msg.c_str());
    }
    void badJsonLinesRecordsNameFileAndLine_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("needle");
        QTest::newRow("no text") << "{\"text\": \"a\"}\n{\"content\": \"b\"}\n"
                                 << "bad.jsonl:2: no \"text\" field";
        QTest::newRow("text not a string") << "{\"text\": 3}\n"
                                           << "bad.jsonl:1: \"text\" is not";
        QTest::newRow("not an object") << "\"text\"\n"
                                       << "bad.jsonl:1: not a JSON object";
        QTest::newRow("a JSON array") << "[{\"text\": \"a\"}, {\"text\": \"b\"}]\n"
                                      << "bad.jsonl:1: a JSON array, not one record per line";
        QTest::newRow("not JSON") << "{\"text\": \"a\"}\nplain words\n"
                                  << "bad.jsonl:2";
        QTest::newRow("pretty-printed array")  // json.dump(records, indent=2)
            << "[\n  {\n    \"text\": \"a\"\n  }\n]\n"
            << "bad.jsonl:1: one JSON array spread over many lines";
    }
    // A message naming a hostile file's key or dataset stays valid UTF-8: each stray byte as
    // \xNN, valid sequences (Greek, CJK) as they are.
    void messagesAreMadeValidUtf8() {
        QCOMPARE(routescope::data::printable_utf8("/params/mlm.bi\xBEs"),
                 std::string("/params/mlm.bi\\xBEs"));
        QCOMPARE(routescope::data::printable_utf8("μοντέλο 模型 \xFF\xFE."),
                 std::string("μοντέλο 模型 \\xFF\\xFE."));
        QCOMPARE(routescope::data::printable_utf8("\xE2\x82"), std::string("\\xE2\\x82"));
        QCOMPARE(routescope::data::printable_utf8(""), std::string());
    }
    // A long value quoted in a message keeps its first bytes, whole characters, and says how
    // long it was (a project's 4 MB setting was echoed whole).
    void longValuesAreAbbreviatedInMessages() {
        QCOMPARE(routescope::data::abbreviated("short"), std::string("short"));
        QCOMPARE(routescope::data::abbreviated(std::string(100, 'A'), 8),
                 std::string("AAAAAAAA… (100 bytes)"));
        // "μ" is 2 bytes: a cut after 3 bytes keeps "μA" whole rather than half a character.
        QCOMPARE(routescope::data::abbreviated("μAμμμ", 4), std::string("μA… (9 bytes)"));
    }
    void badJsonLinesRecordsNameFileAndLine() {
        QFETCH(QString, body);
        QFETCH(QString, needle);
        const auto p = file("bad.jsonl", body.toStdString());
        const std::string msg = error_of([&] { TextCorpus{p}; });
        QVERIFY2(msg.find(needle.toStdString()) != std::string::npos, msg.c_str());
    }
    // Compressed files, made by the system's own tools, are refused by name with what to do (a
    // gzip stream failed as "invalid UTF-8" at best); a text line beginning "BZh" or "PAR1" is
    // text.
    void compressedFilesAreRefusedByName() {
        const auto plain = file("z/plain.txt", "one document\nanother document\n");
        const struct {
            const char* program;
            QStringList args;
            const char* out;
            const char* needle;
        } tools[] = {{"gzip", {"-k", "-f", "plain.txt"}, "plain.txt.gz", "gzip-compressed"},
                     {"xz", {"-k", "-f", "plain.txt"}, "plain.txt.xz", "xz-compressed"},
                     {"bzip2", {"-k", "-f", "plain.txt"}, "plain.txt.bz2", "bzip2-compressed"},
                     {"zstd",
                      {"-q", "-f", "plain.txt", "-o", "plain.txt.zst"},
                      "plain.txt.zst",
                      "zstd-compressed"},
                     {"zip", {"-q", "plain.zip", "plain.txt"}, "plain.zip", "zip archive"},
                     // Windows' "Unicode" text (iconv writes the byte-order mark)
                     {"iconv",
                      {"-f", "UTF-8", "-t", "UTF-16", "plain.txt", "-o", "plain16.txt"},
                      "plain16.txt",
                      "UTF-16 (little-endian) text, not UTF-8: convert it"},
                     {"iconv",
                      {"-f", "UTF-8", "-t", "UTF-32", "plain.txt", "-o", "plain32.txt"},
                      "plain32.txt",
                      "UTF-32 (little-endian) text, not UTF-8: convert it"},
                     // Without a byte-order mark (Python's encoding="utf-16-le" writes none): it
                     // trained on "t\0h\0e\0" with exit 0.
                     {"iconv",
                      {"-f", "UTF-8", "-t", "UTF-16LE", "plain.txt", "-o", "plain16le.txt"},
                      "plain16le.txt",
                      "UTF-16 (little-endian, no byte-order mark) text, not UTF-8: convert it, "
                      "e.g. `iconv -f UTF-16LE"},
                     {"iconv",
                      {"-f", "UTF-8", "-t", "UTF-16BE", "plain.txt", "-o", "plain16be.txt"},
                      "plain16be.txt",
                      "UTF-16 (big-endian, no byte-order mark) text, not UTF-8"}};
        int ran = 0;
        for (const auto& t : tools) {
            QProcess p;
            p.setWorkingDirectory(dir_.filePath("z"));
            p.start(t.program, t.args);
            if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit ||
                p.exitCode() != 0) {
                qInfo("%s not available here: not checked", t.program);
                continue;
            }
            ++ran;
            const std::string path = dir_.filePath(QString("z/") + t.out).toStdString();
            const std::string msg = error_of([&] { TextCorpus{path}; });
            QVERIFY2(msg.find(path + ": ") == 0 && msg.find(t.needle) != std::string::npos,
                     msg.c_str());
        }
        QVERIFY(ran >= 1);  // gzip is in every Debian
        // Arrow, by the format's own magic (no Arrow writer here): the IPC file's "ARROW1" and the
        // stream's continuation marker, which Hugging Face datasets' .arrow files begin with.
        for (const auto& [name, bytes] :
             {std::pair<const char*, std::string>{"z/data.arrow", std::string("ARROW1\0\0", 8)},
              std::pair<const char*, std::string>{"z/data-00000-of-00001.arrow",
                                                  std::string("\xff\xff\xff\xff\x78\0\0\0", 8)}}) {
            const std::string path = file(name, bytes + "more bytes\n");
            const std::string msg = error_of([&] { TextCorpus{path}; });
            QVERIFY2(
                msg.find(path + ": an Arrow file") == 0 && msg.find("to_json") != std::string::npos,
                msg.c_str());
        }
        QCOMPARE(TextCorpus(file("arrowhead.txt", "ARROW1 is a word\n")).size(), 1);
        QCOMPARE(TextCorpus(file("bzh.txt", "BZh is a line of text\n")).size(), 1);
        QCOMPARE(TextCorpus(file("par.txt", "PAR1 is not Parquet\n")).size(), 1);
        QCOMPARE(TextCorpus(plain).size(), 2);
        // Lines ended by CR alone (classic Mac OS) were one document with its CRs as characters.
        const std::string mac = file("z/mac.txt", "one document\ranother\ra third\r");
        const std::string cr = error_of([&] { TextCorpus{mac}; });
        QVERIFY2(cr.find(mac + ": text whose lines end in CR alone") == 0, cr.c_str());
        // ... when the CRs come after 4 KiB of text, and when there is one (session 32: read as
        // one document).
        for (const std::string& text : {std::string(5000, 'a') + "\r" + std::string(5000, 'b') +
                                            "\r" + std::string(5000, 'c'),
                                        std::string("first line\rsecond line")}) {
            const std::string late = file("z/late-mac.txt", text);
            const std::string msg = error_of([&] { TextCorpus{late}; });
            QVERIFY2(msg.find(late + ": text whose lines end in CR alone") == 0, msg.c_str());
        }
        // One CR ending a file without LF ends its one line, as a trailing CR does in CRLF text.
        QCOMPARE(TextCorpus(file("z/one-cr.txt", "one document\r")).read_all(),
                 (Docs{"one document"}));
        QCOMPARE(TextCorpus(file("z/crlf.txt", "one\r\ntwo\r\n")).size(), 2);  // CRLF reads
    }
    // An uncompressed tar (`tar cf`, or OpenWebText's parts once unxz'd) was read as text: its
    // 512-byte headers (name, octal mode/size/mtime fields, NUL padding) became documents.
    // Refused by name, by a header's magic "ustar" at byte 257 and its checksum (POSIX.1 ustar:
    // the octal sum of the header's 512 bytes, the checksum field counted as 8 spaces); "ustar" at
    // byte 257 of text is text.
    // An HDF5 file (a dump left in a corpus folder, written here by h5py's library through the
    // C API would be the same signature: \x89HDF\r\n\x1a\n, HDF5 File Format Specification 2.0
    // "Format Signature") is named as such, not as "invalid UTF-8 byte 0x89".
    void hdf5FilesAreRefusedByName() {
        const auto p = file("h/held.dump.h5",
                            std::string("\x89HDF\r\n\x1a\n\0\0\0\0", 12) + std::string(500, '\0'));
        const std::string msg = error_of([&] { TextCorpus{p}; });
        QVERIFY2(msg.find("an HDF5 file") != std::string::npos &&
                     msg.find("held.dump.h5") != std::string::npos,
                 msg.c_str());
    }

    void tarArchivesAreRefusedByName() {
        std::string header(512, '\0');
        const auto put = [&](std::size_t at, const std::string& field) {
            header.replace(at, field.size(), field);
        };
        const std::string data = "one document\n";  // 13 bytes: size 015
        put(0, "part1.txt");
        put(100, "0000644");
        put(108, "0001750");
        put(116, "0001750");
        put(124, "00000000015");
        put(136, "14721413710");
        put(148, "        ");
        put(156, "0");
        put(257, std::string("ustar\0"
                             "00",
                             8));
        unsigned sum = 0;
        for (const unsigned char c : header)
            sum += c;
        char checksum[8];
        std::snprintf(checksum, sizeof checksum, "%06o", sum);
        put(148, std::string(checksum, 6) + std::string("\0 ", 2));
        const std::string tar =
            file("tar/corpus.tar",
                 header + data + std::string(512 - data.size(), '\0') + std::string(1024, '\0'));
        const std::string msg = error_of([&] { TextCorpus{tar}; });
        QVERIFY2(msg.find(tar + ": a tar archive") == 0 &&
                     msg.find("not a text corpus") != std::string::npos,
                 msg.c_str());
        // The system's tar, in GNU tar's own format and in POSIX pax, when it is here.
        for (const char* format : {"gnu", "posix"}) {
            QProcess p;
            p.setWorkingDirectory(dir_.filePath("tar"));
            file("tar/part2.txt", "another document\n");
            p.start("tar", {QString("--format=") + format, "-cf", "made.tar", "part2.txt"});
            if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit ||
                p.exitCode() != 0) {
                qInfo("tar not available here: not checked");
                break;
            }
            const std::string made = dir_.filePath("tar/made.tar").toStdString();
            const std::string m = error_of([&] { TextCorpus{made}; });
            QVERIFY2(m.find(made + ": a tar archive") == 0, m.c_str());
        }
        const std::string text = std::string(200, 'a') + "\n" + std::string(56, 'b') +
                                 "ustar is a word here\n" + std::string(300, 'c') + "\n";
        QCOMPARE(TextCorpus(file("tar/ustar.txt", text)).size(), 3);
    }
    // A NUL in a document (a raw byte, or "\u0000" in a JSON Lines "text") was accepted, and a
    // dump's /data/text (C strings) cut the document there. Refused with file and line.
    void aNulInADocumentIsRefusedWithFileAndLine() {
        const std::string txt =
            file("nul/raw.txt", std::string("fine\nfirst part") + '\0' + "second part\n");
        const std::string raw = error_of([&] { TextCorpus{txt}; });
        QVERIFY2(raw.find(txt + ":2: a NUL byte at byte 11 of the line") == 0, raw.c_str());
        const std::string blank = error_of([&] { TextCorpus(txt, DocSeparator::Blank); });
        QVERIFY2(blank.find(txt + ":2: a NUL byte") == 0, blank.c_str());
        const std::string jsonl =
            file("nul/records.jsonl", "{\"text\": \"fine\"}\n{\"text\": \"a\\u0000b\"}\n");
        const std::string escaped = error_of([&] { TextCorpus{jsonl}; });
        QVERIFY2(
            escaped.find(jsonl + ":2: \"text\" holds a NUL character (\\u0000) at byte 2") == 0,
            escaped.c_str());
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
