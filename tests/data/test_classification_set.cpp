// Classification files of TASKS.md: GLUE TSV (single sentences and pairs) and JSON Lines; the
// label set read from the data; errors with file and line number.
#include <QtTest>

#include <filesystem>
#include <map>

#include <QDir>
#include <QTemporaryDir>

#include "corpus_writer.hpp"
#include "engine/core/error.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/train/labelled_set.hpp"

using namespace routescope;
using namespace routescope::data;

namespace {
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    }
    return "(no FormatError)";
}
std::vector<std::int32_t> ids_of(const ClassificationSet& s) {
    std::vector<std::int32_t> ids;
    for (const auto& e : s.examples)
        ids.push_back(e.label_id);
    return ids;
}
}  // namespace

class TestClassificationSet : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string file(const QString& name, const std::string& bytes) {
        return write_test_file(dir_.filePath(name), bytes);
    }

private slots:
    // data.pair_gap (docs/config.md, docs/tasks.md "Matching across gaps"): [CLS] a [SEP] then g
    // filler tokens, segment 1, then b [SEP]; the filler drawn from the ordinary (non-special)
    // pieces, the same for the same pair; the pair cut longest-first to seq_len − 3 − g; no room
    // for the pair, or a file of single sentences, is a ConfigError naming the keys.
    void pairGapPutsFillerBetweenTheSentences() {
        // Ids: [PAD]0 [UNK]1 [CLS]2 [SEP]3 [MASK]4 [unused0]5 what6 is7 red8 the9 sky10 blue11
        // grass12 green13 [unused1]14: the ordinary pieces are 6 … 13.
        const WordPieceTokenizer tok(
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n[unused0]\nwhat\nis\nred\nthe\nsky\nblue\n"
            "grass\ngreen\n[unused1]\n");
        const auto ordinary = [](std::int32_t t) { return t >= 6 && t <= 13; };
        const auto p = file("qnli_gap.tsv",
                            "index\tquestion\tsentence\tlabel\n"
                            "0\twhat is red\tthe sky is blue\tnot_entailment\n"
                            "1\twhat is green\tthe grass is green\tentailment\n"
                            "2\twhat is red\tthe sky is blue\tnot_entailment\n");
        const ClassificationSet set = read_classification(p);
        QVERIFY(set.pairs);
        using V = std::vector<std::int32_t>;

        // No gap: BERT's framing as before.
        const auto none = train::classification_examples(set, tok, 32, 0);
        QCOMPARE(none.examples[0].tokens, (V{2, 6, 7, 8, 3, 9, 10, 7, 11, 3}));
        QCOMPARE(none.examples[0].types, (V{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));

        // A gap of 5: [CLS] what is red [SEP] f f f f f the sky is blue [SEP].
        const auto gap = train::classification_examples(set, tok, 32, 5);
        QCOMPARE(gap.examples.size(), std::size_t{3});
        for (const auto& e : gap.examples) {
            QCOMPARE(e.tokens.size(), std::size_t{15});
            QCOMPARE(e.tokens[0], 2);
            QCOMPARE(e.tokens[4], 3);
            QCOMPARE(e.tokens[14], 3);
            for (int i = 5; i < 10; ++i)
                QVERIFY2(ordinary(e.tokens[static_cast<std::size_t>(i)]),
                         qPrintable(QString::number(e.tokens[static_cast<std::size_t>(i)])));
            QCOMPARE(e.types, (V{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
        }
        QCOMPARE(V(gap.examples[0].tokens.begin() + 10, gap.examples[0].tokens.end() - 1),
                 (V{9, 10, 7, 11}));
        QCOMPARE(V(gap.examples[1].tokens.begin() + 1, gap.examples[1].tokens.begin() + 4),
                 (V{6, 7, 13}));
        QCOMPARE(gap.examples[0].label, set.examples[0].label_id);
        // The filler is not text: the [UNK] count's 3 × (3 + 4) words are the sentences' alone.
        QCOMPARE(train::unknown_tokens(gap, tok).words, std::int64_t{21});
        // Deterministic: the same pair (rows 0 and 2; a second framing) has the same filler; a
        // different pair another one.
        QCOMPARE(gap.examples[2].tokens, gap.examples[0].tokens);
        QCOMPARE(train::classification_examples(set, tok, 32, 5).examples[1].tokens,
                 gap.examples[1].tokens);
        QVERIFY(V(gap.examples[0].tokens.begin() + 5, gap.examples[0].tokens.begin() + 10) !=
                V(gap.examples[1].tokens.begin() + 5, gap.examples[1].tokens.begin() + 10));

        // Uniform over the 8 ordinary pieces and never a special one: 4000 draws, 500 expected
        // each (a binomial's σ is 21; ±100 is almost 5σ).
        const auto wide = train::classification_examples(set, tok, 4100, 4000);
        std::map<std::int32_t, int> counts;
        for (int i = 5; i < 4005; ++i)
            ++counts[wide.examples[0].tokens[static_cast<std::size_t>(i)]];
        QCOMPARE(counts.size(), std::size_t{8});
        for (const auto& [t, n] : counts) {
            QVERIFY2(ordinary(t), qPrintable(QString::number(t)));
            QVERIFY2(n > 400 && n < 600, qPrintable(QString::number(n)));
        }

        // The gap is kept whole; the pair is cut longest first in 13 − 3 − 5 = 5 places:
        // 3/4 → 3/3 → 3/2 (a tie pops the second): what is red | the sky.
        const auto cut = train::classification_examples(set, tok, 13, 5);
        QCOMPARE(cut.examples[0].tokens.size(), std::size_t{13});
        QCOMPARE(V(cut.examples[0].tokens.begin(), cut.examples[0].tokens.begin() + 5),
                 (V{2, 6, 7, 8, 3}));
        QCOMPARE(V(cut.examples[0].tokens.begin() + 5, cut.examples[0].tokens.begin() + 10),
                 V(gap.examples[0].tokens.begin() + 5, gap.examples[0].tokens.begin() + 10));
        QCOMPARE(V(cut.examples[0].tokens.begin() + 10, cut.examples[0].tokens.end()),
                 (V{9, 10, 3}));
        // The least room: one token of each sentence (5 + 5 = 10).
        QCOMPARE(train::classification_examples(set, tok, 10, 5).examples[0].tokens.size(),
                 std::size_t{10});

        const auto config_error = [](auto&& f) -> std::string {
            try {
                f();
            } catch (const ConfigError& e) {
                return e.what();
            }
            return "(no ConfigError)";
        };
        // No room for the pair beside the gap: both keys named.
        std::string e = config_error([&] { train::classification_examples(set, tok, 9, 5); });
        QVERIFY2(e.find("data.pair_gap") != std::string::npos, e.c_str());
        QVERIFY2(e.find("data.seq_len") != std::string::npos, e.c_str());
        // A file of single sentences has no place for a gap: refused, naming the file.
        const auto single =
            read_classification(file("single_gap.tsv", "sentence\tlabel\nred\t1\n"));
        QCOMPARE(train::classification_examples(single, tok, 32, 0).examples[0].tokens,
                 (V{2, 8, 3}));
        e = config_error([&] { train::classification_examples(single, tok, 32, 5); });
        QVERIFY2(e.find("data.pair_gap") != std::string::npos, e.c_str());
        QVERIFY2(e.find("single_gap.tsv") != std::string::npos, e.c_str());
        QVERIFY2(e.find("single sentences") != std::string::npos, e.c_str());
    }

    void readsGlueSingleSentenceTsv() {
        const auto p = file("sst.tsv", "sentence\tlabel\nit works .\t1\nit fails .\t0\n\n");
        const auto s = read_classification(p);
        QVERIFY(!s.pairs);
        QCOMPARE(s.examples.size(), std::size_t(2));
        QCOMPARE(s.examples[0].text_a, std::string("it works ."));
        QCOMPARE(s.examples[1].line, std::int64_t(3));
        QCOMPARE(s.labels, (std::vector<std::string>{"0", "1"}));
        QCOMPARE(ids_of(s), (std::vector<std::int32_t>{1, 0}));
    }
    void readsGluePairTsvIgnoringOtherColumns() {
        const auto p = file("mnli.tsv",
                            "idx\tsentence1\tsentence2\tlabel\n"
                            "0\tA man sleeps.\tA person rests.\tentailment\n"
                            "1\tA man sleeps.\tA man runs.\tcontradiction\n"
                            "2\tA man sleeps.\tHe is tired.\tneutral\n");
        const auto s = read_classification(p);
        QVERIFY(s.pairs);
        QCOMPARE(*s.examples[1].text_b, std::string("A man runs."));
        // String labels sort as strings: contradiction < entailment < neutral.
        QCOMPARE(s.labels, (std::vector<std::string>{"contradiction", "entailment", "neutral"}));
        QCOMPARE(ids_of(s), (std::vector<std::int32_t>{1, 0, 2}));
    }
    // GLUE's files as distributed (the headers below are the first lines of the GLUE benchmark's
    // train/dev TSVs, gluebenchmark.com's data as download_glue_data.py fetches it): each reads as
    // the pair the task is, with the task's label column; the other columns are ignored. QNLI's
    // header has a `sentence` column: read alone it dropped the question.
    void readsGlueFilesAsDistributed_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");  // empty: a single sentence
        QTest::addColumn<QString>("label");
        QTest::newRow("QNLI") << "qnli.tsv"
                              << "index\tquestion\tsentence\tlabel\n"
                                 "0\tWhat is it?\tIt is a cat.\tentailment\n"
                              << "What is it?"
                              << "It is a cat."
                              << "entailment";
        QTest::newRow("MNLI train")
            << "mnli.tsv"
            << "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\t"
               "sentence2_binary_parse\tsentence1_parse\tsentence2_parse\tsentence1\t"
               "sentence2\tlabel1\tgold_label\n"
               "0\t31193\t31193n\tgovernment\t( ( A b ) )\t( B )\t(ROOT (S A))\t(ROOT B)\t"
               "A man sleeps.\tA person rests.\tneutral\tentailment\n"
            << "A man sleeps."
            << "A person rests."
            << "entailment";
        QTest::newRow("MNLI dev")
            << "mnli_dev.tsv"
            << "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\t"
               "sentence2_binary_parse\tsentence1_parse\tsentence2_parse\tsentence1\t"
               "sentence2\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n"
               "0\t1\t1n\tfiction\tx\ty\tx\ty\tThe sky.\tIt is blue.\tneutral\t"
               "contradiction\tcontradiction\tneutral\tcontradiction\tcontradiction\n"
            << "The sky."
            << "It is blue."
            << "contradiction";
        QTest::newRow("QQP") << "qqp.tsv"
                             << "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                                "7\t15\t16\tHow do I cook?\tHow can I cook?\t1\n"
                             << "How do I cook?"
                             << "How can I cook?"
                             << "1";
        QTest::newRow("MRPC") << "mrpc.tsv"
                              << "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                 "1\t702876\t702977\tHe said so.\tSo he said.\n"
                              << "He said so."
                              << "So he said."
                              << "1";
        QTest::newRow("RTE") << "rte.tsv"
                             << "index\tsentence1\tsentence2\tlabel\n"
                                "0\tDogs bark.\tAnimals bark.\tentailment\n"
                             << "Dogs bark."
                             << "Animals bark."
                             << "entailment";
        QTest::newRow("SST-2") << "sst2.tsv"
                               << "sentence\tlabel\nit is fine \t1\n"
                               << "it is fine "
                               << ""
                               << "1";
    }
    void readsGlueFilesAsDistributed() {
        QFETCH(QString, name);
        QFETCH(QString, text);
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(QString, label);
        const auto s = read_classification(file(name, text.toStdString()));
        QCOMPARE(s.examples.size(), std::size_t(1));
        QCOMPARE(s.pairs, !b.isEmpty());
        QCOMPARE(s.examples[0].text_a, a.toStdString());
        QCOMPARE(s.examples[0].text_b.value_or(""), b.toStdString());
        QCOMPARE(s.examples[0].label, label.toStdString());
    }
    // SNLI's gold_label "-" (no annotator consensus) rows are left out and counted; GLUE test
    // files (no label column) read unlabelled for prediction; CoLA's headerless files and STS-B's
    // regression score get errors that say so; a header naming a column twice is refused.
    void glueEdgeCases() {
        const auto snli = read_classification(file("snli.tsv",
                                                   "gold_label\tsentence1\tsentence2\n"
                                                   "neutral\ta\tb\n-\tc\td\nentailment\te\tf\n"));
        QCOMPARE(snli.examples.size(), std::size_t(2));
        QCOMPARE(snli.no_consensus, std::int64_t(1));
        QCOMPARE(snli.labels, (std::vector<std::string>{"entailment", "neutral"}));
        const auto test = file("qnli_test.tsv", "index\tquestion\tsentence\n0\tq?\ts.\n");
        QVERIFY(error_of([&] { read_classification(test); }).find("no label column") !=
                std::string::npos);
        const auto unlabelled = read_classification(test, false);
        QCOMPARE(*unlabelled.examples[0].text_b, std::string("s."));
        QCOMPARE(unlabelled.examples[0].label_id, -1);
        const std::string cola = error_of([&] {
            read_classification(file("cola.tsv", "gj04\t1\t\tOur friends won't buy this.\n"));
        });
        QVERIFY2(
            cola.find("cola.tsv:1:") != std::string::npos && cola.find("CoLA") != std::string::npos,
            cola.c_str());
        const std::string sts = error_of([&] {
            read_classification(file("sts.tsv",
                                     "index\tgenre\tfilename\tyear\told_index\t"
                                     "source1\tsource2\tsentence1\tsentence2\tscore\n"
                                     "0\tg\tf\t2012\t1\ts\ts\ta\tb\t5.000\n"));
        });
        QVERIFY2(sts.find("regression") != std::string::npos, sts.c_str());
        const std::string twice = error_of(
            [&] { read_classification(file("twice.tsv", "sentence\tlabel\tlabel\na\t1\t0\n")); });
        QVERIFY2(twice.find("'label' twice") != std::string::npos, twice.c_str());
    }
    // Hugging Face datasets' to_json of GLUE: the TSV's field names, idx ignored; a test split's
    // labels are all -1 (unlabelled), while -1 among other labels stays a class.
    void readsHuggingFaceJsonLines() {
        const auto qnli = read_classification(
            file("qnli.jsonl",
                 "{\"question\": \"q?\", \"sentence\": \"s.\", \"label\": 0, \"idx\": 0}\n"
                 "{\"question\": \"r?\", \"sentence\": \"t.\", \"label\": 1, \"idx\": 1}\n"));
        QVERIFY(qnli.pairs);
        QCOMPARE(qnli.examples[1].text_a, std::string("r?"));
        QCOMPARE(*qnli.examples[1].text_b, std::string("t."));
        const auto mnli = read_classification(
            file("mnli.jsonl",
                 "{\"premise\": \"p\", \"hypothesis\": \"h\", \"label\": 2}\n"
                 "{\"premise\": \"p2\", \"hypothesis\": \"h2\", \"label\": 0}\n"));
        QCOMPARE(*mnli.examples[0].text_b, std::string("h"));
        QCOMPARE(ids_of(mnli), (std::vector<std::int32_t>{1, 0}));
        const auto sst =
            read_classification(file("sst.jsonl",
                                     "{\"sentence\": \"ok\", \"label\": 1, \"idx\": 0}\n"
                                     "{\"sentence\": \"bad\", \"label\": 0, \"idx\": 1}\n"));
        QVERIFY(!sst.pairs);
        QCOMPARE(sst.examples[1].text_a, std::string("bad"));
        const auto test = file("test.jsonl",
                               "{\"sentence\": \"a\", \"label\": -1}\n"
                               "{\"sentence\": \"b\", \"label\": -1}\n");
        QVERIFY(error_of([&] { read_classification(test); }).find("every label") !=
                std::string::npos);
        QCOMPARE(read_classification(test, false).examples[1].label_id, -1);
        // The same split exported with to_csv (comma or tab): the same rule (both were refused,
        // "label '-1' is not in the training label set", by eval).
        for (const auto& [name, text] :
             {std::pair{"test.csv", "sentence,label\na,-1\nb,-1\n"},
              std::pair{"test.tsv", "sentence\tlabel\na\t-1\nb\t-1\n"}}) {
            const auto t = file(name, text);
            QVERIFY2(
                error_of([&] { read_classification(t); }).find("every label") != std::string::npos,
                name);
            const auto unlabelled = read_classification(t, false);
            QCOMPARE(unlabelled.examples.size(), std::size_t(2));
            QCOMPARE(unlabelled.examples[0].label_id, -1);
            QVERIFY(unlabelled.labels.empty());
        }
        // Read against a label set with −1 as a class (a classifier trained on {−1, +1}), a file
        // of its negatives alone is scored: 2 examples labelled -1 (eval said "scored 0").
        for (const auto& [name, text] :
             {std::pair{"neg.tsv", "sentence\tlabel\na\t-1\nb\t-1\n"},
              std::pair{"neg.csv", "sentence,label\na,-1\nb,-1\n"},
              std::pair{"neg.jsonl",
                        "{\"sentence\": \"a\", \"label\": -1}\n{\"sentence\": \"b\", \"label\": "
                        "-1}\n"}}) {
            const auto t = file(name, text);
            for (const bool require : {true, false}) {
                const auto negatives = read_classification(t, require, /*minus_one_is_class=*/true);
                QCOMPARE(negatives.examples.size(), std::size_t(2));
                QCOMPARE(negatives.examples[1].label, std::string("-1"));
                QCOMPARE(negatives.labels, (std::vector<std::string>{"-1"}));
            }
        }
        const auto classes =
            read_classification(file("classes.tsv", "sentence\tlabel\na\t-1\nb\t1\n"));
        QCOMPARE(classes.labels, (std::vector<std::string>{"-1", "1"}));
        const auto three = read_classification(file(
            "three.jsonl", "{\"text\": \"a\", \"label\": -1}\n{\"text\": \"b\", \"label\": 1}\n"));
        QCOMPARE(three.labels, (std::vector<std::string>{"-1", "1"}));
        const std::string half = error_of([&] {
            read_classification(file("half.jsonl",
                                     "{\"premise\": \"p\", \"hypothesis\": \"h\"}\n"
                                     "{\"premise\": \"p2\", \"label\": 0}\n"));
        });
        QVERIFY2(half.find("half.jsonl:2: no 'hypothesis' field") != std::string::npos,
                 half.c_str());
        const std::string array = error_of([&] {
            read_classification(file("array.json", "[{\"text\": \"a\", \"label\": 1}]\n"));
        });
        QVERIFY2(array.find("array.json:1: a JSON array") != std::string::npos, array.c_str());
    }

    // The datasets' own JSON Lines, as their authors distribute them: SNLI 1.0's
    // snli_1.0_train.jsonl (gold_label, sentence1/2 and parses; "-" where the annotators did not
    // agree) and SuperGLUE's BoolQ (question, passage, boolean label). Expected values are the
    // records' fields as written here.
    // Files of other formats are named: a Hugging Face datasets split (Parquet, Arrow) with the
    // export to use, anything else with the formats read.
    void otherFormatsAreNamed() {
        const std::string parquet =
            error_of([&] { read_classification(file("train-00000-of-00001.parquet", "PAR1")); });
        QVERIFY2(parquet.find("train-00000-of-00001.parquet: a Hugging Face datasets file") !=
                         std::string::npos &&
                     parquet.find("to_json") != std::string::npos,
                 parquet.c_str());
        const std::string arrow =
            error_of([&] { read_classification(file("data-00000-of-00001.arrow", "x")); });
        QVERIFY2(arrow.find("Parquet or Arrow") != std::string::npos, arrow.c_str());
        const std::string xlsx = error_of([&] { read_classification(file("train.xlsx", "x")); });
        QVERIFY2(xlsx.find("expected .tsv, .csv, .jsonl or .json") != std::string::npos,
                 xlsx.c_str());
        // Lines ended by CR alone (classic Mac OS): named, with the conversion (it said "header
        // has no label column" or "no examples"). CRLF (Windows) reads as ever.
        const std::string cr = error_of(
            [&] { read_classification(file("mac.tsv", "sentence\tlabel\rgood\t1\rbad\t0\r")); });
        QVERIFY2(cr.find("mac.tsv: its lines end in CR alone") != std::string::npos &&
                     cr.find("tr '\\r' '\\n'") != std::string::npos,
                 cr.c_str());
        QCOMPARE(read_classification(file("win.tsv", "sentence\tlabel\r\ngood\t1\r\nbad\t0\r\n"))
                     .examples.size(),
                 std::size_t{2});
        // The same float labels in every format name the same classes: pandas' to_csv writes
        // 0.0 and 1.0, a JSON Lines file holds the numbers 0.0 and 1.0 (read as "0", "1").
        const auto csv = read_classification(file("floats.csv", "sentence,label\na,1.0\nb,0.0\n"));
        const auto tsv =
            read_classification(file("floats.tsv", "sentence\tlabel\na\t1.0\nb\t0.0\n"));
        const auto jsonl = read_classification(
            file("floats.jsonl",
                 "{\"text\": \"a\", \"label\": 1.0}\n{\"text\": \"b\", \"label\": 0.0}\n"));
        QCOMPARE(jsonl.labels, (std::vector<std::string>{"0", "1"}));
        QCOMPARE(csv.labels, jsonl.labels);
        QCOMPARE(tsv.labels, jsonl.labels);
        QCOMPARE(csv.examples[0].label_id, jsonl.examples[0].label_id);
        // A name among them keeps every label as written.
        QCOMPARE(
            read_classification(file("mixed.tsv", "sentence\tlabel\na\t1.0\nb\tneutral\n")).labels,
            (std::vector<std::string>{"1.0", "neutral"}));
        // Excel's "Unicode Text" and Windows' Notepad "Unicode": UTF-16 little-endian with its
        // byte-order mark FF FE, each ASCII character followed by a NUL (the encoding by hand).
        const auto utf16le = [](const std::string& text) {
            std::string out = "\xFF\xFE";
            for (const char c : text) {
                out.push_back(c);
                out.push_back('\0');
            }
            return out;
        };
        for (const char* name : {"excel.tsv", "excel.csv", "excel.jsonl"}) {
            const std::string body =
                std::string(name).ends_with(".jsonl") ? "{\"text\": \"good\", \"label\": 1}\n"
                : std::string(name).ends_with(".csv") ? "sentence,label\ngood,1\n"
                                                      : "sentence\tlabel\ngood\t1\n";
            const std::string path = file(name, utf16le(body));
            const std::string wide = error_of([&] { read_classification(path); });
            QVERIFY2(wide.find(path +
                               ": UTF-16 (little-endian) text, not UTF-8: convert it, e.g. "
                               "`iconv -f UTF-16 -t UTF-8 " +
                               path) == 0,
                     wide.c_str());
            // The converted name keeps the extension that says the format (excel.utf8.tsv):
            // "excel.tsv.utf8" is read by no reader.
            const std::string ext = std::filesystem::path(name).extension().string();
            QVERIFY2(wide.find("excel.utf8" + ext + "`") != std::string::npos, wide.c_str());
            // Python's open(..., encoding="utf-16-le") writes no byte-order mark: a NUL in every
            // other byte, which UTF-8 text never has.
            const std::string bare = file(QString("bare_") + name, utf16le(body).substr(2));
            const std::string no_mark = error_of([&] { read_classification(bare); });
            QVERIFY2(no_mark.find("UTF-16 (little-endian, no byte-order mark) text, not UTF-8") !=
                             std::string::npos &&
                         no_mark.find("iconv -f UTF-16LE -t UTF-8") != std::string::npos,
                     no_mark.c_str());
        }
        // A compressed split is named as such (not "unknown classification format").
        const std::string gz =
            error_of([&] { read_classification(file("train.tsv.gz", "\x1f\x8b")); });
        QVERIFY2(gz.find("train.tsv.gz: a compressed file") != std::string::npos, gz.c_str());
        // The Parquet advice exports CSV, which is read back with its quotes (TSV is not).
        QVERIFY2(parquet.find("to_csv(\"train.csv\", index=False)") != std::string::npos,
                 parquet.c_str());
        // json.dump(records, indent=2): one array over many lines, said as such.
        const std::string pretty = error_of([&] {
            read_classification(file("pretty.json",
                                     "[\n  {\n    \"sentence\": \"a\",\n    "
                                     "\"label\": 1\n  }\n]\n"));
        });
        QVERIFY2(pretty.find("pretty.json:1: one JSON array spread over many lines") !=
                     std::string::npos,
                 pretty.c_str());
    }

    // STS-B as Hugging Face exports it: a real-valued similarity under "label". Read as classes
    // it trained a 4-way classifier with exit 0; it is a regression target, refused by name.
    void realValuedLabelsAreARegressionTarget() {
        const std::string csv = error_of([&] {
            read_classification(file("stsb.csv",
                                     "sentence1,sentence2,label,idx\na,b,5.0,0\nc,d,3.8,1\n"
                                     "e,f,0.5,2\n"));
        });
        QVERIFY2(csv.find("stsb.csv:3: label '3.8' is a real number") != std::string::npos &&
                     csv.find("regression target") != std::string::npos,
                 csv.c_str());
        const std::string jsonl = error_of([&] {
            read_classification(file("stsb.jsonl",
                                     "{\"sentence1\": \"a\", \"sentence2\": \"b\", "
                                     "\"label\": 2.75}\n"));
        });
        QVERIFY2(jsonl.find("stsb.jsonl:1: 'label' is 2.75, a real number") != std::string::npos &&
                     jsonl.find("regression target") != std::string::npos,
                 jsonl.c_str());
        // GLUE's own STS-B dev.tsv: the gold value is a 'score' column, no label column. Read for
        // prediction (eval, dump) it was taken as unlabelled and "scored 0" without a word.
        const std::string glue = file("STS-B-dev.tsv",
                                      "index\tgenre\tfilename\tyear\told_index\tsource1\t"
                                      "source2\tsentence1\tsentence2\tscore\n"
                                      "0\tmain-captions\tMSRvid\t2012test\t0000\tnone\tnone\t"
                                      "A man with a hard hat is dancing.\tA man wearing a hard hat "
                                      "is dancing.\t5.000\n");
        // Training refuses it; read for prediction the column is named, and eval of a classifier
        // refuses it (run_inputs.cpp; another model's dump reads the sentences).
        const std::string e = error_of([&] { read_classification(glue); });
        QVERIFY2(e.find("STS-B-dev.tsv:1: ") != std::string::npos &&
                     e.find("'score' column is a regression target") != std::string::npos,
                 e.c_str());
        QCOMPARE(read_classification(glue, false).regression_column, std::string("score"));
        // Whole numbers written as reals are classes (pandas writes 1.0 for a float column), and
        // names that parse as numbers nowhere stay names.
        const auto whole =
            read_classification(file("whole.jsonl",
                                     "{\"text\": \"a\", \"label\": 1.0}\n{\"text\": \"b\", "
                                     "\"label\": 0.0}\n"));
        QCOMPARE(whole.labels, (std::vector<std::string>{"0", "1"}));
        const auto named =
            read_classification(file("named.tsv", "sentence\tlabel\na\t0.5x\nb\tneutral\n"));
        QCOMPARE(named.labels.size(), std::size_t(2));
    }
    void readsTheDatasetsOwnJsonLines() {
        const auto snli = read_classification(file(
            "snli_1.0_dev.jsonl",
            "{\"annotator_labels\": [\"neutral\"], \"captionID\": \"1.jpg#4\", \"gold_label\": "
            "\"neutral\", \"pairID\": \"1.jpg#4r1n\", \"sentence1\": \"A person on a horse.\", "
            "\"sentence1_binary_parse\": \"( ( A person ) )\", \"sentence2\": \"A person is "
            "training.\"}\n"
            "{\"annotator_labels\": [\"neutral\", \"contradiction\"], \"gold_label\": \"-\", "
            "\"sentence1\": \"Two dogs.\", \"sentence2\": \"Cats.\"}\n"
            "{\"annotator_labels\": [\"entailment\"], \"gold_label\": \"entailment\", "
            "\"sentence1\": \"Children smiling.\", \"sentence2\": \"Children are happy.\"}\n"));
        QVERIFY(snli.pairs);
        QCOMPARE(snli.examples.size(), std::size_t(2));
        QCOMPARE(snli.no_consensus, std::int64_t(1));
        QCOMPARE(snli.examples[1].text_a, std::string("Children smiling."));
        QCOMPARE(*snli.examples[0].text_b, std::string("A person is training."));
        QCOMPARE(snli.labels, (std::vector<std::string>{"entailment", "neutral"}));
        const auto boolq = read_classification(file(
            "boolq_val.jsonl",
            "{\"question\": \"is the sky blue\", \"passage\": \"Rayleigh scattering.\", "
            "\"idx\": 0, \"label\": true}\n"
            "{\"question\": \"is ice hot\", \"passage\": \"Ice is frozen water.\", \"idx\": 1, "
            "\"label\": false}\n"));
        QVERIFY(boolq.pairs);
        QCOMPARE(boolq.examples[0].text_a, std::string("is the sky blue"));
        QCOMPARE(*boolq.examples[1].text_b, std::string("Ice is frozen water."));
        QCOMPARE(boolq.examples[0].label, std::string("1"));
        QCOMPARE(boolq.examples[1].label, std::string("0"));
    }
    // CSV as Python's csv module writes it (the bytes below are csv.writer's output for the rows
    // in the comments, byte for byte: quotes doubled, a comma and a line break inside quotes,
    // CRLF record endings),
    // read with the TSV's header rules; a record's line is the line it ends on.
    void readsCsvAsPythonWritesIt() {
        // rows: ["question", "sentence", "label", "idx"],
        //       ["Why, \"exactly\"?", "Because\nof it.", "entailment", "0"],
        //       [" padded ", "plain", "not_entailment", "1"]
        const auto p = file("qnli.csv",
                            "question,sentence,label,idx\r\n"
                            "\"Why, \"\"exactly\"\"?\",\"Because\nof it.\",entailment,0\r\n"
                            " padded ,plain,not_entailment,1\r\n");
        const auto s = read_classification(p);
        QVERIFY(s.pairs);
        QCOMPARE(s.examples.size(), std::size_t(2));
        QCOMPARE(s.examples[0].text_a, std::string("Why, \"exactly\"?"));
        QCOMPARE(*s.examples[0].text_b, std::string("Because\nof it."));
        QCOMPARE(s.examples[0].line, std::int64_t(2));            // the line the record starts on
        QCOMPARE(s.examples[1].text_a, std::string(" padded "));  // kept as written
        QCOMPARE(s.labels, (std::vector<std::string>{"entailment", "not_entailment"}));
        QCOMPARE(s.examples[1].line, std::int64_t(4));
        // A stray quote inside an unquoted field and a last line without its newline, as
        // Python's csv.reader reads them: [["sentence", "label"], ['ab"c', "1"], ["last", "0"]].
        const auto stray =
            read_classification(file("stray.csv", "sentence,label\nab\"c,1\nlast,0"));
        QCOMPARE(stray.examples.size(), std::size_t(2));
        QCOMPARE(stray.examples[0].text_a, std::string("ab\"c"));
        QCOMPARE(stray.examples[1].text_a, std::string("last"));
        const std::string wide = error_of(
            [&] { read_classification(file("wide.csv", "sentence,label\na,1\nb,0,extra\n")); });
        QVERIFY2(wide.find("wide.csv:3: expected 2 comma-separated fields") != std::string::npos,
                 wide.c_str());
        const std::string open = error_of([&] {
            read_classification(file("open.csv", "sentence,label\n\"never closed,1\nb,0\n"));
        });
        // Named at the line where the open field starts (it was the file's last line).
        QVERIFY2(open.find("open.csv:2:") != std::string::npos &&
                     open.find("never closed") != std::string::npos,
                 open.c_str());
        // Text after a closing quote (Python's csv reads ["abc ", "1"]; this reader keeps the
        // field open): named at its record's line with what keeps it open, not the file's end.
        const std::string after = error_of([&] {
            read_classification(file("after.csv", "sentence,label\nok,0\n\"abc\" ,1\nb,0\nc,1\n"));
        });
        QVERIFY2(after.find("after.csv:3:") != std::string::npos &&
                     after.find("text after a closing quote") != std::string::npos,
                 after.c_str());
        const std::string utf =
            error_of([&] { read_classification(file("utf.csv", "sentence,label\nbad \xFF,1\n")); });
        QVERIFY2(utf.find("utf.csv:2: invalid UTF-8") != std::string::npos, utf.c_str());
    }
    void integerLabelsSortNumerically() {
        const auto p = file("num.jsonl",
                            "{\"text\": \"a\", \"label\": 10}\n{\"text\": \"b\", \"label\": 2}\n"
                            "{\"text\": \"c\", \"label\": \"-1\"}\n");
        const auto s = read_classification(p);
        QCOMPARE(s.labels, (std::vector<std::string>{"-1", "2", "10"}));
        QCOMPARE(ids_of(s), (std::vector<std::int32_t>{2, 1, 0}));
    }
    // An explicit sign is integer syntax (LIBSVM-style +1 / -1): "+1", "-1", "+0" sorted as
    // strings numbered +0, +1, -1. Integers beyond 64 bits sort by value too; the same value
    // written two ways ("1", "+1") is two labels, ordered by their text.
    void signedIntegerLabelsSortNumerically() {
        const auto p =
            file("signed.tsv", "sentence\tlabel\ngood\t+1\nbad\t-1\ngreat\t+1\nmeh\t+0\n");
        const auto s = read_classification(p);
        QCOMPARE(s.labels, (std::vector<std::string>{"-1", "+0", "+1"}));
        QCOMPARE(ids_of(s), (std::vector<std::int32_t>{2, 0, 2, 1}));
        const auto big = read_classification(file("big.tsv",
                                                  "sentence\tlabel\na\t18446744073709551615\n"
                                                  "b\t-5\nc\t10\nd\t+2\ne\t-18446744073709551616\n"
                                                  "f\t1\ng\t+1\n"));
        QCOMPARE(big.labels, (std::vector<std::string>{"-18446744073709551616", "-5", "+1", "1",
                                                       "+2", "10", "18446744073709551615"}));
    }
    // JSON Lines labels that are whole numbers beyond the 64-bit integers: 1e20 and 2e20 were one
    // class ("-9223372036854775808", an overflowing cast), 18446744073709551615 (an unsigned
    // integer to the JSON parser) was "-1". Kept as the line writes them, as the TSV reader keeps
    // the same labels; a file whose every label is 18446744073709551615 is labelled.
    void jsonLinesLabelsBeyond64BitsKeepTheirText() {
        const auto reals = read_classification(
            file("reals.jsonl",
                 "{\"text\": \"a\", \"label\": 1e20}\n{\"text\": \"b\", \"label\": 2e20}\n"
                 "{\"text\": \"c\", \"label\": 3}\n{\"text\": \"d\", \"label\": "
                 "100000000000000000000}\n"));
        QCOMPARE(reals.labels,
                 (std::vector<std::string>{"100000000000000000000", "1e20", "2e20", "3"}));
        QCOMPARE(ids_of(reals), (std::vector<std::int32_t>{1, 2, 3, 0}));
        const auto tsv = read_classification(file(
            "reals.tsv", "sentence\tlabel\na\t1e20\nb\t2e20\nc\t3\nd\t100000000000000000000\n"));
        QCOMPARE(tsv.labels, reals.labels);
        const auto unsigned_max =
            read_classification(file("u64.jsonl",
                                     "{\"text\": \"a\", \"label\": 18446744073709551615}\n"
                                     "{\"text\": \"b\", \"label\": 0}\n"));
        QCOMPARE(unsigned_max.labels, (std::vector<std::string>{"0", "18446744073709551615"}));
        QCOMPARE(ids_of(unsigned_max), (std::vector<std::int32_t>{1, 0}));
        const auto all_max = read_classification(
            file("u64only.jsonl", "{\"text\": \"a\", \"label\": 18446744073709551615}\n"));
        QCOMPARE(all_max.labels, (std::vector<std::string>{"18446744073709551615"}));
        // Whole reals within the 64-bit integers are the integer classes (1.0: class 1; 1e16 and
        // 10000000000000000 are one class, 10^16 being exact in a double), in JSONL and TSV.
        QCOMPARE(read_classification(file("whole.jsonl",
                                          "{\"text\": \"a\", \"label\": 4e15}\n"
                                          "{\"text\": \"b\", \"label\": -2.0}\n"))
                     .labels,
                 (std::vector<std::string>{"-2", "4000000000000000"}));
        const auto e16 =
            read_classification(file("e16.jsonl",
                                     "{\"text\": \"a\", \"label\": 1e16}\n"
                                     "{\"text\": \"b\", \"label\": 0}\n"
                                     "{\"text\": \"c\", \"label\": 10000000000000000}\n"));
        QCOMPARE(e16.labels, (std::vector<std::string>{"0", "10000000000000000"}));
        QCOMPARE(read_classification(file("e16.tsv",
                                          "sentence\tlabel\na\t1e16\nb\t0\nc\t"
                                          "10000000000000000\n"))
                     .labels,
                 e16.labels);
    }
    // A CSV whose lines end in CR alone (classic Mac OS, Excel's "CSV (Macintosh)"): libcsv ends a
    // record at a lone CR, so every record was "line 1" (in predictions and in errors). Refused as
    // the TSV and JSON Lines readers refuse such a file.
    void csvWithLinesEndedByCrAloneIsRefused() {
        const auto p = file("mac.csv", "sentence,label\rgood,1\rbad,0\rfine,1,extra\r");
        const std::string cr = error_of([&] { read_classification(p); });
        QVERIFY2(cr.find(p + ": its lines end in CR alone") == 0 &&
                     cr.find("tr '\\r' '\\n' < " + p + " > converted.csv") != std::string::npos,
                 cr.c_str());
        // CRLF, and a CR inside a quoted field of an LF file, read as ever.
        QCOMPARE(read_classification(file("crlf.csv", "sentence,label\r\ngood,1\r\nbad,0\r\n"))
                     .examples.size(),
                 std::size_t{2});
        const auto quoted =
            read_classification(file("quoted.csv", "sentence,label\n\"a\rb\",1\n\"c\rd\",0\n"));
        QCOMPARE(quoted.examples[1].text_a, std::string("c\rd"));
        QCOMPARE(quoted.examples[1].line, std::int64_t(3));
    }
    void readsJsonLinesSinglesAndPairs() {
        const auto single = file("s.jsonl",
                                 "{\"text\": \"good \\u00e9\", \"label\": \"pos\"}\n\n"
                                 "{\"text\": \"bad\", \"label\": \"neg\"}\n");
        const auto s = read_classification(single);
        QCOMPARE(s.examples[0].text_a, std::string("good \xC3\xA9"));
        QCOMPARE(s.examples[1].line, std::int64_t(3));
        QCOMPARE(ids_of(s), (std::vector<std::int32_t>{1, 0}));
        const auto pairs = file("p.jsonl",
                                "{\"text_a\": \"q?\", \"text_b\": \"a.\", \"label\": 1}\n"
                                "{\"text_a\": \"q2?\", \"text_b\": \"b.\", \"label\": 0}\n");
        const auto ps = read_classification(pairs);
        QVERIFY(ps.pairs);
        QCOMPARE(*ps.examples[0].text_b, std::string("a."));
    }
    void malformedRowsAreReportedWithFileAndLine() {
        const auto tsv = file("bad.tsv", "sentence\tlabel\nfine\t1\ntoo\tmany\tfields\n");
        QVERIFY(error_of([&] { read_classification(tsv); }).find("bad.tsv:3:") !=
                std::string::npos);
        const auto jsonl =
            file("bad.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\",\n");
        const std::string msg = error_of([&] { read_classification(jsonl); });
        QVERIFY2(msg.find("bad.jsonl:2:") != std::string::npos, msg.c_str());
        const auto utf = file("utf.tsv", "sentence\tlabel\nbad \xFF byte\t1\n");
        QVERIFY(error_of([&] { read_classification(utf); }).find("utf.tsv:2:") !=
                std::string::npos);
        const auto notext = file("notext.jsonl", "{\"body\": \"a\", \"label\": 1}\n");
        QVERIFY(error_of([&] { read_classification(notext); }).find("notext.jsonl:1:") !=
                std::string::npos);
    }
    void missingLabelIsAnError() {
        const auto tsv = file("nolabel.tsv", "sentence\tlabel\nfine\t1\nno label here\t\n");
        const std::string msg = error_of([&] { read_classification(tsv); });
        QVERIFY2(msg.find("nolabel.tsv:3: missing label") != std::string::npos, msg.c_str());
        const auto jsonl =
            file("nolabel.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\"}\n");
        QVERIFY(error_of([&] {
                    read_classification(jsonl);
                }).find("nolabel.jsonl:2: missing label") != std::string::npos);
        const auto header = file("nolabelcol.tsv", "sentence\nfine\n");
        QVERIFY(error_of([&] { read_classification(header); }).find("nolabelcol.tsv:1:") !=
                std::string::npos);
        // Prediction input may be unlabelled when asked for.
        QCOMPARE(read_classification(header, false).examples[0].label_id, -1);
    }
    void validationUsesTheTrainingLabelSet() {
        const auto train = read_classification(file("t.tsv", "sentence\tlabel\na\tx\nb\ty\n"));
        auto valid = read_classification(file("v.tsv", "sentence\tlabel\nc\ty\n"));
        assign_label_ids(valid, train.labels);
        QCOMPARE(valid.examples[0].label_id, 1);
        auto unseen = read_classification(file("u.tsv", "sentence\tlabel\nc\ty\nd\tz\n"));
        QVERIFY(error_of([&] { assign_label_ids(unseen, train.labels); }).find("u.tsv:3:") !=
                std::string::npos);
    }
    void unknownExtensionIsRejected() {
        const auto p = file("data.xlsx", "sentence,label\n");
        QVERIFY(error_of([&] { read_classification(p); }).find("data.xlsx") != std::string::npos);
        // A directory named like a data file is said to be one (not an unknown format).
        const QString dir = dir_.filePath("adir.tsv");
        QVERIFY(QDir().mkpath(dir));
        std::string why;
        try {
            read_classification(dir.toStdString());
        } catch (const Error& e) {
            why = e.what();
        }
        QVERIFY2(why.find("adir.tsv: a directory") != std::string::npos, why.c_str());
    }
    // Issue 17 class 8, docs/decisions.md "Labels with surrounding spaces": rejected naming the
    // file and line, in TSV and JSON Lines alike ("yes " would otherwise be a class of its own).
    void labelWithSurroundingSpacesIsRejected() {
        const std::string tsv = file("spaced.tsv", "sentence\tlabel\nalpha\tyes\nbeta\t no\n");
        const std::string err = error_of([&] { read_classification(tsv, true); });
        QVERIFY2(err.find(tsv + ":3:") != std::string::npos, err.c_str());
        QVERIFY2(err.find("' no'") != std::string::npos, err.c_str());
        const std::string jsonl = file("spaced.jsonl",
                                       "{\"text\": \"a\", \"label\": \"yes\"}\n"
                                       "{\"text\": \"b\", \"label\": \"no \"}\n");
        const std::string err2 = error_of([&] { read_classification(jsonl, true); });
        QVERIFY2(err2.find(jsonl + ":2:") != std::string::npos, err2.c_str());
        // Spaces inside a label are kept.
        const std::string inner = file("inner.tsv", "sentence\tlabel\nalpha\tvery good\n");
        QCOMPARE(read_classification(inner, true).labels.front(), std::string("very good"));
    }
    // Issue 17 class 1: a JSON line nested thousands deep is a FormatError naming file, line and
    // the limit, not a stack overflow.
    void deeplyNestedJsonLineIsRejected() {
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        const std::string jsonl =
            file("deep.jsonl", "{\"text\": \"a\", \"label\": \"yes\"}\n{\"text\": " + deep + "}\n");
        const std::string err = error_of([&] { read_classification(jsonl, true); });
        QVERIFY2(err.find(jsonl + ":2:") != std::string::npos, err.c_str());
        QVERIFY2(err.find("64") != std::string::npos, err.c_str());
    }
};

QTEST_APPLESS_MAIN(TestClassificationSet)
#include "test_classification_set.moc"
