// `routescope-cli dump` end to end, as a user runs it (QProcess):
// - a BiGS checkpoint trained here (a few steps on the built-in grammar corpus) is dumped with its
//   gates over its held-out corpus; the dump passes `routescope-cli validate`, and the PyTorch
//   reference (tests/reference/recompute_dump.py, an independent implementation of MODELS.md that
//   loads the checkpoint itself) recomputes the hidden states, sentence vectors, gates u_f, u_b, v
//   and SSM kernels of the first examples and finds the dumped ones within float32 tolerance — and
//   within float16 tolerance for a --dtype f16 dump (a last, partial batch included);
// - --layers 0,2 writes exactly those layers; a built-in task (dumped from a checkpoint trained on
//   it) writes its attributes, labels and predictions, and a checkpoint of another vocabulary is
//   refused; a classification TSV writes its text and labels;
// - an S-LSTM dump with --gates (float32 and float16) validates, and the reference recomputes
//   every step's token states h, sentence node g (g⁰ = the masked mean of the embeddings) and
//   probes i, l, r, f, s, o, sentence_weight;
// - Birdie (prefix mode, alternate pattern) and gMLP dumps with --gates validate, the reference
//   recomputes their gates (birdie f, i, z, o; gmlp spatial_gate), hidden states, the reset mask
//   of the prefix split and gMLP's /mixing (the checkpoint's spatial.weight[:L, :L]); the Birdie
//   gates group carries reverse_from = N/2 on the prefix layer only, f lies in (0, 1), and a
//   corrupted reset mask (int32, or a value 7) is named by `validate`;
// - progress is JSON lines on a non-terminal stderr, ending at done = total;
// - bad input: --gates on a bert checkpoint (exit 2, the message names the architecture), an
//   output directory that does not exist or is a file (exit 3), a disk that fills up while writing
//   (RLIMIT_FSIZE set by `ulimit -f` in a bash child that ignores SIGXFSZ, so write() fails with
//   EFBIG as on a full disk; exit 3) — and never a file under the final name, nor a temporary.
#include <H5Cpp.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "../train/train_test_support.hpp"
#include "engine/core/error.hpp"
#include "engine/io/sharded_dump.hpp"

using train_test::CliResult;
using train_test::run_cli;

namespace {

QStringList args_of(std::initializer_list<std::string> list) {
    QStringList out;
    for (const auto& s : list)
        out << QString::fromStdString(s);
    return out;
}

CliResult run_process(const QString& program, const QStringList& args, int timeout_ms = 120000) {
    QProcess p;
    p.start(program, args);
    CliResult r;
    if (!p.waitForStarted() || !p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        r.err = program + QStringLiteral(" did not finish");
        return r;
    }
    r.exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// The reference's comparison (tests/reference/recompute_dump.py); exit 0 when everything matches.
CliResult recompute(const std::string& dump, const std::string& checkpoint, int examples) {
    return run_process(QStringLiteral(ROUTESCOPE_PYTHON),
                       args_of({ROUTESCOPE_SOURCE_DIR "/tests/reference/recompute_dump.py", dump,
                                checkpoint, "--examples", std::to_string(examples)}));
}

std::vector<std::string> members(const std::string& file, const std::string& group) {
    H5::H5File f(file, H5F_ACC_RDONLY);
    H5::Group g = f.openGroup(group);
    std::vector<std::string> names;
    for (hsize_t i = 0; i < g.getNumObjs(); ++i)
        names.push_back(g.getObjnameByIdx(i));
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<hsize_t> shape(const std::string& file, const std::string& path) {
    H5::H5File f(file, H5F_ACC_RDONLY);
    H5::DataSpace space = f.openDataSet(path).getSpace();
    std::vector<hsize_t> dims(static_cast<std::size_t>(space.getSimpleExtentNdims()));
    space.getSimpleExtentDims(dims.data());
    return dims;
}

bool h5_has(const H5::H5File& f, const std::string& path) {
    return H5Lexists(f.getId(), path.c_str(), H5P_DEFAULT) > 0;
}

// Files of `dir` whose name contains `needle` (leftover temporaries of a dump).
int files_containing(const std::string& dir, const std::string& needle) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        n += e.path().filename().string().find(needle) != std::string::npos;
    return n;
}

}  // namespace

class TestDumpCommand : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string bigs_, bert_, induction_, slstm_, birdie_, gmlp_;

    std::string path(const std::string& name) const {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }

    std::string train(const std::string& name, const std::string& arch, int steps,
                      const nlohmann::json& model_patch = nlohmann::json::object()) {
        auto config = train_test::tiny_bigs("builtin:grammar");
        config["model"]["arch"] = arch;
        config["model"].update(model_patch);
        config["model"]["max_len"] = 128;  // the induction task's examples are 66 tokens long
        config["train"]["steps"] = steps;
        train_test::write_text(path(name + ".json"), config.dump(2));
        const auto r = run_cli(args_of(
            {"train", "--config", path(name + ".json"), "--out", path(name), "--threads", "2"}));
        if (r.exit_code != 0) qWarning() << r.err;
        return path(name + "/model.ckpt.h5");
    }

    /// Trains `config` as run `name`; its checkpoint's path, or empty (with the error printed).
    std::string train_config(const std::string& name, const nlohmann::json& config) {
        train_test::write_text(path(name + ".json"), config.dump(2));
        const auto r = run_cli(args_of(
            {"train", "--config", path(name + ".json"), "--out", path(name), "--threads", "2"}));
        if (r.exit_code != 0) qWarning() << r.err;
        return r.exit_code == 0 ? path(name + "/model.ckpt.h5") : std::string();
    }

    void expect_valid(const std::string& dump) {
        const auto v = run_cli(args_of({"validate", dump}));
        QVERIFY2(v.exit_code == 0, qPrintable(v.out + v.err));
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        bigs_ = train("bigs", "bigs", 20);
        bert_ = train("bert", "bert", 0);
        slstm_ = train("slstm", "slstm", 5);
        // N = 16 state channels: layer 1 prefix (reverse half from 8), layer 2 causal.
        birdie_ = train("birdie", "birdie", 3,
                        {{"d_inner", 16}, {"ln_eps", 1e-5}, {"birdie", {{"mode", "prefix"}}}});
        gmlp_ = train("gmlp", "gmlp", 3, {{"d_inner", 64}, {"ln_eps", 1e-5}});
        {
            // A BiGS model trained (a few steps) on the induction task: its vocabulary is the
            // task's, as `routescope-cli train --set data.task=induction` makes it.
            const nlohmann::json config = {
                {"model",
                 {{"arch", "bigs"},
                  {"d_model", 32},
                  {"n_layers", 2},
                  {"max_len", 128},
                  {"ssm", {{"n_modes", 16}}}}},
                {"data",
                 {{"task", "induction"},
                  {"task_params", {{"n_train", 64}, {"n_valid", 16}, {"n_test", 16}}}}},
                {"train", {{"batch_size", 4}, {"steps", 3}}}};
            train_test::write_text(path("induction.json"), config.dump(2));
            const auto r = run_cli(args_of({"train", "--config", path("induction.json"), "--out",
                                            path("induction"), "--threads", "2"}));
            if (r.exit_code != 0) qWarning() << r.err;
            induction_ = path("induction/model.ckpt.h5");
        }
        QVERIFY(std::filesystem::exists(induction_));
        QVERIFY(std::filesystem::exists(bigs_));
        QVERIFY(std::filesystem::exists(bert_));
    }

    void bigsDumpWithGatesValidatesAndMatchesThePyTorchReference() {
        const std::string out = path("bigs.dump.h5");
        // 13 examples in batches of 5: the last batch is partial.
        const auto r = run_cli(args_of({"dump", "--checkpoint", bigs_, "--out", out, "--gates",
                                        "--examples", "13", "--batch", "5", "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "layers"), (std::vector<std::string>{"0", "1", "2"}));
        QCOMPARE(members(out, "layers/1/gates"), (std::vector<std::string>{"u_b", "u_f", "v"}));
        QCOMPARE(shape(out, "layers/2/hidden"), (std::vector<hsize_t>{13, 32, 32}));
        QCOMPARE(shape(out, "layers/2/gates/v"), (std::vector<hsize_t>{13, 32, 96}));  // I = 3d
        QCOMPARE(members(out, "kernels"), (std::vector<std::string>{"1", "2"}));
        // Examples 10..12 come from the partial batch; the reference checks all 13.
        const auto ref = recompute(out, bigs_, 13);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        QVERIFY(ref.out.contains("\"ok\": true"));

        // Progress on a non-terminal stderr: JSON lines, the last at done = total.
        const QStringList lines = r.err.trimmed().split('\n');
        QVERIFY(!lines.isEmpty());
        const auto last = nlohmann::json::parse(lines.back().toStdString());
        QCOMPARE(last["event"].get<std::string>(), std::string("progress"));
        QCOMPARE(last["done"].get<int>(), 13);
        QCOMPARE(last["total"].get<int>(), 13);
    }

    void float16DumpOfChosenLayersMatchesTheReferenceAtHalfPrecision() {
        const std::string out = path("bigs16.dump.h5");
        const auto r =
            run_cli(args_of({"dump", "--checkpoint", bigs_, "--out", out, "--gates", "--layers",
                             "0,2", "--dtype", "f16", "--examples", "6", "--batch", "4"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "layers"), (std::vector<std::string>{"0", "2"}));
        {
            H5::H5File f(out, H5F_ACC_RDONLY);
            QCOMPARE(f.openDataSet("layers/2/hidden").getDataType().getSize(), std::size_t(2));
        }
        const auto ref = recompute(out, bigs_, 6);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
    }

    void float16DumpHoldsNumpysHalvesOfTheFloat32Dump() {
        // The same model on the same examples, dumped in float32 and float16 (the float16 rows
        // converted by the writer, half_bits, not by HDF5): every float dataset of the float16
        // dump — hidden states, sentence vectors, gates, kernels — holds exactly numpy's
        // astype(float16) of the float32 one (round to nearest, ties to even), bit for bit, and
        // everything else is equal. Batch 3 over 7 examples: a last, partial batch.
        const std::string f32 = path("exact32.dump.h5"), f16 = path("exact16.dump.h5");
        for (const auto& [out, dtype] : {std::pair{f32, "f32"}, std::pair{f16, "f16"}}) {
            const auto r = run_cli(args_of({"dump", "--checkpoint", bigs_, "--out", out, "--gates",
                                            "--dtype", dtype, "--examples", "7", "--batch", "3"}));
            QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        }
        const auto py =
            run_process(QStringLiteral(ROUTESCOPE_PYTHON),
                        {"-c",
                         "import sys, h5py, numpy as np\n"
                         "a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')\n"
                         "seen = []\n"
                         "def check(name, x):\n"
                         "    if not isinstance(x, h5py.Dataset): return\n"
                         "    y = b[name]\n"
                         "    if x.dtype == np.float32:\n"
                         "        assert y.dtype == np.float16, (name, y.dtype)\n"
                         "        want = x[()].astype(np.float16).view(np.uint16)\n"
                         "        got = y[()].view(np.uint16)\n"
                         "        bad = np.flatnonzero(want.ravel() != got.ravel())\n"
                         "        assert bad.size == 0, (name, bad[:5], want.ravel()[bad[:5]], "
                         "got.ravel()[bad[:5]])\n"
                         "        seen.append(name)\n"
                         "    elif x.dtype.kind in 'iu':\n"
                         "        assert np.array_equal(x[()], y[()]), name\n"
                         "a.visititems(check)\n"
                         "need = ['layers/2/hidden', 'layers/1/sentence', 'layers/2/gates/u_f', "
                         "'kernels/1/forward']\n"
                         "assert all(n in seen for n in need), seen\n"
                         "print(len(seen), 'float datasets equal')\n",
                         QString::fromStdString(f32), QString::fromStdString(f16)});
        QVERIFY2(py.exit_code == 0, qPrintable(py.out + py.err));
    }

    void taskDumpCarriesAttributesLabelsAndPredictions() {
        const std::string out = path("induction.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", induction_, "--out", out, "--task",
                                        "induction", "--examples", "8", "--gates"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "data/attributes"),
                 (std::vector<std::string>{"correct", "distance"}));
        QCOMPARE(shape(out, "data/labels"), (std::vector<hsize_t>{8}));
        QCOMPARE(shape(out, "data/predictions"), (std::vector<hsize_t>{8}));
        QCOMPARE(shape(out, "data/text"), (std::vector<hsize_t>{8}));
        const auto ref = recompute(out, induction_, 3);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));

        // A model of another vocabulary would read the task's ids as other pieces: refused.
        const std::string wrong = path("wrong-task.dump.h5");
        const auto w = run_cli(
            args_of({"dump", "--checkpoint", bigs_, "--out", wrong, "--task", "induction"}));
        QCOMPARE(w.exit_code, 2);
        QVERIFY2(w.err.contains("not trained on this task"), qPrintable(w.err));
        QVERIFY(!std::filesystem::exists(wrong));
    }

    // One dump of a name at a time: while another process holds the output's lock (flock(2) on
    // ".<name>.lock", taken here by the test as a running dump takes it), a dump of that name is
    // refused naming it and writes nothing; once released, the dump runs and removes the lock.
    // (Two sharded dumps of one --out replaced each other's shards under their masters.)
    void aDumpOfANameAnotherDumpIsWritingIsRefused() {
        const std::string out = path("locked.dump.h5"), lock = path(".locked.dump.h5.lock");
        const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        QVERIFY(fd >= 0);
        QCOMPARE(::flock(fd, LOCK_EX | LOCK_NB), 0);
        const auto args = args_of({"dump", "--checkpoint", induction_, "--out", out, "--task",
                                   "induction", "--examples", "4"});
        const auto held = run_cli(args);
        ::close(fd);  // releases the lock
        QVERIFY2(held.exit_code == 2 && held.err.contains("another dump is writing") &&
                     held.err.contains(QString::fromStdString(out)),
                 qPrintable(held.err));
        QVERIFY(!std::filesystem::exists(out));
        const auto r = run_cli(args);
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QVERIFY(!std::filesystem::exists(lock));
    }

    // An --out that exists and is not a file: renaming the finished temporary over it replaced
    // a FIFO (and, as root, /dev/full) with a regular file and reported success. Refused (exit
    // 2) naming what it is, the FIFO left as it was. A symbolic link is written through: the link
    // stays, its target holds the new dump (as a shell redirection writes).
    void anOutputThatIsAFifoIsRefusedAndALinkIsWrittenThrough() {
        const std::string fifo = path("out.fifo"), real = path("real.dump.h5"),
                          link = path("link.dump.h5");
        QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
        QFile corpus(QString::fromStdString(path("fifo-corpus.txt")));
        QVERIFY(corpus.open(QIODevice::WriteOnly));
        for (int i = 0; i < 200; ++i)
            corpus.write("the quick brown fox jumps over a lazy dog again\n");
        corpus.close();
        for (const QStringList& args :
             {args_of({"sample-dump", "--out", fifo, "--examples", "2"}),
              args_of({"tokenizer", "train", "--corpus", path("fifo-corpus.txt"), "--vocab-size",
                       "40", "--out", fifo})}) {
            const auto r = run_cli(args);
            QVERIFY2(r.exit_code == 2 && r.err.contains("is a FIFO"), qPrintable(r.err));
            QVERIFY(std::filesystem::is_fifo(fifo));
        }
        // An empty --out: a bad option (it was "internal error: filesystem error", exit 3).
        for (const QStringList& args :
             {args_of({"sample-dump", "--out", "", "--examples", "2"}),
              args_of({"tokenizer", "train", "--corpus", path("fifo-corpus.txt"), "--out", ""})}) {
            const auto r = run_cli(args);
            QVERIFY2(r.exit_code == 2 && r.err.contains("--out: the value is empty"),
                     qPrintable(r.err));
        }
        QCOMPARE(run_cli(args_of({"sample-dump", "--out", real, "--examples", "2"})).exit_code, 0);
        std::filesystem::create_symlink("real.dump.h5", link);
        QCOMPARE(run_cli(args_of({"sample-dump", "--out", link, "--examples", "3"})).exit_code, 0);
        QVERIFY(std::filesystem::is_symlink(link));
        const auto r = run_cli(args_of({"inspect", real}));
        QVERIFY2(r.exit_code == 0 && r.out.contains("S = 3,"), qPrintable(r.out));
    }

    void causalCheckpointsTaskDumpHoldsTheRowsEvalScores() {
        // A causal BERT trained with the next-token loss on the induction task (H3's protocol)
        // writes the answer after the prompt; it never saw the [MASK] an MLM row puts there. The
        // dump holds the row eval scores — the answer written after the second trigger — and its
        // prediction is the next-token argmax before it: the reference recomputes the logits from
        // the dumped tokens (--answer-after), and eval's predictions file agrees example by
        // example. (Before, the dump read the logits after a [MASK] and called a model that eval
        // scored at 100% wrong on nearly every example.)
        const nlohmann::json config = {
            {"model",
             {{"arch", "bert"},
              {"d_model", 32},
              {"n_layers", 2},
              {"n_heads", 1},
              {"max_len", 40},
              {"causal", true},
              {"embedding_norm", false}}},
            {"data",
             {{"task", "induction"},
              {"task_params",
               {{"n_train", 64},
                {"n_valid", 16},
                {"n_test", 16},
                {"min_len", 32},
                {"max_len", 32},
                {"n_symbols", 18}}}}},
            {"train", {{"objective", "clm"}, {"batch_size", 8}, {"steps", 30}, {"lr", 3e-3}}}};
        const std::string ck = train_config("causal", config);
        QVERIFY(!ck.empty());
        const std::string out = path("causal.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", ck, "--out", out, "--task",
                                        "induction", "--split", "test", "--attention"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        const auto ref =
            run_process(QStringLiteral(ROUTESCOPE_PYTHON),
                        args_of({ROUTESCOPE_SOURCE_DIR "/tests/reference/recompute_dump.py", out,
                                 ck, "--examples", "16", "--answer-after", "trigger"}));
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        QVERIFY2(nlohmann::json::parse(ref.out.toStdString()).value("answers_compared", 0) >= 8,
                 qPrintable(ref.out));

        const std::string preds = path("causal.preds.jsonl");
        const auto e = run_cli(args_of({"eval", "--checkpoint", ck, "--task", "induction",
                                        "--split", "test", "--out", preds}));
        QVERIFY2(e.exit_code == 0, qPrintable(e.err));
        H5::H5File f(out, H5F_ACC_RDONLY);
        std::vector<std::int32_t> predicted(16);
        f.openDataSet("data/predictions").read(predicted.data(), H5::PredType::NATIVE_INT32);
        std::vector<double> correct(16);
        f.openDataSet("data/attributes/correct").read(correct.data(), H5::PredType::NATIVE_DOUBLE);
        H5::DataSet vocab_set = f.openDataSet("vocab");
        std::vector<char*> vocab(vocab_set.getSpace().getSimpleExtentNpoints());
        vocab_set.read(vocab.data(), vocab_set.getStrType());
        std::ifstream lines(preds);
        std::string line;
        int i = 0;
        for (; std::getline(lines, line); ++i) {
            const auto p = nlohmann::json::parse(line);
            QCOMPARE(QString::fromStdString(p["prediction"].get<std::string>()),
                     QString::fromUtf8(vocab.at(static_cast<std::size_t>(predicted.at(i)))));
            QCOMPARE(correct.at(static_cast<std::size_t>(i)), p["correct"].get<bool>() ? 1.0 : 0.0);
        }
        QCOMPARE(i, 16);
        H5Dvlen_reclaim(vocab_set.getStrType().getId(), vocab_set.getSpace().getId(), H5P_DEFAULT,
                        vocab.data());
    }

    void causalSsmDumpHoldsItsForwardKernelsAlone() {
        // A causal BiGS (model.causal: forward SSMs only) dumps /kernels/<l>/forward with
        // D_forward and nothing of a backward direction; the reference recomputes the forward
        // kernels, the gates u_f and v and the hidden states, and reports a backward kernel if one
        // were written.
        const nlohmann::json config = {
            {"model",
             {{"arch", "bigs"},
              {"d_model", 16},
              {"n_layers", 2},
              {"max_len", 40},
              {"causal", true},
              {"ssm", {{"n_modes", 8}}}}},
            {"data",
             {{"task", "induction"},
              {"task_params",
               {{"n_train", 32},
                {"n_valid", 8},
                {"n_test", 8},
                {"min_len", 32},
                {"max_len", 32}}}}},
            {"train", {{"objective", "clm"}, {"batch_size", 8}, {"steps", 3}}}};
        const std::string ck = train_config("causal-bigs", config);
        QVERIFY(!ck.empty());
        const std::string out = path("causal-bigs.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", ck, "--out", out, "--task",
                                        "induction", "--gates", "--dtype", "f16"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "kernels"), (std::vector<std::string>{"1", "2"}));
        QCOMPARE(members(out, "kernels/2"), (std::vector<std::string>{"forward"}));
        QCOMPARE(members(out, "layers/1/gates"), (std::vector<std::string>{"u_f", "v"}));
        const auto ref = recompute(out, ck, 8);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
    }

    void birdieCheckpointsTaskDumpHoldsItsAnswerRows() {
        // A Birdie checkpoint (prefix layers, the Birdie mixture) on the phone book: each dumped
        // row is the prefix-LM arm's answer row eval scores ([prefix] prompt [start] answer),
        // causal after [start] — the reference derives the reset mask from the row and recomputes
        // the blocks with it — and `correct` is eval's exact match, example by example.
        const nlohmann::json config = {{"model",
                                        {{"arch", "birdie"},
                                         {"d_model", 16},
                                         {"n_layers", 2},
                                         {"max_len", 128},
                                         {"ln_eps", 1e-5},
                                         {"birdie", {{"mode", "prefix"}}}}},
                                       {"data",
                                        {{"task", "phone-book"},
                                         {"task_params",
                                          {{"n_train", 32},
                                           {"n_valid", 8},
                                           {"n_test", 8},
                                           {"min_entries", 2},
                                           {"max_entries", 3}}}}},
                                       {"train",
                                        {{"objective", "birdie"},
                                         {"batch_size", 8},
                                         {"steps", 3},
                                         {"birdie", {{"update_every", 3}}}}}};
        const std::string ck = train_config("birdie-pb", config);
        QVERIFY(!ck.empty());
        const std::string out = path("birdie-pb.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", ck, "--out", out, "--task",
                                        "phone-book", "--split", "test", "--gates"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        const auto ref = recompute(out, ck, 8);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        QVERIFY2(nlohmann::json::parse(ref.out.toStdString()).value("birdie_answer_rows", 0) == 8,
                 qPrintable(ref.out));

        const std::string preds = path("birdie-pb.preds.jsonl");
        const auto e = run_cli(args_of({"eval", "--checkpoint", ck, "--task", "phone-book",
                                        "--split", "test", "--out", preds}));
        QVERIFY2(e.exit_code == 0, qPrintable(e.err));
        H5::H5File f(out, H5F_ACC_RDONLY);
        std::vector<double> correct(8);
        f.openDataSet("data/attributes/correct").read(correct.data(), H5::PredType::NATIVE_DOUBLE);
        std::ifstream lines(preds);
        std::string line;
        int i = 0;
        for (; std::getline(lines, line); ++i)
            QCOMPARE(correct.at(static_cast<std::size_t>(i)),
                     nlohmann::json::parse(line)["correct"].get<bool>() ? 1.0 : 0.0);
        QCOMPARE(i, 8);
    }

    void classificationDataDumpCarriesTextAndLabels() {
        train_test::write_text(path("small.tsv"),
                               "sentence\tlabel\nthe dog runs\t1\na cat sleeps\t0\n"
                               "two three four\t1\n");
        const std::string out = path("tsv.dump.h5");
        const auto r = run_cli(
            args_of({"dump", "--checkpoint", bigs_, "--out", out, "--data", path("small.tsv")}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(shape(out, "data/labels"), (std::vector<hsize_t>{3}));
        // Rows of the checkpoint's data.seq_len (32), not the longest example's 16 ([CLS] 14 B
        // [SEP]): a bidirectional BiGS reads the padding, so an example's states must not depend
        // on the longest document beside it in the file.
        QCOMPARE(shape(out, "data/tokens"), (std::vector<hsize_t>{3, 32}));
        const auto ref = recompute(out, bigs_, 3);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
    }

    // A text corpus as --data (it was "unknown classification format"): one example per
    // document, [CLS] document [SEP] cut to --length, in a plain file (a line per document, blank
    // lines skipped) and in WikiExtractor's directory of <doc> articles; the tokens are the
    // bytes + 5 of the byte tokenizer, written out here by hand.
    // A byte-tokenizer model's text cut inside a character ("hé" at 2 bytes: "h" and the first
    // byte of "é") was stored as invalid UTF-8 in a dataset typed UTF-8 (h5py's asstr() failed,
    // full validation refuses it): the stray byte is stored as U+FFFD, as Python's
    // errors="replace" decodes it (the expected string is Python's, not the code's).
    void textCutInsideACharacterIsStoredAsValidUtf8() {
        // The training corpus's sequences of 4 ids ([CLS] + 3 bytes) cut "h\xC3\xA9llo..." after
        // its first byte of "é"; the dump of the checkpoint's own corpus decodes them as text.
        std::string text;
        for (int i = 0; i < 40; ++i)
            text += "h\xC3\xA9llo w\xC3\xB6rld\n";
        train_test::write_text(path("accents.txt"), text);
        auto config = train_test::tiny_bigs(path("accents.txt"));
        config["data"]["seq_len"] = 4;
        config["train"]["steps"] = 0;
        const std::string ck = train_config("accents", config);
        QVERIFY(!ck.empty());
        const std::string out = path("accents.dump.h5");
        const auto r =
            run_cli(args_of({"dump", "--checkpoint", ck, "--out", out, "--examples", "6"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {"-c",
                  "import sys, h5py\n"
                  "f = h5py.File(sys.argv[1], 'r')\n"
                  "ids = f['data/tokens'][()]; n = f['data/lengths'][()]\n"
                  "replaced = 0\n"
                  "for row, length, t in zip(ids, n, f['data/text'][()]):\n"
                  "    names = {1: b'[UNK]', 2: b'[CLS]', 3: b'[SEP]', 4: b'[MASK]'}\n"
                  "    raw = b''.join(bytes([i - 5]) if i >= 5 else names.get(i, b'') "
                  "for i in row[:length])\n"
                  "    want = raw.decode('utf-8', errors='replace')\n"
                  "    assert t.decode('utf-8') == want, (t, want)\n"
                  "    replaced += '\\ufffd' in want\n"
                  "assert replaced > 0, 'no row cut inside a character'\n"
                  "print('ok', replaced)\n",
                  QString::fromStdString(out)});
        QVERIFY(py.waitForFinished(60000));
        QVERIFY2(py.exitCode() == 0, qPrintable(py.readAllStandardError()));
    }

    void textCorpusDumpsADocumentPerExample() {
        train_test::write_text(path("corpus.txt"), "ab\nhello world\n\nz\n");
        std::filesystem::create_directories(path("wiki/AA"));
        train_test::write_text(path("wiki/AA/wiki_00"),
                               "<doc id=\"1\" url=\"u\" title=\"A\">\nA\nxy\n</doc>\n"
                               "<doc id=\"2\" url=\"v\" title=\"B\">\nB\n</doc>\n");
        const auto framed = [](const std::string& text, std::size_t cut) {
            std::vector<std::int32_t> ids{2};
            for (std::size_t k = 0; k < text.size() && k < cut; ++k)
                ids.push_back(static_cast<unsigned char>(text[k]) + 5);
            ids.push_back(3);
            return ids;
        };
        for (const auto& [data, expected] :
             {std::pair{path("corpus.txt"),
                        std::vector<std::vector<std::int32_t>>{
                            framed("ab", 4), framed("hello world", 4), framed("z", 4)}},
              std::pair{path("wiki"), std::vector<std::vector<std::int32_t>>{framed("A\nxy", 4),
                                                                             framed("B", 4)}}}) {
            const std::string out = path("corpus.dump.h5");
            std::filesystem::remove(out);
            const auto r = run_cli(args_of(
                {"dump", "--checkpoint", bigs_, "--out", out, "--data", data, "--length", "6"}));
            QVERIFY2(r.exit_code == 0, qPrintable(r.err));
            expect_valid(out);
            const auto dims = shape(out, "data/tokens");
            QCOMPARE(dims.size(), std::size_t(2));
            QCOMPARE(dims[0], hsize_t(expected.size()));
            std::vector<std::int32_t> tokens(dims[0] * dims[1]);
            H5::H5File(out, H5F_ACC_RDONLY)
                .openDataSet("data/tokens")
                .read(tokens.data(), H5::PredType::NATIVE_INT32);
            for (std::size_t e = 0; e < expected.size(); ++e)
                for (std::size_t t = 0; t < dims[1]; ++t)
                    QCOMPARE(tokens[e * dims[1] + t],
                             t < expected[e].size() ? expected[e][t] : 0);  // [PAD] = 0
            const auto ref = recompute(out, bigs_, static_cast<int>(expected.size()));
            QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        }
        // A compressed corpus is still refused by name (TextCorpus's check).
        train_test::write_text(path("corpus.txt.gz"), std::string("\x1f\x8b\x08\0", 4));
        const auto gz = run_cli(args_of({"dump", "--checkpoint", bigs_, "--out", path("gz.dump.h5"),
                                         "--data", path("corpus.txt.gz")}));
        QCOMPARE(gz.exit_code, 2);
        QVERIFY2(gz.err.contains("gzip"), qPrintable(gz.err));
    }

    // S-LSTM (DUMP_FORMAT.md gate names i, l, r, f, s, o, sentence_weight [S, L + 1, d]): the
    // dump validates; the sentence-node weights of a real example sum to 1 over its tokens and the
    // node (a softmax), with nothing on pads; /layers/0/sentence is g⁰, the mean of the real
    // tokens' embeddings (MODELS.md), and the five token gates sum to 1 (their softmax).
    void slstmDumpWithGatesValidatesAndHoldsTheNodeWeights() {
        QVERIFY(std::filesystem::exists(slstm_));
        const std::string out = path("slstm.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", slstm_, "--out", out, "--gates",
                                        "--examples", "7", "--batch", "3", "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "layers/2/gates"),
                 (std::vector<std::string>{"f", "i", "l", "o", "r", "s", "sentence_weight"}));
        const auto hidden = shape(out, "layers/0/hidden");
        const hsize_t S = hidden[0], L = hidden[1], d = hidden[2];
        QCOMPARE(shape(out, "layers/1/gates/sentence_weight"), (std::vector<hsize_t>{S, L + 1, d}));
        QCOMPARE(shape(out, "layers/2/sentence"), (std::vector<hsize_t>{S, d}));

        H5::H5File f(out, H5F_ACC_RDONLY);
        auto read = [&](const std::string& p) {
            H5::DataSet ds = f.openDataSet(p);
            std::vector<float> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
            ds.read(v.data(), H5::PredType::NATIVE_FLOAT);
            return v;
        };
        std::vector<int> lengths(S);
        f.openDataSet("data/lengths").read(lengths.data(), H5::PredType::NATIVE_INT);
        const auto w = read("layers/1/gates/sentence_weight");
        const auto h0 = read("layers/0/hidden");
        const auto g0 = read("layers/0/sentence");
        std::vector<std::vector<float>> five;
        for (const char* g : {"i", "l", "r", "f", "s"})
            five.push_back(read(std::string("layers/2/gates/") + g));
        for (hsize_t s = 0; s < S; ++s)
            for (hsize_t c = 0; c < d; ++c) {
                double sum = 0, mean = 0;
                for (hsize_t t = 0; t <= L; ++t) {
                    const float v = w[(s * (L + 1) + t) * d + c];
                    if (t < L && t >= hsize_t(lengths[s])) QCOMPARE(v, 0.0f);  // a pad
                    sum += v;
                }
                QVERIFY2(std::abs(sum - 1) < 1e-5, qPrintable(QString::number(sum)));
                for (int t = 0; t < lengths[s]; ++t)
                    mean += h0[(s * L + hsize_t(t)) * d + c] / lengths[s];
                QVERIFY(std::abs(mean - g0[s * d + c]) < 1e-5);
                for (int t = 0; t < lengths[s]; ++t) {
                    double gates = 0;
                    for (const auto& g : five)
                        gates += g[(s * L + hsize_t(t)) * d + c];
                    QVERIFY(std::abs(gates - 1) < 1e-5);
                }
            }
        f.close();

        // The PyTorch reference recomputes every step's h, g and probes from the checkpoint.
        const auto ref = recompute(out, slstm_, 7);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        QVERIFY2(ref.out.contains("\"compared\": 20"),
                 qPrintable(ref.out));  // 3 h, 3 g, 2 × 7 gates

        // float16: the same within binary16's tolerance.
        const std::string half = path("slstm.f16.dump.h5");
        const auto h = run_cli(args_of({"dump", "--checkpoint", slstm_, "--out", half, "--gates",
                                        "--dtype", "f16", "--examples", "5", "--threads", "2"}));
        QVERIFY2(h.exit_code == 0, qPrintable(h.err));
        const auto ref16 = recompute(half, slstm_, 5);
        QVERIFY2(ref16.exit_code == 0, qPrintable(ref16.out + ref16.err));
    }

    void birdieDumpHoldsGatesReverseSplitAndResetMask() {
        QVERIFY(std::filesystem::exists(birdie_));
        const std::string out = path("birdie.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", birdie_, "--out", out, "--gates",
                                        "--examples", "7", "--batch", "3", "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        QCOMPARE(members(out, "layers/1/gates"), (std::vector<std::string>{"f", "i", "o", "z"}));
        const auto hidden = shape(out, "layers/0/hidden");
        const hsize_t S = hidden[0], L = hidden[1];
        for (const char* g : {"f", "i", "z", "o"})
            QCOMPARE(shape(out, std::string("layers/2/gates/") + g),
                     (std::vector<hsize_t>{S, L, 16}));
        QCOMPARE(shape(out, "data/reset_mask"), (std::vector<hsize_t>{S, L}));
        {
            H5::H5File f(out, H5F_ACC_RDONLY);
            QCOMPARE(f.openDataSet("data/reset_mask").getDataType().getSize(), std::size_t(1));
            H5::Group prefix_layer = f.openGroup("layers/1/gates");
            QVERIFY(prefix_layer.attrExists("reverse_from"));
            int reverse_from = 0;
            prefix_layer.openAttribute("reverse_from")
                .read(H5::PredType::NATIVE_INT, &reverse_from);
            QCOMPARE(reverse_from, 8);
            QVERIFY(!f.openGroup("layers/2/gates").attrExists("reverse_from"));  // causal layer
            H5::DataSet fs = f.openDataSet("layers/1/gates/f");
            std::vector<float> v(static_cast<std::size_t>(fs.getSpace().getSimpleExtentNpoints()));
            fs.read(v.data(), H5::PredType::NATIVE_FLOAT);
            for (float x : v)
                QVERIFY(x > 0.0f && x < 1.0f);
        }
        const auto ref = recompute(out, birdie_, 7);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));

        // A reset mask of the wrong type or with a value outside the bit flags is named.
        const std::string bad = path("birdie-bad-mask.dump.h5");
        std::filesystem::copy_file(out, bad);
        {
            H5::H5File f(bad, H5F_ACC_RDWR);
            f.unlink("data/reset_mask");
            const hsize_t dims[2] = {S, L};
            std::vector<std::int32_t> mask(S * L, 0);
            mask[1] = 7;
            f.createDataSet("data/reset_mask", H5::PredType::STD_I32LE, H5::DataSpace(2, dims))
                .write(mask.data(), H5::PredType::NATIVE_INT32);
        }
        const auto v = run_cli(args_of({"validate", bad}));
        QVERIFY(v.exit_code != 0);
        QVERIFY2((v.out + v.err).contains("/data/reset_mask") && (v.out + v.err).contains("int8"),
                 qPrintable(v.out + v.err));
    }

    void gmlpDumpHoldsMixingMatricesAndSpatialGates() {
        QVERIFY(std::filesystem::exists(gmlp_));
        const std::string out = path("gmlp.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", gmlp_, "--out", out, "--gates",
                                        "--examples", "5", "--batch", "2", "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        const auto hidden = shape(out, "layers/0/hidden");
        const hsize_t S = hidden[0], L = hidden[1];
        QCOMPARE(members(out, "mixing"), (std::vector<std::string>{"1", "2"}));
        QCOMPARE(shape(out, "mixing/2"), (std::vector<hsize_t>{L, L}));
        QCOMPARE(shape(out, "layers/1/gates/spatial_gate"), (std::vector<hsize_t>{S, L, 32}));
        {
            // /mixing/1 is the checkpoint's layers.0.spatial.weight (n = max_len = 128) cut to
            // [L, L], read from the checkpoint file directly.
            H5::H5File ck(gmlp_, H5F_ACC_RDONLY);
            H5::DataSet w = ck.openDataSet("params/layers.0.spatial.weight");
            std::vector<float> W(128 * 128);
            w.read(W.data(), H5::PredType::NATIVE_FLOAT);
            H5::H5File f(out, H5F_ACC_RDONLY);
            std::vector<float> M(L * L);
            f.openDataSet("mixing/1").read(M.data(), H5::PredType::NATIVE_FLOAT);
            for (hsize_t i = 0; i < L; ++i)
                for (hsize_t j = 0; j < L; ++j)
                    QCOMPARE(M[i * L + j], W[i * 128 + j]);
            QVERIFY(!h5_has(f, "data/reset_mask"));
        }
        const auto ref = recompute(out, gmlp_, 5);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
    }

    // Issue 28, acceptance 2: BERT's attention probabilities (`dump --attention`), [S, H, L, L],
    // equal the PyTorch reference's (recompute_dump.py: softmax(q kᵀ/√dh) with padding keys
    // masked); each query row is a distribution; an architecture without attention is refused.
    void bertAttentionProbabilitiesMatchThePyTorchReference() {
        const std::string out = path("bert_attention.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", bert_, "--out", out, "--attention",
                                        "--examples", "7", "--batch", "3", "--threads", "2"}));
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        expect_valid(out);
        const auto dims = shape(out, "layers/1/attention");
        QCOMPARE(dims.size(), std::size_t(4));
        QCOMPARE(dims[0], hsize_t(7));
        QCOMPARE(dims[2], dims[3]);
        QCOMPARE(dims[2], shape(out, "layers/1/hidden")[1]);  // L × L
        {
            H5::H5File f(out, H5F_ACC_RDONLY);
            QVERIFY(!h5_has(f, "layers/0/attention"));  // the embeddings have none
            std::vector<float> a(dims[0] * dims[1] * dims[2] * dims[3]);
            f.openDataSet("layers/2/attention").read(a.data(), H5::PredType::NATIVE_FLOAT);
            for (std::size_t row = 0; row < a.size() / dims[3]; ++row) {
                double sum = 0;
                for (std::size_t j = 0; j < dims[3]; ++j) {
                    const float p = a[row * dims[3] + j];
                    QVERIFY(p >= 0 && p <= 1);
                    sum += p;
                }
                QVERIFY2(std::abs(sum - 1) < 1e-5, qPrintable(QString::number(sum)));
            }
        }
        const auto ref = recompute(out, bert_, 7);
        QVERIFY2(ref.exit_code == 0, qPrintable(ref.out + ref.err));
        QVERIFY(ref.out.contains("\"ok\": true"));

        // Its implicit-attention view: --mode (an SSM's convolutions) does not apply to real
        // attention and is refused, not ignored and recorded; --head does, and the result names
        // the head and no mode.
        const std::string ia = path("bert_attention.json");
        auto view =
            run_cli({"analyze", "implicit-attention", "--dump", QString::fromStdString(out),
                     "--layer", "1", "--mode", "gated", "--out", QString::fromStdString(ia)});
        QCOMPARE(view.exit_code, 2);
        QVERIFY2(view.err.contains("holds attention probabilities"), qPrintable(view.err));
        // --mode sum is the default written out: it asks for nothing real attention lacks.
        view = run_cli({"analyze", "implicit-attention", "--dump", QString::fromStdString(out),
                        "--layer", "1", "--mode", "sum", "--out", QString::fromStdString(ia)});
        QVERIFY2(view.exit_code == 0, qPrintable(view.err));
        view = run_cli({"analyze", "implicit-attention", "--dump", QString::fromStdString(out),
                        "--layer", "1", "--head", "0", "--out", QString::fromStdString(ia)});
        QVERIFY2(view.exit_code == 0, qPrintable(view.err));
        {
            QFile f(QString::fromStdString(ia));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const auto j = nlohmann::json::parse(f.readAll().toStdString())["results"][0];
            QCOMPARE(j["source"], nlohmann::json("attention"));
            QCOMPARE(j["head"], nlohmann::json(0));
            QVERIFY(j["mode"].is_null());
        }

        const std::string refused = path("bigs_attention.dump.h5");
        const auto no = run_cli(args_of(
            {"dump", "--checkpoint", bigs_, "--out", refused, "--attention", "--examples", "2"}));
        QCOMPARE(no.exit_code, 2);
        QVERIFY2(no.err.contains("'bigs'") && no.err.contains("--attention"), qPrintable(no.err));
        QVERIFY(!std::filesystem::exists(refused));
    }

    // Options the dump cannot honour are refused (exit 2, nothing written): an empty --layers
    // (it meant "all"), a --length beyond the model's positions (cut to model.max_len without a
    // word) or given without --data (ignored).
    void optionsTheDumpCannotHonourAreRefused() {
        const std::string out = path("refused-options.dump.h5");
        const std::vector<std::pair<QStringList, QString>> cases = {
            {{"--layers", ""}, "--layers: the value is empty"},
            {{"--length", "100000"}, "reads at most model.max_len"},
            {{"--length", "8"}, "--length cuts the examples of a --data file"}};
        for (const auto& [extra, needle] : cases) {
            const auto r = run_cli(
                args_of({"dump", "--checkpoint", bert_, "--out", out, "--examples", "2"}) + extra);
            QCOMPARE(r.exit_code, 2);
            QVERIFY2(r.err.contains(needle), qPrintable(r.err));
            QVERIFY(!std::filesystem::exists(out));
        }
        // A --length too short for a file's pairs ([CLS] a [SEP] b [SEP] needs 5) is said of
        // --length, the option given, not of data.seq_len, a key the person never set.
        const std::string pairs = path("short-pairs.tsv");
        train_test::write_text(pairs, "sentence1\tsentence2\tlabel\nab\tcd\t0\nef\tgh\t1\n");
        const auto r = run_cli(args_of(
            {"dump", "--checkpoint", bigs_, "--out", out, "--data", pairs, "--length", "4"}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--length: 4 leaves no room for a pair of sentences") &&
                     !r.err.contains("data.seq_len"),
                 qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(out));
    }

    void gatesOfAnArchitectureWithoutGatesIsAClearError() {
        const std::string out = path("bert.dump.h5");
        const auto r = run_cli(args_of({"dump", "--checkpoint", bert_, "--out", out, "--gates"}));
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("'bert'") && r.err.contains("--gates"), qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(out));
        // Without --gates the same checkpoint dumps (and has no kernels: no SSM).
        const auto ok =
            run_cli(args_of({"dump", "--checkpoint", bert_, "--out", out, "--examples", "4"}));
        QVERIFY2(ok.exit_code == 0, qPrintable(ok.err));
        expect_valid(out);
    }

    void aNonFiniteParameterIsNamedAndLeavesNothing() {
        // The dump streams the checkpoint's values into its model (CheckpointRead::without_values,
        // read_params_into): a NaN is still refused, named, before any output exists.
        const std::string bad = path("nan-param.ckpt.h5");
        std::filesystem::copy_file(bigs_, bad, std::filesystem::copy_options::overwrite_existing);
        {
            H5::H5File f(bad, H5F_ACC_RDWR);
            H5::DataSet ds = f.openDataSet("/params/layers.0.dv.weight");
            std::vector<float> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
            ds.read(v.data(), H5::PredType::NATIVE_FLOAT);
            v[2] = std::numeric_limits<float>::infinity();
            ds.write(v.data(), H5::PredType::NATIVE_FLOAT);
        }
        const std::string out = path("nan-param.dump.h5");
        const auto r = run_cli(
            args_of({"dump", "--checkpoint", bad, "--out", out, "--examples", "4", "--no-check"}));
        QVERIFY2(r.exit_code != 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("/params/layers.0.dv.weight") && r.err.contains("non-finite"),
                 qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(out));
    }

    void unwritableOutputIsAClearErrorAndLeavesNothing() {
        // This test may run as root, for whom permission bits do not stop a write: a directory
        // that does not exist and a "directory" that is a regular file stop everyone.
        for (const std::string& out :
             {path("no-such-dir/x.dump.h5"), path("small.tsv/x.dump.h5")}) {
            const auto r = run_cli(args_of({"dump", "--checkpoint", bigs_, "--out", out}));
            QCOMPARE(r.exit_code, 3);
            QVERIFY2(r.err.contains("cannot create"), qPrintable(r.err));
            QVERIFY(!std::filesystem::exists(out));
        }
    }

    void diskFullWhileWritingIsAClearErrorAndLeavesNothing() {
        const std::string sub = path("full");
        QVERIFY(QDir().mkpath(QString::fromStdString(sub)));
        const std::string out = sub + "/big.dump.h5";
        // RLIMIT_FSIZE = 256 KiB (bash counts ulimit -f in 1024-byte blocks); the dump needs about
        // 60 × 3 layers × (32 + 32 + 32 + 96) × 66 × 4 bytes ≈ 9 MB. (The induction checkpoint's
        // own task: the corpus source of the other one writes a temporary corpus file, which would
        // hit the limit before the dump starts.)
        // SIGXFSZ is ignored so the write fails with EFBIG instead of killing the process, as
        // ENOSPC would on a full disk.
        const std::string command = "trap '' XFSZ; ulimit -f 256; exec '" +
                                    std::string(ROUTESCOPE_CLI) + "' dump --checkpoint '" +
                                    induction_ + "' --out '" + out + "' --gates --examples 60";
        const auto r = run_process(QStringLiteral("/bin/bash"), args_of({"-c", command}));
        QCOMPARE(r.exit_code, 3);
        QVERIFY2(r.err.contains("big.dump.h5"), qPrintable(r.err));
        QVERIFY(!std::filesystem::exists(out));
        QCOMPARE(files_containing(sub, "big.dump.h5"), 0);  // no temporary left either
    }

    // docs/reliability.md: a full disk is exit 3 "with a message naming the file the user gave".
    // A sharded dump (mpirun, docs/scaling.md) writes each rank's shard under a hidden staged name
    // (".X.rank<r>.dump.h5.staged"), and its message named that: it names the shard and --out.
    void shardedDumpOnAFullDiskNamesTheShardAndOut() {
        // The message a rank's writer gives, as the writer gives it (its --out made absolute).
        const std::string given = "full/big.dump.h5";
        const std::string staged_abs =
            (std::filesystem::absolute("full") / ".big.rank1.dump.h5.staged").string();
        try {
            std::rethrow_exception(routescope::name_shard_in_error(
                std::make_exception_ptr(routescope::IoError(
                    staged_abs + ": cannot create (in /x): No space left on device")),
                given, 1));
        } catch (const routescope::IoError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("full/big.rank1.dump.h5 (rank 1's shard of full/big.dump.h5): "
                                 "cannot create (in /x): No space left on device"));
        }
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty()) QSKIP("mpirun is not installed (openmpi-bin)");
        const std::string sub = path("full-sharded");
        QVERIFY(QDir().mkpath(QString::fromStdString(sub)));
        const std::string out = sub + "/big.dump.h5";
        // Each rank under RLIMIT_FSIZE = 256 KiB with SIGXFSZ ignored (EFBIG, as a full disk's
        // ENOSPC), each writing 30 of the 60 examples (about 4.5 MB): both ranks fail.
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
        env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        p.setProcessEnvironment(env);
        p.start(mpirun,
                args_of({"--oversubscribe", "-np", "2", "/bin/bash", "-c",
                         "trap '' XFSZ; ulimit -f 256; exec \"$0\" \"$@\"", ROUTESCOPE_CLI, "dump",
                         "--checkpoint", induction_, "--out", out, "--gates", "--examples", "60"}));
        QVERIFY(p.waitForFinished(180000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        if (err.contains("built without MPI")) QSKIP("routescope-cli is built without MPI");
        QVERIFY2(p.exitCode() == 3, qPrintable(err));
        QVERIFY2(!err.contains(".staged") && err.contains(".rank") &&
                     err.contains(QString::fromStdString(out)),
                 qPrintable(err));
        // Each rank's line whole: written a piece at a time, two ranks' lines were mixed
        // ("routescope-cli routescope-cli dump: error: ...").
        for (const QString& line : err.split('\n'))
            if (line.contains(": error: "))
                QVERIFY2(line.startsWith("routescope-cli dump: error: ") &&
                             line.count("routescope-cli") == 1,
                         qPrintable(err));
        QVERIFY(!std::filesystem::exists(out));
        QCOMPARE(files_containing(sub, "big."), 0);  // no shard, staged shard or temporary
    }
};

QTEST_GUILESS_MAIN(TestDumpCommand)
#include "test_dump_command.moc"
