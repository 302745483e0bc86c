// Issue 18, the workbench loop without a terminal: every engine action from the window. Each
// dialog is driven end to end on a tiny task-trained checkpoint (trained here with
// `routescope-cli train`): the dump, the evaluation and the experiment run as child processes and
// their results join the workspace and open in their views; a cancelled action leaves no partial
// file; a failing child shows its error with its own message; the dialogs refuse settings that
// cannot work and offer CUDA only disabled, with the reason.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTreeWidget>

#include "app/gui/analysis_registry.hpp"
#include "app/gui/cli_job.hpp"
#include "app/gui/engine_action_dialog.hpp"
#include "app/gui/job_list.hpp"
#include "app/gui/main_window.hpp"
#include "app/gui/run_launcher_dialog.hpp"
#include "app/gui/workspace.hpp"
#include "app/gui/workspace_dock.hpp"
#include "view_test_support.hpp"
#include "views/display_name.hpp"
#include "views/file_summary_view.hpp"
#include "views/gates_view.hpp"
#include "views/length_accuracy_view.hpp"

using namespace routescope;

namespace {
QString fresh_dir(const QString& name) {
    const QString dir = QStringLiteral(ROUTESCOPE_TEST_DATA "/engine_actions/") + name;
    QDir(dir).removeRecursively();
    QDir().mkpath(dir);
    return dir;
}

template <typename T>
T* field(QWidget* dialog, const char* name) {
    T* w = dialog->findChild<T*>(name);
    if (!w) qFatal("no field %s", name);
    return w;
}
}  // namespace

namespace {
// The problems a dialog's settings have with their output (not with their inputs).
QString output_problems(const gui::EngineActionSettings& s) {
    QStringList out;
    for (const QString& p : s.problems())
        if (p.contains("Output") || p.contains("output")) out << p;
    return out.join("; ");
}
}  // namespace

class TestEngineActions : public QObject {
    Q_OBJECT
    QString checkpoint_;

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        if (qEnvironmentVariableIsEmpty("ROUTESCOPE_CLI"))
            qputenv("ROUTESCOPE_CLI", ROUTESCOPE_CLI);
        // A tiny checkpoint trained on the induction task (2 steps, d 32).
        const QString dir = fresh_dir("model");
        QVERIFY(view_test::run_cli(
            {"train", "--config", ROUTESCOPE_SOURCE_DIR "/resources/configs/bigs-tiny.json",
             "--out", dir, "--set", "train.steps=2", "--set", "data.task=induction", "--set",
             "model.d_model=32", "--set", "model.ssm.n_modes=8", "--threads", "1"}));
        checkpoint_ = QFileInfo(dir + "/model.ckpt.h5").absoluteFilePath();
        QVERIFY(QFileInfo::exists(checkpoint_));
    }

    void noLabelOfAnyDialogShowsALiteralAmpersand() {
        // A label with a mnemonic shows "&" as text unless it has a buddy (the rows whose field is
        // a line edit with a Browse… button had none: "&Output dump:", "Training &data:").
        auto check = [](QDialog& dialog, const char* name) {
            for (QLabel* label : dialog.findChildren<QLabel*>()) {
                const QString t = label->text();
                if (!QRegularExpression("&[^&\\s]").match(t).hasMatch()) continue;
                QVERIFY2(label->buddy(), qPrintable(QString("%1: '%2' has no buddy").arg(name, t)));
            }
        };
        for (auto action : {gui::EngineAction::Dump, gui::EngineAction::Evaluate,
                            gui::EngineAction::Import, gui::EngineAction::Experiment}) {
            gui::EngineActionSettings s;
            s.action = action;
            gui::EngineActionDialog dialog(s);
            check(dialog, "engine action dialog");
        }
        gui::RunLauncherDialog launcher;
        check(launcher, "new training run");
    }

    void tabLeavesTheOverridesBox() {
        // The Overrides box is a multi-line text field: Tab typed a tab character into it, so a
        // keyboard user could not leave it (session 30's probe). Tab moves on, as everywhere.
        auto check = [](QDialog& dialog, const char* name) {
            dialog.show();
            QVERIFY(QTest::qWaitForWindowExposed(&dialog));
            dialog.activateWindow();
            auto* box = dialog.findChild<QPlainTextEdit*>("overrides");
            QVERIFY2(box, name);
            box->setFocus();
            QTRY_VERIFY2(box->hasFocus(), name);
            QTest::keyClick(box, Qt::Key_Tab);
            QVERIFY2(!box->hasFocus(),
                     qPrintable(QString("%1: Tab stayed in Overrides").arg(name)));
            QVERIFY2(!box->toPlainText().contains('\t'), name);
            dialog.close();
        };
        gui::EngineActionSettings s;
        s.action = gui::EngineAction::Experiment;
        gui::EngineActionDialog dialog(s);
        check(dialog, "experiment dialog");
        gui::RunLauncherDialog launcher;
        check(launcher, "new training run");
    }

    void everyProposedDefaultPassesItsOwnCheck() {
        // Issue 26: Import proposed ~/routescope-runs/imported.ckpt.h5, which its own check
        // refused when that folder did not exist yet or the file did; a dump beside a run's
        // checkpoint moved the runs folder into that run.
        const QString base = fresh_dir("defaults") + "/runs/not-yet";
        QSettings().setValue("runsDir", base);
        gui::MainWindow window;
        for (auto action : {gui::EngineAction::Import, gui::EngineAction::Experiment}) {
            auto* dialog = window.action_dialog(action);
            const auto s = dialog->settings();
            QVERIFY2(output_problems(s).isEmpty(), qPrintable(output_problems(s)));
            QVERIFY2(s.out.startsWith(base), qPrintable(s.out));
            dialog->close();
        }
        // An existing imported.ckpt.h5: the next proposal is a free name.
        QDir().mkpath(base);
        QFile(base + "/imported.ckpt.h5").open(QIODevice::WriteOnly);
        auto* again = window.action_dialog(gui::EngineAction::Import);
        QCOMPARE(again->settings().out, base + "/imported-2.ckpt.h5");
        QVERIFY(output_problems(again->settings()).isEmpty());
        again->close();
        // An output folder that cannot be created (a file is in the way) is refused, naming it.
        gui::EngineActionSettings bad;
        bad.action = gui::EngineAction::Import;
        bad.import_source = base;
        bad.out = base + "/imported.ckpt.h5/sub/x.ckpt.h5";
        QVERIFY2(output_problems(bad).contains("cannot be created"),
                 qPrintable(output_problems(bad)));
        // A dump next to a run's checkpoint leaves the runs folder where it is.
        gui::EngineActionSettings dump;
        dump.action = gui::EngineAction::Dump;
        dump.checkpoint = base + "/run-1/model.ckpt.h5";
        dump.out = base + "/run-1/model.dump.h5";
        window.launch_action(dump);
        QCOMPARE(QSettings().value("runsDir").toString(), base);
        QVERIFY(QFileInfo(base + "/run-1").isDir());  // the output's folder was made
        for (auto* job : window.jobs())
            job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 30000);
    }

    void theDumpEvaluateAndNewRunDefaultsPassTheirOwnChecks() {
        // Issue 26, the dialogs the test above leaves out: Dump and Evaluate on a run's checkpoint
        // propose an output beside it that their own check accepts (a free name when one is
        // taken), and after a dump was launched there, New Training Run proposes a new run folder
        // in the runs folder, not inside that run, and its every default passes its check.
        const QString base = fresh_dir("defaults-2") + "/runs";
        QSettings().setValue("runsDir", base);
        const QString run = base + "/run-1";
        QDir().mkpath(run);
        const QString ckpt = run + "/model.ckpt.h5";
        QFile(ckpt).open(QIODevice::WriteOnly);
        gui::MainWindow window;
        const QList<QPair<gui::EngineAction, QString>> proposals = {
            {gui::EngineAction::Dump, run + "/model.dump.h5"},
            {gui::EngineAction::Evaluate, run + "/model.preds.jsonl"}};
        for (const auto& [action, expected] : proposals) {
            auto* dialog = window.action_dialog(action, ckpt);
            const auto s = dialog->settings();
            QCOMPARE(s.checkpoint, ckpt);
            QCOMPARE(s.out, expected);
            QVERIFY2(output_problems(s).isEmpty(), qPrintable(output_problems(s)));
            dialog->close();
            QFile(expected).open(QIODevice::WriteOnly);  // now taken
            auto* again = window.action_dialog(action, ckpt);
            const auto next = again->settings();
            QVERIFY2(next.out != expected && QFileInfo(next.out).absolutePath() == run,
                     qPrintable(next.out));
            QVERIFY2(output_problems(next).isEmpty(), qPrintable(output_problems(next)));
            again->close();
        }
        gui::EngineActionSettings dump;
        dump.action = gui::EngineAction::Dump;
        dump.checkpoint = ckpt;
        dump.out = run + "/model-3.dump.h5";
        window.launch_action(dump);
        for (auto* job : window.jobs())
            job->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 30000);
        gui::RunLauncherDialog dialog;
        const gui::RunSettings proposed = dialog.settings();
        QCOMPARE(QFileInfo(proposed.out_dir).absolutePath(), base);
        QVERIFY2(proposed.problems().isEmpty(), qPrintable(proposed.problems().join("; ")));
    }

    void theDialogsRefuseSettingsThatCannotWorkAndOfferOnlyTheCpu() {
        gui::EngineActionSettings s;
        s.action = gui::EngineAction::Dump;
        s.checkpoint = "/nonexistent/model.ckpt.h5";
        s.layers = "0,x";
        s.out = fresh_dir("refused") + "/out.h5";
        gui::EngineActionDialog dialog(s);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Rejected));
        const QString text = dialog.problems_text();
        QVERIFY2(text.contains("/nonexistent/model.ckpt.h5"), qPrintable(text));
        QVERIFY2(text.contains("Layers '0,x'"), qPrintable(text));
        QVERIFY2(text.contains("must end in .dump.h5"), qPrintable(text));

        // The device: CPU, and CUDA shown disabled with the reason routescope-cli gives.
        QComboBox* device = dialog.device_box();
        QCOMPARE(device->count(), 2);
        QCOMPARE(device->itemData(0).toString(), QString("cpu"));
        auto* model = qobject_cast<QStandardItemModel*>(device->model());
        QVERIFY(!model->item(1)->isEnabled());
        // The probe is a child routescope-cli --version (CUDA driver load included): 5 s, QTRY's
        // default, was too short on a loaded 2-core machine (5.35 s).
        QTRY_VERIFY_WITH_TIMEOUT(gui::DeviceProbe::instance()->known(), 60000);
        QVERIFY2(device->itemText(1).startsWith("CUDA (not available: "),
                 qPrintable(device->itemText(1)));
        QVERIFY(!device->itemText(1).contains("checking"));
        QCOMPARE(gui::DeviceProbe::reason_from_version("routescope 0.1.0\nHDF5 1.10.8\n"),
                 QString("the CUDA engine is not built yet"));
        QVERIFY(gui::DeviceProbe::reason_from_version(
                    "CUDA backend: compiled in (runtime 13.0); no usable CUDA device: CUDA driver "
                    "version is insufficient")
                    .startsWith("CUDA driver version is insufficient"));

        s.checkpoint = checkpoint_;
        s.layers = "0,1";
        s.out = fresh_dir("accepted") + "/out.dump.h5";
        dialog.set_settings(s);
        dialog.accept();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));

        // A dump reads a text corpus too, a directory included (`dump --data`); an evaluation's
        // data must be a file.
        const QString corpus = fresh_dir("corpus");
        s.source = "data";
        s.data = corpus;
        QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join("; ")));
        s.data = corpus + "/missing";
        QVERIFY(s.problems().join(" ").contains("does not exist"));
        gui::EngineActionSettings e = s;
        e.action = gui::EngineAction::Evaluate;
        e.data = corpus;
        e.out = corpus + "/preds.jsonl";
        QVERIFY(e.problems().join(" ").contains("does not exist"));
    }

    void theWorkspaceOffersTheActionsThatApply() {
        gui::MainWindow window;
        QStringList names;
        for (QAction* a : window.workspace_actions(checkpoint_))
            names << a->objectName();
        QVERIFY2(names.contains("dumpAction") && names.contains("evalAction"),
                 qPrintable(names.join(",")));
        names.clear();
        for (QAction* a : window.workspace_actions("/x/model.dump.h5"))
            names << a->objectName();
        QVERIFY2(names.contains("gates") && names.contains("length_accuracy"),
                 qPrintable(names.join(",")));
        QVERIFY(!names.contains("dumpAction"));
        // Every analysis that takes one dump is offered for it (transitions was missing), and
        // the list is the registry's: no kind is offered that the registry does not take.
        for (const auto& k : gui::analysis_kinds()) {
            const bool takes =
                k.in_menu && !k.accepts.empty() && k.applies_to(QStringList{"/x/model.dump.h5"});
            QVERIFY2(names.contains(k.kind) == takes, qPrintable(k.kind));
        }
        QVERIFY(names.contains("transitions"));
        QVERIFY(!names.contains("similarity"));  // it takes two dumps
        // Two dumps selected together: the analyses that compare them, similarity included.
        names.clear();
        for (QAction* a : window.workspace_actions(QStringList{"/x/a.dump.h5", "/x/b.dump.h5"}))
            names << a->objectName();
        QVERIFY2(names.contains("similarity") && names.contains("kernels") &&
                     names.contains("anisotropy") && !names.contains("dumpAction"),
                 qPrintable(names.join(",")));
        names.clear();
        for (QAction* a : window.workspace_actions("/x/preds.jsonl"))
            names << a->objectName();
        // Its analysis, then the colour of its model (every file has one).
        QCOMPARE(names, (QStringList{"length_accuracy", "modelColourAction"}));
        // One handler on the workspace's context-menu signal (two used to open two menus).
        QTreeWidget* tree = window.workspace()->tree();
        QCOMPARE(tree->contextMenuPolicy(), Qt::CustomContextMenu);
        struct Receivers : QObject {
            // QObject::receivers is protected: reached through a member pointer, which is
            // well-defined on any QObject (a cast to this type would not be: UBSan's downcast).
            static int count(QObject* o) {
                const auto receivers = &Receivers::receivers;
                return (o->*receivers)(SIGNAL(customContextMenuRequested(QPoint)));
            }
        };
        QCOMPARE(Receivers::count(tree), 1);
        // The Run menu has every action.
        for (const char* name : {"newRunAction", "dumpAction", "evalAction", "importAction",
                                 "experimentAction", "cancelRunsAction"})
            QVERIFY2(window.findChild<QAction*>(name), name);
    }

    void aDumpFromTheDialogJoinsTheWorkspaceAndOpensInItsView() {
        gui::MainWindow window;
        window.show();
        // Right-click › Dump Activations… on the checkpoint: the dialog is prefilled.
        QPointer<gui::EngineActionDialog> dialog =
            window.action_dialog(gui::EngineAction::Dump, checkpoint_);
        QVERIFY(dialog);
        QCOMPARE(field<QLineEdit>(dialog, "checkpoint")->text(), checkpoint_);
        const QString out = field<QLineEdit>(dialog, "out")->text();
        QVERIFY2(out.endsWith("model.dump.h5"), qPrintable(out));
        QFile::remove(out);
        field<QCheckBox>(dialog, "gates")->setChecked(true);
        field<QSpinBox>(dialog, "examples")->setValue(24);
        field<QSpinBox>(dialog, "threads")->setValue(1);
        dialog->accept();
        QCOMPARE(window.jobs().size(), 1);
        gui::CliJob* job = window.jobs().front();
        QVERIFY(job->spec().arguments.contains("--gates"));
        // The dialog's device reaches the command (issue 23): `--device cpu`.
        const QStringList& args = job->spec().arguments;
        QVERIFY(args.indexOf("--device") >= 0 && args.value(args.indexOf("--device") + 1) == "cpu");
        QTreeWidgetItem* item = window.job_item(job);
        QVERIFY(item);
        QCOMPARE(item->parent(), window.workspace()->runs());
        QCOMPARE(item->child(1)->text(0), QString("device: CPU"));
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 60000);
        QVERIFY2(job->state() == gui::CliJob::State::Finished,
                 qPrintable(job->failure() + job->last_output().join("\n")));
        QCOMPARE(job->done(), qint64(24));
        QCOMPARE(item->child(0)->text(0), QString("done"));

        // The dump joins the workspace's dumps and opens in the Gates view.
        QTRY_VERIFY_WITH_TIMEOUT(
            window.workspace()->item_for(out) != nullptr &&
                window.workspace()->item_for(out)->parent() == window.workspace()->dumps() &&
                window.loader()->pending() == 0,
            20000);
        QAction* gates = nullptr;
        for (QAction* a : window.workspace_actions(out))
            if (a->objectName() == "gates") gates = a;
        QVERIFY(gates);
        gates->trigger();
        auto* view = qobject_cast<views::GatesView*>(window.current_analysis());
        QVERIFY(view);
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->has_result(), qPrintable(view->error()));
        QVERIFY(view_test::screenshot(&window, "engine_action_dump"));
    }

    void anEvaluationOpensInTheAccuracyByLengthView() {
        gui::MainWindow window;
        window.show();
        QPointer<gui::EngineActionDialog> dialog =
            window.action_dialog(gui::EngineAction::Evaluate, checkpoint_);
        QVERIFY(dialog);
        const QString out = fresh_dir("eval") + "/preds.jsonl";
        field<QLineEdit>(dialog, "out")->setText(out);
        field<QComboBox>(dialog, "split")->setCurrentText("test");
        dialog->accept();
        QCOMPARE(window.jobs().size(), 1);
        gui::CliJob* job = window.jobs().front();
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 60000);
        QVERIFY2(job->state() == gui::CliJob::State::Finished,
                 qPrintable(job->failure() + job->last_output().join("\n")));
        QVERIFY(QFileInfo::exists(out));
        auto* view = qobject_cast<views::LengthAccuracyView*>(window.current_analysis());
        QVERIFY(view);
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->result(), qPrintable(view->error()));
        QVERIFY(view->result()->overall.a.count > 0);
        QVERIFY(view_test::screenshot(&window, "engine_action_eval"));
        // Issue 26: the file Evaluate wrote opens again from File › Open (open_file).
        const int views_before = static_cast<int>(window.analysis_views().size());
        window.open_file(out);
        QCOMPARE(static_cast<int>(window.analysis_views().size()), views_before + 1);
        auto* again = qobject_cast<views::LengthAccuracyView*>(window.current_analysis());
        QVERIFY(again && again != view);
        QVERIFY(view_test::wait_for(again));
        QVERIFY2(again->result(), qPrintable(again->error()));
        QCOMPARE(again->result()->overall.a.count, view->result()->overall.a.count);
    }

    void predictionsWithUnlabelledExamplesOpenAndSayWhatIsLeftOut() {
        // eval writes "label": null for an example without a label (a test split without
        // answers); such lines are left out, and a file of only those says why it shows nothing.
        const QString dir = fresh_dir("unlabelled");
        const QString mixed = dir + "/mixed.jsonl", none = dir + "/none.jsonl";
        {
            QFile f(mixed);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                R"({"id": 0, "length": 5, "label": "a", "prediction": "a", "correct": true, "attributes": {}}
{"id": 1, "length": 7, "label": null, "prediction": "b", "correct": null, "attributes": {}}
{"id": 2, "length": 9, "label": "b", "prediction": "a", "correct": false, "attributes": {}}
)");
        }
        {
            QFile f(none);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                R"({"id": 0, "length": 5, "label": null, "prediction": "a", "correct": null, "attributes": {}}
)");
        }
        gui::MainWindow window;
        window.open_file(mixed);
        auto* view = qobject_cast<views::LengthAccuracyView*>(window.current_analysis());
        QVERIFY(view);
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->result(), qPrintable(view->error()));
        QCOMPARE(view->result()->overall.a.count, std::int64_t{2});
        window.open_file(none);
        auto* empty = qobject_cast<views::LengthAccuracyView*>(window.current_analysis());
        QVERIFY(empty && empty != view);
        QVERIFY(view_test::wait_for(empty));
        QVERIFY(!empty->result());
        QVERIFY2(empty->error().contains("no labelled predictions"), qPrintable(empty->error()));
        if (auto* box = window.last_error()) box->close();
    }

    void anExperimentsDumpsAndModelsJoinTheWorkspace() {
        gui::MainWindow window;
        QPointer<gui::EngineActionDialog> dialog =
            window.action_dialog(gui::EngineAction::Experiment);
        QVERIFY(dialog);
        const QString out = fresh_dir("experiment") + "/induction";
        field<QLineEdit>(dialog, "out")->setText(out);
        field<QComboBox>(dialog, "experiment")->setCurrentText("induction");
        field<QSpinBox>(dialog, "steps")->setValue(2);
        field<QSpinBox>(dialog, "threads")->setValue(1);
        field<QPlainTextEdit>(dialog, "overrides")->setPlainText("model.d_model=16");
        dialog->accept();
        gui::CliJob* job = window.jobs().value(0);
        QVERIFY(job);
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 180000);
        QVERIFY2(job->state() == gui::CliJob::State::Finished,
                 qPrintable(job->failure() + job->last_output().join("\n")));
        QCOMPARE(job->total(), qint64(3));
        for (const QString arch : {"bigs", "stack_ssm", "bert"}) {
            const QString dump = QFileInfo(out + "/" + arch + ".dump.h5").absoluteFilePath();
            QTRY_VERIFY_WITH_TIMEOUT(window.workspace()->item_for(dump) != nullptr, 20000);
        }
        QTRY_VERIFY_WITH_TIMEOUT(window.loader()->pending() == 0, 20000);
        QCOMPARE(window.workspace()->models()->childCount(), 3);
        auto* view =
            window.open_analysis("length_accuracy", {out + "/bigs.dump.h5", out + "/bert.dump.h5"});
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->has_result(), qPrintable(view->error()));
    }

    void aCancelledActionLeavesNoPartialFile() {
        gui::MainWindow window;
        // A dump long enough to be stopped (layer 0 only keeps the disk small).
        gui::EngineActionSettings s;
        s.action = gui::EngineAction::Dump;
        s.checkpoint = checkpoint_;
        s.source = "task";
        s.task = "induction";
        s.layers = "0";
        s.examples = 400000;
        s.threads = 1;
        const QString dir = fresh_dir("cancel_dump");
        s.out = dir + "/big.dump.h5";
        QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join(" ")));
        gui::CliJob* dump = window.launch_action(s);
        QTRY_VERIFY_WITH_TIMEOUT(dump->done() > 0 || !dump->running(), 60000);
        QVERIFY(dump->running());
        window.findChild<QAction*>("cancelRunsAction")->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!dump->running(), 30000);
        QCOMPARE(dump->state(), gui::CliJob::State::Cancelled);
        QVERIFY(!window.last_error());
        QCOMPARE(QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList());
        QCOMPARE(window.job_item(dump)->child(0)->text(0), QString("stopped"));

        // An experiment stopped in its first model: no half-made output directory.
        gui::EngineActionSettings e;
        e.action = gui::EngineAction::Experiment;
        e.experiment = "induction";
        e.steps = 1000000;
        e.threads = 1;
        e.out = fresh_dir("cancel_experiment") + "/run";
        gui::CliJob* experiment = window.launch_action(e);
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(e.out + "/bigs/config.json"), 60000);
        experiment->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!experiment->running(), 30000);
        QCOMPARE(experiment->state(), gui::CliJob::State::Cancelled);
        QVERIFY(!QFileInfo::exists(e.out));
    }

    void modelsAndDumpsHaveNamesThatAreEditableAndSaved() {
        const QString project = fresh_dir("names") + "/names.rsproj";
        {
            gui::MainWindow window;
            window.open_file(checkpoint_);
            QTRY_VERIFY_WITH_TIMEOUT(window.workspace()->item_for(checkpoint_) != nullptr &&
                                         window.loader()->pending() == 0,
                                     20000);
            // Derived from the configuration: architecture, task, step.
            QCOMPARE(window.workspace()->item_for(checkpoint_)->text(0),
                     QString("bigs · induction · step 2"));
            QCOMPARE(views::display_name(checkpoint_), QString("bigs · induction · step 2"));
            // Renamed in the workspace (the item is editable): views use the name.
            QTreeWidgetItem* item = window.workspace()->item_for(checkpoint_);
            QVERIFY(item->flags() & Qt::ItemIsEditable);
            item->setText(0, "tiny induction");
            QCOMPARE(views::display_name(checkpoint_), QString("tiny induction"));
            window.save_project(project);
        }
        views::set_display_name(checkpoint_, {});
        gui::MainWindow window;
        window.open_project(project);
        QTRY_VERIFY_WITH_TIMEOUT(
            window.workspace()->item_for(checkpoint_) != nullptr && window.loader()->pending() == 0,
            20000);
        QCOMPARE(window.workspace()->item_for(checkpoint_)->text(0), QString("tiny induction"));
        auto* view = window.open_analysis("kernels", {checkpoint_});
        QVERIFY2(view->title().contains("tiny induction"), qPrintable(view->title()));
    }

    void anImportedPublishedBigsJoinsTheWorkspaceAndOpensInTheKernelView() {
        // Import Model…: a small BiGS in the release's Hugging Face layout (config.json,
        // model.safetensors, vocab.txt; written by tests/io/make_import_fixtures.py) becomes a
        // checkpoint in the workspace, valid, and the Kernels view shows its SSM kernels.
        const QString fixtures = fresh_dir("import_fixtures");
        QProcess py;
        py.start(
            QStringLiteral(ROUTESCOPE_PYTHON),
            {QStringLiteral(ROUTESCOPE_SOURCE_DIR "/tests/io/make_import_fixtures.py"), fixtures});
        QVERIFY(py.waitForFinished(120000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        gui::MainWindow window;
        window.show();
        QPointer<gui::EngineActionDialog> dialog = window.action_dialog(gui::EngineAction::Import);
        QVERIFY(dialog);
        // The source is a model directory or one weights file / shard index: a button for each.
        QStringList buttons;
        for (auto* b : dialog->findChildren<QPushButton*>())
            buttons << b->text();
        QVERIFY2(buttons.contains("Folder…") && buttons.contains("File…"),
                 qPrintable(buttons.join(", ")));
        dialog->reject();
        gui::EngineActionSettings s;
        s.action = gui::EngineAction::Import;
        s.import_source = fixtures + "/bigs_safetensors";
        s.out = fresh_dir("imported") + "/bigs.ckpt.h5";
        QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join(" ")));
        gui::CliJob* job = window.launch_action(s);
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 60000);
        QVERIFY2(job->state() == gui::CliJob::State::Finished,
                 qPrintable(job->failure() + job->last_output().join("\n")));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.workspace()->item_for(s.out) != nullptr && window.loader()->pending() == 0,
            20000);
        QVERIFY(!window.last_error());
        auto* summary = window.summary_for(s.out);
        QVERIFY(summary);
        QVERIFY2(summary->headline().contains("Valid checkpoint"), qPrintable(summary->headline()));
        QAction* kernels = nullptr;
        for (QAction* a : window.workspace_actions(s.out))
            if (a->objectName() == "kernels") kernels = a;
        QVERIFY(kernels);
        kernels->trigger();
        views::AnalysisView* view = window.current_analysis();
        QVERIFY(view);
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->error().isEmpty(), qPrintable(view->error()));
        QVERIFY(view_test::screenshot(&window, "engine_action_import"));
    }

    // The workspace document keeps the jobs, with no window (issue 26: MainWindow no longer
    // holds them): a failing child and one that is stopped, the totals the status bar shows,
    // `changed` on each end, and a job that could not start dropped.
    void theDocumentKeepsItsJobsWithoutAWindow() {
        gui::Workspace document;
        gui::JobList* list = document.jobs();
        QSignalSpy changed(list, &gui::JobList::changed);
        gui::CliJobSpec inspect;
        inspect.command = "inspect";
        inspect.arguments = {"inspect", fresh_dir("none") + "/x.h5"};
        auto* failing = new gui::CliJob(inspect);
        const QString tmp = fresh_dir("jobs");
        auto* stopped =
            new gui::CliJob({"dump",
                             {"dump", "--checkpoint", checkpoint_, "--out", tmp + "/long.dump.h5",
                              "--split", "train", "--threads", "1"},
                             {},
                             {tmp + "/long.dump.h5"}});
        list->add(failing);
        list->add(stopped);
        QCOMPARE(failing->parent(), list);
        QCOMPARE(list->jobs(), (QList<gui::CliJob*>{failing, stopped}));
        QVERIFY(list->training_runs().isEmpty());
        failing->start();
        stopped->start();
        QCOMPARE(list->totals().active, 2);
        QVERIFY(!list->totals().all_train);
        QTRY_VERIFY_WITH_TIMEOUT(!failing->running(), 30000);
        QCOMPARE(failing->state(), gui::CliJob::State::Failed);
        list->cancel_all();
        QTRY_VERIFY_WITH_TIMEOUT(!stopped->running(), 30000);
        QVERIFY(stopped->state() == gui::CliJob::State::Cancelled ||
                stopped->state() == gui::CliJob::State::Finished);
        QCOMPARE(list->totals().active, 0);
        QVERIFY(changed.count() >= 4);  // two adds, two ends
        list->discard(failing);
        QCOMPARE(list->jobs(), (QList<gui::CliJob*>{stopped}));
    }

    void aFailingChildShowsItsError() {
        gui::MainWindow window;
        window.show();
        // Import of a file that is not a model: the CLI names the problem and exits 2.
        const QString dir = fresh_dir("fail_import");
        QFile junk(dir + "/model.safetensors");
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("this is not a safetensors file");
        junk.close();
        gui::EngineActionSettings s;
        s.action = gui::EngineAction::Import;
        s.import_source = junk.fileName();
        s.out = dir + "/imported.ckpt.h5";
        QVERIFY2(s.problems().isEmpty(), qPrintable(s.problems().join(" ")));
        gui::CliJob* job = window.launch_action(s);
        QTRY_VERIFY_WITH_TIMEOUT(!job->running(), 30000);
        QCOMPARE(job->state(), gui::CliJob::State::Failed);
        QTRY_VERIFY(window.last_error());
        const QString text = window.last_error()->text();
        QVERIFY2(text.contains("routescope-cli import exited with code 2"), qPrintable(text));
        QVERIFY2(text.contains("Last output:") && text.contains("safetensors"), qPrintable(text));
        QVERIFY(!QFileInfo::exists(s.out));
        QCOMPARE(window.job_item(job)->child(0)->text(0), QString("failed"));
        window.last_error()->close();

        // An evaluation on a task the checkpoint was not trained on: exit 2 with the reason.
        gui::EngineActionSettings e;
        e.action = gui::EngineAction::Evaluate;
        e.checkpoint = checkpoint_;
        e.source = "task";
        e.task = "phone-book";
        e.out = fresh_dir("fail_eval") + "/preds.jsonl";
        gui::CliJob* eval = window.launch_action(e);
        QTRY_VERIFY_WITH_TIMEOUT(!eval->running(), 30000);
        QCOMPARE(eval->state(), gui::CliJob::State::Failed);
        QTRY_VERIFY(window.last_error());
        QVERIFY2(window.last_error()->text().contains("phone-book"),
                 qPrintable(window.last_error()->text()));
        QCOMPARE(QDir(QFileInfo(e.out).absolutePath())
                     .entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList());
        window.last_error()->close();
    }
};

QTEST_MAIN(TestEngineActions)
#include "test_engine_actions.moc"
