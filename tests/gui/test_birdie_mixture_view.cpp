// The Birdie objective mixture in the Training view (ANALYSES.md §8, issue 7): a tiny birdie run
// trained through routescope-cli (prefix-mode Birdie, 40 steps, a controller update every 10) is
// opened in the Training view, which shows one mixture-weight line and one loss line per arm from
// the log's "mixture" records, under the controller's name (a bandit, not a learned reward model).
// Also: a run without mixture records hides the panel, and a resumed log's repeated mixture record
// replaces the later ones. Screenshot: training_birdie_mixture.png.
#include <QChartView>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "view_test_support.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_panel.hpp"
#include "views/display_name.hpp"
#include "views/training_view.hpp"

using namespace routescope;

namespace {

QJsonObject object(const char* json) {
    return QJsonDocument::fromJson(json).object();
}

}  // namespace

class TestBirdieMixtureView : public QObject {
    Q_OBJECT
    QString run_;

private slots:
    void initTestCase() {
        const QString dir = view_test::data_dir("test_birdie_mixture_view");
        run_ = QDir(dir).filePath("birdie-run");
        QDir(run_).removeRecursively();
        const nlohmann::json config = {{"model",
                                        {{"arch", "birdie"},
                                         {"d_model", 32},
                                         {"n_layers", 2},
                                         {"d_inner", 48},
                                         {"max_len", 64},
                                         {"dropout", 0.0},
                                         {"birdie", {{"mode", "prefix"}}}}},
                                       {"tokenizer", {{"kind", "bytes"}}},
                                       {"data", {{"train", "builtin:grammar"}, {"seq_len", 64}}},
                                       {"train",
                                        {{"objective", "birdie"},
                                         {"batch_size", 4},
                                         {"steps", 40},
                                         {"lr", 3e-3},
                                         {"warmup_steps", 5},
                                         {"eval_every", 20},
                                         {"eval_batches", 2},
                                         {"checkpoint_every", 0},
                                         {"birdie", {{"update_every", 10}}}}}};
        const QString config_path = QDir(dir).filePath("birdie.json");
        std::ofstream(config_path.toStdString()) << config.dump(2);
        QProcess p;
        p.start(QStringLiteral(ROUTESCOPE_CLI),
                {"train", "--config", config_path, "--out", run_, "--threads", "1"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void mixture_of_a_birdie_run_is_drawn() {
        views::TrainingView view(views::TrainingViewSettings{{run_}, "step"});
        view.resize(1200, 1100);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QCOMPARE(view.logs().size(), std::size_t(1));
        const auto& log = view.logs().front();
        QCOMPARE(log.mixtures.size(), std::size_t(5));  // steps 0, 10, 20, 30, 40
        QCOMPARE(log.arms.size(), 9);                   // every arm of the catalogue
        QVERIFY(log.controller.contains("bandit"));
        for (const auto& m : log.mixtures) {
            double sum = 0;
            for (double w : m.weights)
                sum += w;
            QVERIFY2(std::fabs(sum - 1) < 1e-6, qPrintable(QString::number(sum)));
        }

        // The chart: one series per arm whose weights at each update sum to 1.
        auto* panel = view.findChild<QWidget*>("mixturePanel");
        QVERIFY(panel && panel->isVisible());
        const auto mixture = view.chart("mixture")->chart()->series();
        QCOMPARE(mixture.size(), 9);
        for (int k = 0; k < 5; ++k) {
            double sum = 0;
            for (auto* s : mixture) {
                const auto pts = static_cast<QLineSeries*>(s)->points();
                QCOMPARE(pts.size(), 5);
                QCOMPARE(pts[k].x(), 10.0 * k);
                sum += pts[k].y();
            }
            QVERIFY2(std::fabs(sum - 1) < 1e-6, qPrintable(QString::number(sum)));
        }
        const auto losses = view.chart("arm_loss")->chart()->series();
        QCOMPARE(losses.size(), 9);
        for (auto* s : losses)
            for (const QPointF& p : static_cast<QLineSeries*>(s)->points())
                QVERIFY(std::isfinite(p.y()) && p.y() > 0);
        // The controller is named what it is: a bandit.
        QVERIFY(routescope::views::chart_title(view.chart("mixture")).contains("bandit"));
        QVERIFY(view.findChild<QLabel*>("mixtureController")->text().contains("simpler bandit"));
        // The figure's table carries the mixture rows (one per arm and update).
        const auto table = view.figure_table();
        std::size_t rows = 0;
        for (const auto& r : table.rows)
            if (r[1] == "mixture") ++rows;
        QCOMPARE(rows, std::size_t(45));
        QVERIFY(view_test::screenshot(&view, "training_birdie_mixture"));
    }

    void run_without_mixture_hides_the_panel() {
        const QString dir = QDir(view_test::data_dir("test_birdie_mixture_view")).filePath("mlm");
        QDir().mkpath(dir);
        std::ofstream(QDir(dir).filePath("log.jsonl").toStdString())
            << R"({"type":"step","step":1,"loss":5.0,"lr":0.001,"grad_norm":1.0,"tokens_per_s":10,"elapsed":0.1})"
               "\n"
            << R"({"type":"step","step":2,"loss":4.0,"lr":0.001,"grad_norm":1.0,"tokens_per_s":10,"elapsed":0.2})"
               "\n";
        views::TrainingView view(views::TrainingViewSettings{{dir}, "step"});
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(view.logs().front().mixtures.empty());
        QVERIFY(!view.findChild<QWidget*>("mixturePanel")->isVisible());
    }

    // Issue 26: one colour per run in every chart; TensorBoard-style smoothing with the raw
    // curve faint beneath; a run filter; both kept in the view's settings (projects, undo).
    void runs_keep_one_colour_smoothing_and_filter() {
        const QString root = view_test::data_dir("test_birdie_mixture_view");
        QStringList dirs;
        for (const QString name : {"alpha", "beta"}) {
            const QString dir = QDir(root).filePath(name);
            QDir().mkpath(dir);
            std::ofstream log(QDir(dir).filePath("log.jsonl").toStdString());
            for (int step = 1; step <= 10; ++step)
                log << R"({"type":"step","step":)" << step << R"(,"loss":)"
                    << (step % 2 ? 4.0 : 2.0)
                    << R"(,"lr":0.001,"grad_norm":1.0,"tokens_per_s":10,"elapsed":)" << step * 0.1
                    << "}\n";
            log << R"({"type":"eval","step":10,"loss":3.0,"accuracy":0.5})"
                << "\n";
            dirs << dir;
        }
        views::TrainingViewSettings settings{dirs, "step"};
        settings.smoothing = 0.5;
        // A fresh workspace: the runs' models take the first two colours, in the view's order.
        views::forget_model_identities();
        views::TrainingView view(settings);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        // Each run's series have its colour in all four charts (held-out dashed, raw faint).
        for (int r = 0; r < 2; ++r) {
            const QColor colour = views::model_colour(static_cast<std::size_t>(r));
            const QString name = QFileInfo(dirs[r]).fileName();
            for (const QString metric : {"loss", "lr", "grad_norm", "tokens_per_s"})
                for (QAbstractSeries* s : view.chart(metric)->chart()->series()) {
                    auto* line = qobject_cast<QLineSeries*>(s);
                    if (!line || !line->name().startsWith(name)) continue;
                    QCOMPARE(line->pen().color().rgb(), colour.rgb());
                    QCOMPARE(line->pen().color().alpha(), 255);
                }
        }
        QVERIFY(views::model_colour(0) != views::model_colour(1));
        // Past the eight colours of the palette, no model repeats one (the ninth was the first's).
        for (std::size_t a = 0; a < 24; ++a)
            for (std::size_t b = a + 1; b < 24; ++b)
                QVERIFY2(views::model_colour(a).rgb() != views::model_colour(b).rgb(),
                         qPrintable(QString("models %1 and %2 share a colour").arg(a).arg(b)));
        // Smoothing 0.5 of 4, 2, 4, 2, …: the debiased average, computed here by its recursion
        // (s_1 = 4, s_2 = (0.25·4 + 0.5·2) / 0.75 = 2.667); the raw points beneath, unnamed.
        QLineSeries *smoothed = nullptr, *raw = nullptr;
        for (QAbstractSeries* s : view.chart("loss")->chart()->series()) {
            auto* line = qobject_cast<QLineSeries*>(s);
            if (line && line->name() == "alpha train") smoothed = line;
            if (line && line->name().isEmpty() && !raw) raw = line;
        }
        QVERIFY(smoothed && raw);
        QCOMPARE(raw->pen().color().alpha(), 60);
        QCOMPARE(raw->points().at(1).y(), 2.0);
        QCOMPARE(smoothed->points().at(0).y(), 4.0);
        QVERIFY(std::abs(smoothed->points().at(1).y() - (0.25 * 4 + 0.5 * 2) / 0.75) < 1e-12);
        // No smoothing: the raw curve alone.
        view.set_smoothing(0);
        int lines = 0;
        for (QAbstractSeries* s : view.chart("loss")->chart()->series())
            lines += qobject_cast<QLineSeries*>(s) != nullptr;
        QCOMPARE(lines, 4);  // two runs × (train, held-out)
        // The filter: only beta; beta keeps its colour.
        view.set_run_filter("^be");
        QStringList names;
        for (QAbstractSeries* s : view.chart("lr")->chart()->series())
            names << s->name();
        QCOMPARE(names, QStringList{"beta"});
        auto* beta = qobject_cast<QLineSeries*>(view.chart("lr")->chart()->series().front());
        QCOMPARE(beta->pen().color().rgb(), views::model_colour(1).rgb());
        // A pattern that does not parse shows every run.
        view.set_run_filter("(");
        QCOMPARE(view.chart("lr")->chart()->series().size(), 2);
        // Both are settings: saved and restored.
        view.set_run_filter("alpha");
        view.set_smoothing(0.8);
        const nlohmann::json saved = view.settings();
        QCOMPARE(saved["smoothing"].get<double>(), 0.8);
        QCOMPARE(saved["run_filter"].get<std::string>(), std::string("alpha"));
        views::TrainingView other(views::TrainingViewSettings{dirs, "step"});
        other.restore_settings(saved);
        QCOMPARE(other.settings()["smoothing"].get<double>(), 0.8);
        QCOMPARE(other.findChild<QLineEdit*>("runFilter")->text(), QString("alpha"));
        QCOMPARE(other.findChild<QDoubleSpinBox*>("smoothing")->value(), 0.8);
    }

    void resumed_mixture_replaces_the_later_ones() {
        views::TrainingLog log;
        const char* m0 =
            R"({"type":"mixture","step":0,"controller":"ema-bandit","mixture":{"a":0.5,"b":0.5},"losses":{"a":3,"b":4},"rewards":{"a":null,"b":null}})";
        const char* m10 =
            R"({"type":"mixture","step":10,"controller":"ema-bandit","mixture":{"a":0.7,"b":0.3},"losses":{"a":2,"b":3},"rewards":{"a":0.1,"b":-0.1}})";
        const char* m20 =
            R"({"type":"mixture","step":20,"controller":"ema-bandit","mixture":{"a":0.6,"b":0.4},"losses":{"a":1,"b":2},"rewards":{"a":0.1,"b":0.2}})";
        log.add(object(m0));
        log.add(object(m10));
        log.add(object(m20));
        QCOMPARE(log.mixtures.size(), std::size_t(3));
        QVERIFY(std::isnan(log.mixtures[0].rewards[0]));  // the first update has no reward yet
        log.add(object(m10));                             // a run resumed from step 10
        QCOMPARE(log.mixtures.size(), std::size_t(2));
        QCOMPARE(log.mixtures.back().step, 10.0);
        QCOMPARE(log.arms, QStringList({"a", "b"}));
        QCOMPARE(log.mixtures.back().weights[0], 0.7);
    }

    // A record whose step is not a whole number from 0 up (a log edited or written by other
    // code) is skipped: step -5 was taken for a run resumed before step 0 and erased every step
    // record before it (session 32).
    // Probe Z7-03: a run whose log.jsonl holds no records (a run just started, or an empty log)
    // drew four empty charts without a word. Each chart names the run under its title; records
    // that arrive live take the note away. A log of evaluations only draws its held-out loss:
    // the other three charts say it has no step records.
    void empty_log_is_said_on_each_chart() {
        const QString dir = QDir(view_test::data_dir("test_birdie_mixture_view")).filePath("empty");
        QDir(dir).removeRecursively();
        QDir().mkpath(dir);
        std::ofstream(QDir(dir).filePath("log.jsonl").toStdString()).close();
        views::TrainingView view(views::TrainingViewSettings{{dir}, "step"});
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        for (const char* metric : {"loss", "lr", "grad_norm", "tokens_per_s"}) {
            const QString title = views::chart_title(view.chart(metric));
            QVERIFY2(title.contains("empty: log.jsonl has no records yet"),
                     qPrintable(QString(metric) + ": " + title));
        }
        view.append_record(dir, object(R"({"type":"eval","step":0,"loss":3.0})"));
        view.draw_pending();
        QVERIFY(!views::chart_title(view.chart("loss")).contains("log.jsonl"));
        for (const char* metric : {"lr", "grad_norm", "tokens_per_s"}) {
            const QString title = views::chart_title(view.chart(metric));
            QVERIFY2(title.contains("empty: log.jsonl has no step records yet"),
                     qPrintable(QString(metric) + ": " + title));
        }
        view.append_record(
            dir,
            object(
                R"({"type":"step","step":1,"loss":5.0,"lr":0.001,"grad_norm":1.0,"tokens_per_s":10,"elapsed":0.1})"));
        view.draw_pending();
        for (const char* metric : {"loss", "lr", "grad_norm", "tokens_per_s"}) {
            const QString title = views::chart_title(view.chart(metric));
            QVERIFY2(!title.contains("log.jsonl"), qPrintable(QString(metric) + ": " + title));
        }
    }

    void records_of_no_step_are_skipped() {
        views::TrainingLog log;
        for (int s = 1; s <= 20; ++s)
            log.add(object(
                QString(R"({"type":"step","step":%1,"loss":1})").arg(s).toUtf8().constData()));
        for (const char* bad :
             {R"({"type":"step","step":-5,"loss":1})", R"({"type":"step","step":"x","loss":1})",
              R"({"type":"step","step":2.5,"loss":1})", R"({"type":"step","step":1e300,"loss":1})",
              R"({"type":"step","loss":1})", R"({"type":"eval","step":-1})"})
            log.add(object(bad));
        QCOMPARE(log.steps.size(), std::size_t(20));
        QCOMPARE(log.steps.back().step, 20.0);
        QVERIFY(log.evals.empty());
    }
};

QTEST_MAIN(TestBirdieMixtureView)
#include "test_birdie_mixture_view.moc"
