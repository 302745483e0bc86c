// `--device cpu|cuda|auto` (the GPU engine issue, CPU side): every command that runs a model takes
// it; until the CUDA backend implements the op table, cuda is exit 2 with a message naming why it
// cannot run here (not compiled in, no device, or no op table on CUDA yet) and nothing is written;
// auto and cpu run on the CPU. train.precision: refused where the backend computes in fp32 only;
// bf16-mixed on the emulated CUDA device trains like fp32.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

namespace {
struct Run {
    int code;
    QString out, err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(ROUTESCOPE_CLI), args);
    if (!p.waitForFinished(120000)) return {-1, {}, "timed out"};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

const QString kConfig = QStringLiteral(ROUTESCOPE_SOURCE_DIR "/resources/configs/bigs-tiny.json");
}  // namespace

class TestDeviceOption : public QObject {
    Q_OBJECT

private slots:
    void cudaWithoutAUsableBackendIsAUsageErrorNamingTheReason() {
        QTemporaryDir dir;
        const QString out = dir.filePath("run");
        const QList<QStringList> commands = {
            {"train", "--config", kConfig, "--out", out, "--set", "train.steps=1"},
            {"bench", "train", "--config", kConfig, "--steps", "1"},
            {"bench", "forward", "--arch", "bigs", "--lengths", "16"},
            {"bench", "ops", "--backend", "cuda"},
        };
        for (QStringList args : commands) {
            if (args[0] != "bench" || args[1] != "ops")
                args << "--device"
                     << "cuda";
            const Run r = cli(args);
            QVERIFY2(r.code == 2, qPrintable(args.join(' ') + ": exit " + QString::number(r.code) +
                                             " " + r.err));
            QVERIFY2(r.err.contains("cuda") &&
                         (r.err.contains("not compiled") || r.err.contains("CUDA device") ||
                          r.err.contains("does not implement the op table")),
                     qPrintable(r.err));
        }
        QVERIFY(!QFileInfo::exists(out + "/model.ckpt.h5"));
    }

    void autoAndCpuRunOnTheCpu() {
        QTemporaryDir dir;
        for (const char* device : {"cpu", "auto"}) {
            const QString out = dir.filePath(device);
            const Run r = cli({"train", "--config", kConfig, "--out", out, "--set", "train.steps=1",
                               "--set", "model.d_model=16", "--set", "data.seq_len=16", "--set",
                               "train.batch_size=2", "--device", device});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QVERIFY(QFileInfo::exists(out + "/model.ckpt.h5"));
        }
    }

    // train.precision (issue 29): fp32 runs and is recorded in the start record; tf32 and
    // bf16-mixed are exit 2 on a backend that computes in fp32 only, naming the precision and the
    // backend, before anything is written; a misspelt value names the allowed ones.
    void aPrecisionTheBackendLacksIsRefusedBeforeAnyStep() {
        QTemporaryDir dir;
        const QStringList small = {"--set", "train.steps=1",   "--set", "model.d_model=16",
                                   "--set", "data.seq_len=16", "--set", "train.batch_size=2"};
        const QString ok = dir.filePath("fp32");
        Run r = cli(QStringList{"train", "--config", kConfig, "--out", ok, "--precision", "fp32"} +
                    small);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile log(ok + "/log.jsonl");
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QByteArray first = log.readLine();
        QVERIFY2(first.contains("\"type\":\"start\"") && first.contains("\"precision\":\"fp32\""),
                 first.constData());

        const QList<QStringList> refused = {
            {"--device", "cpu", "--precision", "tf32"},
            {"--device", "cpu", "--precision", "bf16-mixed"},
            {"--device", "guard", "--set", "train.precision=tf32"},
        };
        for (const QStringList& extra : refused) {
            const QString out = dir.filePath("refused");
            r = cli(QStringList{"train", "--config", kConfig, "--out", out} + small + extra);
            QVERIFY2(r.code == 2, qPrintable(extra.join(' ') + ": exit " + QString::number(r.code) +
                                             " " + r.err));
            QVERIFY2(r.err.contains("train.precision") && r.err.contains("fp32 only"),
                     qPrintable(r.err));
            QVERIFY2(r.err.contains(extra[1] == "guard" ? "guard" : "cpu"), qPrintable(r.err));
            QVERIFY(!QFileInfo::exists(out + "/model.ckpt.h5"));
        }
        r = cli(QStringList{"train", "--config", kConfig, "--out", dir.filePath("typo"), "--set",
                            "train.precision=bf16"} +
                small);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("train.precision") && r.err.contains("tf32"), qPrintable(r.err));
    }

    // bf16-mixed (issue 29) on the emulated CUDA device, which rounds the float GEMMs' inputs to
    // bfloat16 as the tensor cores do: the start record names it, the loss differs from fp32's
    // (the rounding is applied) and after 60 steps stays within 1% of it (the mean of the last 10
    // step losses, same seed and data). The same check at bigs-small size on a GPU is
    // scripts/gpu-check.sh's.
    void bf16MixedOnTheEmulatedDeviceTrainsLikeFp32() {
        QTemporaryDir dir;
        QMap<QString, QList<double>> losses;
        for (const QString& precision : {QStringLiteral("fp32"), QStringLiteral("bf16-mixed")}) {
            const QString out = dir.filePath(precision);
            const Run r = cli({"train", "--config", kConfig, "--out", out, "--device",
                               "cuda-emulated", "--precision", precision, "--set", "train.steps=60",
                               "--set", "model.d_model=16", "--set", "data.seq_len=16", "--set",
                               "train.batch_size=4", "--set", "train.eval_every=0"});
            QVERIFY2(r.code == 0, qPrintable(precision + ": " + r.err));
            QFile log(out + "/log.jsonl");
            QVERIFY(log.open(QIODevice::ReadOnly));
            while (!log.atEnd()) {
                const QJsonObject o = QJsonDocument::fromJson(log.readLine()).object();
                if (o["type"] == "start") QCOMPARE(o["precision"].toString(), precision);
                if (o["type"] == "step") losses[precision] << o["loss"].toDouble();
            }
            QCOMPARE(losses[precision].size(), 60);
        }
        const QList<double>& a = losses["fp32"];
        const QList<double>& b = losses["bf16-mixed"];
        QVERIFY2(a != b, "bf16-mixed gave fp32's losses bit for bit: the rounding is not applied");
        double ma = 0, mb = 0;
        for (int i = 50; i < 60; ++i) {
            ma += a[i] / 10;
            mb += b[i] / 10;
        }
        QVERIFY2(std::fabs(mb - ma) <= 0.01 * ma,
                 qPrintable(QString("last-10 mean loss: bf16-mixed %1, fp32 %2").arg(mb).arg(ma)));
        qInfo("last-10 mean loss: fp32 %.6f, bf16-mixed %.6f (%.2g relative)", ma, mb,
              std::fabs(mb - ma) / ma);
    }

    void anUnknownDeviceIsAUsageError() {
        const Run r =
            cli({"bench", "forward", "--arch", "bigs", "--lengths", "16", "--device", "tpu"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--device"), qPrintable(r.err));
    }
};

QTEST_APPLESS_MAIN(TestDeviceOption)
#include "test_device_option.moc"
