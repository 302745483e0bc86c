// validate_file against the h5py-written fixtures of tests/fixtures/make_dump_fixtures.py: every
// valid file passes, every broken one is reported with the violation text the format predicts,
// and no file makes the validator throw or crash.
#include <QtTest>

#include "engine/io/validation.hpp"

using namespace routescope;

class TestValidation : public QObject {
    Q_OBJECT
    QJsonArray cases_;
    QString dir_;

private slots:
    void initTestCase() {
        dir_ = QStringLiteral(ROUTESCOPE_TEST_DATA "/dumps");
        QFile manifest(dir_ + "/manifest.json");
        QVERIFY2(manifest.open(QIODevice::ReadOnly),
                 "run the fixtures_dumps test first (CTest fixture)");
        cases_ = QJsonDocument::fromJson(manifest.readAll()).object()["cases"].toArray();
        QVERIFY(cases_.size() >= 20);
    }

    void everyFixtureMatchesItsExpectation_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("expect");
        for (const auto& c : cases_) {
            const auto o = c.toObject();
            QStringList expect;
            for (const auto& e : o["expect"].toArray())
                expect << e.toString();
            QTest::newRow(qPrintable(o["file"].toString()))
                << o["file"].toString() << o["exit"].toInt() << expect;
        }
    }

    void everyFixtureMatchesItsExpectation() {
        QFETCH(QString, file);
        QFETCH(int, exitCode);
        QFETCH(QStringList, expect);
        const auto report = validate_file((dir_ + "/" + file).toStdString());
        QString all;
        for (const auto& v : report.violations)
            all += QString::fromStdString(v.text()) + "\n";
        QVERIFY2(report.exit_code() == exitCode,
                 qPrintable(QString("exit %1, violations:\n%2").arg(report.exit_code()).arg(all)));
        for (const auto& e : expect)
            QVERIFY2(all.contains(e), qPrintable("missing '" + e + "' in:\n" + all));
        if (exitCode == 1) QCOMPARE(report.readable, true);
    }

    void brokenDumpsReportOnlyTheirOwnProblem() {
        // A file that breaks one rule should not drown the reader in follow-on violations.
        for (const auto& c : cases_) {
            const auto o = c.toObject();
            if (o["exit"].toInt() != 1) continue;
            const auto report = validate_file((dir_ + "/" + o["file"].toString()).toStdString());
            QVERIFY2(report.violations.size() <= 2, qPrintable(o["file"].toString()));
        }
    }

    void quickModeSkipsValueScans() {
        ValidateOptions quick;
        quick.scan_values = false;
        QVERIFY(validate_file((dir_ + "/nan_hidden.dump.h5").toStdString(), quick).ok());
        QVERIFY(!validate_file((dir_ + "/hidden_wrong_S.dump.h5").toStdString(), quick).ok());
    }

    void missingFileIsUnreadable() {
        const auto report = validate_file("/nonexistent/dir/x.dump.h5");
        QCOMPARE(report.exit_code(), 2);
        QVERIFY(QString::fromStdString(report.violations.at(0).text()).contains("no such file"));
    }
};

QTEST_APPLESS_MAIN(TestValidation)
#include "test_validation.moc"
