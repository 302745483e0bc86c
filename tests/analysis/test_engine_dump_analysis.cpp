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
#include "engine/io/checkpoint.hpp"
#include "engine/ops/fft_conv.hpp"

using namespace analysis_test;

namespace {

QString engine_dir() {
    return dump_dir() + "/engine";
}

QString file(const QString& name) {
    return engine_dir() + "/" + name;
}

/// A BiGS of d = 32, 2 layers, N = 16 on the induction task (70 valid examples, 66 tokens each),
/// with 2 kernels per SSM (each of 16 channels; its dump holds every group's:
/// /kernels/<l>/<direction>_groups); `causal`: model.causal (forward SSMs only) with 4 kernels,
/// trained with the next-token loss.
nlohmann::json induction_config(int steps, bool causal = false) {
    nlohmann::json c = {{"model",
                         {{"arch", "bigs"},
                          {"d_model", 32},
                          {"n_layers", 2},
                          {"max_len", 128},
                          {"causal", causal},
                          {"ssm", {{"n_modes", 16}, {"n_kernels", causal ? 4 : 2}}}}},
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
    if (causal) c["train"]["objective"] = "clm";
    return c;
}

QString train(const QString& name, int steps, bool causal = false) {
    const QString config = file(name + ".json");
    QFile out(config);
    if (!out.open(QIODevice::WriteOnly)) return "cannot write " + config;
    out.write(QByteArray::fromStdString(induction_config(steps, causal).dump(2)));
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

/// The implicit attention of one SSM direction of `layer` (analysis::toeplitz_attention of its
/// dumped kernel and D; with H > 1 kernels per SSM, channel c's group's: /kernels/<l>/
/// <direction>_groups), applied to the example's dumped SSM inputs (u_f, or u_b in token order),
/// against the SSM outputs the engine's convolution op (ops::fft_conv_forward, checked against
/// PyTorch by test_model_parity) computes from the same inputs and kernels: per channel within
/// 1e-5 of the outputs' scale. The backward SSM runs on the reversed sequence, as in the block.
/// Returns the first mismatch, or empty.
QString toeplitz_reproduces_the_convolution(const routescope::analysis::DumpReader& dump, int layer,
                                            std::int64_t example, bool forward) {
    const int L = static_cast<int>(dump.padded_length());
    const auto rows = dump.example_of_row(layer);
    const auto row = std::find(rows.begin(), rows.end(), example) - rows.begin();
    std::vector<float> kernels;  // [H, L]
    std::vector<double> skips;   // [H]
    if (const auto groups = dump.kernel_groups(layer, forward); groups.size() > 0) {
        kernels.assign(groups.data(), groups.data() + groups.size());
        skips = dump.kernel_group_skips(layer, forward);
    } else {
        kernels = dump.kernel(layer, forward);
        skips = {dump.kernel_skip(layer, forward)};
    }
    const int H = static_cast<int>(skips.size());
    if (static_cast<int>(kernels.size()) != H * L)
        return QString("layer %1: %2 kernel values for H = %3, L = %4")
            .arg(layer)
            .arg(kernels.size())
            .arg(H)
            .arg(L);
    const auto u = dump.gate_row(layer, forward ? "u_f" : "u_b", row);
    const int d = static_cast<int>(u.cols());
    // The engine's op: y = K * u + D u (causal), on u reversed for backward.
    std::vector<float> in(static_cast<std::size_t>(L) * d), out(in.size());
    for (int t = 0; t < L; ++t)
        for (int c = 0; c < d; ++c)
            in[static_cast<std::size_t>(t) * d + c] = u(forward ? t : L - 1 - t, c);
    const std::vector<float> D(skips.begin(), skips.end());
    routescope::ops::FftConvWorkspace<float> ws(1, L, d, H, 1);
    routescope::ops::fft_conv_forward(out.data(), in.data(), kernels.data(), D.data(), 1, L, d, H,
                                      ws, routescope::ThreadPool::serial());
    // The analysis: A of channel c's group (L × L, padding included as the block sees it) times u.
    for (int c = 0; c < d; ++c) {
        const int g = c / (d / H);
        const std::vector<double> kernel(kernels.begin() + static_cast<std::ptrdiff_t>(g) * L,
                                         kernels.begin() + static_cast<std::ptrdiff_t>(g + 1) * L);
        const auto a = routescope::analysis::toeplitz_attention(
            kernel, skips[static_cast<std::size_t>(g)], L, forward);
        double scale = 0, worst = 0;
        for (int t = 0; t < L; ++t) {
            double y = 0;
            for (int s2 = 0; s2 < L; ++s2)
                y += a[static_cast<std::size_t>(t) * L + s2] * u(s2, c);
            const double ref = out[static_cast<std::size_t>(forward ? t : L - 1 - t) * d + c];
            scale = std::max(scale, std::abs(ref));
            worst = std::max(worst, std::abs(y - ref));
        }
        if (worst > 1e-5 * std::max(scale, 1e-3))
            return QString("layer %1 example %2 %3 channel %4: |Au − y| %5 against max |y| %6")
                .arg(layer)
                .arg(example)
                .arg(forward ? "forward" : "backward")
                .arg(c)
                .arg(worst)
                .arg(scale);
    }
    return {};
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
        // The model has 2 kernels per SSM: the second channel group's, from the dump's
        // <direction>_groups and from the checkpoint's group-1 parameters.
        mismatch =
            cli_matches_reference("kernels", {after_dump()}, {"--radius", "8", "--group", "1"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch = cli_matches_reference("kernels", {checkpoint("after")},
                                         {"--length", "66", "--group", "1"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        for (const QStringList& input : {QStringList{"--dump", after_dump()},
                                         QStringList{"--checkpoint", checkpoint("after")}}) {
            const auto r = run_cli(QStringList{"analyze", "kernels"} + input +
                                   QStringList{"--group", "2", "--out", file("none.json")});
            QCOMPARE(r.exit_code, 2);
            QVERIFY2(r.output.contains("outside 0..1"), qPrintable(r.output));
        }
    }

    void kernelChangeBetweenInitialisationAndTrainingMatchesNumpy() {
        const auto mismatch =
            cli_matches_reference("kernel-change", {checkpoint("before"), checkpoint("after")},
                                  {"--length", "66"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        const auto second =
            cli_matches_reference("kernel-change", {checkpoint("before"), checkpoint("after")},
                                  {"--length", "66", "--group", "1"}, "--checkpoint");
        QVERIFY2(second.isEmpty(), qPrintable(second));
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
        for (int layer : layers)
            for (std::int64_t example : {0, 1, 5})
                for (const bool forward : {true, false}) {
                    const QString mismatch =
                        toeplitz_reproduces_the_convolution(dump, layer, example, forward);
                    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
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
        // With 2 kernels per SSM, the mean over the channels: the groups' mean kernel and skip.
        const auto kf = dump.kernel_groups(layers.front(), true);
        const auto df = dump.kernel_group_skips(layers.front(), true);
        QCOMPARE(kf.rows(), Eigen::Index{2});
        QCOMPARE(kf.row(0), Eigen::RowVectorXf(Eigen::Map<const Eigen::RowVectorXf>(
                                dump.kernel(layers.front(), true).data(), kf.cols())));
        const auto near = [](double a, double b) {
            return std::abs(a - b) <= 1e-12 * (1 + std::abs(b));
        };
        QVERIFY(near(r["matrix"][0][0].get<double>(),
                     0.5 * (double(kf(0, 0)) + df[0] + double(kf(1, 0)) + df[1])));
        QVERIFY(near(r["matrix"][3][1].get<double>(), 0.5 * (double(kf(0, 2)) + double(kf(1, 2)))));
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
        // --head applies to attention dumps: a head is refused on an SSM layer, but the default
        // written out (docs/analyses.md's example: [--head -1]) asks for nothing it lacks.
        refused = run_cli({"analyze", "implicit-attention", "--dump", after_dump(), "--layer",
                           QString::number(layers.front()), "--head", "0", "--out", bad});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.output.contains("holds no attention heads"), qPrintable(refused.output));
        QVERIFY2(run_cli({"analyze", "implicit-attention", "--dump", after_dump(), "--layer",
                          QString::number(layers.front()), "--mode", "sum", "--normalise", "raw",
                          "--head", "-1", "--out", bad})
                         .exit_code == 0,
                 "--head -1 (the default, written out) on an SSM layer");
    }

    // A causal BiGS (model.causal: forward SSMs only, the H3-protocol induction experiment's
    // GATED/SSM) dumps its forward kernels and D_forward alone; the kernel analyses read them as a
    // layer that sees nothing to its right (numpy: relative kernel 0 for r > 0, K_f[0] + D_f at
    // lag 0), from the dump, the checkpoint and between two checkpoints; its implicit attention is
    // the forward Toeplitz matrix, which applied to u_f gives the forward SSM's outputs, sum equals
    // forward, gated uses u_f alone, and backward is refused naming the causal layer.
    void aCausalBigsHasForwardKernelsAndImplicitAttention() {
        for (const auto& [name, steps] :
             {std::pair{"causal-before", 0}, std::pair{"causal-after", 30}}) {
            const QString error = train(name, steps, /*causal=*/true);
            QVERIFY2(error.isEmpty(), qPrintable(error));
        }
        const QString error = dump_of("causal-after");
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString dump_path = file("causal-after.dump.h5");
        auto mismatch = cli_matches_reference("kernels", {dump_path}, {"--radius", "8"});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch = cli_matches_reference("kernels", {file("causal-after/model.ckpt.h5")},
                                         {"--length", "66"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        mismatch = cli_matches_reference(
            "kernel-change",
            {file("causal-before/model.ckpt.h5"), file("causal-after/model.ckpt.h5")},
            {"--length", "66"}, "--checkpoint");
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));

        const routescope::analysis::DumpReader dump(dump_path.toStdString());
        QCOMPARE(dump.kernel_layers(), (std::vector<int>{1, 2}));
        for (int layer : {1, 2}) {
            QVERIFY(dump.kernel(layer, false).empty());
            for (std::int64_t example : {0, 3}) {
                const QString m = toeplitz_reproduces_the_convolution(dump, layer, example, true);
                QVERIFY2(m.isEmpty(), qPrintable(m));
            }
        }
        auto matrix = [&](const QString& mode) {
            const QString out = file("causal-implicit-" + mode + ".json");
            const auto r = run_cli({"analyze", "implicit-attention", "--dump", dump_path, "--layer",
                                    "2", "--example", "3", "--mode", mode, "--out", out});
            return r.exit_code == 0 ? read_json(out)["results"][0]
                                    : nlohmann::json(r.output.toStdString());
        };
        const auto forward = matrix("forward"), sum = matrix("sum"), gated = matrix("gated");
        QVERIFY2(forward.is_object(), forward.dump().c_str());
        QCOMPARE(sum["matrix"], forward["matrix"]);
        QVERIFY2(gated.is_object(), gated.dump().c_str());
        // gated[t][s] = mean_c |A_f,g(c)[t, s] u_f,c[s]| (no backward term; 4 kernels, each of 8
        // channels), here at t = 5, s = 2, where A_f,g[5, 2] = K_g[3].
        const auto rows = dump.example_of_row(2);
        const auto row = std::find(rows.begin(), rows.end(), 3) - rows.begin();
        const auto uf = dump.gate_row(2, "u_f", row);
        const auto kf = dump.kernel_groups(2, true);
        QCOMPARE(kf.rows(), Eigen::Index{4});
        double want = 0;
        for (int c = 0; c < 32; ++c)
            want += std::abs(double(kf(c / 8, 3)) * double(uf(2, c))) / 32;
        QVERIFY2(std::abs(gated["matrix"][5][2].get<double>() - want) <= 1e-9 * std::max(1.0, want),
                 qPrintable(QString("gated %1, expected %2")
                                .arg(gated["matrix"][5][2].get<double>())
                                .arg(want)));
        QCOMPARE(gated["matrix"][2][5].get<double>(), 0.0);
        // The induction circuit's two readings for a causal SSM layer: its gated implicit
        // attention's row shares (analysis/induction_heads.hpp), against numpy.
        const auto heads = cli_matches_reference("induction-heads", {dump_path}, {});
        QVERIFY2(heads.isEmpty(), qPrintable(heads));
        const auto refused = matrix("backward");
        QVERIFY2(
            refused.is_string() && refused.get<std::string>().find("causal") != std::string::npos,
            refused.dump().c_str());
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
        const auto trained = run_cli(
            {"train", "--config", config, "--out", file("bert_attention"), "--threads", "2"});
        QVERIFY2(trained.exit_code == 0, qPrintable(trained.output));
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
        // The same BERT dumped without --attention: the error says how to get its attention
        // (it said "no SSM kernels … BERT's attention is its own").
        const QString plain = file("bert_no_attention.dump.h5");
        QCOMPARE(run_cli({"dump", "--checkpoint", file("bert_attention/model.ckpt.h5"), "--out",
                          plain, "--task", "induction", "--examples", "3", "--threads", "2"})
                     .exit_code,
                 0);
        const auto none = run_cli({"analyze", "implicit-attention", "--dump", plain, "--layer", "2",
                                   "--out", file("none.json")});
        QCOMPARE(none.exit_code, 2);
        QVERIFY2(none.output.contains("no attention probabilities") &&
                     none.output.contains("dump --attention"),
                 qPrintable(none.output));

        // The induction circuit's two heads (analysis/induction_heads.hpp) from the same
        // checkpoint's probabilities over 40 examples of several lengths (padding keys), the
        // heads' mean, against numpy written from the definition; a dump without attention
        // probabilities and a marker the vocabulary lacks are clear errors.
        const QString many = file("bert_attention_40.dump.h5");
        QCOMPARE(
            run_cli({"dump", "--checkpoint", file("bert_attention/model.ckpt.h5"), "--out", many,
                     "--task", "induction", "--attention", "--examples", "40", "--threads", "2"})
                .exit_code,
            0);
        const auto mismatch = cli_matches_reference("induction-heads", {many}, {});
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        auto refused = run_cli(
            {"analyze", "induction-heads", "--dump", after_dump(), "--out", file("none.json")});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.output.contains("no attention probabilities"), qPrintable(refused.output));
        refused = run_cli({"analyze", "induction-heads", "--dump", many, "--marker", "=>", "--out",
                           file("none.json")});
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(refused.output.contains("no piece '=>'"), qPrintable(refused.output));
    }

    // Issue 28: a Birdie layer's implicit attention is the decay of its forget gates. Applied to
    // the layer's own scan inputs i ⊙ z (the dumped gates, every position: pads go through the
    // scan), with the output gate and the checkpoint's W_out, it gives the layer's residual update
    // hidden[l] − hidden[l − 1] that the engine computed (its scan op is checked against PyTorch
    // by test_model_parity): a bidirectional block (reverse_from = N/2) and a causal one
    // (alternate pattern), and a prefix-mode model whose reverse carry stops at the causal suffix.
    // Reading every channel as forward instead fails the same check (the directions matter).
    void birdieDecayAppliedToTheScanInputsGivesTheLayersUpdate() {
        for (const char* mode : {"bidirectional", "prefix"}) {
            auto c = induction_config(0);
            c["model"]["arch"] = "birdie";
            c["model"].erase("ssm");
            c["model"]["birdie"] = {{"mode", mode}, {"layer_pattern", "alternate"}};
            const QString name = QString("birdie_%1").arg(mode);
            QFile cf(file(name + ".json"));
            QVERIFY(cf.open(QIODevice::WriteOnly));
            cf.write(QByteArray::fromStdString(c.dump(2)));
            cf.close();
            const auto t = run_cli({"train", "--config", file(name + ".json"), "--out", file(name),
                                    "--set", "train.steps=3", "--threads", "2"});
            QVERIFY2(t.exit_code == 0, qPrintable(t.output));
            const QString dump = file(name + ".dump.h5");
            const auto d =
                run_cli({"dump", "--checkpoint", file(name + "/model.ckpt.h5"), "--out", dump,
                         "--task", "induction", "--gates", "--examples", "4", "--threads", "2"});
            QVERIFY2(d.exit_code == 0, qPrintable(d.output));
            const routescope::Checkpoint ck =
                routescope::read_checkpoint(file(name + "/model.ckpt.h5").toStdString());
            const auto param = [&](const std::string& n) {
                for (const auto& e : ck.layout)
                    if (e.name == n) return ck.params.data() + e.offset;
                return static_cast<const float*>(nullptr);
            };
            const routescope::analysis::DumpReader r(dump.toStdString());
            const std::int64_t L = r.padded_length(), D = r.width();
            for (int layer : {1, 2}) {
                const float* W = param("layers." + std::to_string(layer - 1) + ".w_out.weight");
                const float* bias = param("layers." + std::to_string(layer - 1) + ".w_out.bias");
                QVERIFY(W && bias);
                const int reverse_from = r.gate_reverse_from(layer);
                QCOMPARE(reverse_from >= 0, layer == 1);  // alternate: block 1 is causal
                for (std::int64_t example : {0, 3}) {
                    const auto row = std::find(r.example_of_row(layer).begin(),
                                               r.example_of_row(layer).end(), example) -
                                     r.example_of_row(layer).begin();
                    const auto f = r.gate_row(layer, "f", row), i = r.gate_row(layer, "i", row),
                               z = r.gate_row(layer, "z", row), o = r.gate_row(layer, "o", row);
                    const Eigen::Index N = f.cols();
                    const Eigen::Index nf = reverse_from < 0 ? N : reverse_from;
                    const std::int64_t p = reverse_from >= 0 ? r.prefix_end(example) : -1;
                    const std::vector<std::int32_t> mask = r.reset_mask(example);
                    QCOMPARE(p >= 0, std::string(mode) == "prefix" && layer == 1);
                    const auto h1 = r.hidden_row(layer, row), h0 = r.hidden_row(layer - 1, row);
                    const std::int64_t n = h1.rows();
                    // 0: the layer's own directions and prefix cut; 1: every channel forward; 2:
                    // the directions without the prefix cut (differs only in a prefix layer).
                    for (const int variant : {0, 1, 2}) {
                        const bool right = variant != 1;
                        // state H[t, c] = Σ_s A_c[t, s] i z [s, c], over all L positions.
                        Eigen::MatrixXd H = Eigen::MatrixXd::Zero(L, N);
                        for (Eigen::Index ch = 0; ch < N; ++ch) {
                            const bool fwd = !right || ch < nf;
                            const auto a = routescope::analysis::decay_attention(
                                f, ch, L, fwd, mask, variant == 0 && reverse_from >= 0);
                            for (std::int64_t tt = 0; tt < L; ++tt)
                                for (std::int64_t s = 0; s < L; ++s)
                                    H(tt, ch) += a[static_cast<std::size_t>(tt * L + s)] *
                                                 double(i(s, ch)) * double(z(s, ch));
                        }
                        double worst = 0, scale = 0;
                        for (std::int64_t tt = 0; tt < n; ++tt)
                            for (std::int64_t k = 0; k < D; ++k) {
                                double y = bias[k];
                                for (Eigen::Index ch = 0; ch < N; ++ch)
                                    y += double(W[k * N + ch]) * double(o(tt, ch)) * H(tt, ch);
                                const double want = double(h1(tt, k)) - double(h0(tt, k));
                                scale = std::max(scale, std::abs(want));
                                worst = std::max(worst, std::abs(y - want));
                            }
                        const QString what = QString(
                                                 "%1 layer %2 example %3: |W_out(o ⊙ A iz) − "
                                                 "Δhidden| %4 against max |Δhidden| %5")
                                                 .arg(mode)
                                                 .arg(layer)
                                                 .arg(example)
                                                 .arg(worst)
                                                 .arg(scale);
                        const char* label[] = {"", "all forward: ", "no prefix cut: "};
                        qDebug("%s%s", label[variant], qPrintable(what));
                        if (variant == 0)
                            QVERIFY2(worst <= 2e-3 * scale + 1e-6, qPrintable(what));
                        else if (variant == 1 && reverse_from >= 0)  // some channels scan back
                            QVERIFY2(worst > 2e-2 * scale, qPrintable(label[1] + what));
                        else if (variant == 2 && p >= 0)
                            QVERIFY2(worst > 2e-2 * scale, qPrintable(label[2] + what));
                    }
                }
            }
            // The CLI: sum is the mean of A_c over every channel; a causal layer has no
            // backward; the matrix covers the example's real tokens.
            const QString out = file(name + "-implicit.json");
            auto a = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "1",
                              "--example", "0", "--mode", "sum", "--out", out});
            QVERIFY2(a.exit_code == 0, qPrintable(a.output));
            const auto res = read_json(out)["results"][0];
            QCOMPARE(res["source"].get<std::string>(), std::string("decay"));
            const auto f = r.gate_row(1, "f", 0);
            const std::int64_t n = r.lengths()[0];
            QCOMPARE(res["length"].get<std::int64_t>(), n);
            const Eigen::Index N = f.cols(), nf = r.gate_reverse_from(1);
            const std::int64_t p = r.prefix_end(0);
            for (const auto& [tt, s] : {std::pair<int, int>{3, 1}, {1, 3}, {5, 5}, {2, 7}}) {
                double want = 0;
                for (Eigen::Index ch = 0; ch < N; ++ch) {
                    double prod = 1;
                    if (s <= tt) {
                        if (ch >= nf && s < tt) prod = 0;
                        for (int k = s + 1; k <= tt && ch < nf; ++k)
                            prod *= f(k, ch);
                    } else {
                        if (ch < nf || (p >= 0 && s >= p)) prod = 0;
                        for (int k = tt; k < s && prod != 0; ++k)
                            prod *= f(k, ch);
                    }
                    want += prod / double(N);
                }
                QVERIFY2(std::abs(res["matrix"][tt][s].get<double>() - want) <= 1e-9,
                         qPrintable(QString("%1 (%2, %3): %4 against %5")
                                        .arg(mode)
                                        .arg(tt)
                                        .arg(s)
                                        .arg(res["matrix"][tt][s].get<double>())
                                        .arg(want)));
            }
            a = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "2", "--mode",
                         "backward", "--out", file("none.json")});
            QCOMPARE(a.exit_code, 2);
            QVERIFY2(a.output.contains("causal Birdie layer"), qPrintable(a.output));
        }
    }

    // Issue 28: a gMLP layer's implicit attention is its spatial weight W over the example's
    // tokens, as the dump's /mixing/<l> holds it (forward: its lower triangle).
    void gmlpImplicitAttentionIsItsSpatialWeight() {
        auto c = induction_config(0);
        c["model"]["arch"] = "gmlp";
        c["model"].erase("ssm");
        QFile cf(file("gmlp_mixing.json"));
        QVERIFY(cf.open(QIODevice::WriteOnly));
        cf.write(QByteArray::fromStdString(c.dump(2)));
        cf.close();
        const auto t = run_cli({"train", "--config", file("gmlp_mixing.json"), "--out",
                                file("gmlp_mixing"), "--threads", "2"});
        QVERIFY2(t.exit_code == 0, qPrintable(t.output));
        const QString dump = file("gmlp_mixing.dump.h5");
        const auto d = run_cli({"dump", "--checkpoint", file("gmlp_mixing/model.ckpt.h5"), "--out",
                                dump, "--task", "induction", "--examples", "2", "--threads", "2"});
        QVERIFY2(d.exit_code == 0, qPrintable(d.output));
        H5::H5File h5(dump.toStdString(), H5F_ACC_RDONLY);
        H5::DataSet ds = h5.openDataSet("/mixing/2");
        hsize_t dims[2];
        ds.getSpace().getSimpleExtentDims(dims);
        std::vector<float> w(dims[0] * dims[1]);
        ds.read(w.data(), H5::PredType::NATIVE_FLOAT);
        for (const char* mode : {"sum", "forward"}) {
            const QString out = file(QString("gmlp-%1.json").arg(mode));
            const auto r = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "2",
                                    "--example", "1", "--mode", mode, "--out", out});
            QVERIFY2(r.exit_code == 0, qPrintable(r.output));
            const auto res = read_json(out)["results"][0];
            QCOMPARE(res["source"].get<std::string>(), std::string("spatial"));
            const int n = res["length"].get<int>();
            for (int tt = 0; tt < n; ++tt)
                for (int s = 0; s < n; ++s) {
                    const double want = std::string(mode) == "forward" && s > tt
                                            ? 0.0
                                            : double(w[static_cast<std::size_t>(tt) * dims[1] + s]);
                    QCOMPARE(res["matrix"][tt][s].get<double>(), want);
                }
        }
        const auto bad = run_cli({"analyze", "implicit-attention", "--dump", dump, "--layer", "2",
                                  "--mode", "gated", "--out", file("none.json")});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.output.contains("spatial weight"), qPrintable(bad.output));
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
        // The causal BiGS with 4 kernels per SSM (written by the causal test above): one SSM
        // branch per block, H groups of SSM parameters — counted from its own tensors by numpy.
        QVERIFY(QFileInfo::exists(file("causal-after/model.ckpt.h5")));
        const auto causal = cli_matches_reference("flops", {file("causal-after/model.ckpt.h5")},
                                                  {"--lengths", "66"}, "--checkpoint");
        QVERIFY2(causal.isEmpty(), qPrintable(causal));
    }
};

QTEST_GUILESS_MAIN(TestEngineDumpAnalysis)
#include "test_engine_dump_analysis.moc"
