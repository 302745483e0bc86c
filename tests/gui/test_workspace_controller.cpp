// The workspace controller without a window (ARCHITECTURE.md "The GUI"): a QCoreApplication, no
// widget anywhere. It opens files through the loader's child process and records the verdicts in
// the document, gates analyses on them, opens a project whose views wait for their files, and runs
// a training run and an engine action whose results join the workspace — every step observed
// through its signals and the document, as a headless client (or another window) would.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>

#include "app/gui/cli_job.hpp"
#include "app/gui/engine_action.hpp"
#include "app/gui/job_list.hpp"
#include "app/gui/run_process.hpp"
#include "app/gui/workspace.hpp"
#include "app/gui/workspace_controller.hpp"

using namespace routescope;
using Controller = gui::WorkspaceController;

namespace {
QString fixture(const QString& name) {
    return QStringLiteral(ROUTESCOPE_TEST_DATA "/dumps/") + name;
}

QString fresh_dir(const QString& name) {
    const QString dir = QStringLiteral(ROUTESCOPE_TEST_DATA "/workspace_controller/") + name;
    QDir(dir).removeRecursively();
    QDir().mkpath(dir);
    return QFileInfo(dir).absoluteFilePath();
}

/// Bytes that are not HDF5 under a dump's name.
QString garbage_dump(const QString& dir) {
    const QString path = dir + "/garbage.dump.h5";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(QByteArray(4096, '\x5a'));
    return path;
}
}  // namespace

class TestWorkspaceController : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        if (qEnvironmentVariableIsEmpty("ROUTESCOPE_CLI"))
            qputenv("ROUTESCOPE_CLI", ROUTESCOPE_CLI);
        QVERIFY2(QFile::exists(fixture("valid_full.dump.h5")), "run the fixtures_dumps test first");
        // No window, no widget: not even a QGuiApplication.
        QVERIFY(!QCoreApplication::instance()->inherits("QGuiApplication"));
    }

    void aFileIsReadInTwoPassesAndItsVerdictRecorded() {
        gui::Workspace doc;
        Controller c(&doc);
        QSignalSpy opening(&c, &Controller::fileOpening), read(&c, &Controller::fileRead),
            scanned(&c, &Controller::fileScanned), failed(&c, &Controller::failed);
        const QString dump = QFileInfo(fixture("valid_full.dump.h5")).absoluteFilePath();
        c.open_file(fixture("valid_full.dump.h5"));
        QCOMPARE(opening.count(), 1);
        QCOMPARE(opening.at(0).at(0).toString(), dump);
        QVERIFY(doc.checking(dump));
        QVERIFY(c.loading());
        QTRY_COMPARE_WITH_TIMEOUT(scanned.count(), 1, 60000);
        QCOMPARE(read.count(), 1);
        QCOMPARE(read.at(0).at(1).toBool(), false);  // opened by hand: its summary comes first
        QCOMPARE(failed.count(), 0);
        QVERIFY(doc.files().contains(dump));
        QVERIFY(!doc.derived_name(dump).isEmpty());
        QVERIFY(doc.verdict(dump).final);
        QVERIFY(doc.verdict(dump).readable);
        QVERIFY(!c.loading());
        QVERIFY(c.refusal("kernels", {dump}).isEmpty());
        QVERIFY(c.check_inputs("kernels", {dump}).state == Controller::InputCheck::State::go);
    }

    void anUnreadableFileIsRefusedNamingIt() {
        gui::Workspace doc;
        Controller c(&doc);
        QSignalSpy failed(&c, &Controller::failed), read(&c, &Controller::fileRead);
        const QString bad = garbage_dump(fresh_dir("unreadable"));
        c.open_file(bad);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QCOMPARE(read.count(), 1);
        QVERIFY(failed.at(0).at(1).toString().contains(bad));
        QVERIFY(doc.verdict(bad).final);
        QVERIFY(!doc.verdict(bad).readable);
        // Any analysis on it is refused with a message naming the file; it is never read here.
        QVERIFY(c.refusal("kernels", {bad}).contains("garbage.dump.h5"));
        const Controller::InputCheck check =
            c.check_inputs("pca", {fixture("valid_full.dump.h5"), bad});
        QVERIFY(check.state == Controller::InputCheck::State::refuse);
        QVERIFY(check.text.contains("garbage.dump.h5"));
        // A run directory or predictions need no verdict.
        QVERIFY(Controller::files_to_check("training", {bad}).isEmpty());
        QVERIFY(Controller::files_to_check("length_accuracy", {"/x/preds.jsonl"}).isEmpty());
    }

    void anAnalysisWaitsForAFileTheLoaderHasNotReadAndThenGoes() {
        gui::Workspace doc;
        Controller c(&doc);
        QSignalSpy verdicts(&c, &Controller::verdictsChanged), read(&c, &Controller::fileRead);
        const QString dump = QFileInfo(fixture("valid_sparse_f16.dump.h5")).absoluteFilePath();
        const Controller::InputCheck first = c.check_inputs("kernels", {dump});
        QVERIFY(first.state == Controller::InputCheck::State::wait);
        QCOMPARE(first.text, QString("valid_sparse_f16.dump.h5"));
        QVERIFY(doc.checking(dump));  // the controller had the loader read it
        QTRY_VERIFY_WITH_TIMEOUT(!doc.checking(dump) && verdicts.count() > 0, 60000);
        QCOMPARE(read.count(), 1);
        QCOMPARE(read.at(0).at(1).toBool(), true);  // behind: the analysis keeps the front
        QVERIFY(c.check_inputs("kernels", {dump}).state == Controller::InputCheck::State::go);
    }

    void aProjectsViewsWaitForTheVerdictsOnTheirFiles() {
        const QString dir = fresh_dir("project");
        const QString dump = QFileInfo(fixture("valid_full.dump.h5")).absoluteFilePath();
        const QString run = dir + "/runs/r1";
        QDir().mkpath(run);
        gui::Project p;
        p.files = {dump};
        p.runs = {run};
        p.views = {{"kernels", {dump}, nlohmann::json::object(), nlohmann::json::array()},
                   {"pca", {dump}, nlohmann::json::object(), nlohmann::json::array()}};
        p.current = 1;
        p.names = {{dump, QStringLiteral("My dump")}};
        const QString path = dir + "/p.rsproj";
        p.save(path);

        gui::Workspace doc;
        Controller c(&doc);
        QSignalSpy ready(&c, &Controller::viewsReady), runs(&c, &Controller::runAdded);
        c.open_file(path);  // a project opens as open_project does
        QCOMPARE(runs.count(), 1);
        QCOMPARE(runs.at(0).at(0).toString(), run);
        QVERIFY(doc.runs().contains(run));
        QCOMPARE(doc.project_path(), path);
        QCOMPARE(doc.name_of(dump), QString("My dump"));
        QCOMPARE(ready.count(), 0);  // its file is being read: the views wait
        QVERIFY(doc.views_waiting());
        QVERIFY(c.loading());
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
        const auto got = ready.at(0).at(0).value<gui::Project>();
        QCOMPARE(got.views.size(), std::size_t{2});
        QCOMPARE(got.views[1].kind, QString("pca"));
        QCOMPARE(got.current, 1);
        QVERIFY(!doc.views_waiting());
        QVERIFY(!doc.modified());  // as opened

        // Opened again on the same document, its file already read: the views come at once.
        QSignalSpy again(&c, &Controller::viewsReady), reopened(&c, &Controller::fileOpening);
        c.open_project(path);
        QCOMPARE(again.count(), 1);
        QCOMPARE(reopened.count(), 0);

        // Not a project: a named error, nothing opened.
        QSignalSpy failed(&c, &Controller::failed);
        const QString bad = dir + "/bad.rsproj";
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        c.open_file(bad);
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.at(0).at(1).toString().contains("bad.rsproj"));
    }

    void anActionProposesOutputsThatDoNotExistYet() {
        const QString dir = fresh_dir("proposed");
        auto touch = [](const QString& path) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
        };
        const QString ckpt = dir + "/run/model.ckpt.h5";
        QDir().mkpath(dir + "/run");
        touch(ckpt);
        touch(dir + "/run/model.dump.h5");
        const QDateTime now(QDate(2026, 11, 27), QTime(1, 30, 5));
        const QString runs = dir + "/runs";
        auto out = [&](gui::EngineAction a, const QString& input) {
            return gui::proposed_action(a, input, runs, now).out;
        };
        // Beside the checkpoint, never over a file that is there.
        QCOMPARE(out(gui::EngineAction::Dump, ckpt), dir + "/run/model-2.dump.h5");
        QCOMPARE(gui::proposed_action(gui::EngineAction::Dump, ckpt, runs, now).checkpoint, ckpt);
        QCOMPARE(out(gui::EngineAction::Evaluate, ckpt), dir + "/run/model.preds.jsonl");
        // Without an input: in the runs folder (which may not exist yet).
        QCOMPARE(out(gui::EngineAction::Import, {}), runs + "/imported.ckpt.h5");
        QDir().mkpath(runs);
        touch(runs + "/imported.ckpt.h5");
        touch(runs + "/imported-2.ckpt.h5");
        QCOMPARE(out(gui::EngineAction::Import, {}), runs + "/imported-3.ckpt.h5");
        QCOMPARE(out(gui::EngineAction::Experiment, {}), runs + "/experiment-20261127-013005");
    }

    void aRunsCheckpointAndAnActionsDumpJoinTheWorkspace() {
        const QString dir = fresh_dir("run");
        gui::Workspace doc;
        Controller c(&doc);
        QSignalSpy jobs(&c, &Controller::jobAdded), read(&c, &Controller::fileRead),
            failed(&c, &Controller::failed);
        gui::RunSettings s;
        s.arch = "bigs";
        s.size = "tiny";
        s.data = "builtin:grammar";
        s.steps = 2;
        s.threads = 1;
        s.out_dir = dir + "/r";
        s.overrides = {"model.d_model=32", "model.max_len=32", "data.seq_len=32",
                       "model.ssm.n_modes=8"};
        gui::RunProcess* run = c.launch_run(s);
        QVERIFY(run);
        QCOMPARE(jobs.count(), 1);
        QCOMPARE(jobs.at(0).at(1).toString(), s.out_dir);
        QCOMPARE(doc.jobs()->jobs().size(), 1);
        QVERIFY(doc.runs().contains(s.out_dir));
        // When it ends, its checkpoint is read by the loader, behind the person's current view.
        QTRY_COMPARE_WITH_TIMEOUT(read.count(), 1, 120000);
        QCOMPARE(failed.count(), 0);
        const QString ckpt = QFileInfo(run->checkpoint_path()).absoluteFilePath();
        QCOMPARE(read.at(0).at(0).value<gui::LoadedFile>().path, ckpt);
        QCOMPARE(read.at(0).at(1).toBool(), true);
        QTRY_VERIFY_WITH_TIMEOUT(doc.verdict(ckpt).final, 60000);
        QVERIFY(doc.verdict(ckpt).readable);

        // A dump of it: the action's output opens when the child finishes.
        gui::EngineActionSettings d;
        d.action = gui::EngineAction::Dump;
        d.checkpoint = ckpt;
        d.out = dir + "/r/model.dump.h5";
        d.threads = 1;
        gui::CliJob* job = c.launch_action(d);
        QVERIFY(job);
        QCOMPARE(doc.jobs()->jobs().size(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 120000);
        QVERIFY2(job->state() == gui::CliJob::State::Finished,
                 qPrintable(job->last_output().join('\n')));
        QTRY_COMPARE_WITH_TIMEOUT(read.count(), 2, 60000);
        QCOMPARE(read.at(1).at(0).value<gui::LoadedFile>().path,
                 QFileInfo(d.out).absoluteFilePath());
        // The dump belongs to the checkpoint's model: one colour.
        QCOMPARE(doc.model_of(d.out), doc.model_of(ckpt));

        // A failing action: the person is told, with the child's own message.
        gui::EngineActionSettings bad;
        bad.action = gui::EngineAction::Import;
        bad.import_source = dir + "/no-such-model";
        bad.out = dir + "/imported.ckpt.h5";
        gui::CliJob* failing = c.launch_action(bad);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QVERIFY(failing->state() == gui::CliJob::State::Failed);
        QVERIFY2(failed.at(0).at(1).toString().contains("no-such-model"),
                 qPrintable(failed.at(0).at(1).toString()));
        QVERIFY(!QFileInfo::exists(bad.out));
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceController)
#include "test_workspace_controller.moc"
