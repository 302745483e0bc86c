// `routescope-cli train` on built-in tasks and classification files, and `routescope-cli eval`'s
// per-example output (docs/cli.md), through the CLI as a user runs it:
// - a built-in task trains (induction and copying through the MLM head, gap-matching through the
//   classification head); the best checkpoint validates; eval writes one JSON line per example of
//   the chosen split with id, length, label, prediction, correct, attributes (the task's
//   difficulty attribute), and a summary whose metric this test recounts from the lines;
// - a classifier's eval maps ids back to the label names of the training file; the summary's
//   macro-F1 equals the one this test computes from the lines;
// - bad input: unknown task (train and eval), malformed TSV row (line number), missing label
//   column, unwritable output (train and eval), a write error (disk full) — a message naming it, a
//   nonzero exit, and nothing left under the final name; an `eval --tokenizer` vocabulary of the
//   model's size with other pieces (exit 2 naming the first differing id).
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "train_test_support.hpp"

using train_test::read_json;
using train_test::read_lines;
using train_test::run_cli;
using train_test::write_text;

namespace {

nlohmann::json tiny_task(const std::string& task, int n_train, int steps) {
    return {{"model",
             {{"arch", "bigs"},
              {"d_model", 32},
              {"n_layers", 2},
              {"max_len", 128},
              {"dropout", 0.0},
              {"ssm", {{"n_modes", 16}}}}},
            {"data",
             {{"task", task},
              {"task_params",
               {{"n_train", n_train},
                {"n_valid", 40},
                {"n_test", 30},
                {"min_len", 6},
                {"max_len", 12}}}}},
            {"train",
             {{"batch_size", 8},
              {"steps", steps},
              {"lr", 3e-3},
              {"warmup_steps", 2},
              {"eval_every", 10},
              {"checkpoint_every", 0},
              {"threads", 2}}}};
}

// Every hidden temporary a writer might leave beside `dir`'s files.
int temporaries_in(const std::string& dir) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
    return n;
}

}  // namespace

class TestEvalCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }

    // Trains `task`, returns the run directory.
    std::string train_task(const std::string& task, int steps) {
        write_text(path(task + ".json"), tiny_task(task, 80, steps).dump());
        const auto r =
            run_cli({"train", "--config", qpath(task + ".json"), "--out", qpath(task + "-run"),
                     "--json", "--overwrite"});  // a test may train the same task again
        if (r.exit_code != 0) qWarning() << r.err;
        return r.exit_code == 0 ? path(task + "-run") : std::string();
    }

    // Runs eval on a task split and checks the per-example contract; returns the lines.
    std::vector<nlohmann::json> eval_task(const std::string& run, const std::string& task,
                                          const std::string& split, std::size_t expected,
                                          const std::string& attribute, const std::string& metric) {
        const std::string out = run + "/" + split + ".preds.jsonl";
        const auto r =
            run_cli({"eval", "--checkpoint", QString::fromStdString(run + "/best.ckpt.h5"),
                     "--task", QString::fromStdString(task), "--split",
                     QString::fromStdString(split), "--out", QString::fromStdString(out)});
        if (r.exit_code != 0) qWarning() << r.err;
        if (r.exit_code != 0) return {};
        const auto lines = read_lines(out);
        if (lines.size() != expected) qWarning() << "lines" << lines.size();
        std::size_t correct = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const auto& j = lines[i];
            for (const char* key : {"id", "length", "label", "prediction", "correct", "attributes"})
                if (!j.contains(key)) qWarning() << "missing" << key;
            if (j["id"] != i || !j["attributes"].contains(attribute) ||
                j["correct"].get<bool>() != (j["label"] == j["prediction"]) ||
                j["length"].get<int>() < 3)
                return {};
            correct += j["correct"].get<bool>() ? 1 : 0;
        }
        const auto summary = read_json(run + "/" + split + ".preds.summary.json");
        const auto printed = nlohmann::json::parse(r.out.toStdString());
        if (summary != printed || summary["metric"] != metric || summary["examples"] != expected ||
            std::abs(summary[metric].get<double>() - double(correct) / double(expected)) > 1e-12)
            return {};
        return lines;
    }

private slots:
    // docs/cli.md, eval: "`--tokenizer` replaces the stored tokenizer ...; a vocabulary that
    // differs from the model's is exit 2". Only the size was compared: a vocab.txt of the same
    // size with two pieces swapped, or one renamed, scored the checkpoint on ids that meant other
    // words (exit 0). Exit 2 naming the first id where the files part; the same file passes.
    void evalTokenizerMustHoldTheCheckpointsPieces() {
        const std::string pieces[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",
                                      "dog",   "cat",   "runs",  "sees",  "a",      "."};
        const auto vocab = [&](int swap_a, int swap_b, int renamed) {
            std::string text;
            std::vector<std::string> v(std::begin(pieces), std::end(pieces));
            if (swap_a >= 0) std::swap(v[swap_a], v[swap_b]);
            if (renamed >= 0) v[renamed] = "zzqq";
            for (const auto& p : v)
                text += p + "\n";
            return text;
        };
        write_text(path("wp-vocab.txt"), vocab(-1, -1, -1));
        write_text(path("wp-swapped.txt"), vocab(6, 7, -1));   // dog <-> cat
        write_text(path("wp-renamed.txt"), vocab(-1, -1, 9));  // sees -> zzqq
        std::string corpus;
        for (int i = 0; i < 60; ++i)
            corpus += std::string(i % 2 ? "the dog sees a cat ." : "a cat runs .") + "\n";
        write_text(path("wp-corpus.txt"), corpus);
        nlohmann::json c = tiny_task("x", 1, 2);
        c["data"] = {{"train", path("wp-corpus.txt")}, {"seq_len", 16}};
        c["model"]["max_len"] = 16;
        c["tokenizer"] = {{"kind", "wordpiece"}, {"model", path("wp-vocab.txt")}};
        c["train"]["eval_every"] = 0;
        write_text(path("wp.json"), c.dump());
        auto r = run_cli({"train", "--config", qpath("wp.json"), "--out", qpath("wp-run")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const QString ck = qpath("wp-run/model.ckpt.h5");
        r = run_cli({"eval", "--checkpoint", ck, "--data", qpath("wp-corpus.txt"), "--tokenizer",
                     qpath("wp-vocab.txt"), "--batches", "1"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        for (const auto& [file, id, mine, theirs] :
             {std::tuple{"wp-swapped.txt", 6, "cat", "dog"},
              std::tuple{"wp-renamed.txt", 9, "zzqq", "sees"}}) {
            r = run_cli({"eval", "--checkpoint", ck, "--data", qpath("wp-corpus.txt"),
                         "--tokenizer", qpath(file), "--batches", "1"});
            QVERIFY2(r.exit_code == 2 && r.err.contains(qpath(file)) &&
                         r.err.contains(QStringLiteral("id %1 is '%2'").arg(id).arg(mine)) &&
                         r.err.contains(QStringLiteral("'%1' in the checkpoint").arg(theirs)),
                     qPrintable(r.err));
        }
    }

    void targetTasksTrainAndEvalWritesPredictions() {
        const std::string run = train_task("induction", 20);
        QVERIFY(!run.empty());
        const auto v = run_cli({"validate", QString::fromStdString(run + "/best.ckpt.h5")});
        QVERIFY2(v.exit_code == 0, qPrintable(v.out + v.err));
        const auto lines = eval_task(run, "induction", "test", 30, "distance", "accuracy");
        QCOMPARE(lines.size(), std::size_t(30));
        // A single target: label and prediction are one symbol each.
        QVERIFY(lines[0]["label"].get<std::string>().find(' ') == std::string::npos);
        QCOMPARE(eval_task(run, "induction", "valid", 40, "distance", "accuracy").size(),
                 std::size_t(40));

        const std::string copy = train_task("copying", 10);
        QVERIFY(!copy.empty());
        const auto copied = eval_task(copy, "copying", "test", 30, "length", "exact_match");
        QCOMPARE(copied.size(), std::size_t(30));
        // The target is the whole sequence: as many pieces as the length attribute.
        for (const auto& j : copied) {
            const std::string label = j["label"];
            const auto pieces = 1 + std::count(label.begin(), label.end(), ' ');
            QCOMPARE(double(pieces), j["attributes"]["length"].get<double>());
        }
    }

    void classTaskTrainsThroughTheClassifier() {
        const std::string run = train_task("gap-matching", 10);
        QVERIFY(!run.empty());
        const auto lines = eval_task(run, "gap-matching", "valid", 40, "distance", "accuracy");
        QCOMPARE(lines.size(), std::size_t(40));
        for (const auto& j : lines)
            QVERIFY(j["label"] == "0" || j["label"] == "1");
    }

    void classifierEvalMapsLabelNamesAndMacroF1() {
        std::string train = "sentence\tlabel\n", valid = train;
        for (int i = 0; i < 48; ++i) {
            const bool k = (i * 7) % 3 == 0;
            (i < 32 ? train : valid) += std::string(k ? "the zebra runs" : "the horse runs") +
                                        (i % 2 ? " far" : "") + "\t" + (k ? "pos" : "neg") + "\n";
        }
        write_text(path("c_train.tsv"), train);
        write_text(path("c_valid.tsv"), valid);
        nlohmann::json c = tiny_task("x", 1, 1);
        c["data"] = {
            {"train", path("c_train.tsv")}, {"valid", path("c_valid.tsv")}, {"seq_len", 32}};
        c["model"]["max_len"] = 32;
        c["train"]["objective"] = "classify";
        c["train"]["steps"] = 8;
        write_text(path("c.json"), c.dump());
        const auto t = run_cli({"train", "--config", qpath("c.json"), "--out", qpath("c-run")});
        QVERIFY2(t.exit_code == 0, qPrintable(t.err));
        const auto r = run_cli({"eval", "--checkpoint", qpath("c-run/best.ckpt.h5"), "--data",
                                qpath("c_valid.tsv"), "--out", qpath("c.preds.jsonl")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto lines = read_lines(path("c.preds.jsonl"));
        QCOMPARE(lines.size(), std::size_t(16));
        std::map<std::string, int> tp, fp, fn;
        for (const auto& j : lines) {
            const std::string gold = j["label"], pred = j["prediction"];
            QVERIFY(gold == "pos" || gold == "neg");
            QVERIFY(pred == "pos" || pred == "neg");
            QVERIFY(j["line"].get<int>() >= 2);
            if (gold == pred) {
                ++tp[gold];
            } else {
                ++fp[pred];
                ++fn[gold];
            }
        }
        double f1 = 0;
        for (const std::string c2 : {"neg", "pos"}) {
            const int den = 2 * tp[c2] + fp[c2] + fn[c2];
            f1 += den ? 2.0 * tp[c2] / den : 0.0;
        }
        const auto summary = read_json(path("c.preds.summary.json"));
        QCOMPARE(summary["macro_f1"].get<double>(), f1 / 2);

        // GLUE's test split has no labels: every row predicted, nothing scored, and the scores
        // null rather than an accuracy of 0.
        write_text(path("c_test.tsv"), "index\tsentence\n0\tthe zebra runs\n1\tthe horse\n");
        const auto u = run_cli({"eval", "--checkpoint", qpath("c-run/best.ckpt.h5"), "--data",
                                qpath("c_test.tsv"), "--out", qpath("c.test.jsonl")});
        QVERIFY2(u.exit_code == 0, qPrintable(u.err));
        const auto test_lines = read_lines(path("c.test.jsonl"));
        QCOMPARE(test_lines.size(), std::size_t(2));
        for (const auto& j : test_lines)
            QVERIFY(j["label"].is_null() && j["correct"].is_null() && j["prediction"].is_string());
        // Plain text (a line per document, blank lines skipped): one prediction per document,
        // without a file line (a document of a corpus may span lines).
        write_text(path("c_test.txt"), "the zebra runs\n\nthe horse runs far\n");
        const auto t2 = run_cli({"eval", "--checkpoint", qpath("c-run/best.ckpt.h5"), "--data",
                                 qpath("c_test.txt"), "--out", qpath("c.txt.jsonl")});
        QVERIFY2(t2.exit_code == 0, qPrintable(t2.err));
        const auto text_lines = read_lines(path("c.txt.jsonl"));
        QCOMPARE(text_lines.size(), std::size_t(2));
        for (const auto& j : text_lines)
            QVERIFY(j["label"].is_null() && !j.contains("line") &&
                    (j["prediction"] == "pos" || j["prediction"] == "neg"));
        QCOMPARE(text_lines[1]["length"].get<int>(), 2 + 18);  // [CLS] 18 bytes [SEP]
        const auto unscored = read_json(path("c.test.summary.json"));
        QCOMPARE(unscored["scored"].get<int>(), 0);
        QVERIFY2(unscored["accuracy"].is_null() && unscored["loss"].is_null() &&
                     (!unscored.contains("macro_f1") || unscored["macro_f1"].is_null()),
                 unscored.dump().c_str());

        // Sentence pairs for a single-sentence classifier: refused as train refuses such a
        // validation file (it was scored with exit 0, the pair framed as it never was trained).
        write_text(path("c_pairs.tsv"),
                   "sentence1\tsentence2\tlabel\nthe zebra\truns\tpos\nthe horse\truns\tneg\n");
        const auto p = run_cli({"eval", "--checkpoint", qpath("c-run/best.ckpt.h5"), "--data",
                                qpath("c_pairs.tsv"), "--out", qpath("c.pairs.jsonl")});
        QVERIFY2(p.exit_code == 2 && p.err.contains("c_pairs.tsv: sentence pairs, but ") &&
                     p.err.contains("was fine-tuned on single sentences"),
                 qPrintable(p.err));
        QVERIFY(!QFile::exists(qpath("c.pairs.jsonl")));
        // A table under a name that does not say so (iconv's "x.tsv.utf8"): refused, not read as
        // a corpus with its header as a document and nothing scored.
        write_text(path("c_valid.tsv.utf8"), valid);
        const auto n = run_cli({"eval", "--checkpoint", qpath("c-run/best.ckpt.h5"), "--data",
                                qpath("c_valid.tsv.utf8"), "--out", qpath("c.utf8.jsonl")});
        QVERIFY2(n.exit_code == 2 && n.err.contains("its first line holds tabs"),
                 qPrintable(n.err));
    }

    void badInputIsAClearErrorAndLeavesNoPartialFile() {
        // Unknown task: train and eval name it.
        write_text(path("nope.json"), tiny_task("nope", 10, 1).dump());
        auto r = run_cli({"train", "--config", qpath("nope.json"), "--out", qpath("nope-run")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("'nope'"), qPrintable(r.err));

        // A malformed row: file and line.
        write_text(path("bad.tsv"), "sentence\tlabel\nalpha\tyes\nbravo\tno\ncharlie\n");
        nlohmann::json c = tiny_task("x", 1, 1);
        c["data"] = {{"train", path("bad.tsv")}, {"seq_len", 32}};
        c["train"]["objective"] = "classify";
        write_text(path("bad.json"), c.dump());
        r = run_cli({"train", "--config", qpath("bad.json"), "--out", qpath("bad-run")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("bad.tsv:4"), qPrintable(r.err));

        // No label column.
        write_text(path("nolabel.tsv"), "sentence\nalpha\n");
        c["data"]["train"] = path("nolabel.tsv");
        write_text(path("nolabel.json"), c.dump());
        r = run_cli({"train", "--config", qpath("nolabel.json"), "--out", qpath("nl-run")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("nolabel.tsv") && r.err.contains("label"), qPrintable(r.err));

        // An output directory that cannot be created (its parent is a file).
        write_text(path("afile"), "x");
        r = run_cli({"train", "--config", qpath("nope.json"), "--out", qpath("afile/run")});
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.err.contains("afile/run"), qPrintable(r.err));

        // Eval: a trained task checkpoint, then an unknown task and an unwritable --out.
        const std::string run = train_task("induction", 2);
        QVERIFY(!run.empty());
        const QString ck = QString::fromStdString(run + "/model.ckpt.h5");
        r = run_cli({"eval", "--checkpoint", ck, "--task", "nope", "--out", qpath("e.jsonl")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("'nope'"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("e.jsonl")));
        // --batches is an integer of 0 or more, said so (CLI11's NonNegativeNumber printed "not in
        // range 0.000000 to" the largest double written out in 309 digits, for "abc" too).
        for (const char* bad : {"-1", "abc", "2.5"}) {
            r = run_cli({"eval", "--checkpoint", ck, "--task", "induction", "--batches", bad,
                         "--out", qpath("e.jsonl")});
            QVERIFY2(r.exit_code == 2 && r.err.contains("must be an integer of 0 or more") &&
                         r.err.size() < 400,
                     qPrintable(r.err));
        }
        // The checkpoint was not trained on copying: its vocabulary differs.
        r = run_cli({"eval", "--checkpoint", ck, "--task", "copying", "--out", qpath("e.jsonl")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!QFile::exists(qpath("e.jsonl")));
        r = run_cli({"eval", "--checkpoint", ck, "--out", qpath("afile/preds.jsonl")});
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.err.contains("afile/preds.jsonl"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("afile/preds.jsonl")));
        // A write error (disk full, simulated by a 1 KiB file-size limit with SIGXFSZ ignored, so
        // write() fails with EFBIG): a clear error, nothing under the final name, no temporary.
        QProcess sh;
        sh.start("/bin/sh", {"-c", "trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"",
                             QStringLiteral(ROUTESCOPE_CLI), "eval", "--checkpoint", ck, "--split",
                             "train", "--out", qpath("full.jsonl")});
        QVERIFY(sh.waitForFinished(60000));
        const QString full_err = QString::fromUtf8(sh.readAllStandardError());
        // Exit 3, a failure at run time like train's and dump's write errors (it was 2 before the
        // one exit-code table: docs/decisions.md "One exit-code table").
        QVERIFY2(sh.exitStatus() == QProcess::NormalExit && sh.exitCode() == 3,
                 qPrintable(full_err));
        QVERIFY2(full_err.contains("full.jsonl") && full_err.contains("write error"),
                 qPrintable(full_err));
        QVERIFY(!QFile::exists(qpath("full.jsonl")));
        QCOMPARE(temporaries_in(dir_.path().toStdString()), 0);
        QCOMPARE(temporaries_in(run), 0);
    }
};

QTEST_GUILESS_MAIN(TestEvalCli)
#include "test_eval_cli.moc"
