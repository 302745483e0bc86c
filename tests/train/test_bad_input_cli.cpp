// Issue 4, acceptance item 6 ("bad input: clear errors, no partial file left under the final
// name"): the cases test_eval_cli, test_finetune and test_dump_command do not already cover,
// through the CLI as a user runs it:
// - dump --task with an unknown task name (exit 2, the name in the message, no file);
// - dump --data and eval --data with a malformed TSV row (exit 2, file:line in the message, no
//   file under the --out name);
// - train hitting a write error while saving its checkpoints (disk full, simulated by a file size
//   limit with SIGXFSZ ignored so write() fails with EFBIG): exit 3, the checkpoint named, neither
//   model.ckpt.h5 nor best.ckpt.h5 under its final name, no temporary left;
// - dump --gates on a stack_ssm checkpoint (an SSM model without gates; test_dump_command covers
//   bert): exit 2 naming the architecture.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "train_test_support.hpp"

using train_test::run_cli;
using train_test::write_text;

namespace {

nlohmann::json tiny(const std::string& arch) {
    return {{"model",
             {{"arch", arch},
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

int files_containing(const std::string& dir, const std::string& part) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().filename().string().find(part) != std::string::npos) ++n;
    return n;
}

}  // namespace

class TestBadInputCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path(const std::string& name) {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    QString qpath(const std::string& name) { return QString::fromStdString(path(name)); }

    // Trains `config` into DIR/<name>; returns its best checkpoint.
    QString train(const std::string& name, const nlohmann::json& config) {
        write_text(path(name + ".json"), config.dump());
        const auto r = run_cli({"train", "--config", qpath(name + ".json"), "--out", qpath(name)});
        if (r.exit_code != 0) qWarning() << r.err;
        return r.exit_code == 0 ? qpath(name + "/best.ckpt.h5") : QString();
    }

private slots:
    void dumpOfAnUnknownTaskNamesIt() {
        const QString ck = train("ind", tiny("bigs"));
        QVERIFY(!ck.isEmpty());
        const auto r =
            run_cli({"dump", "--checkpoint", ck, "--task", "no-such-task", "--out", qpath("x.h5")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("no-such-task"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("x.h5")));
    }

    void malformedRowIsReportedWithItsLineByDumpAndEval() {
        // A classifier trained on a good file, then a file whose third data row lacks a field.
        write_text(path("good.tsv"), "sentence\tlabel\nalpha beta\tyes\ngamma delta\tno\n");
        write_text(path("bad.tsv"), "sentence\tlabel\nalpha\tyes\nbravo\tno\ncharlie\n");
        nlohmann::json c = tiny("bigs");
        c["data"] = {{"train", path("good.tsv")}, {"seq_len", 16}};
        c["tokenizer"] = {{"kind", "bytes"}};
        c["model"]["max_len"] = 16;
        c["train"]["objective"] = "classify";
        const QString ck = train("cls", c);
        QVERIFY(!ck.isEmpty());

        auto r = run_cli({"eval", "--checkpoint", ck, "--data", qpath("bad.tsv"), "--out",
                          qpath("bad.preds.jsonl")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("bad.tsv:4"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("bad.preds.jsonl")));

        r = run_cli({"dump", "--checkpoint", ck, "--data", qpath("bad.tsv"), "--out",
                     qpath("bad.dump.h5")});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("bad.tsv:4"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("bad.dump.h5")));
    }

    void checkpointWriteErrorLeavesNoCheckpoint() {
        write_text(path("full.json"), tiny("bigs").dump());
        const std::string out = path("full");
        QVERIFY(QDir().mkpath(QString::fromStdString(out)));
        // 8 KiB file size limit: log.jsonl fits, a checkpoint (parameters, HDF5 metadata and the
        // tokenizer) does not.
        QProcess sh;
        sh.start("/bin/sh", {"-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" \"$@\"",
                             QStringLiteral(ROUTESCOPE_CLI), "train", "--config",
                             qpath("full.json"), "--out", QString::fromStdString(out), "--json"});
        QVERIFY(sh.waitForFinished(120000));
        const QString err = QString::fromUtf8(sh.readAllStandardError());
        QVERIFY2(sh.exitStatus() == QProcess::NormalExit && sh.exitCode() == 3, qPrintable(err));
        QVERIFY2(err.contains(".ckpt.h5"), qPrintable(err));
        QVERIFY(!std::filesystem::exists(out + "/best.ckpt.h5"));
        QVERIFY(!std::filesystem::exists(out + "/model.ckpt.h5"));
        QCOMPARE(files_containing(out, ".tmp"), 0);
    }

    void gatesOfAStackSsmCheckpointIsAClearError() {
        const QString ck = train("stack", tiny("stack_ssm"));
        QVERIFY(!ck.isEmpty());
        const auto r = run_cli({"dump", "--checkpoint", ck, "--out", qpath("s.h5"), "--gates"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("'stack_ssm'") && r.err.contains("--gates"), qPrintable(r.err));
        QVERIFY(!QFile::exists(qpath("s.h5")));
    }
};

QTEST_GUILESS_MAIN(TestBadInputCli)
#include "test_bad_input_cli.moc"
