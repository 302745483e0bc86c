// The phone-book experiment's pieces through the CLI (issue 7; docs/experiments.md "Phone book"):
// - `train` with data.task = phone-book and a causal objective (clm on a causal Birdie, prefix_lm
//   and birdie on a prefix Birdie) runs the Trainer on the task's completed examples and logs the
//   answers' exact match; `eval --task phone-book` of each checkpoint writes one line per test
//   example with entries / query_position, and its predicted answer tokens equal the PyTorch
//   reference's argmax over the same rows (tests/reference/score_task_answers.py, which builds the
//   rows itself from the documented layout); the summary's exact match is recounted from the lines;
// - eval --data of a causal checkpoint: the next-token loss on a corpus, equal to the training
//   run's own evaluation of the same rows;
// - bad input: eval --task induction on a phone-book checkpoint, a class-label task or a corpus
//   together with data.task for a causal objective: exit 2 naming the key or file;
// - `experiment phone-book` end to end at a tiny size: three runs, and results.json's exact match,
//   digit accuracy and bins recounted from each run's test.preds.jsonl.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "engine/data/task.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/task_corpus.hpp"
#include "train_test_support.hpp"

using train_test::read_json;
using train_test::read_lines;
using train_test::run_cli;
using train_test::write_text;

namespace {

constexpr int kTaskSeed = 3;

nlohmann::json tiny_task_config(const std::string& objective, const std::string& mode) {
    return {{"model",
             {{"arch", "birdie"},
              {"d_model", 16},
              {"n_layers", 2},
              {"max_len", 128},
              {"dropout", 0.0},
              {"birdie", {{"mode", mode}}}}},
            {"data",
             {{"task", "phone-book"},
              {"task_params",
               {{"seed", kTaskSeed},
                {"n_train", 64},
                {"n_valid", 8},
                {"n_test", 12},
                {"min_entries", 2},
                {"max_entries", 4}}}}},
            {"train",
             {{"objective", objective},
              {"batch_size", 8},
              {"steps", 6},
              {"lr", 3e-3},
              {"warmup_steps", 1},
              {"eval_every", 3},
              {"checkpoint_every", 0},
              {"birdie", {{"update_every", 3}}},
              {"threads", 1}}}};
}

std::vector<std::string> words(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

}  // namespace

class TestPhoneBookCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }
    QString config_file(const std::string& name, const nlohmann::json& j) {
        write_text(path(name + ".json"), j.dump(2));
        return qpath(name + ".json");
    }

    // Trains the tiny run, returns its directory.
    std::string train(const std::string& name, const std::string& objective,
                      const std::string& mode) {
        const std::string out = path(name);
        const auto r =
            run_cli({"train", "--config", config_file(name, tiny_task_config(objective, mode)),
                     "--out", QString::fromStdString(out), "--json"});
        if (r.exit_code != 0) qWarning("%s", qPrintable(r.err));
        return r.exit_code == 0 ? out : std::string();
    }

private slots:
    // train.init_from on a causal task run (the experiment's fine-tune stage): the run starts
    // from the checkpoint's weights. With lr 0 one step changes nothing (AdamW's update and its
    // decoupled decay both scale with lr), so the new checkpoint's parameters are the old ones,
    // bit for bit; the same run without init_from starts elsewhere.
    void aCausalTaskRunStartsFromACheckpoint() {
        const std::string first = train("init-source", "birdie", "prefix");
        QVERIFY(!first.empty());
        auto cfg = tiny_task_config("birdie", "prefix");
        cfg["train"]["lr"] = 0.0;
        cfg["train"]["steps"] = 1;
        cfg["train"]["seed"] = 99;                      // another fresh init than the source's
        cfg["data"]["task_params"]["max_entries"] = 6;  // longer books than the source saw
        const QString from = QString::fromStdString(first + "/model.ckpt.h5");
        for (const bool start_from : {true, false}) {
            const std::string out = path(start_from ? "init-on" : "init-off");
            QStringList args{"train", "--config", config_file("init", cfg), "--out",
                             QString::fromStdString(out)};
            if (start_from) args << "--init" << from;
            const auto r = run_cli(args);
            QVERIFY2(r.exit_code == 0, qPrintable(r.err));
            const auto a = routescope::read_checkpoint(first + "/model.ckpt.h5");
            const auto b = routescope::read_checkpoint(out + "/model.ckpt.h5");
            QCOMPARE(a.params.size(), b.params.size());
            QCOMPARE(a.params == b.params, start_from);
        }
    }

    void causalEvalMatchesTheReference_data() {
        QTest::addColumn<QString>("objective");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("layout");  // eval --birdie-layout
        QTest::newRow("clm causal") << "clm"
                                    << "causal"
                                    << "prefix_lm";
        QTest::newRow("prefix_lm prefix") << "prefix_lm"
                                          << "prefix"
                                          << "prefix_lm";
        QTest::newRow("birdie prefix") << "birdie"
                                       << "prefix"
                                       << "prefix_lm";
        QTest::newRow("birdie prefix, next-token layout") << "birdie"
                                                          << "prefix"
                                                          << "next_token";
    }

    void causalEvalMatchesTheReference() {
        QFETCH(QString, objective);
        QFETCH(QString, mode);
        QFETCH(QString, layout);
        const std::string name =
            objective.toStdString() + "-" + mode.toStdString() + "-" + layout.toStdString();
        const std::string run = train(name, objective.toStdString(), mode.toStdString());
        QVERIFY(!run.empty());
        bool logged = false;
        for (const auto& j : read_lines(run + "/log.jsonl"))
            if (j.value("type", "") == "eval") logged = j.contains("exact_match");
        QVERIFY(logged);

        const std::string preds = run + "/test.preds.jsonl";
        const auto e = run_cli(
            {"eval", "--checkpoint", QString::fromStdString(run + "/model.ckpt.h5"), "--task",
             "phone-book", "--split", "test", "--out", QString::fromStdString(preds),
             "--batch-size", "5", "--threads", "1", "--birdie-layout", layout});
        QVERIFY2(e.exit_code == 0, qPrintable(e.err));
        const auto lines = read_lines(preds);
        QCOMPARE(lines.size(), std::size_t{12});

        // The same test examples, completed, for the reference.
        routescope::data::TaskParams p;
        p.seed = kTaskSeed;
        p.n_train = 64;
        p.n_valid = 8;
        p.n_test = 12;
        p.min_entries = 2;
        p.max_entries = 4;
        const auto task = routescope::data::generate_task("phone-book", p);
        nlohmann::json examples = nlohmann::json::array();
        for (const auto& x : task.test) {
            const auto [first, last] = routescope::train::answer_span(x.targets);
            examples.push_back(
                {{"tokens", routescope::train::completed_sequence(x.input, x.targets)},
                 {"first", first},
                 {"last", last}});
        }
        write_text(path(name + ".examples.json"), examples.dump());
        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/reference/score_task_answers.py"),
                  QString::fromStdString(run + "/model.ckpt.h5"), qpath(name + ".examples.json"),
                  qpath(name + ".reference.json"), layout});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, qPrintable(QString::fromUtf8(py.readAllStandardError())));
        const auto reference = read_json(path(name + ".reference.json"));

        std::int64_t correct = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const auto& l = lines[i];
            const auto& x = task.test[i];
            QCOMPARE(l["attributes"]["entries"].get<double>(), x.attributes.at("entries"));
            QCOMPARE(l["attributes"]["query_position"].get<double>(),
                     x.attributes.at("query_position"));
            // Pieces back to ids; a Birdie special ([start], a sentinel, …) lies past the task's
            // vocabulary, where only its range is checked.
            const auto ref = reference[i]["predicted"].get<std::vector<std::int32_t>>();
            const auto predicted = words(l["prediction"].get<std::string>());
            QCOMPARE(predicted.size(), ref.size());
            for (std::size_t k = 0; k < ref.size(); ++k) {
                const auto it = std::find(task.vocab.begin(), task.vocab.end(), predicted[k]);
                if (it == task.vocab.end())
                    QVERIFY2(ref[k] >= static_cast<std::int32_t>(task.vocab.size()),
                             predicted[k].c_str());
                else
                    QCOMPARE(static_cast<std::int32_t>(it - task.vocab.begin()), ref[k]);
            }
            QCOMPARE(l["correct"].get<bool>(), reference[i]["correct"].get<bool>());
            correct += l["correct"].get<bool>() ? 1 : 0;
        }
        const auto summary = read_json(run + "/test.preds.summary.json");
        QCOMPARE(summary["metric"].get<std::string>(), std::string("exact_match"));
        QCOMPARE(summary["exact_match"].get<double>(), double(correct) / 12.0);
        if (objective == "birdie")
            QCOMPARE(summary["birdie_layout"].get<std::string>(), layout.toStdString());
        else
            QVERIFY(!summary.contains("birdie_layout"));
    }

    void badInputIsAUsageError() {
        const std::string run = train("bad-base", "clm", "causal");
        QVERIFY(!run.empty());
        const auto e =
            run_cli({"eval", "--checkpoint", QString::fromStdString(run + "/model.ckpt.h5"),
                     "--task", "induction", "--out", qpath("bad.jsonl")});
        QCOMPARE(e.exit_code, 2);
        QVERIFY2(e.err.contains("--task induction") && e.err.contains("model.ckpt.h5") &&
                     e.err.contains("not trained on this task"),
                 qPrintable(e.err));
        const auto layout = run_cli(
            {"eval", "--checkpoint", QString::fromStdString(run + "/model.ckpt.h5"), "--task",
             "phone-book", "--out", qpath("bad-layout.jsonl"), "--birdie-layout", "copying"});
        QCOMPARE(layout.exit_code, 2);
        QVERIFY2(layout.err.contains("--birdie-layout"), qPrintable(layout.err));

        auto gap = tiny_task_config("clm", "causal");
        gap["data"]["task"] = "gap-matching";
        auto r = run_cli({"train", "--config", config_file("gap", gap), "--out", qpath("gap")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.task") && r.err.contains("classification task"),
                 qPrintable(r.err));

        auto both = tiny_task_config("birdie", "prefix");
        both["data"]["train"] = "builtin:grammar";
        r = run_cli({"train", "--config", config_file("both", both), "--out", qpath("both")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.train") && r.err.contains("not both"), qPrintable(r.err));

        auto bidirectional = tiny_task_config("clm", "bidirectional");
        r = run_cli(
            {"train", "--config", config_file("bidi", bidirectional), "--out", qpath("bidi")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("model.birdie.mode"), qPrintable(r.err));
    }

    // eval --data of a causal checkpoint: next-token loss on the corpus. With data.valid = the
    // training file and every held-out batch evaluated, the run's last "eval" record scores the
    // same clm rows, so the two numbers agree; a birdie checkpoint gives a finite loss too; a
    // causal checkpoint without --data or --task is exit 2.
    void causalCheckpointOnACorpusGivesTheNextTokenLoss() {
        const std::string corpus = path("words.txt");
        write_text(corpus, train_test::word_corpus(120, 9));
        nlohmann::json j = {{"model",
                             {{"arch", "birdie"},
                              {"d_model", 16},
                              {"n_layers", 2},
                              {"max_len", 64},
                              {"dropout", 0.0},
                              {"birdie", {{"mode", "causal"}}}}},
                            {"tokenizer", {{"kind", "bytes"}}},
                            {"data", {{"train", corpus}, {"valid", corpus}, {"seq_len", 32}}},
                            {"train",
                             {{"objective", "clm"},
                              {"batch_size", 4},
                              {"steps", 8},
                              {"lr", 3e-3},
                              {"warmup_steps", 1},
                              {"eval_every", 0},
                              {"eval_batches", 0},
                              {"checkpoint_every", 0},
                              {"threads", 1}}}};
        for (const std::string objective : {"clm", "birdie"}) {
            j["train"]["objective"] = objective;
            const std::string out = path("corpus-" + objective);
            auto r = run_cli({"train", "--config", config_file("corpus-" + objective, j), "--out",
                              QString::fromStdString(out), "--json"});
            QVERIFY2(r.exit_code == 0, qPrintable(r.err));
            const QString ck = QString::fromStdString(out + "/model.ckpt.h5");
            r = run_cli({"eval", "--checkpoint", ck, "--data", QString::fromStdString(corpus),
                         "--batch-size", "4", "--threads", "1"});
            QVERIFY2(r.exit_code == 0, qPrintable(r.err));
            const auto e = nlohmann::json::parse(r.out.toStdString());
            QCOMPARE(e["objective"].get<std::string>(), objective);
            QCOMPARE(e["scoring"].get<std::string>(), std::string("next-token"));
            QVERIFY(std::isfinite(e["loss"].get<double>()) && e["loss"].get<double>() > 0);
            QVERIFY(e["accuracy"].get<double>() >= 0 && e["accuracy"].get<double>() <= 1);
            if (objective == "clm") {
                nlohmann::json last;
                for (const auto& l : read_lines(out + "/log.jsonl"))
                    if (l.value("type", "") == "eval") last = l;
                QVERIFY(!last.is_null());
                QCOMPARE(e["targets"].get<std::int64_t>(), last["targets"].get<std::int64_t>());
                QVERIFY2(std::fabs(e["loss"].get<double>() - last["loss"].get<double>()) < 1e-9,
                         qPrintable(r.out));
            }
            r = run_cli({"eval", "--checkpoint", ck});
            QCOMPARE(r.exit_code, 2);
            QVERIFY2(r.err.contains("--data"), qPrintable(r.err));
        }
    }

    // What `experiment phone-book` refuses before any stage starts (docs/cli.md, experiment): exit
    // 2 naming the key, nothing written — no --out, so no lock file and no half-written run (these
    // failed inside a stage, exit 3, or with n_test = 0 ran every stage and exited 0):
    // - task parameters its generator refuses (min_entries above max_entries), also for a grid
    //   of seeds (no seed run);
    // - an empty test split (n_test = 0: nothing to score);
    // - books longer than model.max_len: the training books' (a book of n entries is [CLS], 16
    //   tokens an entry, [SEP], the query's 15, [SEP]: 16·n + 18, so even one entry's 34 > 10),
    //   and the fine-tune's of up to 8 × 2 = 16 entries (274 > 100, while the training books' 50
    //   fit);
    // - train.objective and model.birdie.mode, the contrast the runs are given (with either set,
    //   all four runs trained alike while results.json named each run's own objective);
    // - train.epochs (the runs trained another number of steps than the schedule and the steps
    //   recorded said).
    void experimentChecksItsTaskAndSettingsBeforeAnyStage() {
        const QStringList tiny = {"--steps", "1", "--threads", "1", "--set", "model.d_model=8"};
        const struct {
            QStringList sets;
            QString key;
        } cases[] = {
            {{"data.task_params.min_entries=3", "data.task_params.max_entries=2"}, "min_entries"},
            {{"data.task_params.n_valid=4", "data.task_params.n_test=0"},
             "data.task_params.n_test"},
            {{"model.max_len=10"}, "model.max_len"},
            {{"model.max_len=100"}, "model.max_len"},
            {{"train.objective=mlm"}, "train.objective"},
            {{"train.objective=birdie"}, "train.objective"},
            {{R"(train={"objective": "mlm"})"}, "train.objective"},
            {{"model.birdie.mode=bidirectional"}, "model.birdie.mode"},
            {{"model.birdie.mode=prefix"}, "model.birdie.mode"},
            {{"train.epochs=1"}, "train.epochs"},
        };
        int k = 0;
        for (const auto& c : cases) {
            const QString out = qpath("refused-" + std::to_string(k++));
            QStringList args = QStringList{"experiment", "phone-book", "--out", out} + tiny;
            for (const QString& s : c.sets)
                args << "--set" << s;
            const auto r = run_cli(args);
            QVERIFY2(r.exit_code == 2, qPrintable(c.sets.join(' ') + ": " + r.err + r.out));
            QVERIFY2(r.err.contains(c.key), qPrintable(c.sets.join(' ') + ": " + r.err));
            QVERIFY2(!QFileInfo::exists(out), qPrintable(c.sets.join(' ') + ": " + out));
        }
        // The fine-tune's books are named as such.
        const auto ft = run_cli(QStringList{"experiment", "phone-book", "--out", qpath("ft")} +
                                tiny + QStringList{"--set", "model.max_len=100"});
        QVERIFY2(ft.err.contains("fine-tune"), qPrintable(ft.err));
        // A grid of seeds: refused before any seed runs.
        const auto grid = run_cli(
            QStringList{"experiment", "phone-book", "--out", qpath("grid"), "--seeds", "2"} + tiny +
            QStringList{"--set", "data.task_params.min_entries=3", "--set",
                        "data.task_params.max_entries=2"});
        QCOMPARE(grid.exit_code, 2);
        QVERIFY2(grid.err.contains("min_entries"), qPrintable(grid.err));
        QVERIFY(!QFileInfo::exists(qpath("grid")));
    }

    void experimentRunsEndToEndAndItsTablesMatchThePredictions() {
        const std::string out = path("exp");
        const auto r =
            run_cli({"experiment", "phone-book", "--out", QString::fromStdString(out), "--steps",
                     "4", "--threads", "1", "--seed", "5", "--set", "model.d_model=16", "--set",
                     "data.task_params.max_entries=5", "--set", "data.task_params.n_valid=8",
                     "--set", "data.task_params.n_test=24"},
                    300000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        const auto results = read_json(out + "/results.json");
        QCOMPARE(results["runs"].size(), std::size_t{4});
        const std::vector<std::string> names = {"next_token", "birdie_prefix", "birdie_causal",
                                                "transformer_next_token"};
        for (std::size_t k = 0; k < 4; ++k) {
            const bool transformer = k == 3;  // the positive control: a causal BERT
            const auto& m = results["runs"][k];
            QCOMPARE(m["run"].get<std::string>(), names[k]);
            QCOMPARE(m["steps"].get<std::int64_t>(), std::int64_t{4});
            const auto config = read_json(out + "/" + m["config"].get<std::string>());
            QCOMPARE(config["model"]["d_model"].get<int>(), 16);
            QCOMPARE(config["train"]["seed"].get<int>(), 5);
            QCOMPARE(config["model"]["arch"].get<std::string>(),
                     std::string(transformer ? "bert" : "birdie"));
            if (transformer) {
                QCOMPARE(config["model"]["causal"].get<bool>(), true);
                QCOMPARE(config["model"]["position_embeddings"].get<bool>(), true);
            } else {
                QCOMPARE(config["model"]["birdie"]["mode"].get<std::string>(),
                         std::string(k == 1 ? "prefix" : "causal"));
                // Forget gates initialised near 1 (docs/decisions.md).
                QCOMPARE(config["model"]["birdie"]["forget_init"].get<std::string>(),
                         std::string("spread"));
            }
            QCOMPARE(config["data"]["task_params"]["min_entries"].get<int>(), 1);  // books from 1
            QCOMPARE(config["train"]["objective"].get<std::string>(),
                     std::string(k == 0 || transformer ? "clm" : "birdie"));
            const auto preds = read_lines(out + "/" + m["predictions"].get<std::string>());
            QCOMPARE(preds.size(), std::size_t{24});
            // Recount: overall, and each bin of each attribute.
            const auto recount = [&](const std::string& attribute, double lo, double hi)
                -> std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t> {
                std::int64_t n = 0, right = 0, digits = 0, digits_right = 0;
                for (const auto& p : preds) {
                    const double v =
                        attribute.empty() ? 0 : p["attributes"][attribute].get<double>();
                    if (v < lo || v > hi) continue;
                    ++n;
                    right += p["correct"].get<bool>() ? 1 : 0;
                    const auto label = words(p["label"].get<std::string>());
                    const auto pred = words(p["prediction"].get<std::string>());
                    if (label.size() != 12 || pred.size() != 12) return {-1, -1, -1, -1};
                    for (std::size_t i = 0; i < label.size(); ++i) {
                        if (label[i] == "-") continue;
                        ++digits;
                        digits_right += pred[i] == label[i] ? 1 : 0;
                    }
                }
                return std::tuple{n, right, digits, digits_right};
            };
            const auto check = [&](const nlohmann::json& cell, const std::string& attribute,
                                   double lo, double hi) {
                const auto [n, right, digits, digits_right] = recount(attribute, lo, hi);
                QCOMPARE(cell["examples"].get<std::int64_t>(), n);
                QCOMPARE(cell["correct"].get<std::int64_t>(), right);
                if (n > 0) {
                    QCOMPARE(cell["exact_match"].get<double>(), double(right) / double(n));
                    QCOMPARE(cell["digit_accuracy"].get<double>(),
                             double(digits_right) / double(digits));
                }
            };
            check(m["test"], "", 0, 0);
            std::int64_t binned = 0;
            for (const std::string attribute : {"entries", "query_position"}) {
                const auto& bins = results["bins"][attribute];
                QVERIFY(!bins.empty());
                binned = 0;
                for (std::size_t b = 0; b < bins.size(); ++b) {
                    check(m["bins"][attribute][b], attribute, bins[b]["lo"].get<double>(),
                          bins[b]["hi"].get<double>());
                    binned += m["bins"][attribute][b]["examples"].get<std::int64_t>();
                }
                QCOMPARE(binned, std::int64_t{24});  // the bins cover every example once
            }
            QVERIFY(std::filesystem::exists(out + "/" + m["checkpoint"].get<std::string>()));
            // Birdie: no position embeddings (a longer book has no unseen position); rows long
            // enough for 8 × 5 entries: [CLS], 16 per entry, [SEP], the query's 15, [SEP], the
            // answer.
            QCOMPARE(config["model"]["position_embeddings"].get<bool>(), transformer);
            QVERIFY(config["model"]["max_len"].get<int>() >= 1 + 16 * 40 + 1 + 15 + 1 + 12);
            // Past the training length: 1024 new books at 1, 2, 4 and 8 × the training books'
            // 1-5 entries, each cell recounted from its predictions, with the Wilson score
            // interval recomputed here (z = 1.959964).
            const auto& lengths = m["lengths"];
            QCOMPARE(lengths.size(), std::size_t{4});
            for (std::size_t c = 0; c < 4; ++c) {
                const int mult = 1 << c;
                const auto& cell = lengths[c];
                QCOMPARE(cell["multiple"].get<int>(), mult);
                QCOMPARE(cell["entries"], nlohmann::json({mult, 5 * mult}));
                const auto at = read_lines(out + "/" + names[k] + "/length-" +
                                           std::to_string(mult) + "x.preds.jsonl");
                QCOMPARE(at.size(), std::size_t{1024});
                std::int64_t right = 0;
                for (const auto& p : at) {
                    const auto entries = p["attributes"]["entries"].get<double>();
                    QVERIFY(entries >= mult && entries <= 5 * mult);
                    right += p["correct"].get<bool>() ? 1 : 0;
                }
                QCOMPARE(cell["examples"].get<std::int64_t>(), std::int64_t{1024});
                QCOMPARE(cell["correct"].get<std::int64_t>(), right);
                const double n = 1024, p = double(right) / n, z = 1.959963984540054;
                const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
                const double half =
                    z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
                QVERIFY(std::abs(cell["wilson_low"].get<double>() - std::max(0.0, centre - half)) <
                        1e-12);
                QVERIFY(std::abs(cell["wilson_high"].get<double>() - std::min(1.0, centre + half)) <
                        1e-12);
            }
            // The fine-tune stage: min(100, 4) steps from the trained weights, books of 1-40
            // entries, no weight decay; its checkpoint scored at the same four sizes.
            const auto ft = read_json(out + "/" + names[k] + "/finetune/config.json");
            QCOMPARE(ft["train"]["steps"].get<int>(), 4);
            QCOMPARE(ft["train"]["weight_decay"].get<double>(), 0.0);
            QCOMPARE(ft["data"]["task_params"]["max_entries"].get<int>(), 40);
            QCOMPARE(ft["train"]["objective"], config["train"]["objective"]);
            QVERIFY(
                std::filesystem::exists(out + "/" + m["finetune_checkpoint"].get<std::string>()));
            QCOMPARE(m["lengths_finetuned"].size(), std::size_t{4});
            for (std::size_t c = 0; c < 4; ++c) {
                const auto at = read_lines(out + "/" + names[k] + "/finetuned-" +
                                           std::to_string(1 << c) + "x.preds.jsonl");
                std::int64_t right = 0;
                for (const auto& p : at)
                    right += p["correct"].get<bool>() ? 1 : 0;
                QCOMPARE(m["lengths_finetuned"][c]["examples"].get<std::int64_t>(),
                         std::int64_t(at.size()));
                QCOMPARE(m["lengths_finetuned"][c]["correct"].get<std::int64_t>(), right);
            }
        }
        std::ifstream md_file(out + "/results.md");
        const auto md = QString::fromStdString(
            std::string(std::istreambuf_iterator<char>(md_file), std::istreambuf_iterator<char>()));
        QVERIFY2(md.contains("| next_token | clm | causal |") &&
                     md.contains("| birdie_prefix | birdie | prefix |") &&
                     md.contains("| birdie_causal | birdie | causal |") &&
                     md.contains("| transformer_next_token | clm | causal |") &&
                     md.contains("| 8× (8–40 entries) |") && md.contains("Scale:") &&
                     md.contains("Not reproduced at this scale") &&
                     md.contains("after the fine-tune (4 steps"),
                 qPrintable(md));
    }
};

QTEST_GUILESS_MAIN(TestPhoneBookCli)
#include "test_phone_book_cli.moc"
