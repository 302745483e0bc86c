// Inference models (models::ModelUse::inference): what `dump`, `eval` and `bench forward` build.
//   - Same numbers: for every architecture, with the MLM head and with a classifier, the logits
//     and the loss are bit for bit those of a training model's training forward (dropout 0: the
//     path that keeps every layer's activations), and every array a probe captures (hidden
//     states, gates, attention probabilities, sentence nodes) is the training model's inference
//     forward's.
//   - Less memory: no gradient buffer, and an arena that holds one layer's internals at a time,
//     so it does not grow with depth (a training model's grows with every layer).
//   - Encoding models (ModelUse::encoding, a corpus dump's): the same probed arrays without the
//     heads, in a smaller arena.
//   - Refusals: a training forward, a backward, the gradients.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/models/model.hpp"

using namespace routescope;
using models::ModelUse;

namespace {

constexpr int kB = 2, kL = 12, kV = 40, kD = 16;

RunConfig config(const std::string& arch, int layers, int n_labels = 0, int vocab = kV) {
    nlohmann::json m = {{"arch", arch},        {"vocab_size", vocab}, {"d_model", kD},
                        {"n_layers", layers},  {"max_len", kL},       {"dropout", 0.0},
                        {"n_labels", n_labels}};
    if (arch == "bert" || arch == "gated_att") m["n_heads"] = 2;
    if (arch == "bigs" || arch == "stack_ssm") m["ssm"] = {{"n_modes", 4}};
    if (arch == "slstm") m["pool"] = "sentence";
    return RunConfig::from_json({{"model", m}});
}

/// Every array a probe is handed, by name, copied.
struct Recorder : models::ActivationProbe {
    std::map<std::string, std::vector<float>> seen;
    std::size_t hd = 0, bd = 0;
    void keep(const std::string& name, const float* v, std::size_t n) {
        seen[name] = std::vector<float>(v, v + n);
    }
    void hidden(int layer, const float* v) override { keep("h" + std::to_string(layer), v, hd); }
    bool wants_gates() const override { return true; }
    void gate(int layer, const char* name, const float* v, int channels) override {
        keep("g" + std::to_string(layer) + name, v, std::size_t(kB) * kL * channels);
    }
    bool wants_attention() const override { return true; }
    void attention(int layer, const float* p, int heads) override {
        keep("a" + std::to_string(layer), p, std::size_t(kB) * heads * kL * kL);
    }
    void sentence(int layer, const float* v) override { keep("s" + std::to_string(layer), v, bd); }
};

struct Outcome {
    double loss = 0;
    std::vector<float> logits;
    std::map<std::string, std::vector<float>> seen;
};

Outcome run(models::Model& model, bool classify, bool training = false) {
    std::vector<std::int32_t> ids, labels, lengths = {kL, kL - 5}, classes = {1, 0};
    for (int r = 0; r < kB; ++r)
        for (int t = 0; t < kL; ++t) {
            ids.push_back(t < lengths[static_cast<std::size_t>(r)] ? 5 + (3 * t + 7 * r) % (kV - 5)
                                                                   : 0);
            labels.push_back(t % 3 == 1 && t < lengths[static_cast<std::size_t>(r)] ? 6 : -100);
        }
    models::Batch b;
    b.tokens = ids.data();
    b.lengths = lengths.data();
    (classify ? b.class_labels : b.labels) = classify ? classes.data() : labels.data();
    Recorder probe;
    probe.hd = std::size_t(kB) * kL * kD;
    probe.bd = std::size_t(kB) * kD;
    model.set_capture(&probe);
    Outcome o;
    o.loss = model.forward(b, training);
    o.logits = model.download_logits();
    o.seen = std::move(probe.seen);
    model.set_capture(nullptr);
    return o;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const char* const kArchs[] = {"bigs", "stack_ssm", "gated_att", "bert", "birdie", "slstm", "gmlp"};

}  // namespace

class TestInferenceModel : public QObject {
    Q_OBJECT

private slots:
    void sameNumbersAsATrainingModel_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<bool>("classify");
        for (const char* arch : kArchs) {
            QTest::newRow((std::string(arch) + " mlm").c_str()) << QString(arch) << false;
            QTest::newRow((std::string(arch) + " classifier").c_str()) << QString(arch) << true;
        }
    }
    void sameNumbersAsATrainingModel() {
        QFETCH(QString, arch);
        QFETCH(bool, classify);
        const RunConfig c = config(arch.toStdString(), 3, classify ? 3 : 0);
        models::Model train(c, kB, kL, 1, Device::cpu, ModelUse::training);
        models::Model infer(c, kB, kL, 1, Device::cpu, ModelUse::inference);
        train.init(11);
        infer.init(11);
        const Outcome stepped = run(train, classify, /*training=*/true);
        const Outcome a = run(train, classify), b = run(infer, classify);
        QCOMPARE(b.loss, stepped.loss);
        QVERIFY(same_bits(stepped.logits, b.logits));
        QCOMPARE(a.loss, b.loss);
        QVERIFY(same_bits(a.logits, b.logits));
        QVERIFY(stepped.seen.empty());  // a training forward captures nothing
        QVERIFY(!a.seen.empty());
        QCOMPARE(b.seen.size(), a.seen.size());
        for (const auto& [name, values] : a.seen) {
            QVERIFY2(b.seen.count(name), name.c_str());
            QVERIFY2(same_bits(values, b.seen.at(name)), name.c_str());
        }
        // A second forward on the same arena: the residual buffers and rewinds leave nothing
        // behind that changes it.
        const Outcome again = run(infer, classify);
        QVERIFY(same_bits(again.logits, b.logits));
    }

    void itsArenaDoesNotGrowWithDepth() {
        for (const char* arch : {"bigs", "bert", "birdie", "gmlp"}) {
            auto arena = [&](int layers, ModelUse use) {
                return models::Model(config(arch, layers), kB, kL, 1, Device::cpu, use)
                    .arena_bytes();
            };
            const std::size_t i2 = arena(2, ModelUse::inference),
                              i8 = arena(8, ModelUse::inference), t2 = arena(2, ModelUse::training),
                              t8 = arena(8, ModelUse::training);
            QVERIFY2(i8 == i2, arch);  // one layer's internals at a time
            QVERIFY2(t8 > t2, arch);   // a training step keeps every layer's
            QVERIFY2(i8 * 3 < t8, arch);
        }
    }

    void anEncodingModelStopsAfterTheBlocks_data() {
        QTest::addColumn<QString>("arch");
        for (const char* arch : kArchs)
            QTest::newRow(arch) << QString(arch);
    }
    void anEncodingModelStopsAfterTheBlocks() {
        // What a corpus dump builds: every layer for the probe, no head. Same arrays as an
        // inference model's, a smaller arena (the logits are B·L·V: a vocabulary of 2000 makes
        // them the largest tensor, as 30,522 does at d 1024), no logits to read.
        QFETCH(QString, arch);
        const RunConfig c = config(arch.toStdString(), 3, 0, 2000);
        models::Model infer(c, kB, kL, 1, Device::cpu, ModelUse::inference);
        models::Model enc(c, kB, kL, 1, Device::cpu, ModelUse::encoding);
        infer.init(5);
        enc.init(5);
        const Outcome a = run(infer, false), b = run(enc, false);
        QVERIFY(std::isnan(b.loss));
        QVERIFY(b.logits.empty());
        QVERIFY_THROWS_EXCEPTION(Error, enc.readout());
        QCOMPARE(b.seen.size(), a.seen.size());
        for (const auto& [name, values] : a.seen)
            QVERIFY2(same_bits(values, b.seen.at(name)), name.c_str());
        QVERIFY(enc.arena_bytes() < infer.arena_bytes());
        QVERIFY_THROWS_EXCEPTION(Error, enc.backward());
    }

    void itRefusesToTrain() {
        models::Model m(config("bigs", 2), kB, kL, 1, Device::cpu, ModelUse::inference);
        QVERIFY(m.use() == ModelUse::inference);
        std::vector<std::int32_t> ids(kB * kL, 5), labels(kB * kL, 6), lengths(kB, kL);
        models::Batch b;
        b.tokens = ids.data();
        b.lengths = lengths.data();
        b.labels = labels.data();
        QVERIFY_THROWS_EXCEPTION(Error, m.forward(b, /*training=*/true));
        QVERIFY_THROWS_EXCEPTION(Error, m.backward());
        QVERIFY_THROWS_EXCEPTION(Error, m.params().grad_data());
        m.forward(b, /*training=*/false);  // and still evaluates
        QVERIFY(m.logits_size() == std::int64_t(kB) * kL * kV);
    }
};

QTEST_GUILESS_MAIN(TestInferenceModel)
#include "test_inference_model.moc"
