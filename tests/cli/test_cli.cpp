// routescope-cli's contract, run as a user runs it: --help, --version, usage errors, and validate /
// inspect / sample-dump with the exit codes of docs/cli.md (0 valid, 1 invalid, 2
// unreadable/usage); `bench forward` runs every architecture at tiny sizes (it times nothing here).
#include <QTemporaryDir>
#include <QtTest>

namespace {
struct Run {
    int code;
    QString out, err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(ROUTESCOPE_CLI), args);
    if (!p.waitForFinished(60000)) return {-1, {}, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

QString fixture(const QString& name) {
    return QStringLiteral(ROUTESCOPE_TEST_DATA "/dumps/") + name;
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
    }

    void usageErrorsExitTwo() {
        QCOMPARE(cli({"no-such-command"}).code, 2);
        QCOMPARE(cli({"validate"}).code, 2);
        QCOMPARE(cli({"inspect", "--no-such-flag", fixture("valid_full.dump.h5")}).code, 2);
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
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
