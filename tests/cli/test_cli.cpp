// routescope-cli's contract, run as a user runs it: --help, --version, usage errors, and validate /
// inspect / sample-dump with the exit codes of docs/cli.md (0 valid, 1 invalid, 2
// unreadable/usage); `bench forward` runs every architecture at tiny sizes (it times nothing here);
// the bench subcommands refuse out-of-range options and impossible sizes with exit 2.
#include <QTemporaryDir>
#include <QtTest>

namespace {
struct Run {
    int code;
    QString out, err;
};

Run cli(const QStringList& args,
        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(ROUTESCOPE_CLI), args);
    if (!p.waitForFinished(60000)) return {-1, {}, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QString fixture(const QString& name) {
    return QStringLiteral(ROUTESCOPE_TEST_DATA "/dumps/") + name;
}

// routescope-cli with its standard output closed (`>&-`), as a shell leaves it.
Run cli_without_stdout(const QStringList& args) {
    QProcess p;
    p.start("/bin/sh", QStringList{"-c", "exec \"$0\" \"$@\" >&-", ROUTESCOPE_CLI} + args);
    if (!p.waitForFinished(60000)) return {-1, {}, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            {},
            QString::fromUtf8(p.readAllStandardError())};
}

// A 2-step bigs run in `dir` with the bytes tokenizer: on a corpus (an MLM checkpoint), or with
// `task` on the copying task. Returns the checkpoint's path.
QString tiny_checkpoint(const QTemporaryDir& dir, bool task) {
    QFile corpus(dir.filePath("corpus.txt"));
    if (!corpus.exists()) {
        if (!corpus.open(QIODevice::WriteOnly)) return {};
        for (int i = 1; i <= 60; ++i)
            corpus.write(QByteArray("the cat sat on the mat number ") + QByteArray::number(i) +
                         " and a dog ran\n");
        corpus.close();
        QFile config(dir.filePath("tiny.json"));
        if (!config.open(QIODevice::WriteOnly)) return {};
        config.write(R"({"model":{"arch":"bigs","d_model":16,"n_layers":1,"max_len":32,
            "dropout":0.0,"ssm":{"n_modes":4}},"tokenizer":{"kind":"bytes"},
            "data":{"train":"corpus.txt","seq_len":32},"train":{"batch_size":2,"steps":2,
            "warmup_steps":0,"eval_every":0,"eval_batches":1,"checkpoint_every":0,"threads":1}})");
    }
    const QString out = dir.filePath(task ? "runtask" : "run");
    QStringList args{"train", "--config", dir.filePath("tiny.json"), "--out", out, "--json"};
    if (task)
        args << "--set"
             << "data.train=null"
             << "--set"
             << "data.task=copying"
             << "--set"
             << "data.task_params.n_train=20"
             << "--set"
             << "data.task_params.n_valid=8"
             << "--set"
             << "data.task_params.n_test=8"
             << "--set"
             << "data.task_params.min_len=4"
             << "--set"
             << "data.task_params.max_len=6";
    QProcess p;
    p.setWorkingDirectory(dir.path());  // data.train is relative to it
    p.start(QStringLiteral(ROUTESCOPE_CLI), args);
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
    return out + "/model.ckpt.h5";
}
}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void helpListsTheCommands() {
        const Run r = cli({"--help"});
        QCOMPARE(r.code, 0);
        for (const char* cmd : {"validate", "inspect", "sample-dump"})
            QVERIFY2(r.out.contains(cmd), qPrintable(r.out));
    }

    void versionNamesTheLibraries() {
        const Run r = cli({"--version"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("routescope 0.1.0"));
        QVERIFY(r.out.contains("HDF5 1."));
        QVERIFY(r.out.contains("CUDA backend:"));
        // The GEMM kernels, and who chose them: OpenBLAS reads OPENBLAS_CORETYPE once, when it
        // loads (its documented override); Prescott's kernels run on every x86-64 CPU.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("OPENBLAS_CORETYPE", "Prescott");
        const Run forced = cli({"--version"}, env);
        QVERIFY2(forced.out.contains("kernels: Prescott (chosen by OPENBLAS_CORETYPE=Prescott in "
                                     "the environment)"),
                 qPrintable(forced.out));
        env.remove("OPENBLAS_CORETYPE");
        const Run own = cli({"--version"}, env);
        QVERIFY2(own.out.contains("(chosen by OpenBLAS for this CPU)"), qPrintable(own.out));
    }

    void usageErrorsExitTwo() {
        QCOMPARE(cli({"no-such-command"}).code, 2);
        QCOMPARE(cli({"validate"}).code, 2);
        QCOMPARE(cli({"inspect", "--no-such-flag", fixture("valid_full.dump.h5")}).code, 2);
        // Errors of the option parser read as every other error (docs/cli.md, "Exit codes"):
        // "routescope-cli COMMAND: error: WHAT".
        const Run r = cli({"inspect", "--no-such-flag", fixture("valid_full.dump.h5")});
        QVERIFY2(
            r.err.startsWith("routescope-cli inspect: error: ") && r.err.contains("--no-such-flag"),
            qPrintable(r.err));
        QVERIFY2(cli({"no-such-command"}).err.startsWith("routescope-cli: error: "),
                 qPrintable(cli({"no-such-command"}).err));
        // An unknown command is a usage error with --help too (docs/cli.md, "Exit codes"): it
        // printed the top-level help, exit 0. An unexpected argument of a command likewise.
        for (const QStringList& args :
             {QStringList{"compare", "--help"}, QStringList{"--help", "compare"},
              QStringList{"eval", "compare", "--help"}}) {
            const Run h = cli(args);
            QVERIFY2(h.code == 2 && h.err.contains("not expected: compare") && h.out.isEmpty(),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(h.code) + h.err));
        }
        QCOMPARE(cli({"eval", "--help"}).code, 0);
        // A nested command is named whole, and so is its help (`tokenizer --help` lists none of
        // train's options).
        for (const QStringList& args : {QStringList{"tokenizer", "train", "--model-type", "nope"},
                                        QStringList{"bench", "dump", "--no-such-flag"}}) {
            const Run n = cli(args);
            const QString command = args[0] + " " + args[1];
            QVERIFY2(n.code == 2 && n.err.startsWith("routescope-cli " + command + ": error: ") &&
                         n.err.contains("routescope-cli " + command + " --help"),
                     qPrintable(n.err));
        }
    }

    void validateMeetsTheExitCodeContract_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("expect");
        QFile manifest(fixture("manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        for (const auto& c :
             QJsonDocument::fromJson(manifest.readAll()).object()["cases"].toArray()) {
            const auto o = c.toObject();
            QStringList expect;
            for (const auto& e : o["expect"].toArray())
                expect << e.toString();
            QTest::newRow(qPrintable(o["file"].toString()))
                << o["file"].toString() << o["exit"].toInt() << expect;
        }
    }

    void validateMeetsTheExitCodeContract() {
        QFETCH(QString, file);
        QFETCH(int, exitCode);
        QFETCH(QStringList, expect);
        const Run r = cli({"validate", fixture(file)});
        QVERIFY2(r.code == exitCode,
                 qPrintable(QString("exit %1\n%2%3").arg(r.code).arg(r.out, r.err)));
        for (const auto& e : expect)
            QVERIFY2(r.out.contains(e), qPrintable(r.out));
        if (exitCode == 0) QVERIFY(r.out.contains("valid"));
    }

    void validateManyFilesReportsTheWorst() {
        QCOMPARE(
            cli({"validate", fixture("valid_full.dump.h5"), fixture("nan_hidden.dump.h5")}).code,
            1);
        QCOMPARE(cli({"validate", fixture("nan_hidden.dump.h5"), fixture("empty.dump.h5")}).code,
                 2);
        QCOMPARE(cli({"validate", "--quick", fixture("nan_hidden.dump.h5")}).code, 0);
    }

    // /vocab and /data/text are read, in the quick mode too (the structure pass of every command's
    // input check): damaged heap ids of /vocab crash libhdf5 1.10 (SIGSEGV), which the input
    // check's child turns into a verdict naming /vocab, so `analyze induction-heads` (which reads
    // /vocab) exits 1 instead of dying of the signal (it passed the check and crashed: exit 139).
    void damagedStringsAreFoundByTheQuickCheck() {
        const Run vocab = cli({"validate", "--quick", fixture("vocab_heap_damaged.dump.h5")});
        QVERIFY2(vocab.code == 1, qPrintable(vocab.out + vocab.err));
        QVERIFY2(vocab.out.contains("vocab_heap_damaged.dump.h5: invalid dump") &&
                     vocab.out.contains("  /vocab: expected"),
                 qPrintable(vocab.out));
        const Run text = cli({"validate", "--quick", fixture("text_heap_damaged.dump.h5")});
        QVERIFY2(text.code == 1, qPrintable(text.out + text.err));
        QVERIFY2(text.out.contains("/data/text: expected readable strings, found damaged string "
                                   "storage: an HDF5 read error at [0]"),
                 qPrintable(text.out));
        QTemporaryDir dir;
        const Run analyze =
            cli({"analyze", "induction-heads", "--dump", fixture("vocab_heap_damaged.dump.h5"),
                 "--out", dir.filePath("ih.json")});
        QVERIFY2(analyze.code == 1, qPrintable(QString::number(analyze.code) + analyze.err));
        QVERIFY2(analyze.err.contains("vocab_heap_damaged.dump.h5: input check") &&
                     analyze.err.contains("/vocab: expected"),
                 qPrintable(analyze.err));
        QVERIFY(!QFile::exists(dir.filePath("ih.json")));
        // Values are the full check's: invalid UTF-8 and attention rows pass --quick.
        QCOMPARE(cli({"validate", "--quick", fixture("text_not_utf8.dump.h5")}).code, 0);
        QCOMPARE(cli({"validate", "--quick", fixture("attention_row_sum.dump.h5")}).code, 0);
    }

    void inspectSummarisesADump() {
        const Run r = cli({"inspect", fixture("valid_full.dump.h5")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("S = 6, padded length L = 16"), qPrintable(r.out));
        QVERIFY(r.out.contains("arch bigs, 3 layers, d_model 8"));
        QVERIFY(r.out.contains("0: hidden float32 [6, 16, 8], sentence"));
        QVERIFY(r.out.contains("gates u_f[6, 16, 8] u_b[6, 16, 8]") ||
                r.out.contains("gates u_b[6, 16, 8] u_f[6, 16, 8]"));
        QVERIFY(r.out.contains("kernels:   3 layers (1, 2, 3), length 16"));
        const Run sparse = cli({"inspect", fixture("valid_sparse_f16.dump.h5")});
        QCOMPARE(sparse.code, 0);
        QVERIFY2(
            sparse.out.contains("hidden float16 [3, 16, 8], sentence, 3 examples (example_index)"),
            qPrintable(sparse.out));
    }

    // A dump with attention probabilities (dump --attention) lists them with each layer, as it
    // lists gates (they were left out). The copy with /layers/1/attention is written by h5py.
    void inspectListsAttention() {
        QTemporaryDir dir;
        const QString copy = dir.filePath("attention.dump.h5");
        QProcess py;
        py.start("/usr/bin/python3",
                 {"-c",
                  "import shutil, sys, h5py, numpy as np\n"
                  "shutil.copyfile(sys.argv[1], sys.argv[2])\n"
                  "with h5py.File(sys.argv[2], 'r+') as f:\n"
                  "    f['layers/1/attention'] = np.full((6, 2, 16, 16), 1 / 16, np.float16)\n",
                  fixture("valid_full.dump.h5"), copy});
        QVERIFY(py.waitForFinished(60000) && py.exitCode() == 0);
        const Run r = cli({"inspect", copy});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("attention float16 [6, 2, 16, 16]"), qPrintable(r.out));
    }

    void inspectSummarisesACheckpoint() {
        const Run r = cli({"inspect", fixture("valid.ckpt.h5")});
        QCOMPARE(r.code, 0);
        // The complete BiGS model of make_dump_fixtures.py's /config (checkpoint_layout()).
        QVERIFY2(r.out.contains("35 tensors, 3553 values"), qPrintable(r.out));
        QVERIFY(r.out.contains("resumable: step 10"));
    }

    void inspectOfBrokenFiles() {
        QCOMPARE(cli({"inspect", fixture("gate_wrong_L.dump.h5")}).code, 1);
        const Run r = cli({"inspect", fixture("not_hdf5.dump.h5")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("not an HDF5 file"));
    }

    void sampleDumpValidates() {
        QTemporaryDir dir;
        const QString out = dir.filePath("sample.dump.h5");
        QCOMPARE(cli({"sample-dump", "--out", out, "--examples", "20", "--length", "16",
                      "--d-model", "8"})
                     .code,
                 0);
        const Run r = cli({"validate", out});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("valid dump"));
        // An unwritable target is a clear error, exit 3, and leaves nothing behind.
        const Run bad = cli({"sample-dump", "--out", "/proc/nope/sample.dump.h5"});
        QCOMPARE(bad.code, 3);
        QVERIFY2(bad.err.contains("/proc/nope/sample.dump.h5: cannot create"), qPrintable(bad.err));
    }

    void benchForwardRunsEveryArchitecture() {
        const QStringList archs = {"bigs", "bert", "birdie", "slstm", "gmlp"};
        const Run r = cli({"bench", "forward", "--arch", archs.join(','), "--lengths", "16,32",
                           "--d-model", "16", "--layers", "2", "--repeats", "1", "--threads", "1"});
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.trimmed().split('\n');
        const auto summary = QJsonDocument::fromJson(lines.back().toUtf8()).object();
        for (const QString& arch : archs) {
            const auto ms = summary[arch + "_ms"].toArray();
            QCOMPARE(ms.size(), 2);
            for (const auto& t : ms)
                QVERIFY2(t.toDouble() > 0, qPrintable(arch));
            QVERIFY2(summary.contains(arch + "_exponent"), qPrintable(arch));
            if (arch != "bert") QVERIFY2(summary.contains(arch + "_crossover"), qPrintable(arch));
        }
        QVERIFY(r.out.contains("crossover: gmlp"));
    }

    // bench conv at tiny sizes, with the torch baseline: every row has the engine's and torch's
    // CPU time; where a CUDA device is present the cuFFT path also ran and agrees with the CPU op.
    void benchConvRunsBothSides() {
        const Run r =
            cli({"bench", "conv", "--lengths", "64,100", "--channels", "6", "--repeats", "2",
                 "--threads", "1", "--baseline", "torch", "--python", "/usr/bin/python3"});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QStringList lines = r.out.trimmed().split('\n');
        const auto summary = QJsonDocument::fromJson(lines.back().toUtf8()).object();
        const auto rows = summary["rows"].toArray();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].toObject()["L"].toInt(), 100);
        const bool gpu = !r.out.contains("CUDA: not compiled in") &&
                         rows[0].toObject().contains("gpu_compute_ms");
        for (const auto& row : rows) {
            const auto o = row.toObject();
            QVERIFY(o["cpu_ms"].toDouble() > 0);
            QVERIFY(o["torch_cpu_ms"].toDouble() > 0);
            if (gpu) {
                QVERIFY(o["gpu_compute_ms"].toDouble() > 0);
                QVERIFY2(o["gpu_vs_cpu_max_rel_diff"].toDouble() < 1e-5,
                         qPrintable(QString::number(o["gpu_vs_cpu_max_rel_diff"].toDouble())));
            }
        }
        QCOMPARE(cli({"bench", "conv", "--channels", "0"}).code, 2);
        QCOMPARE(cli({"bench", "conv", "--lengths", "64,0"}).code, 2);
        QCOMPARE(cli({"bench", "conv", "--lengths", "-5"}).code, 2);
    }

    // bench forward --repeats 0 or below: a usage error (exit 2) naming the option, as bench
    // conv's --repeats; it was a SIGSEGV (exit 139).
    void benchForwardRefusesRepeatsBelowOne() {
        for (const char* repeats : {"0", "-3"}) {
            const Run r = cli({"bench", "forward", "--arch", "bigs", "--lengths", "16", "--d-model",
                               "8", "--layers", "1", "--repeats", repeats});
            QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
            QVERIFY2(r.err.contains("--repeats"), qPrintable(r.err));
        }
    }

    // bench dump --layers below 1 is a usage error before anything is written (-1 crashed and
    // left a hidden temporary, -2 was accepted); a model too large for memory is refused up front
    // with bench forward's estimate (docs/config.md "Ranges"), not grown until killed. An empty
    // --out or a folder as --out is a usage error naming the option, never "internal error".
    void benchDumpChecksItsSizesAndOut() {
        QTemporaryDir dir;
        const QString out = dir.filePath("b.dump.h5");
        const QStringList base = {"bench", "dump",      "--examples", "4",       "--length",
                                  "8",     "--d-model", "8",          "--batch", "2"};
        for (const char* layers : {"0", "-1", "-2"}) {
            const Run r = cli(base + QStringList{"--layers", layers, "--out", out});
            QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
            QVERIFY2(r.err.contains("--layers"), qPrintable(r.err));
        }
        const Run big = cli(base + QStringList{"--layers", "100000000", "--out", out});
        QVERIFY2(big.code == 2, qPrintable(QString("exit %1: %2").arg(big.code).arg(big.err)));
        QVERIFY2(big.err.contains("model.n_layers: the model would need about"),
                 qPrintable(big.err));
        const auto left =
            QDir(dir.path())
                .entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
        QVERIFY2(left.isEmpty(), qPrintable(left.join(' ')));

        const Run empty = cli(base + QStringList{"--layers", "1", "--out", ""});
        QVERIFY2(empty.code == 2,
                 qPrintable(QString("exit %1: %2").arg(empty.code).arg(empty.err)));
        QVERIFY2(empty.err.contains("--out") && !empty.err.contains("internal error"),
                 qPrintable(empty.err));
        const Run folder = cli(base + QStringList{"--layers", "1", "--out", dir.path()});
        QVERIFY2(folder.code == 2,
                 qPrintable(QString("exit %1: %2").arg(folder.code).arg(folder.err)));
        QVERIFY2(folder.err.contains("--out " + dir.path()), qPrintable(folder.err));

        const Run ok = cli(base + QStringList{"--layers", "1", "--out", out});
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
        QVERIFY(!QFileInfo::exists(out));  // deleted without --keep
        // A file that is there is not its own: refused and kept (it was replaced, then deleted).
        const QString notes = dir.filePath("notes.txt");
        {
            QFile f(notes);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("mine\n");
        }
        const Run existing = cli(base + QStringList{"--layers", "1", "--out", notes});
        QVERIFY2(existing.code == 2 && existing.err.contains("exists"),
                 qPrintable(QString("exit %1: %2").arg(existing.code).arg(existing.err)));
        QFile kept(notes);
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), QByteArray("mine\n"));
    }

    // bench similarity (docs/cli.md): a successful run is exit 0 (an empty stderr of the script
    // was reported as "cannot write to standard output", exit 3) and its last line is the JSON
    // summary. --work must be a folder: a file is a usage error, a folder that cannot be created
    // a failure to write, each naming the path and neither an "internal error".
    void benchSimilarityEndsWithItsSummary() {
        QProcess py;
        py.start("/usr/bin/python3", {"-c", "import h5py, numpy"});
        if (!py.waitForFinished(60000) || py.exitCode() != 0)
            QSKIP("/usr/bin/python3 has no h5py or numpy");
        QTemporaryDir dir;
        const QString script =
            QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/reference/analysis/bench_similarity.py");
        const QStringList base = {"bench",     "similarity", "--sentences", "4",   "--length", "8",
                                  "--d-model", "4",          "--layers",    "2",   "--m",      "20",
                                  "--threads", "1",          "--script",    script};
        for (const bool skip_numpy : {false, true}) {
            QStringList args = base + QStringList{"--work", dir.filePath("simw")};
            if (skip_numpy) args << "--skip-numpy";
            const Run r = cli(args);
            QVERIFY2(r.code == 0, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
            QVERIFY2(!r.err.contains("cannot write"), qPrintable(r.err));
            QVERIFY(r.out.contains("load average before"));
            QVERIFY(r.out.contains("load average after"));
            const QStringList lines = r.out.trimmed().split('\n');
            QJsonParseError parse;
            const auto doc = QJsonDocument::fromJson(lines.back().toUtf8(), &parse);
            QVERIFY2(parse.error == QJsonParseError::NoError && doc.isObject(),
                     qPrintable(lines.back()));
            const auto summary = doc.object();
            QCOMPARE(summary["layers"].toInt(), 2);
            QVERIFY2(summary["routescope_seconds"].toDouble(-1) >= 0, qPrintable(lines.back()));
            if (!skip_numpy)
                QVERIFY2(summary["max_relative_difference"].toDouble(1) < 1e-6,
                         qPrintable(lines.back()));
        }

        const QString file = dir.filePath("afile");
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const Run onFile = cli(base + QStringList{"--work", file});
        QVERIFY2(onFile.code == 2,
                 qPrintable(QString("exit %1: %2").arg(onFile.code).arg(onFile.err)));
        QVERIFY2(onFile.err.contains("--work " + file) && !onFile.err.contains("internal error"),
                 qPrintable(onFile.err));
        const Run under = cli(base + QStringList{"--work", file + "/sub"});
        QVERIFY2(under.code == 3,
                 qPrintable(QString("exit %1: %2").arg(under.code).arg(under.err)));
        QVERIFY2(under.err.contains(file + "/sub") && !under.err.contains("internal error"),
                 qPrintable(under.err));
        const Run empty = cli(base + QStringList{"--work", ""});
        QVERIFY2(empty.code == 2,
                 qPrintable(QString("exit %1: %2").arg(empty.code).arg(empty.err)));
        QVERIFY2(empty.err.contains("--work") && !empty.err.contains("internal error"),
                 qPrintable(empty.err));
    }

    // bench conv: buffers larger than the memory available are a usage error before any work,
    // naming the options and the size (it was killed by the OOM killer, exit 137). These sizes
    // need hundreds of PiB, more than any machine has.
    void benchConvRefusesBuffersBeyondMemory() {
        const Run r = cli({"bench", "conv", "--channels", "2000000000", "--lengths", "4194304",
                           "--repeats", "1"});
        QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains("--channels 2000000000") && r.err.contains("--lengths 4194304") &&
                     r.err.contains("would need about") && r.err.contains("PiB"),
                 qPrintable(r.err));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out));  // refused before the first line
    }

    // bench gemm: --seconds is a finite time of 0.01 to 3600 s (-1 and nan printed a
    // negative peak with exit 0, inf never returned); --sizes below 1 are usage errors at parse
    // time, before the peak is measured (they were exit 3 afterwards); sizes beyond memory too.
    void benchGemmChecksItsOptions() {
        for (const char* seconds : {"-1", "nan", "inf", "0", "3601", "x", "1e-9"}) {
            const Run r = cli({"bench", "gemm", "--sizes", "3", "--seconds", seconds});
            QVERIFY2(r.code == 2,
                     qPrintable(QString("%1: exit %2: %3").arg(seconds).arg(r.code).arg(r.err)));
            QVERIFY2(r.err.contains("--seconds"), qPrintable(r.err));
        }
        for (const char* sizes : {"0", "-5", "64,0"}) {
            const Run r = cli({"bench", "gemm", "--sizes", sizes, "--seconds", "0.01"});
            QVERIFY2(r.code == 2,
                     qPrintable(QString("%1: exit %2: %3").arg(sizes).arg(r.code).arg(r.err)));
            QVERIFY2(r.err.contains("--sizes"), qPrintable(r.err));
            QVERIFY2(!r.out.contains("peak"), qPrintable(r.out));
        }
        const Run huge = cli({"bench", "gemm", "--sizes", "2000000000", "--seconds", "0.01"});
        QVERIFY2(huge.code == 2, qPrintable(QString("exit %1: %2").arg(huge.code).arg(huge.err)));
        QVERIFY2(huge.err.contains("--sizes 2000000000") && huge.err.contains("would need about"),
                 qPrintable(huge.err));
        QVERIFY2(!huge.out.contains("peak"), qPrintable(huge.out));
        const Run ok =
            cli({"bench", "gemm", "--sizes", "8", "--seconds", "0.01", "--threads", "1"});
        QVERIFY2(ok.code == 0, qPrintable(ok.err));
        const auto summary =
            QJsonDocument::fromJson(ok.out.trimmed().split('\n').back().toUtf8()).object();
        QVERIFY(summary["peak_gflops"].toDouble() > 0);
    }

    // bench train: --warmup and --profile-steps are counts (0 or more); --baseline torch with a
    // script that is not there fails before the engine is timed (it failed only afterwards), a
    // usage error (exit 2, docs/cli.md: a file that cannot be read at all), naming the file;
    // --torch-compile without --baseline torch did nothing, silently.
    void benchTrainChecksItsOptions() {
        const QString config =
            QStringLiteral(ROUTESCOPE_SOURCE_DIR "/resources/configs/bigs-tiny.json");
        for (const char* option : {"--warmup", "--profile-steps"}) {
            const Run r = cli({"bench", "train", "--config", config, "--steps", "1", option, "-1"});
            QVERIFY2(r.code == 2,
                     qPrintable(QString("%1: exit %2: %3").arg(option).arg(r.code).arg(r.err)));
            QVERIFY2(r.err.contains(option), qPrintable(r.err));
        }
        QTemporaryDir dir;
        const QString missing = dir.filePath("no_bench_train.py");
        const Run r =
            cli({"bench", "train", "--config", config, "--steps", "1", "--warmup", "0",
                 "--profile-steps", "0", "--baseline", "torch", "--torch-script", missing});
        QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains(missing), qPrintable(r.err));
        QVERIFY2(!r.out.contains("engine:"), qPrintable(r.out));  // the engine did not run
        const Run compile =
            cli({"bench", "train", "--config", config, "--steps", "1", "--torch-compile"});
        QVERIFY2(compile.code == 2 && compile.err.contains("--baseline torch"),
                 qPrintable(QString("exit %1: %2").arg(compile.code).arg(compile.err)));
    }

    // bench forward checks every architecture and size before its first timing (an unknown
    // --arch or --d-model 0 stopped the run in the middle of its table), refuses an architecture
    // named twice (one JSON column was lost) and a --max-seconds that is negative or NaN (taken
    // as "never"); its crossover holds at every longer length run, recomputed here from its own
    // JSON (it was the first length where the architecture was faster, slower again later).
    void benchForwardChecksItsOptionsFirstAndItsCrossoverHolds() {
        const QStringList base = {"bench", "forward",   "--lengths", "16,32",     "--layers",
                                  "1",     "--repeats", "1",         "--threads", "1"};
        for (const auto& [extra, says] :
             {std::pair{QStringList{"--arch", "bigs,nosuch", "--d-model", "8"}, "nosuch"},
              std::pair{QStringList{"--arch", "bigs,bert", "--d-model", "0"}, "--d-model 0"},
              std::pair{QStringList{"--arch", "bigs,bigs", "--d-model", "8"}, "named twice"},
              std::pair{QStringList{"--arch", "bigs", "--d-model", "8", "--max-seconds", "-1"},
                        "--max-seconds"},
              std::pair{QStringList{"--arch", "bigs", "--d-model", "8", "--max-seconds", "nan"},
                        "--max-seconds"}}) {
            const Run r = cli(base + extra);
            QVERIFY2(
                r.code == 2 && r.err.contains(says),
                qPrintable(QString("%1: exit %2: %3").arg(extra.join(' ')).arg(r.code).arg(r.err)));
            QVERIFY2(!r.out.contains(" ms"), qPrintable(r.out));  // no table was started
        }
        const Run r =
            cli({"bench", "forward", "--arch", "gmlp,birdie,bert", "--lengths", "16,32,64,128,256",
                 "--d-model", "16", "--layers", "1", "--repeats", "1", "--threads", "1"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto summary =
            QJsonDocument::fromJson(r.out.trimmed().split('\n').back().toUtf8()).object();
        const auto lengths = summary["lengths"].toArray();
        const auto bert = summary["bert_ms"].toArray();
        for (const QString arch : {"gmlp", "birdie"}) {
            const int from = summary[arch + "_crossover"].toInt();
            const auto ms = summary[arch + "_ms"].toArray();
            for (qsizetype i = 0; i < lengths.size(); ++i)
                if (from > 0 && lengths[i].toInt() >= from)
                    QVERIFY2(ms[i].toDouble() < bert[i].toDouble(),
                             qPrintable(QString("%1 from %2: slower at %3")
                                            .arg(arch)
                                            .arg(from)
                                            .arg(lengths[i].toInt())));
            if (from < 0)  // not faster at the longest length
                QVERIFY2(ms.last().toDouble() >= bert.last().toDouble(), qPrintable(arch));
        }
    }

    // An empty path given to an option (an unset shell variable: `--out "$DIR"`) names no file:
    // a usage error naming the option (docs/cli.md, exit 2), never an internal error nor the
    // option's default (import read the files beside the weights instead, exit 0).
    void emptyPathsAreUsageErrors() {
        QTemporaryDir dir;
        const QString missing = dir.filePath("none.ckpt.h5");  // refused before it is read
        const Run exp = cli({"export", missing, "--to", "safetensors", "--out", ""});
        QVERIFY2(exp.code == 2 && exp.err.contains("--out") &&
                     exp.err.contains("--out: the value is empty") &&
                     !exp.err.contains("internal error"),
                 qPrintable(QString("exit %1: %2").arg(exp.code).arg(exp.err)));
        const Run experiment = cli({"experiment", "induction", "--out", ""});
        QVERIFY2(experiment.code == 2 && experiment.err.contains("--out") &&
                     experiment.err.contains("--out: the value is empty"),
                 qPrintable(QString("exit %1: %2").arg(experiment.code).arg(experiment.err)));
        for (const char* option : {"--config", "--vocab"}) {
            const QString out = dir.filePath("i.ckpt.h5");
            const Run r = cli({"import", dir.path(), "--out", out, option, ""});
            QVERIFY2(r.code == 2 && r.err.contains(QString(option) + ": the value is empty"),
                     qPrintable(QString("%1: exit %2: %3").arg(option).arg(r.code).arg(r.err)));
            QVERIFY(!QFileInfo::exists(out));
        }
        // eval's and dump's --data, --task and eval's --tokenizer: "" was the checkpoint's own.
        for (const QStringList& args :
             {QStringList{"eval", "--checkpoint", missing, "--data", ""},
              QStringList{"eval", "--checkpoint", missing, "--task", ""},
              QStringList{"eval", "--checkpoint", missing, "--tokenizer", ""},
              QStringList{"eval", "--checkpoint", missing, "--data", "c.txt", "--out", ""},
              QStringList{"dump", "--checkpoint", missing, "--out", dir.filePath("x.dump.h5"),
                          "--data", ""},
              QStringList{"dump", "--checkpoint", missing, "--out", dir.filePath("x.dump.h5"),
                          "--task", ""}}) {
            const Run r = cli(args);
            QVERIFY2(r.code == 2 && r.err.contains(args[args.size() - 2] + ": the value is empty"),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(r.code) + r.err));
        }
        // Every command's options and arguments (docs/cli.md, "Exit codes"): eval's
        // --checkpoint "" checked "/" as its file (exit 1), bench ops --op "" timed every op.
        for (const auto& [args, named] : std::vector<std::pair<QStringList, QString>>{
                 {{"eval", "--checkpoint", "", "--data", "c.txt"}, "--checkpoint"},
                 {{"dump", "--checkpoint", "", "--out", dir.filePath("y.dump.h5")}, "--checkpoint"},
                 {{"inspect", ""}, "file"},
                 {{"validate", ""}, "files"},
                 {{"export", "", "--to", "safetensors", "--out", dir.filePath("e")}, "checkpoint"},
                 {{"analyze", "anisotropy", "--dump", "", "--out", dir.filePath("a.json")},
                  "--dump"},
                 {{"bench", "ops", "--op", ""}, "--op"}}) {
            const Run r = cli(args);
            QVERIFY2(r.code == 2 && r.err.contains(named + ": the value is empty"),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(r.code) + r.err));
        }
        // train's --init "" trained from scratch; --config, --resume and --out alike.
        for (const char* option : {"--init", "--config", "--resume", "--out"}) {
            QStringList args{"train", option, ""};
            if (QString(option) != "--out") args << "--out" << dir.filePath("run");
            if (QString(option) == "--init" || QString(option) == "--out")
                args << "--config" << missing;
            const Run r = cli(args);
            QVERIFY2(r.code == 2 && r.err.contains(QString(option) + ": the value is empty"),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(r.code) + r.err));
        }
        const auto left =
            QDir(dir.path())
                .entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
        QVERIFY2(left.isEmpty(), qPrintable(left.join(' ')));
    }

    // docs/cli.md: a command whose printed result could not be written ends with exit 3 saying so,
    // its files written. With descriptor 1 closed, dump's lock file took it and the summary line
    // went into the lock (exit 0, the line lost).
    void dumpWithStandardOutputClosedSaysSo() {
        QTemporaryDir dir;
        const QString ckpt = tiny_checkpoint(dir, false);
        QVERIFY(!ckpt.isEmpty());
        const QString out = dir.filePath("d.dump.h5");
        const Run r =
            cli_without_stdout({"dump", "--checkpoint", ckpt, "--out", out, "--examples", "2"});
        QVERIFY2(r.code == 3 && r.err.contains("cannot write to standard output"),
                 qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
        QCOMPARE(cli({"validate", out}).code, 0);  // the file is written, whole
        QVERIFY(!QFileInfo::exists(dir.filePath(".d.dump.h5.lock")));
        // Standard input closed changes nothing for a command that does not read it.
        QProcess p;
        p.start("/bin/sh",
                QStringList{"-c", "exec \"$0\" \"$@\" <&-", ROUTESCOPE_CLI, "inspect", out});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(p.readAllStandardOutput().contains("dump (format version 1)"));
        // --version's text is the printed result too (it was exit 0 with nothing written).
        const Run version = cli_without_stdout({"--version"});
        QVERIFY2(version.code == 3 && version.err.contains("cannot write to standard output"),
                 qPrintable(QString("exit %1: %2").arg(version.code).arg(version.err)));
    }

    // docs/cli.md: an --out that is a device or a FIFO is refused before any work (exit 2), every
    // command's output alike. `--out /dev/stdout` with standard output a pipe (here QProcess's,
    // as `| cat` makes it) is such a FIFO: /dev/stdout's link /proc/self/fd/1 reads "pipe:[N]",
    // which was taken for a file to create (exit 3, "No such file or directory"; dump named
    // "/proc/PID/fd/pipe:[N]").
    void anOutputThatIsStandardOutputOnAPipeIsAFifo() {
        QTemporaryDir dir;
        const QString ckpt = tiny_checkpoint(dir, false);
        QVERIFY(!ckpt.isEmpty());
        for (const QStringList& args :
             {QStringList{"analyze", "anisotropy", "--dump", fixture("valid_full.dump.h5"),
                          "--layer", "0", "--out", "/dev/stdout"},
              QStringList{"dump", "--checkpoint", ckpt, "--out", "/dev/stdout", "--examples", "2"},
              QStringList{"sample-dump", "--out", "/dev/stdout", "--examples", "2"}}) {
            const Run r = cli(args);
            QVERIFY2(r.code == 2 && r.err.contains(args[0] + ": error: /dev/stdout: is a FIFO") &&
                         !r.err.contains("No such file") && r.out.isEmpty(),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(r.code) + r.err));
        }
    }

    // --split chooses a built-in task's split (docs/cli.md: valid, test or train); a value that
    // names none, or a --split beside a file or a corpus that is used whole, is exit 2 naming
    // --split (it was ignored, exit 0). --prefix-fraction nan is refused as out of [0, 1].
    void splitThatChoosesNothingIsRefused() {
        QTemporaryDir dir;
        const QString mlm = tiny_checkpoint(dir, false), task = tiny_checkpoint(dir, true);
        QVERIFY(!mlm.isEmpty() && !task.isEmpty());
        const QString corpus = dir.filePath("corpus.txt"), out = dir.filePath("x.dump.h5");
        const QList<QStringList> refused{
            {"eval", "--checkpoint", mlm, "--data", corpus, "--split", "bogus"},
            {"eval", "--checkpoint", mlm, "--data", corpus, "--split", "test"},
            {"dump", "--checkpoint", mlm, "--out", out, "--split", "bogus"},
            {"dump", "--checkpoint", mlm, "--out", out, "--split", "test"},
            {"dump", "--checkpoint", mlm, "--data", corpus, "--out", out, "--split", "test"},
            {"dump", "--checkpoint", task, "--out", out, "--split", "bogus"},
            {"eval", "--checkpoint", task, "--out", dir.filePath("p.jsonl"), "--split", "bogus"}};
        for (const QStringList& args : refused) {
            const Run r = cli(args);
            QVERIFY2(r.code == 2 && r.err.contains("--split"),
                     qPrintable(args.join(' ') + QString(": exit %1: ").arg(r.code) + r.err));
            if (args.contains("bogus"))
                QVERIFY2(r.err.contains("not one of train, valid, test"), qPrintable(r.err));
            QVERIFY(!QFileInfo::exists(out));
        }
        const Run test = cli({"dump", "--checkpoint", task, "--out", out, "--split", "test"});
        QVERIFY2(test.code == 0, qPrintable(test.err));
        const Run nan = cli({"dump", "--checkpoint", mlm, "--out", dir.filePath("n.dump.h5"),
                             "--prefix-fraction", "nan"});
        QVERIFY2(nan.code == 2 && nan.err.contains("--prefix-fraction"),
                 qPrintable(QString("exit %1: %2").arg(nan.code).arg(nan.err)));
        QVERIFY(!QFileInfo::exists(dir.filePath("n.dump.h5")));
    }

    // eval's --task-set KEY=VALUE (docs/cli.md): one without '=' is named as given, not as the
    // `--set data.task_params.KEY` eval does not have; beside --data (scored as it is) it is
    // refused, as it changed nothing.
    void taskSetErrorsNameTaskSet() {
        QTemporaryDir dir;
        const QString task = tiny_checkpoint(dir, true);
        QVERIFY(!task.isEmpty());
        const QString preds = dir.filePath("p.jsonl");
        const Run bare =
            cli({"eval", "--checkpoint", task, "--out", preds, "--task-set", "n_valid"});
        QVERIFY2(bare.code == 2 && bare.err.contains("--task-set n_valid") &&
                     !bare.err.contains("--set "),
                 qPrintable(QString("exit %1: %2").arg(bare.code).arg(bare.err)));
        const Run key = cli({"eval", "--checkpoint", task, "--out", preds, "--task-set", "nope=1"});
        QVERIFY2(key.code == 2 && key.err.contains("data.task_params.nope") &&
                     !key.err.contains("--set "),
                 qPrintable(QString("exit %1: %2").arg(key.code).arg(key.err)));
        const Run data = cli({"eval", "--checkpoint", task, "--data", dir.filePath("corpus.txt"),
                              "--task-set", "n_valid=4"});
        QVERIFY2(data.code == 2 && data.err.contains("--task-set n_valid=4"),
                 qPrintable(QString("exit %1: %2").arg(data.code).arg(data.err)));
        QVERIFY(!QFileInfo::exists(preds));
    }

    // bench ops takes --backend, not --device: its refusal of cuda where CUDA cannot run names
    // --backend cuda. Its --seconds is checked as bench gemm's.
    void benchOpsNamesItsOwnOptions() {
        const Run nan = cli({"bench", "ops", "--op", "tanh", "--seconds", "nan"});
        QVERIFY2(nan.code == 2 && nan.err.contains("--seconds"), qPrintable(nan.err));
        // As every bench (docs/cli.md): the load average before and after, and a JSON summary as
        // its last line (bench ops printed neither; session 32's probe).
        const Run ops =
            cli({"bench", "ops", "--op", "tanh", "--threads", "1", "--seconds", "0.01"});
        QVERIFY2(ops.code == 0, qPrintable(ops.err));
        QVERIFY2(
            ops.out.contains("load average before: ") && ops.out.contains("load average after: "),
            qPrintable(ops.out));
        const auto summary =
            QJsonDocument::fromJson(ops.out.trimmed().split('\n').back().toUtf8()).object();
        QCOMPARE(summary["bench"].toString(), QString("ops"));
        QVERIFY(!summary["ops"].toArray().isEmpty());
        QVERIFY(summary["ops"].toArray()[0].toObject()["forward_us"].toDouble() > 0);
        const Run r =
            cli({"bench", "ops", "--backend", "cuda", "--op", "tanh", "--seconds", "0.01"});
        if (r.code == 0) QSKIP("the CUDA backend runs the op table here");
        QVERIFY2(r.code == 2, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains("--backend cuda") && !r.err.contains("--device"),
                 qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
