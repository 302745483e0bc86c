// validate_file against the h5py-written fixtures of tests/fixtures/make_dump_fixtures.py: every
// valid file passes, every broken one is reported with the violation text the format predicts,
// and no file makes the validator throw or crash. A fixture libhdf5 itself may crash on
// ("hdf5_may_crash": a damaged /vocab heap) is checked in a child process, as `validate` does.
#include <H5Cpp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <QtTest>

#include <cstring>

#include "engine/io/contained_validation.hpp"
#include "engine/io/file_info.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/validation.hpp"

using namespace routescope;

namespace {
ValidationReport validate(const QJsonObject& c, const QString& dir,
                          const ValidateOptions& options = {}) {
    const std::string path = (dir + "/" + c["file"].toString()).toStdString();
    return c["hdf5_may_crash"].toBool() ? validate_file_contained(path, options)
                                        : validate_file(path, options);
}

std::string violations_text(const ValidationReport& report) {
    std::string all;
    for (const auto& v : report.violations)
        all += v.text() + "\n";
    return all;
}

// A copy of fixture `name` in `dir`, changed by `edit(file id)` through the HDF5 C API.
template <class Edit>
std::string edited_copy(const QString& fixtures, const QTemporaryDir& dir, const QString& name,
                        const QString& as, Edit edit) {
    const QString path = dir.path() + "/" + as;
    QFile::remove(path);
    if (!QFile::copy(fixtures + "/" + name, path)) return {};
    QFile(path).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    const hid_t f = H5Fopen(path.toUtf8().constData(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return {};
    edit(f);
    H5Fclose(f);
    return path.toStdString();
}

// Replaces the float32 dataset `name` by one of the same shape stored as the 2-byte float type
// `type`, holding `bits` (one 16-bit pattern per element).
void replace_with_16_bit_float(hid_t f, const char* name, hid_t type,
                               const std::vector<std::uint16_t>& bits,
                               const std::vector<hsize_t>& shape) {
    H5Ldelete(f, name, H5P_DEFAULT);
    const hid_t space = H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr);
    const hid_t ds = H5Dcreate2(f, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bits.data());
    H5Dclose(ds);
    H5Sclose(space);
}

// A little-endian 2-byte float: sign bit 15, `esize` exponent bits above `msize` mantissa bits.
hid_t float16_layout(std::size_t esize, std::size_t msize, std::size_t bias) {
    const hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, msize, esize, 0, msize);
    H5Tset_offset(t, 0);
    H5Tset_precision(t, 16);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, bias);
    return t;
}
}  // namespace

class TestValidation : public QObject {
    Q_OBJECT
    QJsonArray cases_;
    QString dir_;

private slots:
    void initTestCase() {
        dir_ = QStringLiteral(ROUTESCOPE_TEST_DATA "/dumps");
        QFile manifest(dir_ + "/manifest.json");
        QVERIFY2(manifest.open(QIODevice::ReadOnly),
                 "run the fixtures_dumps test first (CTest fixture)");
        cases_ = QJsonDocument::fromJson(manifest.readAll()).object()["cases"].toArray();
        QVERIFY(cases_.size() >= 20);
    }

    void everyFixtureMatchesItsExpectation_data() {
        QTest::addColumn<QJsonObject>("fixture");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("expect");
        for (const auto& c : cases_) {
            const auto o = c.toObject();
            QStringList expect;
            for (const auto& e : o["expect"].toArray())
                expect << e.toString();
            QTest::newRow(qPrintable(o["file"].toString())) << o << o["exit"].toInt() << expect;
        }
    }

    void everyFixtureMatchesItsExpectation() {
        QFETCH(QJsonObject, fixture);
        QFETCH(int, exitCode);
        QFETCH(QStringList, expect);
        const auto report = validate(fixture, dir_);
        QString all;
        for (const auto& v : report.violations)
            all += QString::fromStdString(v.text()) + "\n";
        QVERIFY2(report.exit_code() == exitCode,
                 qPrintable(QString("exit %1, violations:\n%2").arg(report.exit_code()).arg(all)));
        for (const auto& e : expect)
            QVERIFY2(all.contains(e), qPrintable("missing '" + e + "' in:\n" + all));
        if (exitCode == 1) QCOMPARE(report.readable, true);
    }

    void brokenDumpsReportOnlyTheirOwnProblem() {
        // A file that breaks one rule should not drown the reader in follow-on violations.
        for (const auto& c : cases_) {
            const auto o = c.toObject();
            if (o["exit"].toInt() != 1) continue;
            const auto report = validate(o, dir_);
            QVERIFY2(report.violations.size() <= 2, qPrintable(o["file"].toString()));
        }
    }

    void quickModeSkipsValueScans() {
        ValidateOptions quick;
        quick.scan_values = false;
        QVERIFY(validate_file((dir_ + "/nan_hidden.dump.h5").toStdString(), quick).ok());
        QVERIFY(!validate_file((dir_ + "/hidden_wrong_S.dump.h5").toStdString(), quick).ok());
        // Values: invalid UTF-8, attention rows, row 0 of the per-group kernels.
        for (const char* file : {"text_not_utf8.dump.h5", "vocab_fixed_latin1.dump.h5",
                                 "attention_row_sum.dump.h5", "attention_padding.dump.h5",
                                 "attention_causal_future.dump.h5", "forward_groups_row0.dump.h5"})
            QVERIFY2(validate_file((dir_ + "/" + file).toStdString(), quick).ok(), file);
    }

    // The string datasets are read in the quick mode too (the structure pass every command's
    // input check and the workbench's loader run, and the dump reader's own check): a damaged
    // heap id is storage, found there, not by the analysis that reads /vocab or /data/text later.
    void quickModeReadsTheStrings() {
        ValidateOptions quick;
        quick.scan_values = false;
        const auto text = validate_file((dir_ + "/text_heap_damaged.dump.h5").toStdString(), quick);
        QCOMPARE(text.exit_code(), 1);
        QVERIFY2(QString::fromStdString(text.violations.at(0).text())
                     .startsWith("/data/text: expected readable strings, found damaged string "
                                 "storage: an HDF5 read error at [0]"),
                 text.violations.at(0).text().c_str());
        // libhdf5 crashes on this one: in a child process, the verdict names /vocab.
        const auto vocab =
            validate_file_contained((dir_ + "/vocab_heap_damaged.dump.h5").toStdString(), quick);
        QCOMPARE(vocab.exit_code(), 1);
        QCOMPARE(vocab.violations.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(vocab.violations[0].path), QString("/vocab"));
        // Layer 0's attention and kernels are structure.
        for (const char* file : {"attention_layer0.dump.h5", "kernels_layer0.dump.h5",
                                 "mixing_layer0.dump.h5", "forward_groups_alone.dump.h5"})
            QVERIFY2(!validate_file((dir_ + "/" + file).toStdString(), quick).ok(), file);
    }

    // A 2-byte float is named by its layout (docs/formats/dump.md accepts IEEE binary16 and
    // bfloat16): bfloat16 — sign, 8 exponent bits, 7 mantissa bits, bias 127 — was "float16",
    // IEEE half's name, in inspect and in validate's "found ...".
    void floatTypesAreNamedByTheirLayout() {
        QTemporaryDir dir;
        // valid_full's /layers/0/hidden is [6, 16, 8]; values k/4 in −2 … 1.75 have at most 3
        // significant bits, so a bfloat16 holds them exactly: the top half of the float32.
        const std::vector<hsize_t> shape = {6, 16, 8};
        std::vector<std::uint16_t> bits(6 * 16 * 8);
        for (std::size_t i = 0; i < bits.size(); ++i) {
            const float v = static_cast<float>(static_cast<int>(i % 16) - 8) / 4.0f;
            std::uint32_t u = 0;
            std::memcpy(&u, &v, sizeof u);
            bits[i] = static_cast<std::uint16_t>(u >> 16);
        }
        QCOMPARE(bits[12], std::uint16_t(0x3f80));  // 1.0: exponent 127 << 7
        const std::string bf16 =
            edited_copy(dir_, dir, "valid_full.dump.h5", "bf16.dump.h5", [&](hid_t f) {
                const hid_t t = float16_layout(8, 7, 127);
                replace_with_16_bit_float(f, "layers/0/hidden", t, bits, shape);
                H5Tclose(t);
            });
        QVERIFY(!bf16.empty());
        const auto report = validate_file(bf16);
        QVERIFY2(report.ok(), violations_text(report).c_str());
        const FileInfo info = read_file_info(bf16);
        QVERIFY(!info.layers.empty() && info.layers[0].hidden);
        QCOMPARE(info.layers[0].hidden->dtype, std::string("bfloat16"));
        QCOMPARE(info.layers[1].hidden->dtype, std::string("float32"));
        // IEEE binary16 stays float16 (valid_sparse_f16 is written by numpy's float16).
        const FileInfo f16 = read_file_info((dir_ + "/valid_sparse_f16.dump.h5").toStdString());
        QCOMPARE(f16.layers.at(0).hidden->dtype, std::string("float16"));
        // Any other 2-byte layout says so (6 exponent bits, 9 mantissa bits, bias 31).
        const std::string odd =
            edited_copy(dir_, dir, "valid_full.dump.h5", "odd.dump.h5", [&](hid_t f) {
                const hid_t t = float16_layout(6, 9, 31);
                replace_with_16_bit_float(f, "layers/0/hidden", t, bits, shape);
                H5Tclose(t);
            });
        QCOMPARE(read_file_info(odd).layers.at(0).hidden->dtype,
                 std::string("float(16 bits, nonstandard: 6 exponent bits with bias 31, 9 "
                             "mantissa bits)"));
        // validate's "found ..." names the layout too (/data/attributes/gap is float64 [6]).
        const std::string gap =
            edited_copy(dir_, dir, "valid_full.dump.h5", "gap.dump.h5", [&](hid_t f) {
                const hid_t t = float16_layout(8, 7, 127);
                replace_with_16_bit_float(f, "data/attributes/gap", t,
                                          std::vector<std::uint16_t>(6, 0x3f80), {6});
                H5Tclose(t);
            });
        const std::string said = violations_text(validate_file(gap));
        QVERIFY2(QString::fromStdString(said).contains(
                     "/data/attributes/gap: expected float64, found bfloat16"),
                 said.c_str());
    }

    // Where a group is required and none is there, the message says what is: a dangling soft
    // link was "expected a group, found a dataset", for a file that holds no dataset there.
    void whatIsThereWhereAGroupIsRequired() {
        QTemporaryDir dir;
        const auto dangling = [](const char* where) {
            return [where](hid_t f) {
                if (H5Lexists(f, where, H5P_DEFAULT) > 0) H5Ldelete(f, where, H5P_DEFAULT);
                H5Lcreate_soft("/nowhere", f, where, H5P_DEFAULT, H5P_DEFAULT);
            };
        };
        const std::vector<std::pair<const char*, const char*>> dumps = {
            {"layers", "/layers: expected a group, found a dangling link to /nowhere"},
            {"layers/2", "/layers/2: expected a group, found a dangling link to /nowhere"},
            {"layers/1/gates",
             "/layers/1/gates: expected a group, found a dangling link to /nowhere"},
            {"layers/0/attention",
             "/layers/0/attention: expected no attention at layer 0 (the embeddings; attention "
             "belongs to blocks l ≥ 1), found a dangling link to /nowhere"},
            {"data/attributes",
             "/data/attributes: expected a group of float64 [S] datasets, found a dangling link "
             "to /nowhere"},
            {"kernels", "/kernels: expected a group, found a dangling link to /nowhere"},
            {"kernels/1",
             "/kernels/1: expected a group with forward/backward datasets, found a dangling link "
             "to /nowhere"},
            {"mixing", "/mixing: expected a group, found a dangling link to /nowhere"},
            {"model",
             "/model: expected a group with attrs arch, name, n_layers, d_model, found a "
             "dangling link to /nowhere"},
            // Where a dataset is required (the format checker's datasets).
            {"layers/1/hidden",
             "/layers/1/hidden: expected a dataset, found a dangling link to /nowhere"},
            {"data/tokens", "/data/tokens: expected a dataset, found a dangling link to /nowhere"}};
        int n = 0;
        for (const auto& [where, said] : dumps) {
            const std::string path = edited_copy(dir_, dir, "valid_full.dump.h5",
                                                 QString("d%1.dump.h5").arg(n++), dangling(where));
            const auto report = validate_file(path);
            const QString all = QString::fromStdString(violations_text(report));
            QCOMPARE(report.exit_code(), 1);
            QVERIFY2(all.contains(QString::fromUtf8(said)) && !all.contains("a dataset\n"),
                     qPrintable(where + QString(": ") + all));
        }
        for (const auto& [where, said] :
             {std::pair{"train", "/train: expected a group, found a dangling link to /nowhere"},
              std::pair{"train/mixture_controller",
                        "/train/mixture_controller: expected a "
                        "group, found a dangling link to /nowhere"},
              std::pair{"tokenizer",
                        "/tokenizer: expected a group with attr kind, found a "
                        "dangling link to /nowhere"}}) {
            const std::string path = edited_copy(dir_, dir, "valid.ckpt.h5",
                                                 QString("c%1.ckpt.h5").arg(n++), dangling(where));
            const auto report = validate_file(path);
            const QString all = QString::fromStdString(violations_text(report));
            QCOMPARE(report.exit_code(), 1);
            QVERIFY2(all.contains(said), qPrintable(all));
        }
        // What a path holds, in every kind the helper names.
        const std::string kinds =
            edited_copy(dir_, dir, "valid_full.dump.h5", "kinds.dump.h5", [](hid_t f) {
                H5Lcreate_soft("/nowhere", f, "dangling", H5P_DEFAULT, H5P_DEFAULT);
                H5Lcreate_soft("/data/tokens", f, "to_tokens", H5P_DEFAULT, H5P_DEFAULT);
                H5Lcreate_soft("/loop_b", f, "loop_a", H5P_DEFAULT, H5P_DEFAULT);
                H5Lcreate_soft("/loop_a", f, "loop_b", H5P_DEFAULT, H5P_DEFAULT);
                H5Lcreate_external("other.h5", "/x", f, "external", H5P_DEFAULT, H5P_DEFAULT);
                H5Lcreate_soft("/external/y", f, "via_external", H5P_DEFAULT, H5P_DEFAULT);
                const hid_t t = H5Tcopy(H5T_IEEE_F32LE);
                H5Tcommit2(f, "named_type", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                H5Tclose(t);
            });
        h5::quiet_errors();
        H5::H5File f(kinds, H5F_ACC_RDONLY);
        for (const auto& [path, said] :
             {std::pair{"layers", "a group"}, std::pair{"data/tokens", "a dataset"},
              std::pair{"absent", "nothing"}, std::pair{"absent/below", "nothing"},
              std::pair{"dangling", "a dangling link to /nowhere"},
              std::pair{"dangling/below", "nothing"},
              std::pair{"to_tokens", "a soft link to /data/tokens (a dataset)"},
              std::pair{"loop_a",
                        "a soft link to /loop_b, which never resolves (a loop of soft "
                        "links)"},
              std::pair{"external", "an external link to other.h5:/x (not followed)"},
              std::pair{"via_external",
                        "a soft link to /external/y, which leads through an "
                        "external link (not followed)"},
              std::pair{"named_type", "a named datatype"}})
            QCOMPARE(h5::describe_path(f, path), std::string(said));
    }

    void missingFileIsUnreadable() {
        const auto report = validate_file("/nonexistent/dir/x.dump.h5");
        QCOMPARE(report.exit_code(), 2);
        QVERIFY(QString::fromStdString(report.violations.at(0).text()).contains("no such file"));
    }

    // What a path that is no file is, in the file system's terms (mkfifo, ln -s): a FIFO or a
    // device is "not a regular file" (it said "cannot stat the file (Operation not supported)"),
    // a symbolic link loop is not "no such file", a dangling link says where it points.
    void pathsThatAreNoFileSayWhatTheyAre() {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        QCOMPARE(::mkfifo((d + "/f.dump.h5").c_str(), 0600), 0);
        QCOMPARE(::symlink("loop2", (d + "/loop1").c_str()), 0);
        QCOMPARE(::symlink("loop1", (d + "/loop2").c_str()), 0);
        QCOMPARE(::symlink("nowhere", (d + "/dangling").c_str()), 0);
        const std::vector<std::pair<std::string, QString>> cases = {
            {d + "/f.dump.h5", "not a regular file (a FIFO)"},
            {"/dev/zero", "not a regular file (a device)"},
            {d + "/loop1", "a symbolic link that leads back to itself"},
            {d + "/dangling", "a symbolic link to a file that does not exist"}};
        for (const auto& [path, needle] : cases) {
            const auto report = validate_file(path);
            QCOMPARE(report.exit_code(), 2);
            const QString text = QString::fromStdString(report.violations.at(0).text());
            QVERIFY2(text.contains(needle), qPrintable(text));
        }
    }
};

QTEST_APPLESS_MAIN(TestValidation)
#include "test_validation.moc"
