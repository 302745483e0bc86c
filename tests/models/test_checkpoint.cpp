// Checkpoints (CHECKPOINT_FORMAT.md v1): a written checkpoint reads back bit-identical (parameters,
// Adam moments, train state, tokenizer, config); a failed write leaves the checkpoint already under
// that name untouched and no file behind; the reader rejects, naming the dataset, files whose
// contents disagree with their /config, carry a non-finite value or an unknown version, and never
// crashes on a file that is not a checkpoint. Files are damaged with the HDF5 C++ API here, so the
// expectations do not depend on the writer under test.
#include <H5Cpp.h>

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/validation.hpp"
#include "engine/models/model.hpp"

using namespace routescope;
namespace fs = std::filesystem;

namespace {

RunConfig tiny_config(const std::string& arch = "bigs") {
    return RunConfig::from_json(
        {{"model",
          {{"arch", arch},
           {"vocab_size", 261},  // the byte tokenizer's ids: what every loader requires
           {"d_model", 16},
           {"n_layers", 2},
           {"max_len", 8},
           {"n_heads", 2},
           {"n_labels", 2},
           {"ssm", {{"n_modes", 8}}}}}});
}

std::string read_bytes(const std::string& path) {
    std::string bytes(fs::file_size(path), '\0');
    std::ifstream(path, std::ios::binary).read(bytes.data(), std::streamsize(bytes.size()));
    return bytes;
}

// Sets element `at` of the float dataset `where` of the file at `path` to `value` (HDF5 C++ API,
// not the writer under test).
void set_element(const std::string& path, const std::string& where, std::size_t at, float value) {
    H5::H5File f(path, H5F_ACC_RDWR);
    H5::DataSet ds = f.openDataSet(where);
    std::vector<float> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(), H5::PredType::NATIVE_FLOAT);
    v.at(at) = value;
    ds.write(v.data(), H5::PredType::NATIVE_FLOAT);
}

// The FormatError message read_checkpoint throws for `path`, or "" when it reads fine.
QString format_error(const std::string& path) {
    try {
        (void)read_checkpoint(path);
    } catch (const FormatError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

    // A written checkpoint of a freshly initialised tiny model (with train state).
    std::string write_good(const char* name, models::Model& model) {
        const std::string p = path(name);
        TrainState st;
        st.step = 7;
        st.tokens_seen = 1234;
        st.data_position = 99;
        st.rng_state = {static_cast<std::uint64_t>(model.config().train.seed), 7};  // [seed, step]
        st.adam_m.assign(model.params().size(), 0.25f);
        st.adam_v.assign(model.params().size(), 1e-30f);
        write_checkpoint(p, model.config(), model.params(), {"bytes", {}}, &st);
        return p;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void roundTripIsBitIdentical() {
        models::Model model(tiny_config(), 2, 8);
        model.init(42);
        const std::string p = write_good("round.ckpt.h5", model);
        const Checkpoint ck = read_checkpoint(p);
        QCOMPARE(ck.config.to_json_text(), model.config().to_json_text());
        QCOMPARE(ck.params.size(), model.params().size());
        QVERIFY(std::memcmp(ck.params.data(), model.params().data(),
                            ck.params.size() * sizeof(float)) == 0);
        QCOMPARE(ck.layout.size(), model.params().entries().size());
        for (std::size_t i = 0; i < ck.layout.size(); ++i) {
            QCOMPARE(ck.layout[i].name, model.params().entries()[i].name);
            QCOMPARE(ck.layout[i].offset, model.params().entries()[i].offset);
        }
        QCOMPARE(ck.tokenizer.kind, std::string("bytes"));
        QVERIFY(ck.tokenizer.model.empty());
        QVERIFY(ck.train.has_value());
        QCOMPARE(ck.train->step, std::int64_t(7));
        QCOMPARE(ck.train->tokens_seen, std::int64_t(1234));
        QCOMPARE(ck.train->data_position, std::int64_t(99));
        QCOMPARE(
            ck.train->rng_state,
            (std::vector<std::uint64_t>{static_cast<std::uint64_t>(model.config().train.seed), 7}));
        QCOMPARE(ck.train->adam_m, std::vector<float>(model.params().size(), 0.25f));
        QCOMPARE(ck.train->adam_v, std::vector<float>(model.params().size(), 1e-30f));

        // Loading into a second model gives the same parameters and the same loss.
        models::Model again(ck.config, 2, 8);
        load_params(ck, again.params());
        QVERIFY(std::memcmp(again.params().data(), model.params().data(),
                            ck.params.size() * sizeof(float)) == 0);
        // The file also passes the project's format validator.
        QVERIFY(validate_file(p).ok());
    }

    void everyArchitectureRoundTrips_data() {
        QTest::addColumn<QString>("arch");
        for (const char* a : {"bigs", "stack_ssm", "gated_att", "bert"})
            QTest::newRow(a) << a;
    }
    void everyArchitectureRoundTrips() {
        QFETCH(QString, arch);
        models::Model model(tiny_config(arch.toStdString()), 1, 4);
        model.init(1);
        const std::string p = path("arch.ckpt.h5");
        write_checkpoint(p, model.config(), model.params(), {});
        const Checkpoint ck = read_checkpoint(p);
        QVERIFY(!ck.train);
        QVERIFY(std::memcmp(ck.params.data(), model.params().data(),
                            ck.params.size() * sizeof(float)) == 0);
    }

    void failedWriteLeavesTheExistingCheckpointIntact() {
        models::Model model(tiny_config(), 1, 4);
        model.init(3);
        const std::string p = write_good("keep.ckpt.h5", model);
        const std::string before = read_bytes(p);
        // A NaN in the last parameter: the writer has already written most datasets when it fails.
        auto& params = model.params();
        params.data()[params.size() - 1] = std::numeric_limits<float>::quiet_NaN();
        try {
            write_checkpoint(p, model.config(), params, {});
            QFAIL("writing a NaN parameter must fail");
        } catch (const FormatError& e) {
            QVERIFY2(QString(e.what()).contains(
                         "/params/" + QString::fromStdString(params.entries().back().name)),
                     e.what());
        }
        QCOMPARE(read_bytes(p), before);
        for (const auto& entry : fs::directory_iterator(dir_.path().toStdString()))
            QVERIFY2(entry.path().filename().string().find(".tmp") == std::string::npos,
                     entry.path().c_str());
    }

    void failedWriteLeavesNoFileUnderTheFinalName() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = path("no-such-dir/model.ckpt.h5");
        QVERIFY_THROWS_EXCEPTION(IoError, write_checkpoint(p, model.config(), model.params(), {}));
        QVERIFY(!fs::exists(p));
    }

    void paramsThatDisagreeWithConfigNameTheDataset() {
        models::Model model(tiny_config(), 1, 4);
        model.init(5);
        const std::string p = write_good("bad-shape.ckpt.h5", model);
        {
            H5::H5File f(p, H5F_ACC_RDWR);
            f.unlink("/params/layers.1.dv.weight");
            const hsize_t dims[2] = {3, 16};  // [I, d] should be [48, 16]
            std::vector<float> zeros(48, 0.0f);
            f.createDataSet("/params/layers.1.dv.weight", H5::PredType::NATIVE_FLOAT,
                            H5::DataSpace(2, dims))
                .write(zeros.data(), H5::PredType::NATIVE_FLOAT);
        }
        const QString m = format_error(p);
        // The format checker (run first by read_checkpoint) sees it through the Adam moments.
        QVERIFY2(m.contains("layers.1.dv.weight") && m.contains("[3, 16]"), qPrintable(m));
    }

    void missingParameterNamesTheDataset() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("missing.ckpt.h5", model);
        H5::H5File(p, H5F_ACC_RDWR).unlink("/params/mlm.bias");
        const QString m = format_error(p);
        QVERIFY2(m.contains("/params/mlm.bias: missing dataset"), qPrintable(m));
    }

    void configWithAnotherWidthIsRejected() {
        // The params of a d=16 model under a /config saying d=32: the first parameter disagrees.
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("width.ckpt.h5", model);
        {
            H5::H5File f(p, H5F_ACC_RDWR);
            H5::Group cfg = f.openGroup("config");
            cfg.removeAttr("json");
            RunConfig other = tiny_config().with_override("model.d_model=32");
            H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
            cfg.createAttribute("json", st, H5::DataSpace(H5S_SCALAR))
                .write(st, other.to_json_text());
        }
        const QString m = format_error(p);
        QVERIFY2(m.contains("/params/embeddings.word.weight") && m.contains("[261, 16]") &&
                     m.contains("[261, 32]"),
                 qPrintable(m));
    }

    void unexpectedParameterIsRejected() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("extra.ckpt.h5", model);
        {
            H5::H5File f(p, H5F_ACC_RDWR);
            const hsize_t n = 1;
            float one = 1;
            f.createDataSet("/params/layers.9.dv.bias", H5::PredType::NATIVE_FLOAT,
                            H5::DataSpace(1, &n))
                .write(&one, H5::PredType::NATIVE_FLOAT);
        }
        // Named by the format checker (no Adam moments for it) before the loader's own check.
        QVERIFY(format_error(p).contains("layers.9.dv.bias"));
    }

    void nonFiniteValueNamesTheDataset() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("nan.ckpt.h5", model);
        set_element(p, "/train/adam_v/layers.0.ssm_forward.C", 3,
                    std::numeric_limits<float>::infinity());
        QVERIFY(format_error(p).contains("/train/adam_v/layers.0.ssm_forward.C: non-finite value"));
    }

    void theValuesCanBeStreamedIntoAModel() {
        // CheckpointRead::without_values + read_params_into: what `dump` does. The model's
        // parameters equal the full read's; nothing of the values is held; a non-finite value is
        // named as the full read names it.
        models::Model model(tiny_config(), 1, 4);
        model.init(3);
        const std::string p = write_good("stream.ckpt.h5", model);
        const Checkpoint full = read_checkpoint(p);
        const Checkpoint bare = read_checkpoint(p, CheckpointRead::without_values);
        QVERIFY(bare.params.empty());
        QVERIFY(bare.train && bare.train->adam_m.empty() && bare.train->adam_v.empty());
        QCOMPARE(bare.train->step, 7);
        QCOMPARE(bare.layout.size(), full.layout.size());
        QCOMPARE(bare.config.to_json_text(), full.config.to_json_text());
        QCOMPARE(bare.tokenizer.kind, full.tokenizer.kind);
        models::Model into(bare.config, 1, 4, 1, Device::cpu, models::ModelUse::inference);
        read_params_into(p, bare.layout, into.params());
        std::vector<float> got(into.params().size());
        into.params().download(got.data());
        QVERIFY(got == full.params);
        std::vector<float> written(model.params().size());
        model.params().download(written.data());
        QVERIFY(got == written);
    }

    void aStreamedValueThatIsNotFiniteIsNamed() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("stream-nan.ckpt.h5", model);
        set_element(p, "/params/layers.1.dv.weight", 5, std::numeric_limits<float>::quiet_NaN());
        const Checkpoint bare = read_checkpoint(p, CheckpointRead::without_values);  // no values
        models::Model into(bare.config, 1, 4, 1, Device::cpu, models::ModelUse::inference);
        try {
            read_params_into(p, bare.layout, into.params());
            QFAIL("a NaN parameter was read");
        } catch (const FormatError& e) {
            QVERIFY2(QString(e.what()).contains("/params/layers.1.dv.weight: non-finite value"),
                     e.what());
        }
    }

    void unknownVersionAndUnknownConfigKeyAreRejected() {
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("version.ckpt.h5", model);
        {
            H5::H5File f(p, H5F_ACC_RDWR);
            f.removeAttr("format_version");
            const std::int64_t two = 2;
            f.createAttribute("format_version", H5::PredType::NATIVE_INT64,
                              H5::DataSpace(H5S_SCALAR))
                .write(H5::PredType::NATIVE_INT64, &two);
        }
        QVERIFY(
            format_error(p).contains("format_version ≤ 1 (the newest this build reads), found 2"));

        const std::string q = write_good("key.ckpt.h5", model);
        {
            H5::H5File f(q, H5F_ACC_RDWR);
            H5::Group cfg = f.openGroup("config");
            cfg.removeAttr("json");
            H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
            cfg.createAttribute("json", st, H5::DataSpace(H5S_SCALAR))
                .write(st, std::string(R"({"model": {"d_modle": 3}})"));
        }
        const QString m = format_error(q);
        QVERIFY2(m.contains("/config") && m.contains("model.d_modle: unknown key"), qPrintable(m));
    }

    void filesThatAreNotCheckpointsNeverCrash() {
        const std::string text = path("text.ckpt.h5");
        std::ofstream(text) << "not an HDF5 file";
        QVERIFY_THROWS_EXCEPTION(IoError, read_checkpoint(text));
        QVERIFY_THROWS_EXCEPTION(IoError, read_checkpoint(path("absent.ckpt.h5")));
        const std::string empty_h5 = path("empty.ckpt.h5");
        H5::H5File(empty_h5, H5F_ACC_TRUNC).close();
        QVERIFY(format_error(empty_h5).contains("format"));
        // A truncated checkpoint.
        models::Model model(tiny_config(), 1, 4);
        const std::string p = write_good("cut.ckpt.h5", model);
        const std::string bytes = read_bytes(p);
        std::ofstream(p, std::ios::binary | std::ios::trunc)
            .write(bytes.data(), std::streamsize(bytes.size() / 2));
        try {
            (void)read_checkpoint(p);
            QFAIL("a truncated file must not read");
        } catch (const Error&) {
        }
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
