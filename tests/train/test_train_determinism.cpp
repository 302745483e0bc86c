// Save, reload, continue gives bit-identical losses (ARCHITECTURE.md; issue 3 "Determinism"): 20
// steps, a checkpoint, a resume and 20 more steps give exactly the losses and the parameters of 40
// straight steps — with 1 thread and with 2 threads, each against itself. The run has dropout on,
// gradient accumulation and clipping, so every source of randomness and every piece of optimizer
// state crosses the checkpoint.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "engine/train/trainer.hpp"
#include "train_test_support.hpp"

using namespace routescope;

class TestTrainDeterminism : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

    RunConfig config() const {
        auto j = train_test::tiny_bigs(path("corpus.txt"));
        j["model"]["dropout"] = 0.1;
        j["train"]["grad_accum"] = 2;
        j["train"]["clip_grad_norm"] = 0.5;
        j["train"]["ssm_lr"] = 1e-3;
        return RunConfig::from_json(j);
    }

    void resume_repeats_straight_run(int threads) {
        const std::string straight = path(QStringLiteral("straight-%1").arg(threads));
        const std::string split = path(QStringLiteral("split-%1").arg(threads));
        train::TrainerOptions options;
        options.threads = threads;

        options.out_dir = straight;
        train::Trainer a(config(), options);
        QVERIFY(a.run().status == train::TrainResult::Status::finished);
        QCOMPARE(a.step(), 40);

        options.out_dir = split;
        options.until = 20;
        {
            train::Trainer b(config(), options);
            const auto r = b.run();
            QVERIFY(r.status == train::TrainResult::Status::until);
            QCOMPARE(r.step, 20);
        }
        options.until = 0;
        auto c = train::Trainer::resume(split + "/model.ckpt.h5", {}, options);
        QCOMPARE(c->step(), 20);
        QVERIFY(c->run().status == train::TrainResult::Status::finished);

        const auto la = train_test::step_losses(straight + "/log.jsonl");
        const auto lc = train_test::step_losses(split + "/log.jsonl");
        QCOMPARE(la.size(), std::size_t(40));
        QCOMPARE(lc.size(), std::size_t(40));
        for (std::size_t k = 0; k < 40; ++k)
            QVERIFY2(la[k] == lc[k], qPrintable(QStringLiteral("step %1: %2 vs %3")
                                                    .arg(k + 1)
                                                    .arg(la[k], 0, 'g', 17)
                                                    .arg(lc[k], 0, 'g', 17)));
        QVERIFY(la[39] < la[0]);  // it trained at all
        const auto& pa = a.model().params();
        const auto& pc = c->model().params();
        QCOMPARE(pa.size(), pc.size());
        QVERIFY(std::memcmp(pa.data(), pc.data(), pa.size() * sizeof(float)) == 0);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        train_test::write_text(path("corpus.txt"), train_test::word_corpus(200, 7));
    }

    void resumeAfter20StepsRepeats40StraightStepsWithOneThread() { resume_repeats_straight_run(1); }
    void resumeAfter20StepsRepeats40StraightStepsWithTwoThreads() {
        resume_repeats_straight_run(2);
    }

    void sameSeedSameThreadsGivesTheSameRunTwice() {
        train::TrainerOptions options;
        options.threads = 2;
        options.out_dir = path("twice-a");
        auto cfg = config();
        cfg.train.steps = 10;
        train::Trainer a(cfg, options);
        a.run();
        options.out_dir = path("twice-b");
        train::Trainer b(cfg, options);
        b.run();
        QCOMPARE(train_test::step_losses(path("twice-a/log.jsonl")),
                 train_test::step_losses(path("twice-b/log.jsonl")));
    }
};

QTEST_GUILESS_MAIN(TestTrainDeterminism)
#include "test_train_determinism.moc"
