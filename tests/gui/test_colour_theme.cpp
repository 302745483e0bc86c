// View › Theme: the workbench follows the platform's colours until the user overrides them with
// Light or Dark; the choice is kept in QSettings and restored by the next window; System goes back
// to the platform's palette.
#include <QtTest>

#include <QAction>
#include <QApplication>

#include "app/gui/colour_theme.hpp"
#include "app/gui/main_window.hpp"

using namespace routescope;

class TestColourTheme : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void theDarkOverrideIsAppliedKeptAndUndoneBySystem() {
        const QColor platform_window = QApplication::palette().color(QPalette::Window);
        {
            gui::MainWindow window;
            auto* system = window.findChild<QAction*>("theme_system");
            auto* dark = window.findChild<QAction*>("theme_dark");
            QVERIFY(system && dark && window.findChild<QAction*>("theme_light"));
            QVERIFY(system->isChecked());  // nothing chosen yet: the platform's colours
            QVERIFY(!dark->statusTip().isEmpty());
            QCOMPARE(QApplication::palette().color(QPalette::Window), platform_window);

            dark->trigger();
            // Dark: the window background is dark and its text light.
            QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
            QVERIFY(QApplication::palette().color(QPalette::WindowText).lightness() > 180);
            QCOMPARE(QSettings().value("ui/theme").toString(), QString("dark"));
        }
        {
            // A new window (the next session) restores the choice.
            QApplication::setPalette(QPalette());
            gui::MainWindow window;
            QVERIFY(window.findChild<QAction*>("theme_dark")->isChecked());
            QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);

            window.findChild<QAction*>("theme_light")->trigger();
            QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);

            window.findChild<QAction*>("theme_system")->trigger();
            QCOMPARE(QApplication::palette().color(QPalette::Window), platform_window);
            QCOMPARE(gui::saved_colour_theme(), gui::ColourTheme::System);
        }
        QCOMPARE(gui::colour_theme_from_name("no-such-theme"), gui::ColourTheme::System);
    }
};

QTEST_MAIN(TestColourTheme)
#include "test_colour_theme.moc"
