// The run configuration follows docs/config.md: every key has its documented default, unknown keys
// and bad values are errors naming the key, `--set a.b=v` overrides one key, and the JSON a
// checkpoint stores reads back to the same configuration. The PyTorch reference reads that JSON
// too (test_parity's reverse direction passes the engine's JSON to parity.py --init).
#include <QtTest>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"

using namespace routescope;

namespace {
// The message of the ConfigError `fn` throws, or "" when it throws none.
template <class F>
QString config_error(F&& fn) {
    try {
        fn();
    } catch (const ConfigError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}
}  // namespace

class TestRunConfig : public QObject {
    Q_OBJECT
private slots:
    // Every configuration shipped in resources/configs parses and validates (the paper-scale
    // phone-book file included, which no test trains: 1.4 B parameters).
    void everyShippedConfigurationValidates() {
        const QDir dir(QStringLiteral(ROUTESCOPE_SOURCE_DIR "/resources/configs"));
        const QStringList files = dir.entryList({"*.json"}, QDir::Files);
        QVERIFY(files.contains("birdie-phone-book-1.4b.json"));
        for (const QString& f : files) {
            QFile in(dir.filePath(f));
            QVERIFY(in.open(QIODevice::ReadOnly));
            try {
                const RunConfig c = RunConfig::parse(in.readAll().toStdString());
                QVERIFY(c.model.d_model > 0);
            } catch (const std::exception& e) {
                QFAIL(qPrintable(f + ": " + QString::fromUtf8(e.what())));
            }
        }
    }

    void emptyObjectGivesTheDocumentedDefaults() {
        const RunConfig c = RunConfig::parse("{}");
        QCOMPARE(c.model.arch, std::string("bigs"));
        QCOMPARE(c.model.vocab_size, 30522);
        QCOMPARE(c.model.d_model, 256);
        QCOMPARE(c.model.inner(), 3 * 256);  // gated block: I = 3d
        QCOMPARE(c.model.heads(), 4);        // heads of width 64
        QCOMPARE(c.model.ln_eps, 1e-12);
        QCOMPARE(c.model.ssm.n_modes, 64);
        QCOMPARE(c.model.ssm.a_im_init, std::string("hippo"));
        QCOMPARE(c.train.lr, 5e-4);
        QCOMPARE(c.train.effective_ssm_lr(), 5e-4);  // ssm_lr null → lr
        QCOMPARE(c.train.betas[1], 0.999);
        QCOMPARE(c.train.schedule, std::string("cosine"));
        QCOMPARE(c.train.seed, std::int64_t(1234));
        QVERIFY(!c.model.d_inner && !c.tokenizer.model && !c.data.train);
    }

    void stackBlocksDefaultToFourTimesWidth() {
        QCOMPARE(RunConfig::parse(R"({"model": {"arch": "bert", "d_model": 64}})").model.inner(),
                 256);
    }

    void unknownKeyIsAnErrorNamingTheKey() {
        const QString m = config_error([] { RunConfig::parse(R"({"model": {"d_modle": 3}})"); });
        QCOMPARE(m, QStringLiteral("model.d_modle: unknown key"));
        QCOMPARE(config_error([] { RunConfig::parse(R"({"trian": {}})"); }),
                 QStringLiteral("trian: unknown key"));
        QCOMPARE(config_error([] { RunConfig::parse(R"({"model": {"ssm": {"modes": 3}}})"); }),
                 QStringLiteral("model.ssm.modes: unknown key"));
    }

    // nlohmann (like Python's json) keeps the last of two values under one key; a run
    // configuration that names a key twice holds a value the user believes in and never gets.
    void aKeyNamedTwiceIsAnErrorNamingTheKey() {
        const QString m = config_error([] {
            RunConfig::parse(R"({"model": {"d_model": 64, "arch": "bert", "d_model": 128}})");
        });
        QVERIFY2(m.contains("'model.d_model' appears twice in one object"), qPrintable(m));
        QVERIFY2(config_error([] {
                     RunConfig::parse(R"({"train": {}, "train": {}})");
                 }).contains("'train' appears twice"),
                 "top level");
        // The same key in two objects is no repetition.
        QCOMPARE(RunConfig::parse(R"({"model": {"d_model": 64}, "train": {"seed": 5}})").train.seed,
                 std::int64_t(5));
    }

    void badEnumValueNamesKeyAndChoices() {
        const QString m =
            config_error([] { RunConfig::parse(R"({"train": {"schedule": "cosin"}})"); });
        QVERIFY2(m.startsWith("train.schedule: 'cosin' is not one of cosine, linear, constant"),
                 qPrintable(m));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"arch": 3}})");
                }).startsWith("model.arch:"));
    }

    void badTypesAndRangesNameTheKey() {
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"d_model": 2.5}})");
                }).startsWith("model.d_model: expected an integer"));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"dropout": 1.0}})");
                }).startsWith("model.dropout:"));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"train": {"betas": [0.9]}})");
                }).startsWith("train.betas:"));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"n_layers": null}})");
                }).startsWith("model.n_layers: null is not allowed"));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"d_model": 64, "ssm": {"n_kernels": 5}}})");
                }).startsWith("model.ssm.n_kernels: must divide model.d_model=64"));
        QVERIFY(config_error([] { RunConfig::parse("{not json"); }).startsWith("<json>:"));
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"slstm": {"gate_norm": 1}}})");
                }).startsWith("model.slstm.gate_norm: expected true or false"));
        // The sentence node exists only in S-LSTM.
        QVERIFY(config_error([] {
                    RunConfig::parse(R"({"model": {"arch": "bigs", "pool": "sentence"}})");
                }).startsWith("model.pool: 'sentence' is the S-LSTM sentence node"));
        QCOMPARE(RunConfig::parse(R"({"model": {"arch": "slstm", "pool": "sentence"}})").model.pool,
                 std::string("sentence"));
    }

    // AdamW's ε and LayerNorm's ε are added in float32: 1e-320 is positive in the configuration's
    // double but 0 there (every parameter with a zero gradient became 0/0 = NaN at step 2, and
    // the message blamed train.lr). The bounds are numpy's np.finfo(np.float32).tiny and .max.
    // A whole number written as a real beyond 9e15 is not called "not an integer": the message
    // says why it is refused and how to write it (docs/config.md "Ranges").
    void aLargeWholeRealIsRefusedSayingWhy() {
        const QString what =
            config_error([] { (void)RunConfig::parse(R"({"train": {"seed": 1e16}})"); });
        QVERIFY2(what.startsWith("train.seed: a whole number written as a real number") &&
                     what.contains("digits only"),
                 qPrintable(what));
        QCOMPARE(RunConfig::parse(R"({"train": {"seed": 10000000000000000}})").train.seed,
                 std::int64_t(10000000000000000));
        QCOMPARE(RunConfig::parse(R"({"train": {"seed": 3.0}})").train.seed, std::int64_t(3));
    }

    void epsilonsMustBeNormalSinglePrecisionNumbers() {
        const RunConfig defaults = RunConfig::parse("{}");
        for (const char* key : {"train.eps", "model.ln_eps"}) {
            for (const char* value : {"1e-320", "1e-39", "0", "-1e-8", "1e39"}) {
                const QString what = config_error(
                    [&] { (void)defaults.with_override(std::string(key) + "=" + value); });
                QVERIFY2(what.startsWith(QString(key) + ": must lie in [1.2e-38, 3.4e38]"),
                         qPrintable(QString(key) + "=" + value + ": " + what));
            }
            for (const char* value : {"1.1754943508222875e-38", "3.4028234663852886e38", "1e-12"}) {
                (void)defaults.with_override(std::string(key) + "=" + value);
            }
        }
    }

    void setOverridesOneKeyWithAJsonOrBareValue() {
        RunConfig c = RunConfig::parse("{}");
        c = c.with_override("train.steps=100");
        c = c.with_override("model.ssm.n_modes=32");
        c = c.with_override("train.schedule=linear");  // a bare word is a string
        c = c.with_override("train.ssm_lr=1e-3");
        c = c.with_override("model.d_inner=null");
        QCOMPARE(c.train.steps, std::int64_t(100));
        QCOMPARE(c.model.ssm.n_modes, 32);
        QCOMPARE(c.train.schedule, std::string("linear"));
        QCOMPARE(c.train.effective_ssm_lr(), 1e-3);
        QVERIFY(config_error([&] {
                    (void)c.with_override("train.stepz=3");
                }).startsWith("train.stepz: unknown key"));
        QVERIFY(config_error([&] { (void)c.with_override("train.steps"); }).contains("key=value"));
    }

    // train.precision (docs/config.md): fp32 by default, one of three names, anything else an
    // error naming the key and the names.
    void precisionIsOneOfThreeNames() {
        QCOMPARE(RunConfig{}.train.precision, std::string("fp32"));
        QCOMPARE(RunConfig{}.with_override("train.precision=tf32").train.precision,
                 std::string("tf32"));
        QCOMPARE(RunConfig{}.with_override("train.precision=bf16-mixed").train.precision,
                 std::string("bf16-mixed"));
        try {
            (void)RunConfig{}.with_override("train.precision=fp16");
            QFAIL("fp16 accepted");
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("train.precision") != std::string::npos &&
                         what.find("bf16-mixed") != std::string::npos,
                     e.what());
        }
    }

    // A configuration file is read up to 16 MiB, not whole: /dev/zero was read until memory ran
    // out ("out of memory", no file named).
    void aConfigurationFileIsReadUpToACap() {
        try {
            (void)RunConfig::load("/dev/zero");
            QFAIL("/dev/zero read as a configuration");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).find("/dev/zero: more than 16 MiB") != std::string::npos,
                     e.what());
        }
    }

    void toJsonRoundTripsEveryKey() {
        const RunConfig c = RunConfig::parse(
            R"({"model": {"arch": "stack_ssm", "d_inner": 100, "n_heads": 2, "d_model": 64,
                          "ssm": {"a_im_init": "inv", "dt_min": 0.001}},
                "tokenizer": {"kind": "sentencepiece", "model": "sp.model"},
                "train": {"betas": [0.8, 0.95], "ssm_lr": 0.002, "seed": 9007199254740993,
                          "keep_checkpoints": true}})");
        const RunConfig back = RunConfig::parse(c.to_json_text());
        QCOMPARE(back.to_json_text(), c.to_json_text());
        QCOMPARE(back.model.d_inner.value(), 100);
        QCOMPARE(back.tokenizer.model.value(), std::string("sp.model"));
        QCOMPARE(back.train.betas[0], 0.8);
        QCOMPARE(back.train.seed, std::int64_t(9007199254740993));  // > 2^53: kept exact
        QVERIFY(back.train.keep_checkpoints);
        QVERIFY(!RunConfig::parse("{}").train.keep_checkpoints);  // off by default
        // Every documented section and key is written.
        const auto j = c.to_json();
        QCOMPARE(j.size(), std::size_t(4));
        QCOMPARE(j["model"].size(), std::size_t(24));          // 21 + model.birdie, .gmlp, .slstm
        QCOMPARE(j["model"]["slstm"].size(), std::size_t(1));  // gate_norm
        QCOMPARE(j["train"].size(), std::size_t(25));  // 18 + init_from, freeze_ssm, epochs,
                                                       // prefix_fraction, birdie, precision,
                                                       // keep_checkpoints
        QCOMPARE(j["train"]["precision"].get<std::string>(), std::string("fp32"));  // the default
        QCOMPARE(j["train"]["birdie"].size(), std::size_t(2));  // update_every, arms
    }
};

QTEST_GUILESS_MAIN(TestRunConfig)
#include "test_run_config.moc"
