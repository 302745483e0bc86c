// Issue 25, "Contained by default" (CLI): every routescope-cli command that opens a user's HDF5
// file parses its structure in a child process first (app/cli/input_check.hpp; inspect does its
// check and its summary there, engine/io/contained_validation.hpp), so a file on which libhdf5
// crashes is a verdict, never a dead process. libhdf5's crash is simulated:
// ROUTESCOPE_FAULT_CRASH_AT raises SIGSEGV where the named object is read, in any process
// ("WHAT#N": its N-th read). For each entry point — inspect (its check, then its summary), analyze
// (--dump, --checkpoint), eval, dump, train --init / --resume, export — the command exits 1 (no
// signal: QProcess::NormalExit) naming the file and what was being read, and writes nothing.
// --no-check skips the child: the same command then dies with the library; --check and --no-check
// together are a usage error.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "../train/train_test_support.hpp"

using train_test::CliResult;
using train_test::run_cli;
using train_test::write_text;

namespace {

const char* const kCheckpointCrash = "/config attr json";  // read by every checkpoint reader
const char* const kDumpCrash = "/model attr name";         // read by every dump reader

nlohmann::json tiny() {
    return {{"model",
             {{"arch", "bigs"},
              {"d_model", 16},
              {"n_layers", 1},
              {"max_len", 32},
              {"dropout", 0.0},
              {"ssm", {{"n_modes", 8}}}}},
            {"data",
             {{"task", "induction"},
              {"task_params",
               {{"n_train", 16}, {"n_valid", 8}, {"n_test", 8}, {"min_len", 6}, {"max_len", 8}}}}},
            {"train",
             {{"batch_size", 4},
              {"steps", 2},
              {"lr", 1e-3},
              {"warmup_steps", 1},
              {"eval_every", 1},
              {"checkpoint_every", 0},
              {"threads", 1}}}};
}

CliResult run_crashing_at(const char* what, const QStringList& args) {
    qputenv("ROUTESCOPE_FAULT_CRASH_AT", what);
    const CliResult r = run_cli(args);
    qunsetenv("ROUTESCOPE_FAULT_CRASH_AT");
    return r;
}

}  // namespace

class TestContainedInputs : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString ck_, dump_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }

    // Exit 1 by a normal exit, the file and the crash named on stderr, `output` not written.
    void expectVerdict(const QStringList& args, const CliResult& r, const QString& file,
                       const char* reading, const QString& output = {}) {
        const QString what = args.join(' ') + "\nstdout: " + r.out + "\nstderr: " + r.err;
        QVERIFY2(r.exit_code >= 0, qPrintable("ended by a signal: " + what));  // NormalExit
        QVERIFY2(r.exit_code == 1, qPrintable(what));
        QVERIFY2(r.err.contains(file), qPrintable(what));
        QVERIFY2(r.err.contains(QStringLiteral("corrupt HDF5 metadata while reading ") + reading +
                                ": the HDF5 library crashed"),
                 qPrintable(what));
        if (!output.isEmpty() && output != file)
            QVERIFY2(!QFile::exists(output), qPrintable(output));
    }

    void expectContained(const char* reading, const QStringList& args, const QString& file,
                         const QString& output = {}) {
        expectVerdict(args, run_crashing_at(reading, args), file, reading, output);
        if (QTest::currentTestFailed()) return;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        write_text(path("tiny.json"), tiny().dump());
        auto r = run_cli({"train", "--config", qpath("tiny.json"), "--out", qpath("run")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        ck_ = qpath("run/model.ckpt.h5");
        QVERIFY(QFile::exists(ck_));
        dump_ = qpath("sample.dump.h5");
        r = run_cli({"sample-dump", "--out", dump_, "--examples", "16", "--length", "16",
                     "--d-model", "8", "--layers", "2"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    }

    void validFilesStillWork() {
        // The default check passes valid files: the commands run as before.
        auto r = run_cli({"inspect", dump_});
        QVERIFY2(r.exit_code == 0 && r.out.contains("dump"), qPrintable(r.err));
        r = run_cli(
            {"eval", "--checkpoint", ck_, "--task", "induction", "--out", qpath("ok.preds.jsonl")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        r = run_cli({"analyze", "anisotropy", "--dump", dump_, "--layer", "1", "--m", "20", "--out",
                     qpath("ok.aniso.json")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
    }

    void inspectCheckIsContained() {
        expectContained(kDumpCrash, {"inspect", dump_}, dump_);
        expectContained(kCheckpointCrash, {"inspect", ck_}, ck_);
    }

    void inspectSummaryIsContained() {
        // The check reads /model's name once and passes; read_file_info's read (the second in
        // the same child) crashes: "cannot summarise", exit 1, never the in-process read.
        const QString second = QString::fromLatin1(kDumpCrash) + "#2";
        const QByteArray at = second.toUtf8();
        const QStringList args{"inspect", dump_};
        const CliResult r = run_crashing_at(at.constData(), args);
        expectVerdict(args, r, dump_, kDumpCrash);
        QVERIFY2(r.err.contains("cannot summarise"), qPrintable(r.err));
    }

    void analyzeIsContained() {
        expectContained(kDumpCrash,
                        {"analyze", "anisotropy", "--dump", dump_, "--out", qpath("a.json")}, dump_,
                        qpath("a.json"));
        expectContained(kCheckpointCrash,
                        {"analyze", "kernel-change", "--checkpoint", ck_, "--checkpoint", ck_,
                         "--out", qpath("k.json")},
                        ck_, qpath("k.json"));
        expectContained(kCheckpointCrash,
                        {"analyze", "flops", "--checkpoint", ck_, "--out", qpath("f.json")}, ck_,
                        qpath("f.json"));
    }

    void evalIsContained() {
        expectContained(
            kCheckpointCrash,
            {"eval", "--checkpoint", ck_, "--task", "induction", "--out", qpath("e.preds.jsonl")},
            ck_, qpath("e.preds.jsonl"));
    }

    void dumpIsContained() {
        expectContained(
            kCheckpointCrash,
            {"dump", "--checkpoint", ck_, "--task", "induction", "--out", qpath("d.dump.h5")}, ck_,
            qpath("d.dump.h5"));
    }

    void trainInitAndResumeAreContained() {
        write_text(path("clean.tsv"), "sentence\tlabel\nalpha beta\tyes\ngamma delta\tno\n");
        nlohmann::json ft = tiny();
        ft["data"] = {{"train", path("clean.tsv")}, {"seq_len", 16}};
        ft["train"]["objective"] = "classify";
        write_text(path("ft.json"), ft.dump());
        expectContained(
            kCheckpointCrash,
            {"train", "--config", qpath("ft.json"), "--init", ck_, "--out", qpath("ft")}, ck_,
            qpath("ft/model.ckpt.h5"));
        expectContained(kCheckpointCrash, {"train", "--resume", qpath("run"), "--until", "4"},
                        qpath("run/model.ckpt.h5"));  // the file named (it stays: the input)
        // The resumed run did not go on: its log still ends at step 2.
        const auto log = train_test::read_lines(path("run/log.jsonl"));
        for (const auto& line : log)
            QVERIFY2(!line.contains("step") || !line["step"].is_number() || line["step"] <= 2,
                     line.dump().c_str());
    }

    void exportIsContained() {
        expectContained(kCheckpointCrash,
                        {"export", ck_, "--to", "safetensors", "--out", qpath("exported")}, ck_,
                        qpath("exported/model.safetensors"));
    }

    void aLibraryThatNeverReturnsIsStopped() {
        // A hang instead of a crash (ROUTESCOPE_FAULT_HANG_AT): the child is killed after
        // ROUTESCOPE_CHECK_TIMEOUT_S and the command ends with the verdict, exit 1.
        qputenv("ROUTESCOPE_FAULT_HANG_AT", kCheckpointCrash);
        qputenv("ROUTESCOPE_CHECK_TIMEOUT_S", "2");
        const QStringList args{"eval",  "--checkpoint",        ck_, "--task", "induction",
                               "--out", qpath("h.preds.jsonl")};
        const CliResult r = run_cli(args);
        qunsetenv("ROUTESCOPE_FAULT_HANG_AT");
        qunsetenv("ROUTESCOPE_CHECK_TIMEOUT_S");
        QVERIFY2(r.exit_code == 1, qPrintable(r.err));
        QVERIFY2(r.err.contains(ck_) &&
                     r.err.contains(QStringLiteral("the HDF5 library did not finish reading ") +
                                    kCheckpointCrash + " within 2 s"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("h.preds.jsonl")));
    }

    void noCheckSkipsTheChild() {
        // --no-check opens the file in the command's own process: the simulated crash is then
        // the command's (a signal), which shows no child checked it first.
        for (const QStringList& args :
             {QStringList{"eval", "--no-check", "--checkpoint", ck_, "--task", "induction", "--out",
                          qpath("n.preds.jsonl")},
              QStringList{"analyze", "anisotropy", "--no-check", "--dump", dump_, "--out",
                          qpath("n.json")}}) {
            const CliResult r =
                run_crashing_at(args.contains("anisotropy") ? kDumpCrash : kCheckpointCrash, args);
            QVERIFY2(r.exit_code < 0, qPrintable(args.join(' ') + "\n" + r.err));
        }
        // Without the fault it is an ordinary run.
        const auto r = run_cli({"eval", "--no-check", "--checkpoint", ck_, "--task", "induction",
                                "--out", qpath("n2.preds.jsonl")});
        QVERIFY2(r.exit_code == 0, qPrintable(r.err));
        // --check and --no-check exclude each other.
        QCOMPARE(run_cli({"export", "--check", "--no-check", ck_, "--to", "safetensors", "--out",
                          qpath("both")})
                     .exit_code,
                 2);
    }
};

QTEST_GUILESS_MAIN(TestContainedInputs)
#include "test_contained_inputs.moc"
