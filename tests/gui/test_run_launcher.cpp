// The run launcher: a real (tiny) `routescope-cli train` started from the workbench runs to the
// end with live progress and curves, and its checkpoint joins the workspace; a cancelled run
// leaves a valid checkpoint; a run that fails (a bad configuration key) shows an error dialog with
// the child's own message. The dialog refuses settings that cannot work.
#include <QtTest>

#include <map>

#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTreeWidget>
#include <QXYSeries>

#include <QTreeWidgetItem>
#include "app/gui/engine_action.hpp"
#include "app/gui/main_window.hpp"
#include "app/gui/project_file.hpp"
#include "app/gui/run_launcher_dialog.hpp"
#include "app/gui/run_process.hpp"
#include "app/gui/workspace.hpp"
#include "app/gui/workspace_dock.hpp"
#include "views/training_view.hpp"

using namespace routescope;

namespace {
// bigs-tiny shrunk to d 32, L 32 (bytes tokenizer, builtin:grammar): a step takes milliseconds.
gui::RunSettings tiny_run(const QString& dir, qint64 steps) {
    gui::RunSettings s;
    s.arch = "bigs";
    s.size = "tiny";
    s.data = "builtin:grammar";
    s.steps = steps;
    s.lr = 2e-3;
    s.threads = 1;
    s.out_dir = dir;
    s.overrides = {"model.d_model=32", "model.max_len=32", "data.seq_len=32",
                   "model.ssm.n_modes=8"};
    return s;
}

QString fresh_dir(const QString& name) {
    const QString dir = QStringLiteral(ROUTESCOPE_TEST_DATA "/run_launcher/") + name;
    QDir(dir).removeRecursively();
    return dir;
}

qsizetype points_in(QChartView* chart) {
    qsizetype n = 0;
    for (QAbstractSeries* s : chart->chart()->series())
        if (auto* xy = qobject_cast<QXYSeries*>(s)) n += xy->count();
    return n;
}

/// The state line under the first run's item in the workspace ("" when there is none).
QString run_state_text(const gui::MainWindow& window) {
    QTreeWidgetItem* runs = window.workspace()->runs();
    QTreeWidgetItem* run = runs->childCount() > 0 ? runs->child(0) : nullptr;
    QTreeWidgetItem* state = run && run->childCount() > 0 ? run->child(0) : nullptr;
    return state ? state->text(0) : QString();
}

/// `routescope-cli validate FILE`'s exit code (0: a valid checkpoint).
int validate(const QString& path, QString* output) {
    QProcess p;
    p.start(qEnvironmentVariable("ROUTESCOPE_CLI"), {"validate", path});
    p.waitForFinished(60000);
    *output = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

/// Launches `s` from `window` and waits for it: empty when it finished with a checkpoint that
/// validates, else what went wrong (named by `what`).
QString run_to_valid_checkpoint(gui::MainWindow& window, const gui::RunSettings& s,
                                const QString& what) {
    gui::RunProcess* run = window.launch_run(s);
    if (!run) return what + ": the run did not start";
    if (!QTest::qWaitFor([run] { return !run->running(); }, 120000))
        return what + ": still running after 120 s";
    if (run->state() != gui::RunProcess::State::Finished)
        return what + ": " + run->failure() + "\n" + run->last_output().join("\n");
    QString out;
    return validate(run->checkpoint_path(), &out) == 0 ? QString() : what + ": " + out;
}
}  // namespace

class TestRunLauncher : public QObject {
    Q_OBJECT
    QByteArray cli_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        // The CLI of this build, unless the environment names another (an installed one).
        if (qEnvironmentVariableIsEmpty("ROUTESCOPE_CLI"))
            qputenv("ROUTESCOPE_CLI", ROUTESCOPE_CLI);
        cli_ = qgetenv("ROUTESCOPE_CLI");
    }

    void theDialogRefusesSettingsThatCannotWork() {
        gui::RunLauncherDialog dialog;
        gui::RunSettings s = tiny_run(fresh_dir("refused"), 20);
        s.lr = 0;
        s.data = "/nonexistent/corpus.txt";
        s.overrides = {"train.steps"};
        dialog.set_settings(s);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        const QString text = dialog.problems_text();
        QVERIFY2(text.contains("Learning rate"), qPrintable(text));
        QVERIFY2(text.contains("/nonexistent/corpus.txt"), qPrintable(text));
        QVERIFY2(text.contains("'train.steps' is not key=value"), qPrintable(text));

        // The device: the engine dialogs' box, CPU by default and CUDA disabled with the reason
        // while the engine cannot train on it; a CUDA run is refused with that reason.
        QComboBox* device = dialog.device_box();
        QCOMPARE(device->count(), 2);
        QCOMPARE(device->itemData(0).toString(), QString("cpu"));
        QCOMPARE(device->itemData(1).toString(), QString("cuda"));
        QCOMPARE(dialog.settings().device, QString("cpu"));
        auto* model = qobject_cast<QStandardItemModel*>(device->model());
        QCOMPARE(model->item(1)->isEnabled(), gui::DeviceProbe::instance()->cuda_available());
        // The probe is a child routescope-cli --version (CUDA driver load included): 5 s, QTRY's
        // default, was too short on a loaded 2-core machine (5.35 s).
        QTRY_VERIFY_WITH_TIMEOUT(gui::DeviceProbe::instance()->known(), 60000);
        QVERIFY2(device->itemText(1).startsWith("CUDA"), qPrintable(device->itemText(1)));
        if (!gui::DeviceProbe::instance()->cuda_available()) {
            gui::RunSettings cuda = tiny_run(fresh_dir("cuda"), 20);
            cuda.device = "cuda";
            dialog.set_settings(cuda);
            QCOMPARE(dialog.settings().device, QString("cuda"));
            dialog.accept();
            QCOMPARE(dialog.result(), int(QDialog::Rejected));
            QVERIFY2(dialog.problems_text().contains("Device CUDA is not available: " +
                                                     gui::DeviceProbe::instance()->cuda_reason()),
                     qPrintable(dialog.problems_text()));
        }

        // A directory holding an earlier run's files other than model.ckpt.h5 (a kept best
        // checkpoint, a log) is a run: a new one would replace them, as train refuses.
        {
            const QString kept = fresh_dir("kept-best");
            QDir().mkpath(kept);
            for (const char* name : {"best.ckpt.h5", "log.jsonl"}) {
                QFile f(kept + "/" + name);
                QVERIFY(f.open(QIODevice::WriteOnly));
            }
            dialog.set_settings(tiny_run(kept, 20));
            dialog.accept();
            QCOMPARE(dialog.result(), int(QDialog::Rejected));
            QVERIFY2(
                dialog.problems_text().contains("already holds a run (best.ckpt.h5, log.jsonl)"),
                qPrintable(dialog.problems_text()));
        }

        dialog.set_settings(tiny_run(fresh_dir("accepted"), 20));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(dialog.settings().overrides, tiny_run("", 1).overrides);
        QCOMPARE(dialog.settings().device, QString("cpu"));
        const QStringList args = dialog.settings().cli_arguments("run.json");
        QVERIFY(args.indexOf("--device") >= 0);
        QCOMPARE(args.value(args.indexOf("--device") + 1), QString("cpu"));
    }

    void aTinyRunCompletesWithLiveProgressAndJoinsTheWorkspace() {
        gui::MainWindow window;
        window.show();
        const QString dir = fresh_dir("complete");
        // Enough steps that progress arrives over several event-loop turns, under a few seconds.
        gui::RunProcess* run = window.launch_run(tiny_run(dir, 300));
        QVERIFY(run);
        QVERIFY(run->running());
        QCOMPARE(window.workspace()->runs()->childCount(), 1);

        // Live progress: the status-bar bar moves before the run ends.
        QSet<int> seen;
        QElapsedTimer clock;
        clock.start();
        auto* bar = window.run_progress_bar();
        connect(bar, &QProgressBar::valueChanged, this, [&](int v) { seen.insert(v); });
        QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 60000);
        QCOMPARE(run->state(), gui::RunProcess::State::Finished);
        QVERIFY2(seen.size() >= 2, qPrintable(QString::number(seen.size())));
        QCOMPARE(run->step(), qint64(300));
        QVERIFY(!bar->isVisible());
        const QString runText = run_state_text(window);
        QVERIFY2(runText.contains("done: 300 steps"), qPrintable(runText));

        // The live curves hold every step record the child printed (one point per step).
        auto* view = window.training_view_for(QFileInfo(dir).absoluteFilePath());
        QVERIFY(view);
        QTRY_COMPARE_WITH_TIMEOUT(points_in(view->chart("loss")) >= 300, true, 5000);
        QCOMPARE(view->logs().at(0).steps.size(), std::size_t(300));
        QCOMPARE(view->logs().at(0).steps.back().step, 300.0);
        // ... and agree with the log the run wrote.
        const auto log = views::TrainingLog::read(QFileInfo(dir).absoluteFilePath());
        QCOMPARE(log.steps.size(), std::size_t(300));
        QCOMPARE(view->logs().at(0).steps.back().loss, log.steps.back().loss);

        // The checkpoint joins the workspace's models.
        const QString ckpt = QFileInfo(dir + "/model.ckpt.h5").absoluteFilePath();
        QTRY_VERIFY_WITH_TIMEOUT(
            window.workspace()->item_for(ckpt) != nullptr && window.loader()->pending() == 0,
            20000);
        QCOMPARE(window.workspace()->item_for(ckpt)->parent(), window.workspace()->models());
        // Issue 26: the finished run's checkpoint opened behind the live curves, which stay in
        // front.
        QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(view));
        QVERIFY(window.summary_for(ckpt));
        window.tabs()->setCurrentWidget(view);
        QVERIFY(window.grab().save(QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/training_view.png")));
        QVERIFY(QFileInfo::exists(dir + "/run.json"));

        // The device: passed to the child, shown under the run in the workspace, recorded by the
        // engine in the log's start record and shown by the Training view.
        const QStringList args = run->spec().arguments;
        QCOMPARE(args.value(args.indexOf("--device") + 1), QString("cpu"));
        QTreeWidgetItem* item = window.workspace()->runs()->child(0);
        QCOMPARE(item->child(1)->text(0), QString("device: CPU"));
        QFile log_file(dir + "/log.jsonl");
        QVERIFY(log_file.open(QIODevice::ReadOnly));
        const QJsonObject start = QJsonDocument::fromJson(log_file.readLine()).object();
        QCOMPARE(start.value("type").toString(), QString("start"));
        QCOMPARE(start.value("device").toString(), QString("cpu"));
        QCOMPARE(view->logs().at(0).device, QString("cpu"));
        QCOMPARE(view->logs().at(0).threads, 1);
        auto* devices = view->findChild<QLabel*>("runDevices");
        QVERIFY(devices);
        QCOMPARE(devices->text(), QString("Device: complete CPU (1 thread(s))"));
        QCOMPARE(views::TrainingLog::recorded_device(dir), QString("cpu"));
        // Reopened from disk (a project's run), the view reads the same from the log.
        views::TrainingViewSettings settings;
        settings.runs = {QFileInfo(dir).absoluteFilePath()};
        views::TrainingView reopened(settings);
        reopened.start();
        QTRY_VERIFY_WITH_TIMEOUT(!reopened.busy(), 20000);
        QCOMPARE(reopened.device_text(), QString("Device: complete CPU (1 thread(s))"));
    }

    // Issue 7's architectures in the launcher: each preset's model is its example configuration's
    // (resources/configs/<arch>-<size>.json), and a short run of the tiny preset trains and leaves
    // a checkpoint that `routescope-cli validate` accepts.
    void theNewArchitecturesHavePresetsThatRun() {
        gui::RunLauncherDialog dialog;
        for (const QString arch : {"birdie", "slstm", "gmlp"}) {
            QVERIFY2(gui::run_architectures().contains(arch), qPrintable(arch));
            QVERIFY(dialog.findChild<QComboBox*>("arch")->findText(arch) >= 0);
            for (const QString size : {"tiny", "small"}) {
                QFile f(QStringLiteral(ROUTESCOPE_SOURCE_DIR "/resources/configs/%1-%2.json")
                            .arg(arch, size));
                QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
                const auto example = nlohmann::json::parse(f.readAll().toStdString());
                gui::RunSettings s = tiny_run(fresh_dir(arch + "_" + size), 3);
                s.arch = arch;
                s.size = size;
                s.overrides.clear();
                QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join(" ")));
                QVERIFY2(s.config().at("model") == example.at("model"),
                         qPrintable(QString::fromStdString(s.config().at("model").dump() + " vs " +
                                                           example.at("model").dump())));
                dialog.set_settings(s);
                QCOMPARE(dialog.settings().arch, arch);
                QCOMPARE(dialog.settings().size, size);
            }
            // The tiny preset trains (3 steps, one thread) to a valid checkpoint.
            gui::MainWindow window;
            gui::RunSettings s = tiny_run(fresh_dir(arch + "_run"), 3);
            s.arch = arch;
            s.overrides = {"data.seq_len=32", "train.batch_size=2"};
            const QString problem = run_to_valid_checkpoint(window, s, arch);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            QFile written(QDir(s.out_dir).filePath("run.json"));
            QVERIFY(written.open(QIODevice::ReadOnly));
            const auto config = nlohmann::json::parse(written.readAll().toStdString());
            QCOMPARE(QString::fromStdString(config["model"]["arch"].get<std::string>()), arch);
        }
    }

    // The Causal box: each architecture's causal variant (docs/config.md) with the next-token
    // loss, which the engine's causal-capability check accepts (the run trains to a valid
    // checkpoint); S-LSTM has none: the box is disabled and the settings say why.
    void causalRunsUseEachArchitecturesCausalVariant() {
        gui::RunLauncherDialog dialog;
        auto* box = dialog.findChild<QCheckBox*>("causal");
        QVERIFY(box);
        const std::map<QString, std::pair<std::string, nlohmann::json>> key = {
            {"bigs", {"/model/causal", true}},
            {"bert", {"/model/causal", true}},
            {"birdie", {"/model/birdie/mode", "causal"}},
            {"gmlp", {"/model/gmlp/causal", true}}};
        for (const auto& [arch, want] : key) {
            gui::RunSettings s = tiny_run(fresh_dir("causal_" + arch), 3);
            s.arch = arch;
            s.causal = true;
            s.overrides = {"data.seq_len=32", "train.batch_size=2"};
            const auto config = s.config();
            QCOMPARE(config.at(nlohmann::json::json_pointer(want.first)), want.second);
            QCOMPARE(config["train"]["objective"].get<std::string>(), std::string("clm"));
            QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join(" ")));
            dialog.set_settings(s);
            QVERIFY(box->isEnabled() && dialog.settings().causal);
            gui::MainWindow window;
            const QString problem = run_to_valid_checkpoint(window, s, arch + " (causal)");
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        gui::RunSettings plain = tiny_run(fresh_dir("causal_off"), 3);
        QVERIFY(!plain.config()["model"].contains("causal") &&
                !plain.config()["train"].contains("objective"));
        gui::RunSettings slstm = tiny_run(fresh_dir("causal_slstm"), 3);
        slstm.arch = "slstm";
        slstm.causal = true;
        QVERIFY2(slstm.problems().join(" ").contains("S-LSTM has no causal variant"),
                 qPrintable(slstm.problems().join(" ")));
        dialog.set_settings(slstm);
        QVERIFY(!box->isEnabled() && !dialog.settings().causal);
    }

    void aCancelledRunLeavesAValidCheckpoint() {
        gui::MainWindow window;
        const QString dir = fresh_dir("cancel");
        gui::RunProcess* run = window.launch_run(tiny_run(dir, 1'000'000));
        QVERIFY(run);
        // Cancel once training has started (the stop handler is installed with the first step).
        QTRY_VERIFY_WITH_TIMEOUT(run->step() >= 5, 30000);
        window.findChild<QAction*>("cancelRunsAction")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 30000);
        QCOMPARE(run->state(), gui::RunProcess::State::Cancelled);
        QVERIFY(!window.last_error());
        const QString ckpt = QFileInfo(dir + "/model.ckpt.h5").absoluteFilePath();
        QVERIFY(QFileInfo::exists(ckpt));
        QString out;
        QCOMPARE(validate(ckpt, &out), 0);
        QVERIFY2(!out.contains("violation"), qPrintable(out));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.workspace()->item_for(ckpt) != nullptr && window.loader()->pending() == 0,
            20000);
        QCOMPARE(window.workspace()->item_for(ckpt)->parent(), window.workspace()->models());
        const QString runText = run_state_text(window);
        QVERIFY2(runText.contains("checkpoint saved"), qPrintable(runText));
    }

    // Issue 26: stopping one run rather than all, from its item in the workspace.
    void oneRunStopsAlone() {
        gui::MainWindow window;
        gui::RunProcess* first = window.launch_run(tiny_run(fresh_dir("stop_first"), 1'000'000));
        gui::RunProcess* second = window.launch_run(tiny_run(fresh_dir("stop_second"), 1'000'000));
        QVERIFY(first && second);
        QTRY_VERIFY_WITH_TIMEOUT(first->step() >= 2 && second->step() >= 2, 60000);
        QTreeWidgetItem* item = window.job_item(first);
        QVERIFY(item);
        // The item's rows (its state line) offer the same action as the item.
        const QList<QAction*> actions =
            window.run_item_actions(item->childCount() > 0 ? item->child(0) : item);
        QCOMPARE(actions.size(), 1);
        QCOMPARE(actions[0]->objectName(), QString("stopRunAction"));
        actions[0]->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!first->running(), 30000);
        QCOMPARE(first->state(), gui::RunProcess::State::Cancelled);
        QVERIFY(second->running());
        QVERIFY(window.run_item_actions(item).isEmpty());  // a stopped run has nothing to stop
        window.findChild<QAction*>("cancelRunsAction")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!second->running(), 30000);
        qDeleteAll(actions);
    }

    void aFailingChildShowsAnErrorWithItsOutput() {
        gui::MainWindow window;
        window.show();
        const QString dir = fresh_dir("fail");
        gui::RunSettings s = tiny_run(dir, 20);
        s.overrides << "model.d_modle=32";  // a misspelt key: the CLI names it and exits 2
        gui::RunProcess* run = window.launch_run(s);
        QVERIFY(run);
        QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 30000);
        QCOMPARE(run->state(), gui::RunProcess::State::Failed);
        QTRY_VERIFY(window.last_error());
        const QString text = window.last_error()->text();
        QVERIFY2(text.contains("Training run failed") || text.contains("exited with code 2"),
                 qPrintable(text));
        QVERIFY2(text.contains("model.d_modle"), qPrintable(text));
        QVERIFY2(text.contains("unknown key"), qPrintable(text));
        QVERIFY(!QFileInfo::exists(dir + "/model.ckpt.h5"));
        QVERIFY(
            !window.workspace()->item_for(QFileInfo(dir + "/model.ckpt.h5").absoluteFilePath()));
        window.last_error()->close();
    }

    // Quitting while a run trains asks first, naming the runs, whether or not the project is
    // saved (it stopped the run without a word); Cancel and Esc keep the window and the run,
    // stopping them saves the checkpoint as Stop Run does and then the window closes.
    void quittingWithARunningRunAsksFirst() {
        gui::MainWindow window;
        window.show();
        const QString dir = fresh_dir("quit");
        gui::RunProcess* run = window.launch_run(tiny_run(dir, 1'000'000));
        QVERIFY(run);
        QTRY_VERIFY_WITH_TIMEOUT(run->step() >= 2, 30000);
        QString asked;  // the prompt's name, text and buttons ("" while none came)
        auto answer = [&asked](std::function<void(QMessageBox*)> act) {
            asked.clear();
            QTimer::singleShot(0, [&asked, act] {
                auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
                if (!box) return;
                asked = box->objectName() + ": " + box->text();
                for (QAbstractButton* b : box->buttons())
                    asked += " [" + b->text() + "]";
                act(box);
            });
        };
        auto click = [](QMessageBox::StandardButton which) {
            return [which](QMessageBox* box) {
                if (QAbstractButton* b = box->button(which)) b->click();
            };
        };

        // Not saved: the one prompt says both.
        QVERIFY(window.modified());
        answer(click(QMessageBox::Cancel));
        QVERIFY(!window.close());
        QVERIFY2(asked.startsWith("unsavedPrompt: ") && asked.contains("1 training run") &&
                     asked.contains("not saved") && asked.contains("Stop 1 Run"),
                 qPrintable(asked));
        QVERIFY(window.isVisible());
        QVERIFY(run->running());

        // Saved: still asked, about the run; Esc stays and the run goes on.
        window.save_project(dir + ".rsproj");
        QVERIFY(!window.modified());
        answer([](QMessageBox* box) { QTest::keyClick(box, Qt::Key_Escape); });
        QVERIFY(!window.close());
        QVERIFY2(asked.startsWith("quitPrompt: ") && asked.contains("1 training run") &&
                     asked.contains("checkpoint"),
                 qPrintable(asked));
        QVERIFY(window.isVisible());
        QVERIFY(run->running());
        const qint64 step = run->step();
        QTRY_VERIFY_WITH_TIMEOUT(run->step() > step, 30000);

        // Stop and quit: the run stops as Stop Run stops it (checkpoint saved, exit 130), then
        // the window closes.
        answer(click(QMessageBox::Yes));
        QVERIFY(!window.close());  // waits for the run to save its checkpoint
        QVERIFY2(asked.contains("Stop 1 Run"), qPrintable(asked));
        QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 30000);
        QCOMPARE(run->state(), gui::RunProcess::State::Cancelled);
        QTRY_VERIFY_WITH_TIMEOUT(!window.isVisible(), 10000);
        QString out;
        QCOMPARE(validate(QFileInfo(dir + "/model.ckpt.h5").absoluteFilePath(), &out), 0);
    }

    // A run directory that cannot be made (under a regular file: no one can create it, root
    // neither) is refused by the dialog with the reason; launched anyway it leaves nothing behind
    // (no job, no tab, no run in the saved project), and a start that fails after all (its
    // run.json cannot be written) takes back what it added.
    void aRunDirectoryThatCannotBeMadeLeavesNothing() {
        const QString base = fresh_dir("unwritable");
        QVERIFY(QDir().mkpath(base));
        QFile file(base + "/file.txt");
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("not a folder\n");
        file.close();
        const QString bad = QFileInfo(base + "/file.txt/run").absoluteFilePath();

        gui::RunLauncherDialog dialog;
        dialog.set_settings(tiny_run(bad, 20));
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        QVERIFY2(dialog.problems_text().contains(bad) &&
                     dialog.problems_text().contains(base + "/file.txt is not a folder") &&
                     dialog.problems_text().contains("Not a directory"),
                 qPrintable(dialog.problems_text()));

        gui::MainWindow window;
        window.show();
        const auto nothing_left = [&window](const QString& project) -> QString {
            if (!window.jobs().isEmpty()) return "a job is left";
            if (window.tabs()->count() != 0) return "a tab is left";
            if (window.workspace()->runs()->childCount() != 0) return "a Runs item is left";
            if (!window.document()->runs().isEmpty()) return "the document holds a run";
            window.save_project(project);
            const gui::Project p = gui::Project::load(project);
            if (!p.runs.isEmpty()) return "the project holds " + p.runs.join(", ");
            if (!p.views.empty()) return "the project holds a view";
            if (!p.colours.empty()) return "the project holds a colour";
            return {};
        };
        QVERIFY(!window.launch_run(tiny_run(bad, 20)));
        QTRY_VERIFY(window.last_error());
        QString text = window.last_error()->text();
        QVERIFY2(text.contains(bad) && text.contains("Not a directory"), qPrintable(text));
        window.last_error()->close();
        QString left = nothing_left(base + "/p.rsproj");
        QVERIFY2(left.isEmpty(), qPrintable(left));
        QVERIFY(!QFileInfo::exists(bad));

        const QString odd = QFileInfo(base + "/odd").absoluteFilePath();
        QVERIFY(QDir().mkpath(odd + "/run.json"));  // a folder where the configuration goes
        QVERIFY(!window.launch_run(tiny_run(odd, 20)));
        QTRY_VERIFY(window.last_error());
        text = window.last_error()->text();
        QVERIFY2(text.contains(odd + "/run.json"), qPrintable(text));
        window.last_error()->close();
        QTRY_VERIFY(window.jobs().isEmpty());
        left = nothing_left(base + "/p2.rsproj");
        QVERIFY2(left.isEmpty(), qPrintable(left));
    }

    void aChildThatCannotStartIsAnErrorNotAHang() {
        qputenv("ROUTESCOPE_CLI", "/nonexistent/routescope-cli");
        gui::MainWindow window;
        gui::RunProcess* run = window.launch_run(tiny_run(fresh_dir("nostart"), 20));
        qputenv("ROUTESCOPE_CLI", cli_);
        QVERIFY(run);
        QTRY_VERIFY_WITH_TIMEOUT(!run->running(), 10000);
        QCOMPARE(run->state(), gui::RunProcess::State::Failed);
        QTRY_VERIFY(window.last_error());
        QVERIFY2(window.last_error()->text().contains("Cannot start"),
                 qPrintable(window.last_error()->text()));
        window.last_error()->close();
    }
};

QTEST_MAIN(TestRunLauncher)
#include "test_run_launcher.moc"
