// Birdie (MODELS.md "Birdie"; engine/models/birdie_block.hpp) as a model: which positions may
// influence which. Acceptance 2 of issue 7: in causal and prefix modes, changing a future token
// changes no earlier output, and in prefix mode no suffix token influences the prefix (its
// right-to-left half included). The expected dependencies come from MODELS.md's recurrences,
// not from the engine: h_t of a left-to-right scan reads x_{≤t}; the right-to-left half reads
// x_{≥t} inside the prefix and only x_t in the causal region; a reset cuts both at sample ends.
// Also: the layer pattern, the parameter layout and count, W_f's AdamW group, config errors.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "../loop_steps.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/models/model.hpp"
#include "engine/train/fixed_batch_objective.hpp"

using namespace routescope;

namespace {

constexpr int kB = 2, kL = 24, kV = 40;
// Influence fades as Π f (f ≈ σ(0) = 1/2 at init), so beyond ~10 positions it falls below float
// rounding of the residual stream: "must change" is checked within kNear positions only, "must not
// change" everywhere, bit-exactly.
constexpr int kNear = 3;

RunConfig birdie_config(const std::string& mode, const std::string& pattern = "alternate") {
    return RunConfig::from_json({{"model",
                                  {{"arch", "birdie"},
                                   {"vocab_size", kV},
                                   {"d_model", 16},
                                   {"n_layers", 3},
                                   {"d_inner", 24},
                                   {"max_len", kL},
                                   {"dropout", 0.0},
                                   {"ln_eps", 1e-5},
                                   {"birdie", {{"mode", mode}, {"layer_pattern", pattern}}}}}});
}

struct Data {
    std::vector<std::int32_t> tokens, lengths{kL, kL}, labels, reset;
};

Data make_data() {
    Data d;
    for (int i = 0; i < kB * kL; ++i) {
        d.tokens.push_back(1 + (i * 7 + 3) % (kV - 1));
        d.labels.push_back(i % 3 == 0 ? (i * 5) % kV : -100);
    }
    d.reset.assign(std::size_t(kB) * kL, 0);
    return d;
}

// Logits [B, L, V] of an inference forward.
std::vector<float> logits(models::Model& model, const Data& d, bool with_reset) {
    models::Batch b;
    b.tokens = d.tokens.data();
    b.lengths = d.lengths.data();
    b.labels = d.labels.data();
    if (with_reset) b.reset_mask = d.reset.data();
    model.forward(b, false);
    return {model.logits(), model.logits() + model.logits_size()};
}

// max |Δ| of the logits of row r at position l between two runs.
double change_at(const std::vector<float>& a, const std::vector<float>& b, int r, int l) {
    double m = 0;
    for (int v = 0; v < kV; ++v) {
        const std::size_t i = (std::size_t(r) * kL + l) * kV + v;
        m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    }
    return m;
}

}  // namespace

class TestBirdie : public QObject {
    Q_OBJECT

    // Changes token (row, q) and returns which positions of that row changed (bit-exact compare:
    // rows of every op are computed independently of other rows' values).
    std::vector<bool> influenced(const RunConfig& cfg, Data d, bool with_reset, int row, int q) {
        models::Model model(cfg, kB, kL, 1);
        model.init(7);
        const auto before = logits(model, d, with_reset);
        d.tokens[std::size_t(row) * kL + q] = 1 + d.tokens[std::size_t(row) * kL + q] % (kV - 1);
        const auto after = logits(model, d, with_reset);
        std::vector<bool> changed(kL);
        for (int l = 0; l < kL; ++l)
            changed[l] = change_at(before, after, row, l) > 0;
        // The other row never sees the change.
        for (int l = 0; l < kL; ++l)
            if (change_at(before, after, 1 - row, l) > 0) return {};
        return changed;
    }

private slots:
    void layerPatternAlternatesWithTheModeFirst() {
        const auto m = birdie_config("prefix").model;
        QCOMPARE(models::birdie_layer_mode(m, 0), models::BirdieLayerMode::prefix);
        QCOMPARE(models::birdie_layer_mode(m, 1), models::BirdieLayerMode::causal);
        QCOMPARE(models::birdie_layer_mode(m, 2), models::BirdieLayerMode::prefix);
        const auto u = birdie_config("bidirectional", "uniform").model;
        for (int i = 0; i < 3; ++i)
            QCOMPARE(models::birdie_layer_mode(u, i), models::BirdieLayerMode::bidirectional);
        QCOMPARE(models::birdie_layer_mode(birdie_config("causal").model, 0),
                 models::BirdieLayerMode::causal);
    }

    // MODELS.md: w_i, w_z, w_o, w_f d→N with bias, w_out N→d with bias, the block's LN: per layer
    // 5dN + 4N + d + 2d. N defaults to 3d.
    void parameterLayoutFollowsModelsMd() {
        const auto m = birdie_config("causal").model;
        const auto layout = models::Model::parameter_layout(m);
        const int d = 16, N = 24;
        std::int64_t layer0 = 0;
        std::vector<std::string> names;
        for (const auto& e : layout)
            if (e.name.rfind("layers.0.", 0) == 0) {
                layer0 += static_cast<std::int64_t>(e.size);
                names.push_back(e.name);
            }
        QCOMPARE(layer0, std::int64_t(5 * d * N + 4 * N + d + 2 * d));
        for (const char* n :
             {"layers.0.norm.weight", "layers.0.w_i.weight", "layers.0.w_z.bias",
              "layers.0.w_o.weight", "layers.0.w_f.weight", "layers.0.w_out.weight"})
            QVERIFY2(std::find(names.begin(), names.end(), n) != names.end(), n);
        RunConfig defaults = birdie_config("causal");
        defaults.model.d_inner.reset();
        QCOMPARE(defaults.model.inner(), 3 * d);
    }

    // The forget gate takes no weight decay: checked with the other declared groups in
    // test_adamw.cpp (parameterGroupsFollowDocsConfig).

    void oddStateSizeIsRejectedForSplitModes() {
        bool thrown = false;
        try {
            birdie_config("bidirectional").with_override("model.d_inner=25");
        } catch (const ConfigError& e) {
            thrown = QString(e.what()).contains("model.d_inner");
        }
        QVERIFY(thrown);
        (void)birdie_config("causal").with_override("model.d_inner=25");  // causal: fine
        thrown = false;
        try {
            (void)birdie_config("causal").with_override("model.birdie.mode=sideways");
        } catch (const ConfigError& e) {
            thrown = QString(e.what()).contains("model.birdie.mode");
        }
        QVERIFY(thrown);
    }

    // model.birdie.forget_init. Default "zero": every W_f bias is 0 (MODELS.md's init rule), also
    // after a config round trip. "spread": within each scan direction of G channels, channel k has
    // σ(b_k) = a_k with 1 − a_k = 0.1 · 0.01^(k / (G − 1)) — checked here against that formula: the
    // first 0.9, the last 0.999, log(1 − a_k) on a straight line. A causal layer is one direction
    // of G = N; a bidirectional layer two of G = N/2 each. W_f's weights stay normal(0, 0.02).
    void forgetInitDefaultIsZeroAndSpreadFollowsItsFormula() {
        const RunConfig zero = birdie_config("bidirectional");
        QCOMPARE(zero.model.birdie.forget_init, std::string("zero"));
        QCOMPARE(RunConfig::parse(zero.to_json_text()).model.birdie.forget_init,
                 std::string("zero"));
        {
            models::Model model(zero, kB, kL, 1);
            model.init(7);
            for (int l = 0; l < 3; ++l) {
                const float* b = model.params().param(models::layer_prefix(l) + "w_f.bias");
                for (int c = 0; c < 24; ++c)
                    QCOMPARE(b[c], 0.0f);
            }
        }
        const RunConfig spread =
            birdie_config("bidirectional").with_override("model.birdie.forget_init=spread");
        QCOMPARE(RunConfig::parse(spread.to_json_text()).model.birdie.forget_init,
                 std::string("spread"));
        models::Model model(spread, kB, kL, 1);
        model.init(7);
        const auto expect_direction = [&](const float* b, int G) {
            for (int k = 0; k < G; ++k) {
                const double a = 1.0 / (1.0 + std::exp(-double(b[k])));
                const double want = 1.0 - 0.1 * std::pow(0.01, double(k) / double(G - 1));
                QVERIFY2(std::fabs(std::log(1.0 - a) - std::log(1.0 - want)) < 1e-4,
                         qPrintable(QString("channel %1 of %2: σ(b) = %3, want %4")
                                        .arg(k)
                                        .arg(G)
                                        .arg(a, 0, 'g', 8)
                                        .arg(want, 0, 'g', 8)));
            }
            QVERIFY(std::fabs(1.0 / (1.0 + std::exp(-double(b[0]))) - 0.9) < 1e-6);
            QVERIFY(std::fabs(1.0 / (1.0 + std::exp(-double(b[G - 1]))) - 0.999) < 1e-6);
        };
        // Layers 0 and 2 bidirectional (two halves of 12), layer 1 causal (alternate pattern).
        for (int l : {0, 2}) {
            const float* b = model.params().param(models::layer_prefix(l) + "w_f.bias");
            expect_direction(b, 12);
            expect_direction(b + 12, 12);
        }
        expect_direction(model.params().param("layers.1.w_f.bias"), 24);
        // The weights keep the general init: mean ≈ 0, standard deviation ≈ init_std.
        const float* w = model.params().param("layers.1.w_f.weight");
        double sum = 0, sq = 0;
        const int n = 24 * 16;
        for (int i = 0; i < n; ++i) {
            sum += w[i];
            sq += double(w[i]) * w[i];
        }
        QVERIFY(std::fabs(sum / n) < 0.005);
        QVERIFY(std::fabs(std::sqrt(sq / n) - 0.02) < 0.004);
        bool thrown = false;
        try {
            (void)birdie_config("causal").with_override("model.birdie.forget_init=ones");
        } catch (const ConfigError& e) {
            thrown = QString(e.what()).contains("model.birdie.forget_init");
        }
        QVERIFY(thrown);
    }

    // Causal: token q influences no position < q, and the positions just after it.
    void causalModeFutureTokensChangeNoEarlierOutput() {
        for (int q : {0, 5, 17, kL - 1}) {
            const auto changed = influenced(birdie_config("causal"), make_data(), false, 0, q);
            QVERIFY(!changed.empty());
            for (int l = 0; l < kL; ++l)
                if (l < q || l <= q + kNear)
                    QVERIFY2(changed[l] == (l >= q),
                             qPrintable(QString("token %1, position %2").arg(q).arg(l)));
        }
    }

    // Bidirectional (the control): a later token does reach earlier positions.
    void bidirectionalModeSeesBothWays() {
        const auto changed = influenced(birdie_config("bidirectional"), make_data(), false, 1, 17);
        QVERIFY(!changed.empty());
        for (int l = 17 - kNear; l <= 17 + kNear; ++l)
            QVERIFY(changed[l]);
    }

    // Prefix: rows 0 and 1 each have prefix [0, 10) and causal region [10, 24). A suffix token q
    // influences no position < q (no prefix position, whatever its half), and those just after
    // it; a prefix token influences its neighbours on both sides (bidirectional inside the
    // prefix) and, from q = 9, the first suffix positions. Both
    // layer patterns: alternate (prefix, causal, prefix) and uniform (every layer prefix).
    void prefixModeSuffixTokensReachNoEarlierOutput_data() {
        QTest::addColumn<QString>("pattern");
        QTest::newRow("alternate") << QStringLiteral("alternate");
        QTest::newRow("uniform") << QStringLiteral("uniform");
    }
    void prefixModeSuffixTokensReachNoEarlierOutput() {
        QFETCH(QString, pattern);
        const RunConfig cfg = birdie_config("prefix", pattern.toStdString());
        Data d = make_data();
        for (int r = 0; r < kB; ++r)
            for (int l = 10; l < kL; ++l)
                d.reset[std::size_t(r) * kL + l] = models::kResetCausal;
        for (int q : {10, 11, 16, kL - 1}) {
            const auto changed = influenced(cfg, d, true, 0, q);
            QVERIFY(!changed.empty());
            for (int l = 0; l < kL; ++l)
                if (l < q || l <= q + kNear)
                    QVERIFY2(changed[l] == (l >= q),
                             qPrintable(QString("suffix token %1, position %2").arg(q).arg(l)));
        }
        for (int q : {0, 4, 9}) {
            const auto changed = influenced(cfg, d, true, 1, q);
            QVERIFY(!changed.empty());
            for (int l = std::max(0, q - kNear); l <= q + kNear; ++l)
                QVERIFY2(changed[l],
                         qPrintable(QString("prefix token %1, position %2").arg(q).arg(l)));
        }
    }

    // Packed samples (reset bit 1 at position 12 of row 0): no token of one sample reaches the
    // other, in every mode, in both directions.
    void packedSamplesDoNotSeeEachOther() {
        for (const char* mode : {"causal", "bidirectional", "prefix"}) {
            Data d = make_data();
            d.reset[12] = models::kResetNewSample;
            for (int q : {3, 11}) {
                const auto changed = influenced(birdie_config(mode), d, true, 0, q);
                QVERIFY(!changed.empty());
                for (int l = 12; l < kL; ++l)
                    QVERIFY2(
                        !changed[l],
                        qPrintable(QString("%1: token %2 reached %3").arg(mode).arg(q).arg(l)));
            }
            for (int q : {12, 20}) {
                const auto changed = influenced(birdie_config(mode), d, true, 0, q);
                QVERIFY(!changed.empty());
                for (int l = 0; l < 12; ++l)
                    QVERIFY2(
                        !changed[l],
                        qPrintable(QString("%1: token %2 reached %3").arg(mode).arg(q).arg(l)));
            }
        }
    }

    // The gates MODELS.md names as Birdie's probes reach an ActivationProbe: f, i, z, o of every
    // layer, [B, L, N]; f and i are sigmoids, o a gelu (≥ −0.17); capturing changes no logit.
    void gatesReachAnActivationProbe() {
        struct Probe : models::ActivationProbe {
            std::vector<std::tuple<int, std::string, int, float, float>> calls;
            std::int64_t n = 0;
            void hidden(int, const float*) override {}
            bool wants_gates() const override { return true; }
            void gate(int layer, const char* name, const float* v, int channels) override {
                const auto [lo, hi] = std::minmax_element(v, v + n * channels);
                calls.emplace_back(layer, name, channels, *lo, *hi);
            }
        } probe;
        probe.n = std::int64_t(kB) * kL;
        const RunConfig cfg = birdie_config("bidirectional");
        models::Model model(cfg, kB, kL, 1);
        model.init(5);
        const Data d = make_data();
        const auto plain = logits(model, d, false);
        model.set_capture(&probe);
        const auto captured = logits(model, d, false);
        QVERIFY(plain == captured);
        QCOMPARE(int(probe.calls.size()), 3 * 4);
        const char* names[] = {"f", "i", "z", "o"};
        for (std::size_t c = 0; c < probe.calls.size(); ++c) {
            const auto& [layer, name, channels, lo, hi] = probe.calls[c];
            QCOMPARE(layer, int(c / 4) + 1);
            QCOMPARE(name, std::string(names[c % 4]));
            QCOMPARE(channels, 24);
            if (name == "f" || name == "i") QVERIFY(lo > 0 && hi < 1);
            if (name == "o") QVERIFY(lo > -0.2f);
        }
        model.set_capture(nullptr);
    }

    // A training step runs and its loss falls (the tape wiring of sigmoid and the scan).
    void trainingStepsLowerTheLoss() {
        const RunConfig cfg = birdie_config("prefix");
        Data d = make_data();
        for (int l = 14; l < kL; ++l)
            d.reset[l] = models::kResetCausal;
        models::Model model(cfg, kB, kL, 2);
        model.init(3);
        models::Batch b;
        b.tokens = d.tokens.data();
        b.lengths = d.lengths.data();
        b.labels = d.labels.data();
        b.reset_mask = d.reset.data();
        // Eight updates by the training loop's own step on this batch.
        train::FixedBatchObjective objective(b, kB, std::int64_t(kB) * kL);
        QTemporaryDir dir;
        const std::vector<double> losses =
            loop_steps::run(model, cfg, objective, 8, dir.filePath("run").toStdString()).losses;
        const double first = losses.front(), last = losses.back();
        QVERIFY(std::isfinite(last));
        QVERIFY(last < first);
    }
};

QTEST_GUILESS_MAIN(TestBirdie)
#include "test_birdie.moc"
