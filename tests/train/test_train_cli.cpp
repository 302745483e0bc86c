// `routescope-cli train` end to end, through the CLI as a user runs it (QProcess):
// - a BiGS run of a few hundred steps on a corpus this test writes brings the held-out MLM loss
//   well below the unigram entropy of the masked tokens (computed here from the corpus's counts),
//   and its checkpoint passes `routescope-cli validate`;
// - train.steps = 0 writes the initial model, whose A_im is the HiPPO-LegS spectrum (numpy
//   reference tests/ssm/hippo_reference.py and MODELS.md's printed magnitudes);
// - bad input stops with a message naming the culprit and the documented exit code (docs/cli.md):
//   an unknown key, an empty corpus, data.seq_len > model.max_len, a checkpoint whose vocabulary
//   disagrees with its tokenizer (resume, eval), a NaN loss (the last good checkpoint intact);
// - SIGTERM saves a checkpoint after the current step and exits 130, and the run resumes;
// - train.keep_checkpoints keeps each checkpoint step's weights (step-N.ckpt.h5);
// - a fresh run refuses a directory holding any file of a run; a run refused during setup leaves
//   builtin-corpus.txt as it was; an --out inside its corpus folder is refused.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "engine/core/config.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "train_test_support.hpp"

using namespace routescope;
using train_test::run_cli;

namespace {

QStringList args_of(std::initializer_list<std::string> list) {
    QStringList out;
    for (const auto& s : list)
        out << QString::fromStdString(s);
    return out;
}

}  // namespace

class TestTrainCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

    // Writes `config` to NAME.json and returns its path.
    std::string config_file(const QString& name, const nlohmann::json& config) const {
        const std::string p = path(name + ".json");
        train_test::write_text(p, config.dump(2));
        return p;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        train_test::write_text(path("words.txt"), train_test::word_corpus(400, 11));
    }

    void bigsLearnsWellBelowTheUnigramEntropyAndItsCheckpointValidates() {
        // The masked targets are the corpus's non-special tokens; under the byte tokenizer those
        // are its bytes (newlines separate documents and are not tokens).
        std::map<char, double> counts;
        double total = 0;
        {
            std::ifstream in(path("words.txt"));
            std::string line;
            while (std::getline(in, line))
                for (char c : line) {
                    counts[c] += 1;
                    total += 1;
                }
        }
        double entropy = 0;
        for (const auto& [c, n] : counts)
            entropy -= n / total * std::log(n / total);
        QVERIFY(entropy > 2.5);  // 12 words over 20 letters and a space: ≈ 2.8 nats

        auto config = train_test::tiny_bigs(path("words.txt"));
        config["model"]["d_model"] = 64;
        config["data"]["seq_len"] = 64;
        config["train"]["batch_size"] = 8;
        config["train"]["steps"] = 400;
        config["train"]["lr"] = 5e-3;
        config["train"]["warmup_steps"] = 20;
        config["train"]["eval_every"] = 100;
        config["train"]["eval_batches"] = 8;
        config["train"]["checkpoint_every"] = 100;
        const std::string out = path("learn");
        const auto r = run_cli(args_of(
            {"train", "--config", config_file("learn", config), "--out", out, "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));

        double eval_loss = -1;
        std::ifstream log(out + "/log.jsonl");
        std::string line;
        while (std::getline(log, line)) {
            const auto j = nlohmann::json::parse(line);
            if (j["type"] == "eval" && j["step"] == 400) eval_loss = j["loss"].get<double>();
        }
        QVERIFY(eval_loss > 0);
        QVERIFY2(eval_loss < 0.5 * entropy, qPrintable(QStringLiteral("held-out loss %1, unigram "
                                                                      "entropy %2 nats")
                                                           .arg(eval_loss)
                                                           .arg(entropy)));
        const auto v = run_cli(args_of({"validate", out + "/model.ckpt.h5"}));
        QVERIFY2(v.exit_code == 0, qPrintable(v.out + v.err));

        // eval on the same corpus agrees that the model learned.
        const auto e = run_cli(args_of({"eval", "--checkpoint", out + "/model.ckpt.h5", "--data",
                                        path("words.txt"), "--batches", "8"}));
        QVERIFY2(e.exit_code == 0, qPrintable(e.err));
        const auto score = nlohmann::json::parse(e.out.toStdString());
        QVERIFY(score["loss"].get<double>() < 0.5 * entropy);
        QVERIFY(score["accuracy"].get<double>() > 0.5);
    }

    void zeroStepsWritesTheInitialModelWithHippoAIm() {
        auto config = train_test::tiny_bigs(path("words.txt"));
        config["model"]["ssm"]["n_modes"] = 64;
        const std::string out = path("init");
        const auto r = run_cli(args_of({"train", "--config", config_file("init", config), "--out",
                                        out, "--set", "train.steps=0"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const Checkpoint ck = read_checkpoint(out + "/model.ckpt.h5");
        QVERIFY(ck.train);
        QCOMPARE(ck.train->step, 0);

        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/ssm/hippo_reference.py"),
                  QStringLiteral("64")});
        QVERIFY(py.waitForFinished(60000) && py.exitCode() == 0);
        std::vector<double> reference;
        for (const auto& l : QString::fromUtf8(py.readAllStandardOutput()).split('\n'))
            if (!l.trimmed().isEmpty()) reference.push_back(l.toDouble());
        QCOMPARE(reference.size(), std::size_t(64));

        const auto find = [&](const std::string& name) {
            for (const auto& e : ck.layout)
                if (e.name == name) return ck.params.data() + e.offset;
            return static_cast<const float*>(nullptr);
        };
        for (const char* ssm : {"layers.0.ssm_forward", "layers.1.ssm_backward"}) {
            const float* a_im = find(std::string(ssm) + ".A_im");
            const float* a_re = find(std::string(ssm) + ".A_re");
            QVERIFY(a_im && a_re);
            for (int n = 0; n < 64; ++n) {
                QVERIFY2(std::abs(a_im[n] - reference[n]) <=
                             1e-6 * std::max(1.0, std::abs(reference[n])),
                         qPrintable(QStringLiteral("%1.A_im[%2] = %3, numpy %4")
                                        .arg(ssm)
                                        .arg(n)
                                        .arg(a_im[n])
                                        .arg(reference[n])));
                QCOMPARE(a_re[n], -0.5f);
            }
            // MODELS.md: magnitudes start 0.264, 0.906, 1.703, 2.626 and end 258.152, 433.031,
            // 1303.274 (± pairs, ascending, so the largest are the last entries).
            std::vector<double> mags(a_im, a_im + 64);
            for (auto& m : mags)
                m = std::abs(m);
            std::sort(mags.begin(), mags.end());
            const double first[] = {0.264, 0.906, 1.703, 2.626};
            for (int k = 0; k < 4; ++k)
                QVERIFY(std::abs(mags[2 * k] - first[k]) < 5e-4);
            QVERIFY(std::abs(a_im[61] - 258.152) < 5e-3 && std::abs(a_im[62] - 433.031) < 5e-3 &&
                    std::abs(a_im[63] - 1303.274) < 5e-3);
        }
        QVERIFY(run_cli(args_of({"validate", out + "/model.ckpt.h5"})).exit_code == 0);
    }

    // Fine-tuning needs no configuration file: `train --init CKPT --set …` takes the model and
    // tokenizer from the checkpoint and docs/config.md's defaults for the rest (it said
    // "--config or --resume is required").
    void fineTuningFromInitNeedsNoConfigFile() {
        const std::string init = path("init") + "/model.ckpt.h5";
        if (!QFileInfo::exists(QString::fromStdString(init)))
            QVERIFY(run_cli(args_of({"train", "--config",
                                     config_file("init", train_test::tiny_bigs(path("words.txt"))),
                                     "--out", path("init"), "--set", "train.steps=0"}))
                        .exit_code == 0);
        train_test::write_text(path("cls.tsv"),
                               "sentence\tlabel\na good one\t1\na bad one\t0\nso good\t1\n");
        const std::string out = path("from_init");
        const auto r =
            run_cli(args_of({"train", "--init", init, "--out", out, "--set",
                             "train.objective=classify", "--set", "data.train=" + path("cls.tsv"),
                             "--set", "train.steps=2", "--set", "train.threads=1"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const Checkpoint tuned = read_checkpoint(out + "/model.ckpt.h5");
        const Checkpoint base = read_checkpoint(init);
        QCOMPARE(tuned.config.model.arch, base.config.model.arch);
        QCOMPARE(tuned.config.model.d_model, base.config.model.d_model);
        QCOMPARE(tuned.config.model.n_labels, 2);
        const auto none = run_cli(args_of({"train", "--out", path("nothing")}));
        QCOMPARE(none.exit_code, 2);
        QVERIFY2(none.err.contains("--config, --init or --resume"), qPrintable(none.err));
    }

    // A fresh run into a directory that holds one is refused (it replaced the checkpoint and
    // the log): exit 2 naming the checkpoint and --resume, the run's files untouched; with
    // --overwrite it is replaced.
    void aFreshRunDoesNotReplaceAnotherRun() {
        const std::string config = config_file("again", train_test::tiny_bigs(path("words.txt")));
        const std::string out = path("again");
        QCOMPARE(
            run_cli(args_of({"train", "--config", config, "--out", out, "--set", "train.steps=2"}))
                .exit_code,
            0);
        const auto bytes = [](const std::string& f) {
            QFile file(QString::fromStdString(f));
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QByteArray checkpoint = bytes(out + "/model.ckpt.h5"),
                         log = bytes(out + "/log.jsonl");
        const auto refused =
            run_cli(args_of({"train", "--config", config, "--out", out, "--set", "train.steps=3"}));
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.err.contains("already holds a run") &&
                     refused.err.contains("model.ckpt.h5") && refused.err.contains("--resume"),
                 qPrintable(refused.err));
        QVERIFY(bytes(out + "/model.ckpt.h5") == checkpoint && bytes(out + "/log.jsonl") == log);
        const auto replaced = run_cli(args_of(
            {"train", "--config", config, "--out", out, "--set", "train.steps=3", "--overwrite"}));
        QVERIFY2(replaced.exit_code == 0, qPrintable(replaced.err));
        QCOMPARE(read_checkpoint(out + "/model.ckpt.h5").train->step, std::int64_t(3));

        // Every file a run writes counts, not model.ckpt.h5 alone: a run whose model.ckpt.h5 was
        // deleted (its log kept) was replaced without a word. Exit 2 naming what was found.
        std::filesystem::remove(out + "/model.ckpt.h5");
        const QByteArray kept_log = bytes(out + "/log.jsonl");
        const auto log_only =
            run_cli(args_of({"train", "--config", config, "--out", out, "--set", "train.steps=2"}));
        QCOMPARE(log_only.exit_code, 2);
        QVERIFY2(log_only.err.contains(QString::fromStdString(out + "/log.jsonl")) &&
                     log_only.err.contains("--overwrite"),
                 qPrintable(log_only.err));
        QVERIFY(bytes(out + "/log.jsonl") == kept_log);
        QVERIFY(!std::filesystem::exists(out + "/model.ckpt.h5"));
        // A kept step-N.ckpt.h5 or a best.ckpt.h5 alone, the same.
        for (const char* name : {"step-2.ckpt.h5", "best.ckpt.h5"}) {
            const std::string alone = path(QStringLiteral("again-%1").arg(name)) + "/" + name;
            std::filesystem::create_directories(std::filesystem::path(alone).parent_path());
            std::filesystem::copy_file(config, alone);  // any bytes: the name counts
            const QByteArray held = bytes(alone);
            const auto r = run_cli(args_of({"train", "--config", config, "--out",
                                            std::filesystem::path(alone).parent_path().string(),
                                            "--set", "train.steps=2"}));
            QVERIFY2(r.exit_code == 2 && r.err.contains(QString::fromStdString(alone)),
                     qPrintable(r.err));
            QVERIFY(bytes(alone) == held);
        }
    }

    // An output never overwrites an input (docs/cli.md): DIR/log.jsonl that is a symbolic link to
    // the run's own data.train was opened with O_TRUNC through the link, and `--overwrite` left
    // the corpus holding the training log (exit 0). The log is the run's own file, replaced as a
    // whole by a fresh run and by --resume alike: the link gives way to the run's log, and the
    // file it named keeps its bytes.
    void aRunsLogNeverWritesThroughALinkIntoAnotherFile() {
        namespace fs = std::filesystem;
        const std::string corpus = path("linked-words.txt");
        train_test::write_text(corpus, train_test::word_corpus(400, 11));
        const auto bytes = [](const std::string& f) {
            QFile file(QString::fromStdString(f));
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QByteArray corpus_bytes = bytes(corpus);
        const std::string config = config_file("linked", train_test::tiny_bigs(corpus));
        const std::string out = path("linked");
        const std::string log = out + "/log.jsonl";
        fs::create_directories(out);
        fs::create_symlink(corpus, log);
        // Steps of the log's records: the run's own, one `start` record first.
        const auto logged_steps = [&] {
            std::vector<std::int64_t> steps;
            std::ifstream in(log);
            std::string line;
            while (std::getline(in, line)) {
                const auto j = nlohmann::json::parse(line);
                if (j.value("type", "") == "step") steps.push_back(j["step"].get<std::int64_t>());
            }
            return steps;
        };
        const auto fresh = run_cli(args_of(
            {"train", "--config", config, "--out", out, "--set", "train.steps=2", "--overwrite"}));
        QVERIFY2(fresh.exit_code == 0, qPrintable(fresh.err));
        QVERIFY(bytes(corpus) == corpus_bytes);
        QVERIFY(!fs::is_symlink(log) && fs::is_regular_file(log));
        QCOMPARE(logged_steps(), (std::vector<std::int64_t>{1, 2}));
        // --resume, the same: a link put in its place is replaced by the cut-back log.
        const QByteArray run_log = bytes(log);
        const std::string kept = path("linked-kept-log.jsonl");
        fs::rename(log, kept);
        fs::create_symlink(corpus, log);
        const auto resumed = run_cli(args_of({"train", "--resume", out, "--set", "train.steps=3"}));
        QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
        QVERIFY(bytes(corpus) == corpus_bytes && bytes(kept) == run_log);
        QVERIFY(!fs::is_symlink(log) && fs::is_regular_file(log));
        QCOMPARE(logged_steps(), (std::vector<std::int64_t>{3}));
    }

    // A run refused during setup leaves the folder's builtin-corpus.txt as it was: the generated
    // corpus is written under its name only once the run is set up (a refused --overwrite run
    // replaced the earlier run's copy, and a refused run left one in a folder without a run).
    // The refusal names builtin:grammar, not the temporary file it was read from.
    void aRunRefusedDuringSetupLeavesTheBuiltinCorpusAsItWas() {
        auto config = train_test::tiny_bigs("builtin:grammar");
        config["train"]["steps"] = 1;
        config["train"]["threads"] = 1;
        const std::string file = config_file("builtin", config), out = path("builtin");
        QCOMPARE(run_cli(args_of({"train", "--config", file, "--out", out})).exit_code, 0);
        const auto bytes = [](const std::string& f) {
            QFile in(QString::fromStdString(f));
            return in.open(QIODevice::ReadOnly) ? in.readAll() : QByteArray();
        };
        const QByteArray corpus = bytes(out + "/builtin-corpus.txt");
        QVERIFY(corpus.count('\n') > 100);
        const auto untrainable = {std::string("--set"), std::string("tokenizer.kind=sentencepiece"),
                                  std::string("--set"), std::string("tokenizer.vocab_size=100000")};
        QStringList refused_args = args_of(
            {"train", "--config", file, "--out", out, "--overwrite", "--set", "train.seed=99"});
        for (const auto& a : untrainable)
            refused_args << QString::fromStdString(a);
        const auto refused = run_cli(refused_args);
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.err.contains("builtin:grammar") && !refused.err.contains(".tmp-"),
                 qPrintable(refused.err));
        QVERIFY(bytes(out + "/builtin-corpus.txt") == corpus);
        QVERIFY(std::filesystem::exists(out + "/model.ckpt.h5"));
        const std::string empty = path("builtin-empty");
        std::filesystem::create_directories(empty);
        QStringList into_empty = args_of({"train", "--config", file, "--out", empty});
        for (const auto& a : untrainable)
            into_empty << QString::fromStdString(a);
        QCOMPARE(run_cli(into_empty).exit_code, 2);
        QVERIFY(std::filesystem::is_empty(empty));
        // Set up, the run replaces it with its own seed's corpus.
        const auto replaced = run_cli(args_of(
            {"train", "--config", file, "--out", out, "--overwrite", "--set", "train.seed=99"}));
        QVERIFY2(replaced.exit_code == 0, qPrintable(replaced.err));
        QVERIFY(bytes(out + "/builtin-corpus.txt") != corpus);
        for (const auto& e : std::filesystem::directory_iterator(out))
            QVERIFY2(e.path().filename().string().find(".tmp-") == std::string::npos,
                     e.path().c_str());
    }

    // An --out inside its own corpus folder: the run's checkpoints and log would lie among the
    // documents, and its resume was refused ("an HDF5 file ... move it out of the corpus"). The
    // fresh run is refused up front, exit 2 naming both, and leaves no directory behind.
    void anOutputInsideItsCorpusFolderIsRefused() {
        const std::string corpus = path("in-corpus");
        std::filesystem::create_directories(corpus);
        std::filesystem::copy_file(path("words.txt"), corpus + "/words.txt");
        auto config = train_test::tiny_bigs(corpus);
        config["train"]["steps"] = 1;
        const std::string file = config_file("in-corpus", config);
        for (const std::string& out : {corpus + "/run", corpus}) {
            const auto r = run_cli(args_of({"train", "--config", file, "--out", out}));
            QVERIFY2(r.exit_code == 2 && r.err.contains("data.train") &&
                         r.err.contains(QString::fromStdString(out)) &&
                         r.err.contains(QString::fromStdString(corpus)),
                     qPrintable(r.err));
        }
        QVERIFY(!std::filesystem::exists(corpus + "/run"));
        const auto beside = run_cli(args_of({"train", "--config", file, "--out", corpus + "-run"}));
        QVERIFY2(beside.exit_code == 0, qPrintable(beside.err));
    }

    // Two trainings into one directory at once (the probe's repro: both exited 0, the log held
    // one run's start and steps then a torn line then the other's, the checkpoint the other's):
    // while a run trains, a second fresh run (even with --overwrite) or a resume of it is refused
    // naming the directory, and the first run's checkpoint and log are its own; once it ended
    // (SIGTERM, exit 130), the resume runs.
    void aSecondTrainingIntoARunningRunsDirectoryIsRefused() {
        auto config = train_test::tiny_bigs(path("words.txt"));
        config["train"]["steps"] = 100000;
        config["train"]["checkpoint_every"] = 0;
        config["train"]["seed"] = 3;
        const std::string file = config_file("busy", config), out = path("busy");
        QProcess p;
        p.start(QStringLiteral(ROUTESCOPE_CLI), args_of({"train", "--config", file, "--out", out}));
        QVERIFY(p.waitForStarted());
        QByteArray seen;
        while (seen.count("\"type\":\"step\"") < 2 && p.waitForReadyRead(30000))
            seen += p.readAllStandardOutput();
        QVERIFY(seen.count("\"type\":\"step\"") >= 2);
        const auto fresh = run_cli(args_of({"train", "--config", file, "--out", out, "--overwrite",
                                            "--set", "train.steps=2", "--set", "train.seed=7"}));
        const auto resumed = run_cli(args_of({"train", "--resume", out}));
        p.terminate();  // SIGTERM: saves and exits 130
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 130);
        for (const auto& r : {fresh, resumed})
            QVERIFY2(r.exit_code == 2 && r.err.contains("another training is running") &&
                         r.err.contains(QString::fromStdString(out)),
                     qPrintable(r.err));
        const Checkpoint ck = read_checkpoint(out + "/model.ckpt.h5");
        QCOMPARE(ck.config.train.seed, std::int64_t(3));
        QVERIFY(ck.train && ck.train->step >= 2);
        QFile log(QString::fromStdString(out + "/log.jsonl"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        qsizetype starts = 0;
        for (const QByteArray& line : log.readAll().trimmed().split('\n')) {  // none torn
            QVERIFY2(!QJsonDocument::fromJson(line).isNull(), line.constData());
            starts += line.contains("\"type\":\"start\"");
        }
        QCOMPARE(starts, qsizetype(1));  // one run's records
        const auto later = run_cli(args_of({"train", "--resume", out, "--set",
                                            "train.steps=" + std::to_string(ck.train->step + 1)}));
        QVERIFY2(later.exit_code == 0, qPrintable(later.err));
    }

    // train.keep_checkpoints: each checkpoint step's weights are kept as step-N.ckpt.h5, without
    // optimizer state; step 2's file holds what a run of 2 steps ends with (the same seed and
    // threads give bit-identical runs), and the last one the final model's weights.
    void keptCheckpointsHoldEachStepsWeights() {
        auto config = train_test::tiny_bigs(path("words.txt"));
        config["train"]["threads"] = 1;
        const std::string out = path("kept"), two = path("kept-two");
        const auto r =
            run_cli(args_of({"train", "--config", config_file("kept", config), "--out", out,
                             "--set", "train.steps=4", "--set", "train.checkpoint_every=2", "--set",
                             "train.keep_checkpoints=true"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const auto s = run_cli(args_of({"train", "--config", config_file("kept", config), "--out",
                                        two, "--set", "train.steps=2"}));
        QVERIFY2(s.exit_code == 0, qPrintable(s.err));

        const Checkpoint kept2 = read_checkpoint(out + "/step-2.ckpt.h5");
        const Checkpoint kept4 = read_checkpoint(out + "/step-4.ckpt.h5");
        const Checkpoint final4 = read_checkpoint(out + "/model.ckpt.h5");
        const Checkpoint run2 = read_checkpoint(two + "/model.ckpt.h5");
        QVERIFY(!kept2.train && !kept4.train && final4.train);
        QVERIFY(kept2.params == run2.params);
        QVERIFY(kept4.params == final4.params);
        QVERIFY(kept2.params != kept4.params);
        QVERIFY(!std::filesystem::exists(two + "/step-2.ckpt.h5"));  // off by default
        std::ifstream log_file(out + "/log.jsonl");
        const QString log = QString::fromStdString(std::string(
            std::istreambuf_iterator<char>(log_file), std::istreambuf_iterator<char>()));
        QVERIFY2(
            log.contains(
                QStringLiteral("\"kept\":\"%1/step-2.ckpt.h5\"").arg(QString::fromStdString(out))),
            qPrintable(log));
        QVERIFY(run_cli(args_of({"validate", out + "/step-2.ckpt.h5"})).exit_code == 0);
    }

    void unknownConfigKeyIsAnErrorNamingTheKey() {
        const auto config = train_test::tiny_bigs(path("words.txt"));
        const auto r = run_cli(args_of({"train", "--config", config_file("unknown", config),
                                        "--out", path("unknown"), "--set", "train.stpes=5"}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("train.stpes"), qPrintable(r.err));

        auto in_file = config;
        in_file["model"]["d_modle"] = 32;
        const auto f = run_cli(args_of(
            {"train", "--config", config_file("unknown2", in_file), "--out", path("unknown2")}));
        QCOMPARE(f.exit_code, 2);
        QVERIFY2(f.err.contains("model.d_modle"), qPrintable(f.err));
    }

    void emptyCorpusIsAnErrorNamingThePath() {
        train_test::write_text(path("empty.txt"), "\n\n");
        const auto r = run_cli(args_of(
            {"train", "--config", config_file("empty", train_test::tiny_bigs(path("empty.txt"))),
             "--out", path("empty-run")}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(QString::fromStdString(path("empty.txt"))), qPrintable(r.err));
    }

    void sequenceLongerThanMaxLenIsAnError() {
        const auto r = run_cli(args_of(
            {"train", "--config", config_file("long", train_test::tiny_bigs(path("words.txt"))),
             "--out", path("long"), "--set", "data.seq_len=65"}));  // max_len is 64
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("data.seq_len") && r.err.contains("model.max_len"),
                 qPrintable(r.err));
    }

    // A checkpoint another converter wrote may leave data.seq_len at its default (128) beside a
    // shorter model.max_len: eval reads at most the model's positions (it refused "--seq-len:
    // 128", an option never given); a --seq-len given beyond them is still refused. A NaN a
    // converter left is named with its index (the input check said "found non-finite value").
    void aCheckpointsOwnSeqLenBeyondItsPositionsIsReadAtMaxLen() {
        const std::string out = path("converted");
        auto r =
            run_cli(args_of({"train", "--config",
                             config_file("converted", train_test::tiny_bigs(path("words.txt"))),
                             "--out", out, "--set", "train.steps=0"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        const std::string ck = out + "/model.ckpt.h5";
        // h5py, as a converter would: /config's data.seq_len past model.max_len (64).
        const QString edit = QString::fromStdString(
            "import h5py, json\n"
            "with h5py.File('" +
            ck +
            "', 'r+') as f:\n"
            "    c = json.loads(f['config'].attrs['json'])\n"
            "    c['data']['seq_len'] = c['model']['max_len'] + 64\n"
            "    f['config'].attrs['json'] = json.dumps(c)\n");
        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON), {"-c", edit});
        QVERIFY(py.waitForFinished(60000) && py.exitCode() == 0);
        r = run_cli(args_of({"eval", "--checkpoint", ck, "--data", path("words.txt")}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        r = run_cli(args_of(
            {"eval", "--checkpoint", ck, "--data", path("words.txt"), "--seq-len", "1000"}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--seq-len: 1000"), qPrintable(r.err));
        const QString nan = QString::fromStdString(
            "import h5py, numpy as np\n"
            "with h5py.File('" +
            ck +
            "', 'r+') as f:\n"
            "    d = f['params/mlm.bias']\n"
            "    v = d[()]; v[3] = np.nan; d[...] = v\n");
        py.start(QStringLiteral(ROUTESCOPE_PYTHON), {"-c", nan});
        QVERIFY(py.waitForFinished(60000) && py.exitCode() == 0);
        r = run_cli(args_of({"eval", "--checkpoint", ck, "--data", path("words.txt")}));
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("/params/mlm.bias") && r.err.contains("NaN at flat index 3"),
                 qPrintable(r.err));
    }

    void vocabularyMismatchBetweenCheckpointAndTokenizerIsAnError() {
        // A checkpoint whose model has 100 ids but whose stored tokenizer (bytes) has 261.
        auto cj = train_test::tiny_bigs(path("words.txt"));
        cj["model"]["vocab_size"] = 100;
        const RunConfig config = RunConfig::from_json(cj);
        models::Model model(config, 1, 8);
        model.init(1);
        TrainState st;
        st.step = 3;
        st.adam_m.assign(model.params().size(), 0.0f);
        st.adam_v.assign(model.params().size(), 0.0f);
        const std::string run = path("mismatch");
        QDir().mkpath(QString::fromStdString(run));
        write_checkpoint(run + "/model.ckpt.h5", config, model.params(), {"bytes", {}}, &st);

        // The input check (issue 25, on by default) refuses the checkpoint: exit 1, its report.
        const auto checked = run_cli(args_of({"train", "--resume", run}));
        QVERIFY2(checked.exit_code == 1 && checked.err.contains("model.ckpt.h5") &&
                     checked.err.contains("100") && checked.err.contains("261"),
                 qPrintable(checked.err));
        // Without it, the resume's own check: exit 2.
        const auto r = run_cli(args_of({"train", "--no-check", "--resume", run}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(
            r.err.contains("vocabulary mismatch") && r.err.contains("100") && r.err.contains("261"),
            qPrintable(r.err));

        const auto ec = run_cli(
            args_of({"eval", "--checkpoint", run + "/model.ckpt.h5", "--data", path("words.txt")}));
        QVERIFY2(ec.exit_code == 1 && ec.err.contains("261"), qPrintable(ec.err));
        const auto e = run_cli(args_of({"eval", "--no-check", "--checkpoint",
                                        run + "/model.ckpt.h5", "--data", path("words.txt")}));
        QCOMPARE(e.exit_code, 2);
        QVERIFY2(e.err.contains("vocabulary mismatch"), qPrintable(e.err));
    }

    void nanLossStopsNamingTheStepAndKeepsTheLastGoodCheckpoint() {
        auto config = train_test::tiny_bigs(path("words.txt"));
        config["train"]["lr"] = 1e30;  // the first update throws the weights to ~1e30
        config["train"]["warmup_steps"] = 0;
        config["train"]["checkpoint_every"] = 1;
        const std::string out = path("nan");
        const auto r =
            run_cli(args_of({"train", "--config", config_file("nan", config), "--out", out}));
        QCOMPARE(r.exit_code, 3);
        const QRegularExpression said(QStringLiteral("step (\\d+): the (loss|gradient norm) is"));
        const auto m = said.match(r.err);
        QVERIFY2(m.hasMatch(), qPrintable(r.err));
        const int bad = m.captured(1).toInt();
        QVERIFY(bad >= 2);
        QVERIFY2(r.err.contains("intact"), qPrintable(r.err));

        const auto v = run_cli(args_of({"validate", out + "/model.ckpt.h5"}));
        QVERIFY2(v.exit_code == 0, qPrintable(v.out));
        const Checkpoint ck = read_checkpoint(out + "/model.ckpt.h5");
        QCOMPARE(ck.train->step, bad - 1);
        // No temporary file was left beside it.
        QCOMPARE(QDir(QString::fromStdString(out)).entryList(QDir::Files).size(), qsizetype(2));
    }

    void sigtermSavesACheckpointExits130AndTheRunResumes() {
        auto config = train_test::tiny_bigs(path("words.txt"));
        config["train"]["steps"] = 100000;
        config["train"]["checkpoint_every"] = 0;
        const std::string out = path("sigterm");
        QProcess p;
        p.start(QStringLiteral(ROUTESCOPE_CLI),
                args_of({"train", "--config", config_file("sigterm", config), "--out", out}));
        QVERIFY(p.waitForStarted());
        // Wait for a few steps to be logged, then ask it to stop.
        QByteArray seen;
        while (seen.count("\"type\":\"step\"") < 3 && p.waitForReadyRead(30000))
            seen += p.readAllStandardOutput();
        QVERIFY(seen.count("\"type\":\"step\"") >= 3);
        p.terminate();  // SIGTERM
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        const Checkpoint ck = read_checkpoint(out + "/model.ckpt.h5");
        QVERIFY(ck.train && ck.train->step >= 3 && ck.train->step < 100000);

        const auto r = run_cli(args_of({"train", "--resume", out, "--set",
                                        "train.steps=" + std::to_string(ck.train->step + 2)}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        QCOMPARE(read_checkpoint(out + "/model.ckpt.h5").train->step, ck.train->step + 2);

        // A resumed run continues its model: an override of its shape is named with both values
        // (exit 3 from the parameter loader, naming neither key nor file, before); train.steps
        // below the checkpoint's step is refused (it exited 0 having done nothing).
        const auto before = read_checkpoint(out + "/model.ckpt.h5");
        const auto wider =
            run_cli(args_of({"train", "--resume", out, "--set", "model.d_model=48"}));
        QVERIFY2(wider.exit_code == 2 && wider.err.contains("model.ckpt.h5") &&
                     wider.err.contains("model.d_model " +
                                        QString::number(before.config.model.d_model) + " → 48"),
                 qPrintable(wider.err));
        const auto fewer = run_cli(args_of({"train", "--resume", out, "--set", "train.steps=1"}));
        QVERIFY2(fewer.exit_code == 2 && fewer.err.contains("train.steps: 1, but") &&
                     fewer.err.contains("is at step " + QString::number(before.train->step)),
                 qPrintable(fewer.err));
        // An objective whose specials are part of the vocabulary (Birdie's 7 paradigm tokens,
        // [start], [done], [query] and 32 sentinels) changes the parameters as vocab_size does:
        // named as such, not as a "vocabulary mismatch" of a checkpoint that validates.
        const auto birdie =
            run_cli(args_of({"train", "--resume", out, "--set", "train.objective=birdie"}));
        QVERIFY2(birdie.exit_code == 2 &&
                     birdie.err.contains("train.objective \"" +
                                         QString::fromStdString(before.config.train.objective) +
                                         "\" → \"birdie\"") &&
                     birdie.err.contains("0 → 42") && !birdie.err.contains("mismatch"),
                 qPrintable(birdie.err));
        QCOMPARE(read_checkpoint(out + "/model.ckpt.h5").train->step, before.train->step);
        // --resume A --out B where B holds another run: refused as a fresh run would be (it
        // replaced B's checkpoint and log, exit 0, and left B's best.ckpt.h5 beside them).
        const std::string other = out + "-other";
        std::filesystem::copy(out, other, std::filesystem::copy_options::recursive);
        const auto elsewhere =
            run_cli(args_of({"train", "--resume", out, "--out", other, "--set",
                             "train.steps=" + std::to_string(before.train->step + 1)}));
        QVERIFY2(elsewhere.exit_code == 2 && elsewhere.err.contains("already holds a run"),
                 qPrintable(elsewhere.err));
        QCOMPARE(read_checkpoint(other + "/model.ckpt.h5").train->step, before.train->step);
    }
};

QTEST_GUILESS_MAIN(TestTrainCli)
#include "test_train_cli.moc"
