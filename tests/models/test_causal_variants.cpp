// The causal variants of model.causal (issue 27; docs/config.md, docs/decisions.md "Causal variants
// of bigs, stack_ssm, gated_att and bert") at the model level, beside their PyTorch parity in
// test_model_parity:
//   - Causality: changing the token at position t leaves every output (MLM logits) before t
//     unchanged, for each causal architecture, with a padded row in the batch. Exactly (bit for
//     bit) for the attention models, whose masked probabilities are exact zeros; for the SSM
//     models within float32 rounding of the FFT convolution (it computes every output from the
//     whole padded row; the true dependence on later inputs is zero, the rounding is not), bounded
//     far below the change the token makes at t and at earlier positions of the bidirectional
//     model, which the same check shows is not vacuous.
//   - Layout: causal bigs and stack_ssm have no backward branch (no *_backward parameters, no
//     norm2 in stack_ssm); causal bert and gated_att have the parameters of the bidirectional ones.
//   - The switch: model.causal is refused for gmlp, birdie (their own switches) and slstm.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../test_device.hpp"
#include "analysis/kernels.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/importers/model_export.hpp"
#include "engine/models/model.hpp"

using namespace routescope;

namespace {

constexpr int kB = 2, kN = 24, kV = 50, kD = 16;

RunConfig config(const std::string& arch, bool causal, const std::string& norm = "pre") {
    nlohmann::json m = {
        {"arch", arch},          {"vocab_size", kV},        {"d_model", kD},  {"n_layers", 2},
        {"max_len", kN},         {"dropout", 0.0},          {"ln_eps", 1e-5}, {"causal", causal},
        {"norm_position", norm}, {"ssm", {{"n_modes", 16}}}};
    if (arch == "bert" || arch == "gated_att") m["n_heads"] = 2;
    return RunConfig::from_json({{"model", m}});
}

struct Tokens {
    std::vector<std::int32_t> ids, lengths{kN, 17}, labels;
};

Tokens tokens() {
    Tokens t;
    for (int r = 0; r < kB; ++r)
        for (int l = 0; l < kN; ++l) {
            t.ids.push_back(l < t.lengths[r] ? 1 + (7 * l + 13 * r) % (kV - 1) : 0);
            t.labels.push_back(l % 3 == 0 ? 1 : -100);
        }
    return t;
}

std::vector<float> logits(models::Model& model, const Tokens& t) {
    models::Batch b;
    b.tokens = t.ids.data();
    b.lengths = t.lengths.data();
    b.labels = t.labels.data();
    model.forward(b, false);
    return {model.logits(), model.logits() + model.logits_size()};
}

struct Change {
    double before = 0, at = 0;  // largest |Δ logit| over positions < t, and at t
};

// Token t changed in every row whose length exceeds t; the model's init is larger than the
// default (init_std 0.2) so that the blocks mix strongly and a leak would show.
Change change_at(const RunConfig& cfg, int t) {
    RunConfig c = cfg;
    c.model.init_std = 0.2;
    models::Model model(c, kB, kN, /*threads=*/1, test::test_device());
    model.init(11);
    const Tokens a = tokens();
    Tokens b = a;
    for (int r = 0; r < kB; ++r)
        if (t < a.lengths[std::size_t(r)])
            b.ids[std::size_t(r) * kN + t] = (a.ids[std::size_t(r) * kN + t] + 5) % kV;
    const auto la = logits(model, a), lb = logits(model, b);
    Change ch;
    for (int r = 0; r < kB; ++r)
        for (int l = 0; l <= t; ++l)
            for (int v = 0; v < kV; ++v) {
                const std::size_t k = (std::size_t(r) * kN + l) * kV + v;
                double& worst = l < t ? ch.before : ch.at;
                worst = std::max(worst, double(std::abs(la[k] - lb[k])));
            }
    return ch;
}

QString config_error(const nlohmann::json& model) {
    try {
        (void)RunConfig::from_json({{"model", model}});
    } catch (const ConfigError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

void add_arch_rows() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("norm");
    QTest::newRow("bigs") << "bigs"
                          << "pre";
    QTest::newRow("stack_ssm") << "stack_ssm"
                               << "pre";
    QTest::newRow("gated_att") << "gated_att"
                               << "pre";
    QTest::newRow("bert") << "bert"
                          << "pre";
    QTest::newRow("bert post-LN") << "bert"
                                  << "post";
}

bool is_ssm(const QString& arch) {
    return arch == "bigs" || arch == "stack_ssm";
}

/// What is wrong with `without`, a model with one part left out by an option, against `with`,
/// the same model with it: "" when it has exactly two parameter tensors fewer, all named
/// `prefix`…, `count` values fewer in all, every other parameter kept, and finite logits.
QString left_out_problem(const RunConfig& without, const RunConfig& with, const std::string& prefix,
                         std::size_t count) {
    models::Model a(with, kB, kN), b(without, kB, kN);
    std::set<std::string> names;
    for (const auto& e : b.params().entries())
        names.insert(e.name);
    if (b.params().entries().size() + 2 != a.params().entries().size())
        return "not two parameter tensors fewer";
    if (a.params().size() - b.params().size() != count)
        return QString("%1 values fewer, not %2")
            .arg(a.params().size() - b.params().size())
            .arg(count);
    for (const auto& e : a.params().entries()) {
        const bool removed = !names.count(e.name);
        if (removed != (e.name.rfind(prefix, 0) == 0))
            return QString::fromStdString(e.name + (removed ? " is gone" : " is still there"));
    }
    b.init(5);
    const auto out = logits(b, tokens());
    if (!std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }))
        return "non-finite logits";
    return {};
}

/// The message of export_config's refusal of `c`, or "" when it exports.
QString export_refusal(const RunConfig& c) {
    try {
        importers::export_config(c);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return {};
}

}  // namespace

class TestCausalVariants : public QObject {
    Q_OBJECT

private slots:
    void causalModelsIgnoreFutureTokens_data() { add_arch_rows(); }
    void causalModelsIgnoreFutureTokens() {
        QFETCH(QString, arch);
        QFETCH(QString, norm);
        const RunConfig cfg = config(arch.toStdString(), true, norm.toStdString());
        for (int t : {1, 10, 16, kN - 1}) {
            const Change ch = change_at(cfg, t);
            const QString what = QStringLiteral("%1, t = %2: before %3, at t %4")
                                     .arg(arch)
                                     .arg(t)
                                     .arg(ch.before)
                                     .arg(ch.at);
            qDebug("%s", qPrintable(what));
            QVERIFY2(ch.at > 1e-3, qPrintable(what));
            if (is_ssm(arch))  // FFT rounding only (header)
                QVERIFY2(ch.before <= 2e-5 * ch.at, qPrintable(what));
            else
                QVERIFY2(ch.before == 0.0, qPrintable(what));  // exactly
        }
    }

    void bidirectionalModelsSeeFutureTokens_data() { add_arch_rows(); }
    void bidirectionalModelsSeeFutureTokens() {
        QFETCH(QString, arch);
        QFETCH(QString, norm);
        const Change ch = change_at(config(arch.toStdString(), false, norm.toStdString()), 10);
        QVERIFY2(ch.before > 1e-3, qPrintable(QString::number(ch.before)));
        QVERIFY(ch.at > 1e-3);
    }

    void causalSsmModelsHaveNoBackwardBranch() {
        for (const char* arch : {"bigs", "stack_ssm"}) {
            models::Model causal(config(arch, true), 1, kN), full(config(arch, false), 1, kN);
            std::set<std::string> have, missing;
            for (const auto& e : causal.params().entries())
                have.insert(e.name);
            for (const auto& e : full.params().entries())
                if (!have.count(e.name)) missing.insert(e.name);
            for (const auto& name : have) {
                QVERIFY2(name.find("backward") == std::string::npos, name.c_str());
                QVERIFY2(name.find(".norm2.") == std::string::npos, name.c_str());
            }
            // Exactly the backward branch is gone, in every layer.
            for (const auto& name : missing)
                QVERIFY2(name.find("backward") != std::string::npos ||
                             name.find(".norm2.") != std::string::npos,
                         name.c_str());
            // bigs: du_backward, duc_backward (weight, bias) and ssm_backward (A_re, A_im, C, D,
            // log_step); stack_ssm: norm2, wi_backward, wo_backward and ssm_backward.
            const std::size_t per_layer = std::string(arch) == "bigs" ? 2 * 2 + 5 : 3 * 2 + 5;
            QCOMPARE(missing.size(), 2 * per_layer);
        }
    }

    // The kernel analysis of a causal checkpoint reads its forward SSMs alone: no backward kernel,
    // nothing to the right of the token (relative kernel 0 for r > 0), K_f[0] + D_f at lag 0
    // (numpy checks the values: test_engine_dump_analysis, aCausalBigsHasForwardKernels…).
    void kernelAnalysisOfACausalCheckpointReadsItsForwardSsms() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("causal.ckpt.h5").toStdString();
        models::Model model(config("bigs", true), 1, kN);
        model.init(3);
        write_checkpoint(path, config("bigs", true), model.params(), TokenizerBlob{});
        analysis::KernelOptions options;
        options.radius = 4;
        const auto r = analysis::kernels_from_checkpoint(path, {}, options);
        QCOMPARE(static_cast<int>(r.layers.size()), config("bigs", true).model.n_layers);
        for (const auto& k : r.layers) {
            QVERIFY(k.backward.empty() && k.poles_backward.empty() && k.response_backward.empty());
            QCOMPARE(static_cast<int>(k.relative.size()), 9);
            for (int i = 5; i < 9; ++i)
                QCOMPARE(k.relative[static_cast<std::size_t>(i)], 0.0);
            QCOMPARE(k.relative[4], k.forward[0] + k.d_forward);
            QCOMPARE(k.relative[3], k.forward[1]);
        }
    }

    // model.position_embeddings = false (issue 27, the phone book past its training length): the
    // model has no E_pos, exactly one tensor fewer, and its parameters no longer grow with
    // max_len; it runs; the published layouts refuse to export it.
    void positionEmbeddingsCanBeLeftOut() {
        for (const char* arch : {"bigs", "birdie", "bert"}) {
            RunConfig with = config(arch, false), without = with, longer = with;
            without.model.position_embeddings = false;
            longer.model.position_embeddings = false;
            longer.model.max_len = 4 * kN;
            models::Model a(with, kB, kN), b(without, kB, kN), c(longer, kB, kN);
            std::set<std::string> names;
            for (const auto& e : b.params().entries())
                names.insert(e.name);
            QCOMPARE(b.params().entries().size() + 1, a.params().entries().size());
            QCOMPARE(a.params().size() - b.params().size(), std::size_t(kN) * kD);
            QVERIFY(!names.count("embeddings.position.weight"));
            for (const auto& e : a.params().entries())
                QVERIFY2(e.name == "embeddings.position.weight" || names.count(e.name),
                         e.name.c_str());
            QCOMPARE(c.params().size(), b.params().size());
            b.init(5);
            const auto out = logits(b, tokens());
            QVERIFY(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }));
        }
        QVERIFY(config_error({{"arch", "birdie"}, {"position_embeddings", 3}})
                    .contains("model.position_embeddings"));
    }

    // model.embedding_norm = false (issue 27, H3's lm_simple has none): no embeddings.norm, one
    // LayerNorm (2·d parameters) fewer, every other parameter kept; the published layouts refuse
    // to export it; a non-boolean value is a configuration error naming the key.
    void theEmbeddingLayerNormCanBeLeftOut() {
        for (const char* arch : {"bigs", "stack_ssm", "bert"}) {
            RunConfig without = config(arch, true);
            without.model.embedding_norm = false;
            const QString problem = left_out_problem(without, config(arch, true),
                                                     "embeddings.norm.", std::size_t(2) * kD);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        QVERIFY(config_error({{"arch", "bert"}, {"embedding_norm", "no"}})
                    .contains("model.embedding_norm"));
    }

    // model.mlm_transform = false (issue 27, safari's lm_simple: a final LayerNorm and the tied
    // decoder): no mlm.dense (d² + d parameters fewer), mlm.norm and mlm.bias kept, finite logits
    // (their values: test_model_parity's causal BERT case, against PyTorch). The published layouts
    // refuse to export either of lm_simple's options, naming it; a non-boolean value is a
    // configuration error naming the key.
    void theMlmHeadTransformCanBeLeftOut() {
        for (const char* arch : {"bigs", "stack_ssm", "bert"}) {
            RunConfig without = config(arch, true);
            without.model.mlm_transform = false;
            const QString problem = left_out_problem(without, config(arch, true), "mlm.dense.",
                                                     std::size_t(kD) * kD + kD);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        QVERIFY(
            config_error({{"arch", "bert"}, {"mlm_transform", 0}}).contains("model.mlm_transform"));
        for (const char* arch : {"bigs", "bert"}) {
            RunConfig c = config(arch, false, arch == std::string("bert") ? "post" : "pre");
            c.model.embedding_norm = false;
            QVERIFY(export_refusal(c).contains("model.embedding_norm"));
            c.model.embedding_norm = true;
            c.model.mlm_transform = false;
            QVERIFY(export_refusal(c).contains("model.mlm_transform"));
        }
    }

    void causalAttentionModelsKeepTheirParameters() {
        for (const char* arch : {"bert", "gated_att"}) {
            models::Model causal(config(arch, true), 1, kN), full(config(arch, false), 1, kN);
            QCOMPARE(causal.params().size(), full.params().size());
        }
    }

    void switchIsRefusedWhereAnArchitectureHasItsOwnOrNone() {
        QVERIFY(config_error({{"arch", "bigs"}, {"causal", 1}})
                    .startsWith("model.causal: expected true or false"));
        const QString g = config_error({{"arch", "gmlp"}, {"causal", true}});
        QVERIFY2(g.startsWith("model.causal:") && g.contains("model.gmlp.causal"), qPrintable(g));
        const QString b = config_error({{"arch", "birdie"}, {"causal", true}});
        QVERIFY2(b.startsWith("model.causal:") && b.contains("model.birdie.mode = causal"),
                 qPrintable(b));
        const QString s = config_error({{"arch", "slstm"}, {"causal", true}});
        QVERIFY2(s.startsWith("model.causal:") && s.contains("no causal variant"), qPrintable(s));
        for (const char* arch : {"bigs", "stack_ssm", "gated_att", "bert"})
            QCOMPARE(config_error({{"arch", arch}, {"causal", true}}), QString());
        // Written back by to_json, read again.
        const RunConfig c = config("bigs", true);
        QVERIFY(RunConfig::parse(c.to_json_text()).model.causal);
        QVERIFY(!RunConfig::parse("{}").model.causal);
    }
};

QTEST_GUILESS_MAIN(TestCausalVariants)
#include "test_causal_variants.moc"
