// Performance item of the workbench issue: "while a training run and an analysis are running, the
// event loop's latency stays ≤ 100 ms". A real tiny training run (a `routescope-cli train` child
// started by the run launcher machinery, with its live Training view) and analyses of a dump in
// views (PCA and anisotropy, restarted as soon as they finish) run together while a 10 ms timer
// measures how late each of its ticks arrives. The test prints the worst and the 99th percentile
// lateness (recorded in docs/benchmarks.md) and asserts only a bound that a blocked event loop
// would break: CI machines are loaded two-core boxes, and speed is not asserted by timed tests.
#include <QtTest>

#include <QAbstractEventDispatcher>

#include <algorithm>
#include <ctime>

#include <sys/resource.h>

#include "app/gui/main_window.hpp"
#include "app/gui/run_process.hpp"
#include "view_test_support.hpp"
#include "views/analysis_view.hpp"

using namespace routescope;

namespace {

// Where the GUI thread's time goes: every event delivered on it, timed until the next event or
// until the loop goes to sleep (a nested event ends its parent's span early, which is good enough
// to name the slow handlers). The slowest are printed with the lateness figures.
class SlowEvents : public QObject {
public:
    SlowEvents() {
        connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::aboutToBlock, this,
                [this] { close(); });
        qApp->installEventFilter(this);
    }
    ~SlowEvents() override { stop(); }
    /// Ends the recording (the measured window is over).
    void stop() {
        close();
        qApp->removeEventFilter(this);
        disconnect(QAbstractEventDispatcher::instance(), nullptr, this, nullptr);
    }
    void print(int n) {
        close();
        std::sort(spans_.begin(), spans_.end(),
                  [](const auto& a, const auto& b) { return a.first > b.first; });
        for (int i = 0; i < n && i < static_cast<int>(spans_.size()); ++i)
            qInfo("  slow event %5.1f ms: %s", spans_[static_cast<std::size_t>(i)].first,
                  qPrintable(spans_[static_cast<std::size_t>(i)].second));
    }

protected:
    bool eventFilter(QObject* o, QEvent* e) override {
        if (QThread::currentThread() != qApp->thread()) return false;
        close();
        what_ = QString("%1 to %2 '%3' (parent %4)")
                    .arg(static_cast<int>(e->type()))
                    .arg(o->metaObject()->className(), o->objectName(),
                         o->parent() ? o->parent()->metaObject()->className() : "-");
        timer_.start();
        cpu_start_ = thread_cpu_ms();
        switches_start_ = switches();
        faults_start_ = major_faults();
        return false;
    }

private:
    QElapsedTimer timer_;
    double cpu_start_ = 0;
    std::pair<long, long> switches_start_;
    // (voluntary, involuntary) context switches of this thread: waits on a lock or I/O against
    // being preempted.
    static std::pair<long, long> switches() {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return {u.ru_nvcsw, u.ru_nivcsw};
    }
    static long major_faults() {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return u.ru_majflt;
    }
    long faults_start_ = 0;
    QString what_;
    static double thread_cpu_ms() {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
    }
    std::vector<std::pair<double, QString>> spans_;
    void close() {
        if (!timer_.isValid()) return;
        const double ms = timer_.nsecsElapsed() / 1e6;
        timer_.invalidate();
        if (ms >= 15)
            spans_.emplace_back(
                ms, QString("%1 (GUI thread CPU %2 ms, %3 waits, %4 preemptions, %5 major faults)")
                        .arg(what_)
                        .arg(thread_cpu_ms() - cpu_start_, 0, 'f', 1)
                        .arg(switches().first - switches_start_.first)
                        .arg(switches().second - switches_start_.second)
                        .arg(major_faults() - faults_start_));
    }
};

constexpr int kTickMs = 10;
// A GUI thread that blocked on a run's output or a dump's I/O would stall for seconds.
constexpr double kBlockedMs = 1000;
}  // namespace

class TestEventLoopLatency : public QObject {
    Q_OBJECT

private slots:
    void theEventLoopStaysResponsiveDuringARunAndAnAnalysis() {
        QStandardPaths::setTestModeEnabled(true);
        if (qEnvironmentVariableIsEmpty("ROUTESCOPE_CLI"))
            qputenv("ROUTESCOPE_CLI", ROUTESCOPE_CLI);
        const QString dir = view_test::data_dir("event_loop_latency");
        // A dump large enough that each analysis takes a noticeable time (~40 MB of float32).
        const QString dump = dir + "/latency.dump.h5";
        if (!QFile::exists(dump)) {
            QProcess p;
            p.start(QStringLiteral(ROUTESCOPE_CLI),
                    {"sample-dump", "--out", dump, "--examples", "600", "--length", "64",
                     "--d-model", "64", "--layers", "4"});
            QVERIFY(p.waitForFinished(120000));
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        }
        QDir(dir + "/run").removeRecursively();

        gui::MainWindow window;
        window.show();
        gui::RunSettings s;
        s.arch = "bigs";
        s.size = "tiny";
        s.data = "builtin:grammar";
        s.steps = 1000;
        s.lr = 2e-3;
        s.threads = 1;
        s.out_dir = dir + "/run";
        s.overrides = {"model.d_model=32", "model.max_len=32", "data.seq_len=32",
                       "model.ssm.n_modes=8"};
        gui::RunProcess* run = window.launch_run(s);
        QVERIFY(run);
        QTRY_VERIFY_WITH_TIMEOUT(run->step() >= 1, 60000);  // the child is training

        QList<views::AnalysisView*> analyses = {window.open_analysis("pca", {dump}),
                                                window.open_analysis("anisotropy", {dump})};
        int finished = 0;
        for (auto* v : analyses) {
            QVERIFY(v);
            // Keep the workers busy for as long as the run goes on.
            connect(v, &views::AnalysisView::analysisFinished, this, [&finished, v, run] {
                ++finished;
                if (run->running()) QTimer::singleShot(0, v, [v] { v->start(); });
            });
        }

        SlowEvents slow;
        std::vector<double> late;
        int ticks = 0, ticks_running = 0;
        QElapsedTimer since;
        since.start();
        QElapsedTimer overlap;
        overlap.start();
        QTimer tick;
        tick.setTimerType(Qt::PreciseTimer);
        connect(&tick, &QTimer::timeout, this, [&] {
            const double ms = since.nsecsElapsed() / 1e6;
            since.restart();
            bool analysing = false;
            for (auto* v : analyses)
                analysing = analysing || v->busy();
            ++ticks;
            if (run->running()) ++ticks_running;
            if (run->running() && analysing) late.push_back(std::max(0.0, ms - kTickMs));
        });
        tick.start(kTickMs);
        // A real event loop, as the application runs: QTRY_VERIFY/QTest::qWait poll the events and
        // sleep 10 ms in between, so a tick falling into one of those sleeps was reported late by
        // up to the sleep and its oversleep on a loaded machine (the figures of before
        // 2026-11-22 in docs/benchmarks.md include that).
        if (run->running()) {
            QEventLoop loop;
            connect(run, &gui::RunProcess::ended, &loop, &QEventLoop::quit);
            QTimer::singleShot(120000, &loop, &QEventLoop::quit);
            loop.exec();
        }
        QVERIFY(!run->running());
        const double seconds = overlap.elapsed() / 1000.0;
        tick.stop();
        slow.stop();
        for (auto* v : analyses)
            v->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(window.idle(), 30000);

        QCOMPARE(run->state(), gui::RunProcess::State::Finished);
        for (auto* v : analyses)
            QVERIFY2(v->error().isEmpty(), qPrintable(v->title() + ": " + v->error()));
        QVERIFY2(
            late.size() >= 50,
            qPrintable(
                QString("%1 ticks during the run and an analysis, %2 during the run, %3 in all, "
                        "%4 analyses finished")
                    .arg(late.size())
                    .arg(ticks_running)
                    .arg(ticks)
                    .arg(finished)));
        std::sort(late.begin(), late.end());
        const double worst = late.back();
        const double p99 = late[static_cast<std::size_t>(0.99 * (late.size() - 1))];
        const double median = late[late.size() / 2];
        qInfo(
            "event-loop lateness over %zu ticks of %d ms during %.1f s of training (%lld steps) "
            "and %d finished analyses: median %.1f ms, p99 %.1f ms, max %.1f ms",
            late.size(), kTickMs, seconds, static_cast<long long>(run->step()), finished, median,
            p99, worst);
        slow.print(12);
        QVERIFY2(worst < kBlockedMs, qPrintable(QString("worst lateness %1 ms").arg(worst)));
    }
};

QTEST_MAIN(TestEventLoopLatency)
#include "test_event_loop_latency.moc"
