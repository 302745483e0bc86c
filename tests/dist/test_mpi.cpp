// Data-parallel training over MPI (issue 19; docs/scaling.md), run as a user runs it:
//   - `mpirun -np 2` with train.batch_size = 2 against one process with batch 4 (the same global
//     batch, hence the same data order and masks): every logged step and eval loss within 1e-5
//     relative (float rounding: the two ranks' gradients are summed after their backwards instead
//     of inside one backward; measured ~1e-8); gradient accumulation on, so the per-micro-batch
//     target weighting is exercised; bigs-tiny's dropout 0.1 is on (rank r draws the masks of its
//     rows of the global batch, so they are the single process's masks);
//   - two 2-rank runs are bit-identical (loss and gradient norm, as logged);
//   - a 2-rank run stopped at step 10 and resumed under mpirun repeats the uninterrupted run, and
//     the 2-rank checkpoint resumed by ONE process with batch 4 continues like the single run;
//   - kill -9 of one rank ends mpirun with an error within 60 s, and the last checkpoint validates;
//   - a sharded dump rerun that fails on one rank keeps the previous dump; ranks that read
//     different checkpoints, or were given different --until, are refused (session 34);
//   - on a device (issue 29): the same 2 ranks against 1 process, both `--device cuda` (skipped
//     without a GPU, with the reason) and `--device cuda-emulated` (the CUDA backend's kernels on
//     the host: the gradients downloaded, summed over MPI in rank order and uploaded, as on a GPU).
// Skips when MPI is not built in or mpirun is missing. As root, mpirun needs
// OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM): set here for every child.
#include <QtTest>
#include <csignal>
#include <cstdlib>

namespace {

struct Run {
    int code;
    QString out, err;
};

QProcessEnvironment child_env() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    env.insert("OMPI_MCA_rmaps_base_oversubscribe", "1");
    return env;
}

#ifdef ROUTESCOPE_MPIEXEC
constexpr const char* kMpiexec = ROUTESCOPE_MPIEXEC;
#else
constexpr const char* kMpiexec = "";
#endif

// The mpiexec of the build, or ROUTESCOPE_MPIEXEC from the environment (scripts/gpu-check.sh: the
// Open MPI launcher packed beside a GPU machine's bundle).
QString mpiexec() {
    if (const char* env = std::getenv("ROUTESCOPE_MPIEXEC"); env && *env)
        return QFileInfo(QString::fromUtf8(env)).isExecutable() ? QString::fromUtf8(env)
                                                                : QString();
    if (!*kMpiexec) return {};
    const QString p = QStandardPaths::findExecutable(QString::fromUtf8(kMpiexec));
    return p.isEmpty() && QFileInfo(kMpiexec).isExecutable() ? QString::fromUtf8(kMpiexec) : p;
}

QStringList mpi_prefix(int np) {
    return {"--oversubscribe", "-np", QString::number(np), QStringLiteral(ROUTESCOPE_CLI)};
}

Run run(const QString& program, const QStringList& args, int timeout_ms = 240000) {
    QProcess p;
    p.setProcessEnvironment(child_env());
    p.start(program, args);
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, "timed out"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

Run cli(int np, const QStringList& args) {
    if (np == 0) return run(QStringLiteral(ROUTESCOPE_CLI), args);
    return run(mpiexec(), mpi_prefix(np) + args);
}

QStringList tiny_sets(int batch, int steps = 20) {
    QStringList s;
    for (const QString& kv :
         {QString("data.seq_len=64"), QString("model.max_len=64"),
          QString("train.steps=%1").arg(steps), QString("train.eval_every=10"),
          QString("train.checkpoint_every=10"), QString("train.threads=1"),
          QString("train.grad_accum=2"), QString("train.batch_size=%1").arg(batch)})
        s << "--set" << kv;
    return s;
}

QString tiny_config() {
    return QStringLiteral(ROUTESCOPE_SOURCE_DIR "/resources/configs/bigs-tiny.json");
}

struct Record {
    QString type;
    qint64 step;
    double loss, grad_norm;
};

QList<Record> losses(const QString& dir) {
    QFile f(dir + "/log.jsonl");
    if (!f.open(QIODevice::ReadOnly)) return {};
    QList<Record> out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString type = o.value("type").toString();
        if (type == "step" || type == "eval")
            out.push_back({type, o.value("step").toInteger(), o.value("loss").toDouble(),
                           o.value("grad_norm").toDouble()});
    }
    return out;
}

}  // namespace

#define REQUIRE_MPI()                                                             \
    do {                                                                          \
        if (!*kMpiexec)                                                           \
            QSKIP(                                                                \
                "routescope-cli is built without MPI (ROUTESCOPE_MPI off or no "  \
                "MPI found: libopenmpi-dev, openmpi-bin)");                       \
        if (mpiexec().isEmpty()) QSKIP("mpiexec is not installed (openmpi-bin)"); \
    } while (0)

class TestMpi : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    QString dir(const QString& name) const { return tmp_.path() + "/" + name; }

    void train(int np, const QString& out, int batch, const QStringList& extra = {}) {
        const Run r =
            cli(np, QStringList{"train", "--config", tiny_config(), "--out", out, "--json"} +
                        tiny_sets(batch) + extra);
        QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
    }

    void compare(const QList<Record>& a, const QList<Record>& b, double rel, const char* what,
                 qsizetype records = 22) {
        QVERIFY2(a.size() == records && b.size() == a.size(),
                 qPrintable(QString("%1: %2 vs %3 records").arg(what).arg(a.size()).arg(b.size())));
        for (qsizetype i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].type, b[i].type);
            QCOMPARE(a[i].step, b[i].step);
            const double d = std::abs(a[i].loss - b[i].loss) / std::abs(a[i].loss);
            if (rel == 0) {
                QVERIFY2(a[i].loss == b[i].loss && a[i].grad_norm == b[i].grad_norm,
                         qPrintable(QString("%1: %2 at step %3 differs: %4 vs %5")
                                        .arg(what, a[i].type)
                                        .arg(a[i].step)
                                        .arg(a[i].loss, 0, 'g', 17)
                                        .arg(b[i].loss, 0, 'g', 17)));
            } else {
                QVERIFY2(d <= rel, qPrintable(QString("%1: %2 at step %3: %4 vs %5 (rel %6)")
                                                  .arg(what, a[i].type)
                                                  .arg(a[i].step)
                                                  .arg(a[i].loss, 0, 'g', 17)
                                                  .arg(b[i].loss, 0, 'g', 17)
                                                  .arg(d)));
            }
        }
    }

private slots:
    void initTestCase() { QVERIFY(tmp_.isValid()); }

    void twoRanksMatchOneProcessWithTheGlobalBatch() {
        REQUIRE_MPI();
        train(0, dir("single"), 4);
        train(2, dir("ranks"), 2);
        compare(losses(dir("single")), losses(dir("ranks")), 1e-5, "2 ranks vs 1 process");
        // Rank 0 alone wrote the log: one start record, naming the ranks.
        QFile f(dir("ranks") + "/log.jsonl");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray log = f.readAll();
        QCOMPARE(log.count("\"type\":\"start\""), 1);
        QVERIFY(log.contains("\"ranks\":2"));
    }

    // The emulation runs every kernel on the host, about 2 s a step even for d = 16: a 6-step run
    // of a smaller bigs there; on a GPU the 20 steps of the others.
    void twoRanksMatchOneProcessOnADevice_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("steps");
        QTest::newRow("cuda-emulated") << "cuda-emulated" << 6;
        // CTest runs the cuda row as its own entry, test_mpi_cuda (tests/dist/CMakeLists.txt).
        if (!std::getenv("ROUTESCOPE_MPI_NO_CUDA_ROW")) QTest::newRow("cuda") << "cuda" << 20;
    }
    void twoRanksMatchOneProcessOnADevice() {
        REQUIRE_MPI();
        QFETCH(QString, device);
        QFETCH(int, steps);
        if (device == "cuda") {
            const Run v = run(QStringLiteral(ROUTESCOPE_CLI), {"--version"});
            if (!v.out.contains("CUDA engine: ready"))
                QSKIP(qPrintable("no usable CUDA device: routescope-cli --version says " +
                                 v.out.section("CUDA engine:", 1).section('\n', 0, 0).trimmed()));
        }
        QStringList on{"--device", device};
        if (steps != 20)
            on << "--set" << QString("train.steps=%1").arg(steps) << "--set"
               << QString("train.eval_every=%1").arg(steps / 2) << "--set"
               << QString("train.checkpoint_every=%1").arg(steps / 2) << "--set"
               << "model.d_model=16"
               << "--set"
               << "data.seq_len=16"
               << "--set"
               << "model.max_len=16";
        train(0, dir("single-" + device), 4, on);
        train(2, dir("ranks-" + device), 2, on);
        compare(losses(dir("single-" + device)), losses(dir("ranks-" + device)), 1e-5,
                qPrintable("2 ranks vs 1 process on " + device), steps + 2);
    }

    void repeatedRunsAreBitIdentical() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("ranks") + "/log.jsonl")) train(2, dir("ranks"), 2);
        train(2, dir("ranks_again"), 2);
        compare(losses(dir("ranks")), losses(dir("ranks_again")), 0, "repeated 2-rank runs");
    }

    void resumeUnderMpiRepeatsTheRun() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("ranks") + "/log.jsonl")) train(2, dir("ranks"), 2);
        train(2, dir("stopped"), 2, {"--until", "10"});
        const Run resumed = cli(2, {"train", "--resume", dir("stopped"), "--json"});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.err.right(3000)));
        compare(losses(dir("ranks")), losses(dir("stopped")), 0, "2-rank resume");

        // A checkpoint written by 2 ranks, resumed by one process with the same global batch.
        if (!QFileInfo::exists(dir("single") + "/log.jsonl")) train(0, dir("single"), 4);
        train(2, dir("stopped_one"), 2, {"--until", "10"});
        const Run one = cli(
            0, {"train", "--resume", dir("stopped_one"), "--set", "train.batch_size=4", "--json"});
        QVERIFY2(one.code == 0, qPrintable(one.err.right(3000)));
        compare(losses(dir("single")), losses(dir("stopped_one")), 1e-5,
                "2-rank checkpoint resumed by 1 process");
    }

    void shardedDumpReadsAsOne() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("single") + "/model.ckpt.h5")) train(0, dir("single"), 4);
        const QString ck = dir("single") + "/model.ckpt.h5";
        const QStringList common{"dump", "--checkpoint", ck,          "--examples",
                                 "7",    "--gates",      "--threads", "1"};
        const Run one = cli(0, common + QStringList{"--out", dir("one.dump.h5")});
        QVERIFY2(one.code == 0, qPrintable(one.err.right(3000)));
        const Run two = cli(2, common + QStringList{"--out", dir("two.dump.h5")});
        QVERIFY2(two.code == 0, qPrintable(two.err.right(3000)));
        QVERIFY(QFileInfo::exists(dir("two.rank0.dump.h5")));
        QVERIFY(QFileInfo::exists(dir("two.rank1.dump.h5")));
        // The progress counts the whole dump's 7 examples (it ended at rank 0's 4 of 4).
        QVERIFY2(two.err.contains("{\"event\":\"progress\",\"done\":7,\"total\":7}"),
                 qPrintable(two.err.right(1000)));
        // Another --out whose name reduces to the same stem (two.h5) has shards of its own: it
        // wrote two.rank<r>.dump.h5, and two.dump.h5 then mapped its 4 + 3 rows onto 3 + 2 of
        // another dump's (the comparison below reads two.dump.h5 after it).
        QStringList five = common;
        five[4] = "5";
        const Run other = cli(2, five + QStringList{"--out", dir("two.h5")});
        QVERIFY2(other.code == 0, qPrintable(other.err.right(3000)));
        QVERIFY(QFileInfo::exists(dir("two.h5-rank0.dump.h5")));
        QVERIFY(QFileInfo::exists(dir("two.h5-rank1.dump.h5")));
        const Run v = cli(0, {"validate", dir("two.dump.h5")});
        QVERIFY2(v.code == 0, qPrintable(v.out + v.err));
        // h5py: every dataset of the single-process dump, same shape and values, in the master
        // (virtual datasets under /data and /layers), run from another directory.
        const char* script = R"(
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
assert len(names) > 10, names
for n in names:
    x, y = a[n][()], b[n][()]
    assert x.shape == y.shape and x.dtype == y.dtype, (n, x.shape, y.shape, x.dtype, y.dtype)
    assert np.array_equal(x, y), n
assert b['layers/1/hidden'].is_virtual and b['data/tokens'].is_virtual
assert dict(a.attrs)['format'] == dict(b.attrs)['format']
print('ok', len(names))
)";
        QProcess py;
        py.setWorkingDirectory(QDir::rootPath());
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {"-c", script, dir("one.dump.h5"), dir("two.dump.h5")});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, qPrintable(py.readAllStandardError()));
        // Every analysis that reads a dump gives the same results (provenance aside).
        for (const char* kind : {"kernels", "gates", "anisotropy", "pca", "transitions"}) {
            QJsonArray results[2];
            for (int k = 0; k < 2; ++k) {
                const QString out = dir(QString("analysis-%1-%2.json").arg(kind).arg(k));
                const Run r = cli(0, {"analyze", kind, "--dump",
                                      dir(k ? "two.dump.h5" : "one.dump.h5"), "--out", out});
                QVERIFY2(r.code == 0, qPrintable(QString(kind) + ": " + r.err));
                QFile f(out);
                QVERIFY(f.open(QIODevice::ReadOnly));
                results[k] = QJsonDocument::fromJson(f.readAll()).object()["results"].toArray();
                for (auto&& x : results[k]) {
                    QJsonObject o = x.toObject();
                    o.remove("provenance");
                    x = o;
                }
            }
            QVERIFY2(!results[0].isEmpty() && results[0] == results[1], kind);
        }
        // A missing shard would read as fill values: validate names it instead (exit 1).
        QVERIFY(QFile::rename(dir("two.rank1.dump.h5"), dir("moved.dump.h5")));
        const Run missing = cli(0, {"validate", dir("two.dump.h5")});
        QVERIFY(QFile::rename(dir("moved.dump.h5"), dir("two.rank1.dump.h5")));
        QVERIFY2(missing.code == 1 && (missing.out + missing.err).contains("does not exist"),
                 qPrintable(missing.out + missing.err));
    }

    // A rank that finds its inputs differently from the others (a node's stale or partial copy,
    // a run directory only it sees) ends the job with its message; before, it left before the
    // ranks' agreement and the others waited in it for ever (mpirun never ended). Two ranks with
    // different arguments (an MPMD launch) stand in for two nodes seeing different files.
    void aRankThatCannotReadItsInputsEndsTheJob() {
        REQUIRE_MPI();
        const QString good = dir("mpmd-good"), bad = dir("mpmd-bad"), later = dir("mpmd-later");
        train(0, good, 4, {"--until", "10"});
        for (const QString& copy : {bad, later}) {
            QVERIFY(QDir().mkpath(copy));
            QVERIFY(QFile::copy(good + "/model.ckpt.h5", copy + "/model.ckpt.h5"));
            QVERIFY(QFile::copy(good + "/log.jsonl", copy + "/log.jsonl"));
        }
        QVERIFY(
            QFile::resize(bad + "/model.ckpt.h5", QFileInfo(good + "/model.ckpt.h5").size() / 2));
        const auto mpmd = [](const QStringList& rank0, const QStringList& rank1) {
            const QStringList cli{QStringLiteral(ROUTESCOPE_CLI)};
            return run(mpiexec(),
                       QStringList{"--oversubscribe", "-np", "1"} + cli + rank0 +
                           QStringList{":", "-np", "1"} + cli + rank1,
                       120000);
        };
        // Rank 1's checkpoint is damaged.
        const Run damaged =
            mpmd({"train", "--resume", good, "--json"}, {"train", "--resume", bad, "--json"});
        QVERIFY2(damaged.code != -1, "mpirun still ran after 120 s");
        QVERIFY2(damaged.code == 2 && damaged.err.contains(bad + "/model.ckpt.h5") &&
                     damaged.err.contains("rank 1 could not read"),
                 qPrintable(damaged.err.right(3000)));
        // The same for a sharded dump: rank 1's checkpoint fails the input check; its report is
        // printed (naming the file) and the ranks agree (rank 1 exited 2 without a word, rank 0
        // was killed as "interrupted", or waited for ever under a launcher that lets it).
        const Run dumped = mpmd({"dump", "--checkpoint", good + "/model.ckpt.h5", "--out",
                                 dir("mpmd.dump.h5"), "--threads", "1"},
                                {"dump", "--checkpoint", bad + "/model.ckpt.h5", "--out",
                                 dir("mpmd.dump.h5"), "--threads", "1"});
        QVERIFY2(dumped.code != -1, "mpirun still ran after 120 s");
        QVERIFY2(dumped.code != 0 && dumped.err.contains(bad + "/model.ckpt.h5") &&
                     dumped.err.contains("rank 1 of 2 could not open its --checkpoint"),
                 qPrintable(dumped.err.right(3000)));
        QVERIFY(!QFileInfo::exists(dir("mpmd.dump.h5")));
        // Rank 1's --out already holds a run (a fresh run refuses it there).
        const Run held = mpmd(
            QStringList{"train", "--config", tiny_config(), "--out", dir("mpmd-fresh"), "--json"} +
                tiny_sets(2),
            QStringList{"train", "--config", tiny_config(), "--out", later, "--json"} +
                tiny_sets(2));
        QVERIFY2(held.code != -1, "mpirun still ran after 120 s");
        QVERIFY2(held.code == 2 && held.err.contains("already holds a run"),
                 qPrintable(held.err.right(3000)));
        QVERIFY(!QFileInfo::exists(dir("mpmd-fresh")));
        // Rank 1's corpus is missing: rank 0 had set its run up (its log made, not yet written);
        // it left no log (an empty log.jsonl; its built-in corpus stays, as it would for a resume).
        const Run corpus = mpmd(
            QStringList{"train", "--config", tiny_config(), "--out", dir("mpmd-set-up"), "--json"} +
                tiny_sets(2),
            QStringList{"train", "--config", tiny_config(), "--out", dir("mpmd-no-corpus"),
                        "--json", "--set", "data.train=" + dir("no-such-corpus.txt")} +
                tiny_sets(2));
        QVERIFY2(corpus.code == 2 && corpus.err.contains("no-such-corpus.txt"),
                 qPrintable(corpus.err.right(3000)));
        QVERIFY(!QFileInfo::exists(dir("mpmd-set-up") + "/log.jsonl"));
        // Rank 1 starts from a later checkpoint of the same run: refused, naming the step (it
        // trained with mismatched collectives and replaced the good checkpoint).
        const Run on = cli(0, {"train", "--resume", later, "--until", "12", "--json"});
        QVERIFY2(on.code == 0, qPrintable(on.err.right(3000)));
        const QByteArray before = [&] {
            QFile f(good + "/model.ckpt.h5");
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        const Run steps =
            mpmd({"train", "--resume", good, "--json"}, {"train", "--resume", later, "--json"});
        QVERIFY2(steps.code != -1, "mpirun still ran after 120 s");
        QVERIFY2(steps.code == 2 && steps.err.contains("rank 1's starting step"),
                 qPrintable(steps.err.right(3000)));
        QFile f(good + "/model.ckpt.h5");
        QVERIFY(f.open(QIODevice::ReadOnly) && f.readAll() == before);
    }

    // Fine-tuning by epochs counts an epoch in global batches: 37 examples at a global batch of
    // 4 are ceil(37 / 4) = 10 steps per epoch under one process (batch 4) and under two ranks
    // (batch 2 each); the 2-rank run counted per-rank batches (19 steps, two epochs of data
    // logged as one).
    void fineTuningEpochsCountTheGlobalBatch() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("single") + "/model.ckpt.h5")) train(0, dir("single"), 4);
        QFile tsv(dir("cls.tsv"));
        QVERIFY(tsv.open(QIODevice::WriteOnly));
        tsv.write("sentence\tlabel\n");
        for (int i = 0; i < 37; ++i)
            tsv.write(QString("example number %1 of the set\t%2\n").arg(i).arg(i % 2).toUtf8());
        tsv.close();
        const auto tune = [&](int np, const QString& out, int batch) {
            const Run r = cli(np, {"train",
                                   "--init",
                                   dir("single") + "/model.ckpt.h5",
                                   "--out",
                                   out,
                                   "--json",
                                   "--set",
                                   "train.objective=classify",
                                   "--set",
                                   "data.train=" + dir("cls.tsv"),
                                   "--set",
                                   "data.valid=" + dir("cls.tsv"),
                                   "--set",
                                   "train.epochs=1",
                                   "--set",
                                   QString("train.batch_size=%1").arg(batch),
                                   "--set",
                                   "train.threads=1",
                                   "--set",
                                   "data.seq_len=32"});
            QVERIFY2(r.code == 0, qPrintable(r.err.right(3000)));
        };
        tune(0, dir("ft-one"), 4);
        tune(2, dir("ft-two"), 2);
        for (const QString& out : {dir("ft-one"), dir("ft-two")}) {
            QFile log(out + "/log.jsonl");
            QVERIFY(log.open(QIODevice::ReadOnly));
            qint64 per_epoch = -1, last = -1;
            for (const QByteArray& line : log.readAll().split('\n')) {
                const QJsonObject o = QJsonDocument::fromJson(line).object();
                if (o.value("type") == "start") per_epoch = o.value("steps_per_epoch").toInteger();
                if (o.value("type") == "step") last = o.value("step").toInteger();
            }
            QVERIFY2(per_epoch == 10 && last == 10,
                     qPrintable(QString("%1: %2 steps per epoch, last step %3")
                                    .arg(out)
                                    .arg(per_epoch)
                                    .arg(last)));
        }
    }

    // A failure every rank shares (the same missing file) is printed once, by the lowest failing
    // rank, not once per rank with the lines of N reports interleaved.
    void aFailureEveryRankSharesIsPrintedOnce() {
        REQUIRE_MPI();
        const QString missing = dir("nowhere");
        Run r = cli(3, {"train", "--resume", missing});
        QVERIFY2(r.code == 2, qPrintable(r.err));
        QCOMPARE(r.err.count("input check (--no-check skips it): unreadable file"), 1);
        QCOMPARE(r.err.count("expected an HDF5 file, found no such file"), 1);
        r = cli(3, {"train", "--config", missing + ".json", "--out", dir("nowhere-out")});
        QVERIFY2(r.code == 2, qPrintable(r.err));
        QCOMPARE(r.err.count("routescope-cli train: error:"), 1);
        QVERIFY2(r.err.contains(missing + ".json"), qPrintable(r.err));
        // dump checks its checkpoint before MPI starts (session 32: every rank printed the
        // report).
        r = cli(3, {"dump", "--checkpoint", missing, "--examples", "2", "--out",
                    dir("nowhere.dump.h5")});
        QVERIFY2(r.code == 2, qPrintable(r.err));
        QCOMPARE(r.err.count("input check (--no-check skips it): unreadable file"), 1);
    }

    // Only train and dump share their work across ranks. Any other command under mpirun ran once
    // per rank, every copy writing the same --out: each rank refuses it before any work (exit 2).
    void commandsOfOneProcessAreRefusedUnderMpirun() {
        REQUIRE_MPI();
        QVERIFY(QDir().mkpath(dir("one-process")));
        const QString out = dir("one-process") + "/x.dump.h5";
        const Run r = cli(2, {"sample-dump", "--out", out, "--examples", "2", "--length", "8",
                              "--d-model", "4", "--layers", "1"});
        QVERIFY2(r.code == 2 && r.err.contains("launched as 2 ranks") &&
                     r.err.contains("`sample-dump` runs in one process"),
                 qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
        QVERIFY(!QFileInfo::exists(out));
        // The same command without a launcher writes the file (the refusal is the launcher's).
        const Run one = cli(0, {"sample-dump", "--out", out, "--examples", "2", "--length", "8",
                                "--d-model", "4", "--layers", "1"});
        QVERIFY2(one.code == 0 && QFileInfo::exists(out), qPrintable(one.err));
    }

    // A launcher whose ranks MPI cannot join (srun without --mpi=pmix: each process becomes a
    // singleton) is refused by every process, before it trains the whole run into the shared
    // directory (two processes each trained alone and tore the log).
    void ranksMpiCannotJoinAreRefused() {
        REQUIRE_MPI();
        QProcess p;
        QProcessEnvironment env = child_env();
        env.insert("SLURM_STEP_NUM_TASKS", "2");
        env.insert("SLURM_PROCID", "0");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(ROUTESCOPE_CLI), QStringList{"train", "--config", tiny_config(),
                                                            "--out", dir("singleton"), "--json"} +
                                                    tiny_sets(2));
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 2 && err.contains("SLURM_STEP_NUM_TASKS=2") &&
                     err.contains("--mpi=pmix"),
                 qPrintable(err));
        QVERIFY(!QFileInfo::exists(dir("singleton") + "/log.jsonl"));
    }

    // SIGUSR1 to mpirun stops every rank after the same step with a checkpoint (exit 130):
    // mpirun forwards it and kills nothing, where its SIGTERM (Ctrl-C) is followed by SIGKILL
    // one second later (odls_base_sigkill_timeout), before a step of more than a second saves.
    void usr1ToMpirunSavesAndStopsEveryRank() {
        REQUIRE_MPI();
        const QString out = dir("usr1");
        QProcess p;
        p.setProcessEnvironment(child_env());
        p.start(mpiexec(),
                mpi_prefix(2) +
                    QStringList{"train", "--config", tiny_config(), "--out", out, "--json"} +
                    tiny_sets(2, 100000));
        QVERIFY(p.waitForStarted());
        QByteArray seen;
        while (seen.count("\"type\":\"step\"") < 3 && p.waitForReadyRead(60000))
            seen += p.readAllStandardOutput();
        QVERIFY(seen.count("\"type\":\"step\"") >= 3);
        QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGUSR1), 0);
        QVERIFY2(p.waitForFinished(60000), "mpirun still runs 60 s after SIGUSR1");
        seen += p.readAllStandardOutput();
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 130,
                 qPrintable(QString("exit %1: %2").arg(p.exitCode()).arg(err.right(2000))));
        // Rank 0 saved the checkpoint and says so; the other rank said it too (session 34).
        QCOMPARE(err.count("interrupted at step"), 1);
        qint64 last = 0;
        for (const QByteArray& line : seen.split('\n')) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            if (o.value("type") == "step") last = o.value("step").toInteger();
        }
        const Run v = run(QStringLiteral(ROUTESCOPE_CLI), {"inspect", out + "/model.ckpt.h5"});
        QVERIFY2(
            v.code == 0 && last >= 3 && v.out.contains(QString("resumable: step %1").arg(last)),
            qPrintable(QString("last logged step %1; inspect: %2").arg(last).arg(v.out)));
    }

    void aKilledRankEndsTheRun() {
        REQUIRE_MPI();
        const QString out = dir("killed");
        QProcess p;
        p.setProcessEnvironment(child_env());
        QStringList args = mpi_prefix(2) +
                           QStringList{"train", "--config", tiny_config(), "--out", out, "--json"} +
                           tiny_sets(2, 100000);
        args << "--set"
             << "train.checkpoint_every=5";
        p.start(mpiexec(), args);
        QVERIFY(p.waitForStarted());
        // Wait for a checkpoint, then kill one rank (a child of mpirun) with SIGKILL.
        QDeadlineTimer ready(120000);
        while (!QFileInfo::exists(out + "/model.ckpt.h5") && !ready.hasExpired())
            QTest::qWait(200);
        QVERIFY2(QFileInfo::exists(out + "/model.ckpt.h5"), "no checkpoint within 120 s");
        qint64 victim = 0;
        for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
            QFile stat("/proc/" + pid + "/stat");
            if (!stat.open(QIODevice::ReadOnly)) continue;
            const QString s = QString::fromUtf8(stat.readAll());
            const QStringList f = s.mid(s.lastIndexOf(')') + 2).split(' ');
            if (f.size() > 1 && f[1].toLongLong() == p.processId()) victim = pid.toLongLong();
        }
        QVERIFY2(victim > 0, "no rank process found under mpirun");
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(::kill(static_cast<pid_t>(victim), SIGKILL), 0);
        QVERIFY2(p.waitForFinished(60000), "mpirun still runs 60 s after a rank was killed");
        const qint64 ms = clock.elapsed();
        qInfo("mpirun ended %lld ms after kill -9 of rank pid %lld (exit %d)",
              static_cast<long long>(ms), static_cast<long long>(victim), p.exitCode());
        QVERIFY(p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0);
        const Run v = run(QStringLiteral(ROUTESCOPE_CLI), {"validate", out + "/model.ckpt.h5"});
        QVERIFY2(v.code == 0, qPrintable(v.out + v.err));
    }

    // Session 34. A sharded dump rerun into the same --out that fails on one rank (here rank 1
    // under a file-size limit: a full disk) leaves the previous dump as it was. Rank 0 had
    // already renamed its new shard over the old one, and the failure then removed every new
    // shard: the old master read zeros where rank 0's rows were (h5py: the sum of
    // /layers/1/hidden went from 1474.6 to 0).
    void aFailedShardedRerunKeepsThePreviousDump() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("single") + "/model.ckpt.h5")) train(0, dir("single"), 4);
        const QStringList args{"dump",  "--checkpoint",       dir("single") + "/model.ckpt.h5",
                               "--out", dir("rerun.dump.h5"), "--examples",
                               "7",     "--threads",          "1"};
        const Run first = cli(2, args);
        QVERIFY2(first.code == 0, qPrintable(first.err.right(2000)));
        const char* script = R"(
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'r') as f:
    print(repr(float(np.abs(f['layers/1/hidden'][()].astype(np.float64)).sum())))
)";
        auto sum = [&] {
            QProcess py;
            py.start(QStringLiteral(ROUTESCOPE_PYTHON), {"-c", script, dir("rerun.dump.h5")});
            py.waitForFinished(120000);
            return QString::fromUtf8(py.readAllStandardOutput()).trimmed();
        };
        const QString before = sum();
        QVERIFY2(before.toDouble() > 0, qPrintable(before));
        const Run failed =
            run(mpiexec(), QStringList{"--oversubscribe", "-np", "1", ROUTESCOPE_CLI} + args +
                               QStringList{":", "-np", "1", "/bin/sh", "-c",
                                           "ulimit -f 40; exec \"$0\" \"$@\"", ROUTESCOPE_CLI} +
                               args);
        QVERIFY2(failed.code != 0, qPrintable(failed.err.right(2000)));
        QCOMPARE(sum(), before);
        const Run v = cli(0, {"validate", dir("rerun.dump.h5")});
        QVERIFY2(v.code == 0, qPrintable(v.out + v.err));
        // Nothing of the failed job is left beside it (its staged shards, its master's
        // temporary).
        const QStringList left =
            QDir(tmp_.path()).entryList({".rerun*"}, QDir::Files | QDir::Hidden);
        QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    }

    // The ranks of a dump read the same checkpoint (as train's ranks must): one node's stale
    // copy wrote its block from another model, and the master named rank 0's checkpoint alone.
    // Two ranks given different checkpoints (an MPMD launch) stand in for the two nodes.
    void dumpRanksOfDifferentCheckpointsAreRefused() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("single") + "/model.ckpt.h5")) train(0, dir("single"), 4);
        if (!QFileInfo::exists(dir("short") + "/model.ckpt.h5"))
            train(0, dir("short"), 4, {"--until", "10"});
        auto args = [&](const QString& run) {
            return QStringList{"dump",  "--checkpoint",       run + "/model.ckpt.h5",
                               "--out", dir("mixed.dump.h5"), "--examples",
                               "4",     "--threads",          "1"};
        };
        const Run r =
            run(mpiexec(), QStringList{"--oversubscribe", "-np", "1", ROUTESCOPE_CLI} +
                               args(dir("single")) + QStringList{":", "-np", "1", ROUTESCOPE_CLI} +
                               args(dir("short")));
        QVERIFY2(r.code == 2 && r.err.contains("differs from rank 0's"), qPrintable(r.err));
        QCOMPARE(r.err.count("differs from rank 0's"), 1);
        QVERIFY(!QFileInfo::exists(dir("mixed.dump.h5")));
    }

    // A node whose data file holds fewer examples than there are ranks: that rank left alone
    // before the ranks compared their inputs, and rank 0 waited in the comparison for ever,
    // printing nothing (session 34's review). Now every rank compares, then stops (exit 2).
    void dumpRanksOfDifferentDataEndTogether() {
        REQUIRE_MPI();
        if (!QFileInfo::exists(dir("single") + "/model.ckpt.h5")) train(0, dir("single"), 4);
        for (const auto& [name, lines] : {std::pair{"five.txt", 5}, std::pair{"one.txt", 1}}) {
            QFile f(dir(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            for (int i = 0; i < lines; ++i)
                f.write(QByteArray("the cat sat on the mat number ") + QByteArray::number(i) +
                        "\n");
        }
        auto args = [&](const char* data) {
            return QStringList{"dump",
                               "--checkpoint",
                               dir("single") + "/model.ckpt.h5",
                               "--data",
                               dir(data),
                               "--out",
                               dir("stale.dump.h5"),
                               "--threads",
                               "1"};
        };
        const Run r =
            run(mpiexec(),
                QStringList{"--oversubscribe", "-np", "1", ROUTESCOPE_CLI} + args("five.txt") +
                    QStringList{":", "-np", "1", ROUTESCOPE_CLI} + args("one.txt"),
                60000);
        QVERIFY2(r.code == 2 && r.err.contains("differs from rank 0's"),
                 qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err.right(2000))));
        QVERIFY(!QFileInfo::exists(dir("stale.dump.h5")));
    }

    // Session 38 (probe X3). The ranks' checkpoints are compared by their contents, not only by
    // the step and path: one node's stale copy of --init (or of the resumed run) at the same path
    // started its rank from other weights, and the job trained on with exit 0 (rank 0 wrote its
    // own). /proc/self/cwd/init.ckpt.h5 is the same path on both ranks and another file in each
    // rank's working directory (-wdir), as a node's own disk would be.
    void ranksStartingFromDifferentWeightsAreRefused() {
        REQUIRE_MPI();
        for (const auto& [run_name, seed] : {std::pair{"seed-a", 1}, std::pair{"seed-b", 2}}) {
            if (!QFileInfo::exists(dir(run_name) + "/model.ckpt.h5"))
                train(0, dir(run_name), 2, {"--set", QString("train.seed=%1").arg(seed)});
            QDir().mkpath(dir(QString(run_name) + "-wd"));
            QFile::remove(dir(QString(run_name) + "-wd") + "/init.ckpt.h5");
            QVERIFY(QFile::copy(dir(run_name) + "/model.ckpt.h5",
                                dir(QString(run_name) + "-wd") + "/init.ckpt.h5"));
        }
        const QStringList args = QStringList{"train",
                                             "--config",
                                             tiny_config(),
                                             "--out",
                                             dir("stale-init"),
                                             "--init",
                                             "/proc/self/cwd/init.ckpt.h5",
                                             "--json"} +
                                 tiny_sets(2, 4);
        const Run r = run(
            mpiexec(),
            QStringList{"--oversubscribe", "-np", "1", "-wdir", dir("seed-a-wd"), ROUTESCOPE_CLI} +
                args + QStringList{":", "-np", "1", "-wdir", dir("seed-b-wd"), ROUTESCOPE_CLI} +
                args,
            120000);
        QVERIFY2(r.code == 2 && r.err.contains("starting state of the parameters") &&
                     r.err.contains("differs from rank 0's"),
                 qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err.right(2000))));
        QVERIFY(!QFileInfo::exists(dir("stale-init") + "/model.ckpt.h5"));
    }

    // --until is where every rank stops: given to one rank only, that rank saved and left at
    // step 3 while the other waited for it in step 4's collective, for ever.
    void ranksWithDifferentUntilAreRefused() {
        REQUIRE_MPI();
        const QStringList args =
            QStringList{"train", "--config", tiny_config(), "--out", dir("until"), "--json"} +
            tiny_sets(2);
        const Run r = run(mpiexec(),
                          QStringList{"--oversubscribe", "-np", "1", ROUTESCOPE_CLI} + args +
                              QStringList{"--until", "3", ":", "-np", "1", ROUTESCOPE_CLI} + args,
                          120000);
        QVERIFY2(r.code == 2 && r.err.contains("--until differs from rank 0's"),
                 qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err.right(2000))));
    }

    // Open MPI gives each rank a pseudo-terminal, so a job whose output went to a file or a pipe
    // printed the progress bar (\r-joined) instead of docs/cli.md's JSON lines.
    void underMpirunTrainPrintsJsonLines() {
        REQUIRE_MPI();
        const Run r =
            cli(2, QStringList{"train", "--config", tiny_config(), "--out", dir("json-lines")} +
                       tiny_sets(2, 4));
        QVERIFY2(r.code == 0, qPrintable(r.err.right(2000)));
        QVERIFY2(!r.out.contains('\r'), qPrintable(r.out.left(400)));
        int records = 0;
        for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) {
            QJsonParseError e;
            const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &e);
            QVERIFY2(e.error == QJsonParseError::NoError && doc.isObject(), qPrintable(line));
            ++records;
        }
        QVERIFY(records >= 4);
    }

    // An output directory that cannot be made: the system's reason, once (it said only "cannot
    // create the output directory").
    void anUncreatableRunDirectorySaysWhyOnce() {
        REQUIRE_MPI();
        QFile blocker(dir("a-file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const Run r = cli(
            2, QStringList{"train", "--config", tiny_config(), "--out", dir("a-file") + "/run"} +
                   tiny_sets(2));
        QVERIFY2(r.code == 3, qPrintable(r.err));
        QCOMPARE(r.err.count("cannot create the output directory (Not a directory)"), 1);
    }
};

QTEST_GUILESS_MAIN(TestMpi)
#include "test_mpi.moc"
