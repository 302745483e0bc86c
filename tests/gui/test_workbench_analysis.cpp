// The workbench's Analysis menu: every action has a shortcut and a status tip, opens its view on
// the workspace selection, reports progress in the status bar, turns a failing analysis into an
// error dialog, and "Export…"/"Export All" write figures with their provenance.
#include <QtTest>

#include <QSignalSpy>

#include <QChartView>
#include <QValueAxis>

#include <QComboBox>
#include <QTableWidget>
#include <QTextBrowser>

#include <QAction>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTreeWidget>

#include "app/gui/main_window.hpp"
#include "app/gui/workspace_dock.hpp"
#include "engine/core/error.hpp"
#include "view_test_support.hpp"
#include "views/analysis_view.hpp"
#include "views/chart_interaction.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"

using namespace routescope;

class TestWorkbenchAnalysis : public QObject {
    Q_OBJECT
    QString dir_, dump_;

    // The window at 1300×800, exposed, with the sample dump loaded.
    bool show_with_dump(gui::MainWindow& window) {
        window.resize(1300, 800);
        window.show();
        if (!QTest::qWaitForWindowExposed(&window)) return false;
        window.open_file(dump_);
        return QTest::qWaitFor([&] { return window.loader()->pending() == 0; }, 20000);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        dir_ = view_test::data_dir("workbench_analysis");
        dump_ = view_test::sample_dump(dir_, "sample.dump.h5");
        QVERIFY(!dump_.isEmpty());
    }

    void helpHasTheUserGuideAndTheShortcutList() {
        gui::MainWindow window;
        QMenu* help = nullptr;
        for (QAction* a : window.menuBar()->actions())
            if (a->text().remove('&') == "Help") help = a->menu();
        QVERIFY(help);
        QStringList names;
        for (QAction* a : help->actions())
            if (!a->isSeparator()) names << a->objectName();
        QCOMPARE(names, (QStringList{"helpUserGuide", "helpShortcuts", "helpAbout"}));
        // The guide is the repository's docs/user-guide.md, rendered (no literal Markdown).
        QVERIFY(!gui::MainWindow::user_guide_path().isEmpty());
        window.findChild<QAction*>("helpUserGuide")->trigger();
        auto* guide = window.findChild<QTextBrowser*>("userGuide");
        QVERIFY(guide);
        const QString text = guide->toPlainText();
        QVERIFY2(text.contains("Representation similarity") && text.contains("Kernels"),
                 qPrintable(text.left(200)));
        QVERIFY(!text.contains("## "));
        // Every action with a shortcut is listed with its keys.
        window.findChild<QAction*>("helpShortcuts")->trigger();
        auto* table = window.findChild<QTableWidget*>("shortcutTable");
        QVERIFY(table);
        QStringList keys;
        for (int r = 0; r < table->rowCount(); ++r)
            keys << table->item(r, 0)->text();
        for (QAction* a : window.findChildren<QAction*>())
            if (!a->shortcut().isEmpty())
                QVERIFY2(keys.contains(a->shortcut().toString(QKeySequence::NativeText)),
                         qPrintable(a->text()));
        QVERIFY(keys.contains("Ctrl+Shift+M"));
    }

    void theStatusBarSaysWhenAnAnalysisFailed() {
        // Issue 26: "Computing…" stayed after a failure.
        gui::MainWindow window;
        window.show();
        window.open_file(dump_);
        QTRY_COMPARE_WITH_TIMEOUT(window.loader()->pending(), 0, 20000);
        auto* view = window.open_analysis("similarity", {dump_});  // needs two dumps: fails
        QVERIFY(view);
        QVERIFY(view_test::wait_for(view));
        QVERIFY(!view->has_result());
        QTRY_VERIFY2(window.statusBar()->currentMessage().contains("failed"),
                     qPrintable(window.statusBar()->currentMessage()));
        if (auto* box = window.last_error()) box->close();
    }

    void theStatusBarSaysDoneOnlyForWhatIsDone() {
        // Issue 26: the status bar said "done" at 32/60. Two analyses started together: the one
        // that finishes first names itself and says the other is still computing; the last says
        // plainly that it is done; no message claims "done" without naming the view.
        gui::MainWindow window;
        window.show();
        window.open_file(dump_);
        QTRY_COMPARE_WITH_TIMEOUT(window.loader()->pending(), 0, 20000);
        QSignalSpy messages(window.statusBar(), &QStatusBar::messageChanged);
        auto* a = window.open_analysis("transitions", {dump_});
        auto* b = window.open_analysis("pca", {dump_});
        QVERIFY(a && b);
        QVERIFY(view_test::wait_for(a) && view_test::wait_for(b));
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 60000);
        QStringList done;
        for (const QList<QVariant>& m : messages) {
            const QString text = m.value(0).toString();
            if (text.contains("done")) done << text;
        }
        QCOMPARE(done.size(), 2);
        const QString first = done[0], last = done[1];
        const bool a_first = first.startsWith(a->title() + ": done");
        QVERIFY2(a_first || first.startsWith(b->title() + ": done"), qPrintable(first));
        QVERIFY2(first.endsWith("; 1 other analysis(es) still computing"), qPrintable(first));
        QCOMPARE(last, (a_first ? b->title() : a->title()) + ": done");
    }

    void doubleClickResetsTheZoomOfAChartInsideAView() {
        // Issue 26: double-click did not reset the zoom of a chart in a view of the window (the
        // bare-chart test passed). Every chart of a PCA view, zoomed with the wheel, is back at
        // its home ranges after a double-click on its plot area.
        gui::MainWindow window;
        QVERIFY(show_with_dump(window));
        auto* view = window.open_analysis("pca", {dump_});
        QVERIFY(view && view_test::wait_for(view));
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 60000);
        int checked = 0;
        for (QChartView* chart : view->findChildren<QChartView*>()) {
            auto* x = qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Horizontal).value(0));
            auto* y = qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Vertical).value(0));
            if (!chart->isVisible() || !x || !y || !views::chart_interaction(chart)) continue;
            const QRectF home(x->min(), y->min(), x->max() - x->min(), y->max() - y->min());
            const QRectF area = chart->chart()->plotArea();
            const QPoint at = chart->mapFromScene(chart->chart()->mapToScene(area.center()));
            QWheelEvent wheel(QPointF(at), QPointF(chart->viewport()->mapToGlobal(at)), QPoint(),
                              QPoint(0, 240), Qt::NoButton, {}, Qt::NoScrollPhase, false);
            QApplication::sendEvent(chart->viewport(), &wheel);
            QVERIFY2(x->max() - x->min() < home.width(), "the wheel did not zoom in");
            for (QEvent::Type type : {QEvent::MouseButtonPress, QEvent::MouseButtonRelease,
                                      QEvent::MouseButtonDblClick, QEvent::MouseButtonRelease}) {
                const bool down = type != QEvent::MouseButtonRelease;
                QMouseEvent e(type, QPointF(at), QPointF(chart->viewport()->mapToGlobal(at)),
                              Qt::LeftButton, down ? Qt::LeftButton : Qt::NoButton, {});
                QApplication::sendEvent(chart->viewport(), &e);
            }
            QCOMPARE(QRectF(x->min(), y->min(), x->max() - x->min(), y->max() - y->min()), home);
            ++checked;
        }
        QVERIFY2(checked > 0, "the PCA view shows no chart with value axes");
    }

    void ctrlTabAndCtrlPageSwitchTabsEvenFromAComboBox() {
        // Issue 26: with the focus in a combo box, Ctrl+PgDown changed the combo (the gate) and
        // Ctrl+Tab did nothing; both switch tabs now, and the combo keeps its value.
        gui::MainWindow window;
        QVERIFY(show_with_dump(window));
        auto* first = window.open_analysis("transitions", {dump_});
        auto* second = window.open_analysis("pca", {dump_});
        QVERIFY(first && second);
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 60000);
        window.tabs()->setCurrentWidget(first);
        auto* combo = first->findChild<QComboBox*>("measure");
        QVERIFY(combo);
        combo->setFocus();
        const int before = combo->currentIndex();
        const int at = window.tabs()->currentIndex();
        const int n = window.tabs()->count();
        QVERIFY(n >= 2);
        QTest::keyClick(combo, Qt::Key_PageDown, Qt::ControlModifier);
        QCOMPARE(window.tabs()->currentIndex(), (at + 1) % n);
        QCOMPARE(combo->currentIndex(), before);
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : &window,
                        Qt::Key_PageUp, Qt::ControlModifier);
        QCOMPARE(window.tabs()->currentIndex(), at);
        combo->setFocus();
        QTest::keyClick(combo, Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(window.tabs()->currentIndex(), (at + 1) % n);
        QCOMPARE(combo->currentIndex(), before);
    }

    void everyAnalysisActionHasAShortcutAndAStatusTip() {
        gui::MainWindow window;
        QMenu* analysis = nullptr;
        for (QAction* a : window.menuBar()->actions())
            if (a->text().remove('&') == "Analysis") analysis = a->menu();
        QVERIFY(analysis);
        QCOMPARE(analysis->actions().size(), 10);  // every in_menu entry of analysis_kinds()
        for (QAction* a : analysis->actions()) {
            QVERIFY2(!a->shortcut().isEmpty(), qPrintable(a->text()));
            QVERIFY2(!a->statusTip().isEmpty(), qPrintable(a->text()));
        }
        auto* exp = window.findChild<QAction*>("exportAction");
        QVERIFY(exp && !exp->shortcut().isEmpty() && !exp->statusTip().isEmpty());
        QVERIFY(window.findChild<QAction*>("exportAllAction"));
    }

    void theKernelActionOpensAViewOnTheSelectedDump() {
        gui::MainWindow window;
        window.resize(1300, 800);
        window.show();
        window.open_file(dump_);
        QTRY_COMPARE_WITH_TIMEOUT(window.loader()->pending(), 0, 20000);
        window.workspace()->tree()->clearSelection();
        window.workspace()->item_for(dump_)->setSelected(true);
        QCOMPARE(window.selected_paths(), QStringList{dump_});
        window.findChild<QAction*>("analysis_kernels")->trigger();
        auto* view = qobject_cast<views::KernelView*>(window.current_analysis());
        QVERIFY(view);
        QVERIFY(window.progress_bar()->isVisible() || !view->busy());
        QVERIFY(view_test::wait_for(view));
        QVERIFY2(view->has_result(), qPrintable(view->error()));
        QTRY_VERIFY(!window.progress_bar()->isVisible());
        QCOMPARE(view->heatmap_a()->data().rows, 4);
        QVERIFY(view_test::screenshot(&window, "workbench_kernels"));

        // Export… of the current view, then Export All of every open view.
        const QString out = QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/workbench_export");
        QDir(out).removeRecursively();
        QDir().mkpath(out);
        const QStringList one = window.export_current(out + "/kernels.svg");
        QCOMPARE(one, (QStringList{out + "/kernels.svg", out + "/kernels.svg.provenance.json"}));
        auto* anis = window.open_analysis("anisotropy", {dump_});
        QVERIFY(view_test::wait_for(anis));
        QVERIFY(view_test::screenshot(&window, "workbench_anisotropy"));
        const QStringList all = window.export_all(out + "/all", 96);
        QCOMPARE(all.size(), 2 * 8);  // two views × (PNG, SVG, PDF, CSV) × (figure, provenance)
        for (const QString& f : all)
            QVERIFY2(QFileInfo(f).size() > 0, qPrintable(f));

        // One format of one view that cannot be written (a folder where its PNG goes; a full disk
        // did the same): with `failures`, every file written is returned — the failing view's
        // other formats too — and the failure is said once (session 35: the headless export's
        // list was empty and its count left out the failing view's files).
        const QString partial = out + "/partial";
        QDir(partial).removeRecursively();
        QDir().mkpath(partial + "/" + anis->figure_name() + ".png");
        QStringList failures;
        const QStringList written =
            window.export_all(partial, views::FigureExportOptions{}, &failures);
        QCOMPARE(failures.size(), 1);
        QVERIFY2(failures.front().contains(anis->figure_name() + ".png"),
                 qPrintable(failures.front()));
        QCOMPARE(written.size(), 8 + 6);  // the kernels view whole, the anisotropy view's SVG,
                                          // PDF and CSV with their provenance
        for (const QString& f : written)
            QVERIFY2(QFileInfo(f).isFile() && QFileInfo(f).size() > 0, qPrintable(f));

        // Export All never writes through a link onto a file the workspace reads (session 38:
        // a CSV named like the view's, linking to its dump, replaced the dump, as --export did).
        const QString linked = out + "/linked";
        QDir(linked).removeRecursively();
        QDir().mkpath(linked);
        const QByteArray dump_before = [&] {
            QFile f(dump_);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        QVERIFY(!dump_before.isEmpty());
        QVERIFY(QFile::link(dump_, linked + "/" + anis->figure_name() + ".csv"));
        QStringList refused;
        window.export_all(linked, views::FigureExportOptions{}, &refused);
        QVERIFY2(refused.size() == 1 && refused.front().contains(dump_),
                 qPrintable(refused.join("\n")));
        QFile after(dump_);
        QVERIFY(after.open(QIODevice::ReadOnly));
        QVERIFY(after.readAll() == dump_before);
    }

    void aFailingAnalysisShowsAnErrorDialog() {
        gui::MainWindow window;
        window.show();
        // A dump without gates: the gates view cannot show anything and says why.
        const QString no_gates = QFileInfo(view_test::ssm_checkpoint(dir_, "before.ckpt.h5"))
                                     .dir()
                                     .filePath("equal.dump.h5");
        auto* view = window.open_analysis("gates", {no_gates});
        QVERIFY(view_test::wait_for(view));
        QVERIFY(!view->has_result());
        QTRY_VERIFY(window.last_error());
        QVERIFY2(window.last_error()->text().contains("gates"),
                 qPrintable(window.last_error()->text()));
        window.last_error()->close();
    }

    void exportWithoutAnAnalysisViewIsAnError() {
        gui::MainWindow window;
        QVERIFY_THROWS_EXCEPTION(
            routescope::ConfigError,
            window.export_current(QStringLiteral(ROUTESCOPE_TEST_OUTPUT "/x.png")));
    }
};

QTEST_MAIN(TestWorkbenchAnalysis)
#include "test_workbench_analysis.moc"
