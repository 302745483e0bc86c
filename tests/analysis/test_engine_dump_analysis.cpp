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

#include <H5Cpp.h>
#include <filesystem>

#include "analysis/dump_reader.hpp"
#include "analysis/implicit_attention.hpp"
#include "analysis_test_support.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/fft_conv.hpp"

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

    void implicitAttentionAppliedToTheSsmInputsGivesTheSsmOutputs() {
        // Issue 28, acceptance 2: the implicit attention of a BiGS layer (the Toeplitz matrices of
        // its kernels with D, analysis/implicit_attention), applied to the layer's own SSM inputs
        // (the dumped gates u_f and u_b of an example, in token order), equals the SSM outputs
        // that the engine's convolution op (ops::fft_conv_forward, checked against PyTorch by
        // test_model_parity) computes from the same inputs and kernels: per channel, within 1e-5
        // of the outputs' scale. The backward SSM runs on the reversed sequence, as in the block.
        const routescope::analysis::DumpReader dump(after_dump().toStdString());
        const auto layers = dump.kernel_layers();
        QVERIFY(!layers.empty());
        const int L = static_cast<int>(dump.padded_length());
        routescope::ThreadPool& pool = routescope::ThreadPool::serial();
        for (int layer : layers) {
            for (std::int64_t example : {0, 1, 5}) {
                const auto rows = dump.example_of_row(layer);
                const auto row = std::find(rows.begin(), rows.end(), example) - rows.begin();
                for (const bool forward : {true, false}) {
                    const auto kernel32 = dump.kernel(layer, forward);
                    const double skip = dump.kernel_skip(layer, forward);
                    QCOMPARE(static_cast<int>(kernel32.size()), L);
                    const auto u = dump.gate_row(layer, forward ? "u_f" : "u_b", row);
                    const int d = static_cast<int>(u.cols());
                    // The engine's op: y = K * u + D u (causal), on u reversed for backward.
                    std::vector<float> in(static_cast<std::size_t>(L) * d), out(in.size());
                    for (int t = 0; t < L; ++t)
                        for (int c = 0; c < d; ++c)
                            in[static_cast<std::size_t>(t) * d + c] = u(forward ? t : L - 1 - t, c);
                    const float D = static_cast<float>(skip);
                    routescope::ops::FftConvWorkspace<float> ws(1, L, d, 1, 1);
                    routescope::ops::fft_conv_forward(out.data(), in.data(), kernel32.data(), &D, 1,
                                                      L, d, 1, ws, pool);
                    // The analysis: A (L × L, padding included as the block sees it) times u.
                    const std::vector<double> kernel(kernel32.begin(), kernel32.end());
                    const auto a =
                        routescope::analysis::toeplitz_attention(kernel, skip, L, forward);
                    for (int c = 0; c < d; ++c) {
                        double scale = 0, worst = 0;
                        for (int t = 0; t < L; ++t) {
                            double y = 0;
                            for (int s2 = 0; s2 < L; ++s2)
                                y += a[static_cast<std::size_t>(t) * L + s2] * u(s2, c);
                            const double ref =
                                out[static_cast<std::size_t>(forward ? t : L - 1 - t) * d + c];
                            scale = std::max(scale, std::abs(ref));
                            worst = std::max(worst, std::abs(y - ref));
                        }
                        QVERIFY2(worst <= 1e-5 * std::max(scale, 1e-3),
                                 qPrintable(QString("layer %1 example %2 %3 channel %4: |Au − y| "
                                                    "%5 against max |y| %6")
                                                .arg(layer)
                                                .arg(example)
                                                .arg(forward ? "forward" : "backward")
                                                .arg(c)
                                                .arg(worst)
                                                .arg(scale)));
                    }
                }
            }
        }
        // The CLI's per-example matrix (real tokens) is the same Toeplitz matrix's top-left block.
        const QString out = file("implicit.json");
        QCOMPARE(run_cli({"analyze", "implicit-attention", "--dump", after_dump(), "--layer",
                          QString::number(layers.front()), "--example", "1", "--mode", "forward",
                          "--out", out})
                     .exit_code,
                 0);
        const auto r = read_json(out)["results"][0];
        const auto n = r["length"].get<std::int64_t>();
        QCOMPARE(n, dump.lengths()[1]);
        const auto kf = dump.kernel(layers.front(), true);
        const double df = dump.kernel_skip(layers.front(), true);
        QCOMPARE(r["matrix"][0][0].get<double>(), double(kf[0]) + df);
        QCOMPARE(r["matrix"][3][1].get<double>(), double(kf[2]));
        QCOMPARE(r["matrix"][1][3].get<double>(), 0.0);
        QCOMPARE(static_cast<std::int64_t>(r["tokens"].size()), n);
        // Bad input: BERT has no kernels; gated needs the gates; an unknown mode.
        const QString bad = file("implicit-bad.json");
        auto refused = run_cli({"analyze", "implicit-attention", "--dump", after_dump(), "--layer",
                                "0", "--out", bad});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.output.contains("no SSM kernels"), qPrintable(refused.output));
        refused = run_cli({"analyze", "implicit-attention", "--dump", after_dump(), "--layer",
                           QString::number(layers.front()), "--mode", "softmax", "--out", bad});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY(!QFileInfo::exists(bad));
    }

    // Issue 28: a BERT dump's own attention probabilities (dump --attention) in the implicit
    // attention analysis: the mean of the heads, or one head, over the example's real tokens,
    // read here from the dataset directly.
    void aBertDumpsAttentionIsItsProbabilities() {
        // A BERT on the induction task (its examples have different lengths: padding keys).
        auto c = induction_config(2);
        c["model"]["arch"] = "bert";
        c["model"].erase("ssm");
        const QString config = file("bert_attention.json");
        QFile cf(config);
        QVERIFY(cf.open(QIODevice::WriteOnly));
        cf.write(QByteArray::fromStdString(c.dump(2)));
        cf.close();
        const auto t = run_cli(
            {"train", "--config", config, "--out", file("bert_attention"), "--threads", "2"});
        QVERIFY2(t.exit_code == 0, qPrintable(t.output));
        const QString dump = file("bert_attention.dump.h5");
        const auto d =
            run_cli({"dump", "--checkpoint", file("bert_attention/model.ckpt.h5"), "--out", dump,
                     "--task", "induction", "--attention", "--examples", "3", "--threads", "2"});
        QVERIFY2(d.exit_code == 0, qPrintable(d.output));
        H5::H5File f(dump.toStdString(), H5F_ACC_RDONLY);
        H5::DataSet ds = f.openDataSet("/layers/2/attention");
        hsize_t dims[4];
        ds.getSpace().getSimpleExtentDims(dims);
        std::vector<float> all(dims[0] * dims[1] * dims[2] * dims[3]);
        ds.read(all.data(), H5::PredType::NATIVE_FLOAT);
        std::int32_t lengths[3];
        f.openDataSet("/data/lengths").read(lengths, H5::PredType::NATIVE_INT32);
        const int H = static_cast<int>(dims[1]), L = static_cast<int>(dims[2]);
        const int example = 1, n = lengths[example];
        auto at = [&](int h, int t, int s) {
            return static_cast<double>(
                all[((static_cast<std::size_t>(example) * H + h) * L + t) * L + s]);
        };
        for (const int head : {-1, H - 1}) {
            const QString out = file(QString("bert_attention_%1.json").arg(head + 1));
            const auto r = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "2",
                                    "--example", QString::number(example), "--head",
                                    QString::number(head), "--out", out});
            QVERIFY2(r.exit_code == 0, qPrintable(r.output));
            const auto res = read_json(out)["results"][0];
            QCOMPARE(res["source"].get<std::string>(), std::string("attention"));
            QCOMPARE(res["length"].get<int>(), n);
            const auto& m = res["matrix"];
            for (int t = 0; t < n; ++t)
                for (int s = 0; s < n; ++s) {
                    double want = 0;
                    for (int h = head < 0 ? 0 : head; h < (head < 0 ? H : head + 1); ++h)
                        want += at(h, t, s) / (head < 0 ? H : 1);
                    QVERIFY(std::abs(m[t][s].get<double>() - want) <= 1e-7);
                }
        }
        const auto bad = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "2",
                                  "--head", QString::number(H), "--out", file("none.json")});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.output.contains("attention heads"), qPrintable(bad.output));
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
