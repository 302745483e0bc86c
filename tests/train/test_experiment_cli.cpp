// `routescope-cli experiment` (issue 4's seed experiment; docs/cli.md, docs/experiments.md) end to
// end with a tiny budget, through the CLI as a user runs it:
// - `experiment induction` trains GATED/SSM, STACK/SSM and STACK/ATT (a few steps, small sizes
//   through --steps and --set), exits 0 and writes results.json / results.md with three rows;
//   each row's test accuracy and its accuracy per distance bin are recomputed here from the
//   per-example predictions written beside it; the three dumps pass `routescope-cli validate`;
//   every run's config.json carries the --set overrides and the seed; the same command again gives
//   the same accuracies and the same per-example predictions (deterministic for a seed);
// - an unknown experiment name is a usage error (exit 2) naming it and the known ones; a bad --set
//   is exit 2; an --out that cannot be created is a clear error with a nonzero exit.
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include <filesystem>
#include <fstream>

#include "train_test_support.hpp"

using train_test::read_json;
using train_test::read_lines;
using train_test::run_cli;
using train_test::write_text;

namespace {

// The tiny budget: d = 16, 8–12 content tokens, 40 test examples, 6 steps of 32.
QStringList tiny_experiment(const QString& name, const QString& out) {
    return {"experiment", name,
            "--out",      out,
            "--steps",    "6",
            "--threads",  "2",
            "--seed",     "7",
            "--set",      "model.d_model=16",
            "--set",      "model.ssm.n_modes=8",
            "--set",      "data.task_params.min_len=8",
            "--set",      "data.task_params.max_len=12",
            "--set",      "data.task_params.n_valid=20",
            "--set",      "data.task_params.n_test=40"};
}

}  // namespace

class TestExperimentCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }

private slots:
    void inductionRunsEndToEndAndItsTableMatchesThePredictions() {
        const std::string out = path("ind");
        const auto r = run_cli(tiny_experiment("induction", qpath("ind")), 300000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));

        const auto results = read_json(out + "/results.json");
        QCOMPARE(results["experiment"].get<std::string>(), std::string("induction"));
        QVERIFY(results["protocol"].get<std::string>().find("H3") != std::string::npos);
        QCOMPARE(results["attribute"].get<std::string>(), std::string("distance"));
        QCOMPARE(results["seed"].get<int>(), 7);
        const auto& models = results["models"];
        QCOMPARE(models.size(), std::size_t{3});
        const std::vector<std::string> labels = {"GATED/SSM", "STACK/SSM", "STACK/ATT"};
        const std::vector<std::string> archs = {"bigs", "stack_ssm", "bert"};
        const auto& bins = results["bins"];
        QVERIFY(!bins.empty());
        QStringList dumps{"validate"};
        for (std::size_t i = 0; i < 3; ++i) {
            const auto& m = models[i];
            QCOMPARE(m["label"].get<std::string>(), labels[i]);
            QCOMPARE(m["arch"].get<std::string>(), archs[i]);
            QCOMPARE(m["steps"].get<int>(), 6);
            QVERIFY(m["parameters"].get<std::int64_t>() > 0);
            QVERIFY(m["train_seconds"].get<double>() > 0);

            // The overall accuracy and each bin's, recounted from the predictions.
            const auto preds = read_lines(out + "/" + m["predictions"].get<std::string>());
            QCOMPARE(preds.size(), std::size_t{40});
            std::int64_t correct = 0;
            for (const auto& p : preds)
                correct += p["correct"].get<bool>() ? 1 : 0;
            QCOMPARE(m["test"]["examples"].get<int>(), 40);
            QCOMPARE(m["test"]["correct"].get<std::int64_t>(), correct);
            QCOMPARE(m["test"]["accuracy"].get<double>(), double(correct) / 40.0);
            // One seed: the 95% Wilson score interval over the 40 examples, computed here from
            // its formula (Wilson 1927), z = 1.959964.
            {
                const double z = 1.959963984540054, nn = 40, p = double(correct) / nn;
                const double centre = (p + z * z / (2 * nn)) / (1 + z * z / nn);
                const double half =
                    z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / (1 + z * z / nn);
                QVERIFY(std::abs(m["test"]["wilson"][0].get<double>() - (centre - half)) < 1e-12);
                QVERIFY(std::abs(m["test"]["wilson"][1].get<double>() - (centre + half)) < 1e-12);
            }
            QCOMPARE(m["bins"].size(), bins.size());
            std::int64_t binned = 0;
            for (std::size_t b = 0; b < bins.size(); ++b) {
                const double lo = bins[b]["lo"].get<double>(), hi = bins[b]["hi"].get<double>();
                std::int64_t n = 0, right = 0;
                for (const auto& p : preds) {
                    const double d = p["attributes"]["distance"].get<double>();
                    if (d < lo || d > hi) continue;
                    ++n;
                    right += p["correct"].get<bool>() ? 1 : 0;
                }
                QCOMPARE(m["bins"][b]["examples"].get<std::int64_t>(), n);
                QCOMPARE(m["bins"][b]["correct"].get<std::int64_t>(), right);
                if (n > 0)
                    QCOMPARE(m["bins"][b]["accuracy"].get<double>(), double(right) / double(n));
                binned += n;
            }
            QCOMPARE(binned, std::int64_t{40});  // the bins cover every example once

            // The run's configuration: the experiment's task, the overrides, the seed.
            const auto config = read_json(out + "/" + m["config"].get<std::string>());
            QCOMPARE(config["model"]["arch"].get<std::string>(), archs[i]);
            QCOMPARE(config["model"]["d_model"].get<int>(), 16);
            QCOMPARE(config["data"]["task"].get<std::string>(), std::string("induction"));
            QCOMPARE(config["data"]["task_params"]["seed"].get<int>(), 7);
            QCOMPARE(config["train"]["seed"].get<int>(), 7);
            // H3's protocol (issue 27; HazyResearch/safari's induction_head configs): causal
            // models, a fixed training set of 5,000, lr 5e-4 with weight decay 0.1, embedding
            // dropout 0.1, one attention head, one SSM kernel per channel (after --set d = 16).
            QVERIFY(config["model"]["causal"].get<bool>());
            QCOMPARE(config["model"]["n_layers"].get<int>(), 2);
            QCOMPARE(config["model"]["dropout"].get<double>(), 0.1);
            // No LayerNorm after the embeddings (lm_simple has none; docs/experiments.md,
            // "Session 16"); the MLM head keeps its transform (docs/experiments.md, "Session 17").
            QVERIFY(!config["model"]["embedding_norm"].get<bool>());
            QVERIFY(config["model"]["mlm_transform"].get<bool>());
            QCOMPARE(config["data"]["task_params"]["n_train"].get<int>(), 5000);
            QCOMPARE(config["data"]["task_params"]["n_test"].get<int>(), 40);  // the --set
            QCOMPARE(config["train"]["lr"].get<double>(), 5e-4);
            QCOMPARE(config["train"]["weight_decay"].get<double>(), 0.1);
            QCOMPARE(config["train"]["batch_size"].get<int>(), 32);
            QCOMPARE(config["train"]["epochs"].get<int>(), 0);  // --steps 6 replaces the 400
            // safari's loss: next-token prediction at every position (the pretraining loop on
            // the task's completed sequences), validated once an epoch (at most 5 times here).
            QCOMPARE(config["train"]["objective"].get<std::string>(), std::string("clm"));
            QCOMPARE(config["train"]["eval_every"].get<int>(), 1);
            QVERIFY(m["valid_step"].get<int>() == 6 && m["best_step"].get<int>() == -1);
            QVERIFY(m["valid_metric"].get<double>() >= 0.0);
            if (archs[i] == "bert")
                QCOMPARE(config["model"]["n_heads"].get<int>(), 1);
            else
                QCOMPARE(config["model"]["ssm"]["n_kernels"].get<int>(), 16);
            QVERIFY(std::filesystem::exists(out + "/" + m["checkpoint"].get<std::string>()));
            dumps << QString::fromStdString(out + "/" + m["dump"].get<std::string>());
            // The induction heads of the attention model (its dump written with --attention) and
            // of the causal BiGS (its gated implicit attention, from the dump's gates) equal
            // numpy's reading of those dumps (tests/reference/analysis/reference_analysis.py,
            // from the definition); the plain SSM stack's dump has no gates: none.
            QCOMPARE(m.contains("induction_heads"), archs[i] != "stack_ssm");
            if (archs[i] != "stack_ssm") {
                const std::string request = out + "/heads-request.json", ref = out + "/heads.json";
                write_text(request, R"({"results": [{"provenance": {"parameters": )"
                                    R"({"marker": "trigger"}}}]})");
                QProcess py;
                py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                         {QStringLiteral(ROUTESCOPE_SOURCE_DIR
                                         "/tests/reference/analysis/reference_analysis.py"),
                          "induction-heads",
                          QString::fromStdString(out + "/" + m["dump"].get<std::string>()),
                          QString::fromStdString(request), QString::fromStdString(ref)});
                QVERIFY(py.waitForFinished(120000) && py.exitCode() == 0);
                const auto want = read_json(ref)["results"][0]["layers"];
                const auto& got = m["induction_heads"];
                QCOMPARE(got.size(), std::size_t{2});
                QCOMPARE(want.size(), got.size());
                for (std::size_t l = 0; l < got.size(); ++l)
                    for (const char* key :
                         {"previous_token", "previous_uniform", "previous_largest", "induction",
                          "induction_uniform", "induction_largest"})
                        QVERIFY2(std::abs(got[l][key].get<double>() - want[l][key].get<double>()) <=
                                     1e-9,
                                 key);
            }
        }

        // results.md: the header, the separator and one row per model.
        std::ifstream md(out + "/results.md");
        std::string line;
        int rows = 0;
        while (std::getline(md, line))
            for (const auto& label : labels)
                if (line.rfind("| " + label + " |", 0) == 0) ++rows;
        QCOMPARE(rows, 3);
        QVERIFY2(r.out.contains("| GATED/SSM | bigs |"), qPrintable(r.out));
        QVERIFY2(r.out.contains("test accuracy [95% Wilson]"), qPrintable(r.out));
        QVERIFY2(r.out.contains("STACK/ATT's induction circuit"), qPrintable(r.out));
        QVERIFY2(r.out.contains("GATED/SSM's induction circuit"), qPrintable(r.out));

        const auto v = run_cli(dumps);
        QVERIFY2(v.exit_code == 0, qPrintable(v.out + v.err));
    }

    void sameSeedGivesTheSameResults() {
        // Run after the test above: the same command into another directory.
        const auto r = run_cli(tiny_experiment("induction", qpath("ind-again")), 300000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        const auto a = read_json(path("ind") + "/results.json");
        const auto b = read_json(path("ind-again") + "/results.json");
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(a["models"][i]["test"].dump(), b["models"][i]["test"].dump());
            QCOMPARE(a["models"][i]["bins"].dump(), b["models"][i]["bins"].dump());
            const std::string preds = a["models"][i]["predictions"].get<std::string>();
            const auto pa = read_lines(path("ind") + "/" + preds);
            const auto pb = read_lines(path("ind-again") + "/" + preds);
            QCOMPARE(pa.size(), pb.size());
            for (std::size_t k = 0; k < pa.size(); ++k)
                QCOMPARE(pa[k].dump(), pb[k].dump());
        }
    }

    // The earlier bidirectional MLM variant stays available under its own name and says so.
    void theBidirectionalVariantIsKeptAndLabelled() {
        const std::string out = path("ind-bi");
        const auto r = run_cli(tiny_experiment("induction-bidirectional", qpath("ind-bi")), 300000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
        const auto results = read_json(out + "/results.json");
        QVERIFY(results["protocol"].get<std::string>().find("bidirectional") != std::string::npos);
        QVERIFY2(r.out.contains("Protocol: bidirectional variant"), qPrintable(r.out));
        for (const auto& m : results["models"]) {
            const auto config = read_json(out + "/" + m["config"].get<std::string>());
            QVERIFY(!config["model"]["causal"].get<bool>());
            QCOMPARE(config["train"]["lr"].get<double>(), 3e-3);
            QCOMPARE(config["data"]["task_params"]["n_train"].get<int>(), 1000);  // max(1000, 6·32)
        }
    }

    void unknownExperimentIsAUsageError() {
        const auto r = run_cli({"experiment", "nope", "--out", qpath("nope")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("unknown experiment 'nope'") && r.err.contains("induction") &&
                     r.err.contains("gap-matching"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("nope")));
    }

    void badOverrideIsAUsageError() {
        const auto r = run_cli(
            {"experiment", "induction", "--out", qpath("bad-set"), "--set", "model.d_modle=3"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("model.d_modle"), qPrintable(r.err));
    }

    // An experiment runs on its protocol's data: a --set of data.task, data.train or data.valid
    // is refused before anything trains (data.train beside the task was ignored, a table of
    // synthetic data came back; data.task=null trained, then the evaluation failed, exit 3). A
    // fine-tuning `train` given a task and a file is refused the same way.
    void anExperimentsDataCannotBeReplaced() {
        const QString file = qpath("pairs.tsv");
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("question\tsentence\tlabel\nq a?\ts a\tentailment\nq b?\ts c\tnot_entailment\n");
        f.close();
        for (const QString& set :
             {"data.train=" + file, QString("data.task=null"), "data.valid=" + file}) {
            const auto r = run_cli({"experiment", "gap-matching", "--out", qpath("own-data"),
                                    "--steps", "2", "--set", set});
            QCOMPARE(r.exit_code, 2);
            QVERIFY2(r.err.contains("runs on its protocol's data"), qPrintable(r.err));
            QVERIFY(!QFile::exists(qpath("own-data") + "/bigs"));
        }
        QFile empty(qpath("defaults.json"));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.write("{}");
        empty.close();
        const auto t = run_cli({"train", "--config", qpath("defaults.json"), "--out",
                                qpath("task-and-file"), "--set", "data.task=gap-matching", "--set",
                                "data.train=" + file, "--set", "train.objective=classify", "--set",
                                "tokenizer.kind=bytes", "--set", "train.steps=2"});
        QCOMPARE(t.exit_code, 2);
        QVERIFY2(t.err.contains("give either a classification file") && t.err.contains("not both"),
                 qPrintable(t.err));
    }

    // --set train.epochs=E changed the steps every run trained while the schedule (warm-up 10% of
    // --steps), results.json's "steps" and the protocol note kept --steps (induction with
    // train.epochs=1: 157 steps trained, 62,800 recorded, a warm-up of 6,280 never left).
    // docs/cli.md: an experiment's budget is --steps, train.epochs is exit 2 naming it, with
    // --steps or without, in the section form too, for a grid as for a single run; nothing is
    // written.
    void trainEpochsIsRefused() {
        const struct {
            QString name;
            QStringList extra;
        } cases[] = {
            {"induction", {"--set", "train.epochs=1"}},
            {"gap-matching", {"--steps", "5", "--set", "train.epochs=1"}},
            {"induction", {"--steps", "5", "--set", R"(train={"epochs": 2})"}},
            {"induction-bidirectional", {"--seeds", "2", "--set", "train.epochs=3"}},
        };
        int k = 0;
        for (const auto& c : cases) {
            const QString out = qpath("epochs-" + std::to_string(k++));
            const auto r = run_cli(QStringList{"experiment", c.name, "--out", out, "--threads", "1",
                                               "--set", "model.d_model=8"} +
                                   c.extra);
            QVERIFY2(r.exit_code == 2, qPrintable(c.extra.join(' ') + ": " + r.err + r.out));
            QVERIFY2(r.err.contains("train.epochs") && r.err.contains("--steps"),
                     qPrintable(r.err));
            QVERIFY2(!QFileInfo::exists(out), qPrintable(out));
        }
    }

    void unwritableOutIsAClearError() {
        // The test may run as root, for whom permission bits do not stop a write: a "directory"
        // whose parent is a regular file stops everyone.
        write_text(path("afile"), "x");
        const auto r = run_cli({"experiment", "induction", "--out", qpath("afile/exp")});
        QVERIFY(r.exit_code != 0);
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.err.contains("afile/exp") && r.err.contains("cannot create"), qPrintable(r.err));
        // A dangling symbolic link as --out is named as such (it said "File exists").
        QVERIFY(QFile::link(qpath("nowhere"), qpath("dangling")));
        const auto d = run_cli({"experiment", "induction", "--out", qpath("dangling")});
        QCOMPARE(d.exit_code, 3);
        QVERIFY2(d.err.contains("is a symbolic link to") && d.err.contains("which does not exist"),
                 qPrintable(d.err));
    }
};

QTEST_GUILESS_MAIN(TestExperimentCli)
#include "test_experiment_cli.moc"
