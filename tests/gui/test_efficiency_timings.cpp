// Efficiency, measured (ANALYSES.md §7): the view reads the output of `routescope-cli bench
// forward` (here a real run of this build's CLI on a tiny model) and draws measured time per
// sequence against L beside the FLOP counts, one curve per architecture with the points the CLI
// printed; the CSV puts each measured time beside the FLOPs of the same architecture and length;
// the provenance names the timings file; a file that is not bench output is an error naming it.
#include <QtTest>

#include <QLogValueAxis>
#include <cmath>

#include <QChartView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QXYSeries>

#include "view_test_support.hpp"
#include "views/efficiency_view.hpp"

using namespace routescope::views;

class TestEfficiencyTimings : public QObject {
    Q_OBJECT

private slots:
    void measuredTimeIsDrawnBesideTheFlops() {
        const QString dir = view_test::data_dir("efficiency_timings");
        const QString timings = dir + "/forward.txt";
        QProcess bench;
        bench.setStandardOutputFile(timings);
        bench.start(QStringLiteral(ROUTESCOPE_CLI),
                    {"bench", "forward", "--arch", "bigs,bert", "--lengths", "64,128,256",
                     "--d-model", "32", "--layers", "2", "--threads", "1", "--repeats", "1"});
        QVERIFY(bench.waitForFinished(120000));
        QCOMPARE(bench.exitCode(), 0);
        // What the CLI printed, read independently of the analysis library.
        QFile f(timings);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        const QJsonObject printed = QJsonDocument::fromJson(lines.last()).object();
        const QJsonArray bigs_ms = printed["bigs_ms"].toArray();
        QCOMPARE(bigs_ms.size(), 3);

        EfficiencyViewSettings s;
        s.models = {{"bigs", 2, 32, 0, 64}, {"bert", 2, 32, 0, 0}};
        s.lengths = {64, 128, 256};
        s.timings = timings;
        EfficiencyView view(s);
        view.resize(1200, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view.time_chart()->isVisible());
        QXYSeries* bigs = nullptr;
        for (QAbstractSeries* a : view.time_chart()->chart()->series())
            if (a->name() == "bigs") bigs = static_cast<QXYSeries*>(a);
        QVERIFY(bigs);
        QCOMPARE(bigs->count(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(bigs->at(i).x(), double(64 << i));
            QCOMPARE(bigs->at(i).y(), bigs_ms[i].toDouble());
        }

        const auto table = view.figure_table();
        QCOMPARE(table.columns.back(), std::string("measured_ms"));
        QCOMPARE(table.rows.size(), std::size_t(6));  // 2 architectures × 3 lengths
        QCOMPARE(table.rows[1][0].get<std::string>(), std::string("bigs"));
        QCOMPARE(table.rows[1][3].get<std::int64_t>(), std::int64_t(128));
        QCOMPARE(table.rows[1].back().get<double>(), bigs_ms[1].toDouble());
        QVERIFY(view.figure_provenance().dump().find(view_test::sha256_of(timings).toStdString()) !=
                std::string::npos);
        QVERIFY(view_test::screenshot(&view, "view_efficiency_measured"));
        // Each log axis carries at least two labels: Qt labels the powers of its base inside
        // the range, and these FLOPs (3e6 to 4e7) and times span less than two decades (the
        // FLOP axis showed "1e+07" alone, the time axis one "1").
        for (QChartView* chart : {view.chart(), view.time_chart()})
            for (QAbstractAxis* a : chart->chart()->axes()) {
                auto* log = qobject_cast<QLogValueAxis*>(a);
                QVERIFY(log);
                const double b = log->base();
                const int labels =
                    static_cast<int>(std::floor(std::log(log->max()) / std::log(b) + 1e-9) -
                                     std::ceil(std::log(log->min()) / std::log(b) - 1e-9)) +
                    1;
                QVERIFY2(labels >= 2, qPrintable(QString("%1: %2 labels from %3 to %4, base %5")
                                                     .arg(a->titleText())
                                                     .arg(labels)
                                                     .arg(log->min())
                                                     .arg(log->max())
                                                     .arg(b)));
            }

        // Without a timings file: FLOPs only, no measured chart.
        view.restore_settings(nlohmann::json{{"models", {{{"arch", "bigs"}}}}, {"timings", ""}});
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(!view.time_chart()->isVisible());
        QCOMPARE(view.figure_table().columns.back(), std::string("forward_backward"));

        // A file that is not bench output: the view fails with a message naming it.
        QFile bad(dir + "/not-bench.txt");
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("hello\n");
        bad.close();
        view.restore_settings(nlohmann::json{{"timings", (dir + "/not-bench.txt").toStdString()}});
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(!view.has_result() || !view.error().isEmpty());
        QVERIFY2(view.error().contains("not-bench.txt"), qPrintable(view.error()));
    }

    // CI, 2026-11-26: timings whose fastest point was near 2 ms gave a time axis from about 1 ms,
    // and with the lengths' axis ending on the first length, "1" and "128" met at the corner of
    // the double-column figure at 10 pt. Here the time axis starts at exactly 1 ms (the fastest
    // point is 2 ms); every size and text size must read.
    void cornerLabelsOfLogAxesNeverMeet() {
        const QString dir = view_test::data_dir("efficiency_corner");
        const QString timings = dir + "/forward.txt";
        QFile f(timings);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"lengths": [128, 256, 512, 1024], "bigs_ms": [2, 3.1, 5.2, 9.5],)"
                R"( "bert_ms": [2.5, 4.2, 9.1, 20.4], "crossover": 256})"
                "\n");
        f.close();
        EfficiencyViewSettings s;
        s.models = {{"bigs", 2, 32, 0, 64}, {"bert", 2, 32, 0, 0}};
        s.lengths = {128, 256, 512, 1024};
        s.timings = timings;
        EfficiencyView view(s);
        view.resize(1200, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        const QStringList problems = view_test::journal_layout_problems(view);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("\n")));
    }
};

QTEST_MAIN(TestEfficiencyTimings)
#include "test_efficiency_timings.moc"
