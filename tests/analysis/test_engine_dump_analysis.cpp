// Every analysis kind of `routescope-cli analyze` on files the engine itself wrote, against the
// independent numpy + h5py references (tests/reference/analysis/reference_analysis.py):
// - a tiny BiGS is trained on the induction task (train --set data.task=induction), once for 0
//   steps ("before": its initialisation) and once for 30 steps from the same seed ("after");
// - `routescope-cli dump --gates --task induction` writes both models' activations over the same
//   validation examples (hidden states of every layer, sentence vectors, gates u_f/u_b/v, SSM
//   kernels, labels, predictions, the trigger-distance attribute);
// - anisotropy (token and sentence vectors), PCA redundancy, transitions, gates, kernels from the
//   dump and from the checkpoint, kernel change between the two checkpoints, accuracy by the
//   distance attribute (one model and the two-model comparison) and the FLOP model read from the
//   checkpoint's configuration are each computed by the CLI and recomputed by numpy.
// The h5py-written dumps of test_analysis cover the same kinds on files Routescope did not write.
#include <QDir>
#include <QtTest>

#include <filesystem>

#include "analysis_test_support.hpp"

using namespace analysis_test;

namespace {

QString engine_dir() {
    return dump_dir() + "/engine";
}

QString file(const QString& name) {
    return engine_dir() + "/" + name;
}

/// A BiGS of d = 32, 2 layers, N = 16 on the induction task (70 valid examples, 66 tokens each).
nlohmann::json induction_config(int steps) {
    return {{"model",
             {{"arch", "bigs"},
              {"d_model", 32},
              {"n_layers", 2},
              {"max_len", 128},
              {"ssm", {{"n_modes", 16}}}}},
            {"data",
             {{"task", "induction"},
              {"task_params", {{"n_train", 256}, {"n_valid", 70}, {"n_test", 16}}}}},
            {"train",
             {{"batch_size", 8},
              {"steps", steps},
              {"lr", 3e-3},
              {"warmup_steps", 3},
              {"eval_every", 1000},
              {"checkpoint_every", 1000},
              {"seed", 7}}}};
}

QString train(const QString& name, int steps) {
    const QString config = file(name + ".json");
    QFile out(config);
    if (!out.open(QIODevice::WriteOnly)) return "cannot write " + config;
    out.write(QByteArray::fromStdString(induction_config(steps).dump(2)));
    out.close();
    const auto r = run_cli({"train", "--config", config, "--out", file(name), "--threads", "2"});
    return r.exit_code == 0 ? QString() : "train " + name + " failed: " + r.output;
}

QString dump_of(const QString& name) {
    const auto r = run_cli({"dump", "--checkpoint", file(name + "/model.ckpt.h5"), "--out",
                            file(name + ".dump.h5"), "--task", "induction", "--gates", "--examples",
                            "70", "--threads", "2"});
    if (r.exit_code != 0) return "dump " + name + " failed: " + r.output;
    const auto v = run_cli({"validate", file(name + ".dump.h5")});
    return v.exit_code == 0 ? QString() : "the engine's dump does not validate: " + v.output;
}

}  // namespace

class TestEngineDumpAnalysis : public QObject {
    Q_OBJECT

    static QString after_dump() { return file("after.dump.h5"); }
    static QString checkpoint(const char* name) { return file(QString(name) + "/model.ckpt.h5"); }

private slots:
    void initTestCase() {
        QDir(engine_dir()).removeRecursively();
        QVERIFY(QDir().mkpath(engine_dir()));
        for (const auto& [name, steps] : {std::pair{"before", 0}, std::pair{"after", 30}}) {
            const QString error = train(name, steps);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            const QString dump_error = dump_of(name);
            QVERIFY2(dump_error.isEmpty(), qPrintable(dump_error));
        }
    }

    void anisotropyOfTokenAndSentenceVectorsMatchesNumpy() {
        auto mismatch =
            cli_matches_reference("anisotropy", {after_dump()}, {"--m", "60", "--seed", "1"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // The engine writes /layers/<l>/sentence (the model's masked-mean pool).
        mismatch = cli_matches_reference("anisotropy", {after_dump()}, {"--sentence", "--centred"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void pcaRedundancyMatchesNumpy() {
        const auto mismatch = cli_matches_reference(
            "pca", {after_dump()}, {"--global-m", "50", "--max-sentences", "30", "--seed", "2"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void layerTransitionsMatchNumpy() {
        const auto mismatch = cli_matches_reference("transitions", {after_dump()}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void gateStatisticsOfTheBigsGatesMatchNumpy() {
        const auto mismatch =
            cli_matches_reference("gates", {after_dump()}, {"--max-sentences", "20"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void kernelsFromTheDumpAndFromTheCheckpointMatchNumpy() {
        auto mismatch = cli_matches_reference("kernels", {after_dump()}, {"--radius", "8"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch = cli_matches_reference("kernels", {checkpoint("after")}, {"--length", "66"},
                                         "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void kernelChangeBetweenInitialisationAndTrainingMatchesNumpy() {
        const auto mismatch =
            cli_matches_reference("kernel-change", {checkpoint("before"), checkpoint("after")},
                                  {"--length", "66"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void accuracyByTriggerDistanceMatchesNumpy() {
        // Every induction example has the same length, so the attribute is the useful variable.
        auto mismatch = cli_matches_reference("length-accuracy", {after_dump()},
                                              {"--variable", "distance", "--bins", "4"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // Two models on the same examples: per-bin difference and McNemar's p.
        mismatch = cli_matches_reference("length-accuracy", {after_dump(), file("before.dump.h5")},
                                         {"--variable", "distance", "--bins", "3"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    void flopsOfTheCheckpointsModelCountItsOwnParameters() {
        const auto mismatch = cli_matches_reference("flops", {checkpoint("after")},
                                                    {"--lengths", "66,512"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        // From the dump the same model is read from /model's stored configuration.
        const QString a = file("flops-ckpt.json"), b = file("flops-dump.json");
        QCOMPARE(run_cli({"analyze", "flops", "--checkpoint", checkpoint("after"), "--out", a})
                     .exit_code,
                 0);
        QCOMPARE(run_cli({"analyze", "flops", "--dump", after_dump(), "--out", b}).exit_code, 0);
        QCOMPARE(read_json(a)["results"][0]["rows"], read_json(b)["results"][0]["rows"]);
    }
};

QTEST_GUILESS_MAIN(TestEngineDumpAnalysis)
#include "test_engine_dump_analysis.moc"
