// DumpWriter writes files that pass validation, stream row by row, and never leave a partial file
// under the final name.
#include <QtTest>

#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/io/dump_writer.hpp"
#include "engine/io/file_info.hpp"
#include "engine/io/validation.hpp"

using namespace routescope;

class TestDumpWriter : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    DumpSpec small_spec(bool f16) {
        DumpSpec spec;
        spec.arch = "bigs";
        spec.name = "writer-test";
        spec.n_layers = 2;
        spec.d_model = 3;
        spec.examples = 2;
        spec.length = 4;
        spec.layers = {0, 2};
        spec.sentence = true;
        spec.gates = {"u_f"};
        spec.gate_channels = 3;
        spec.float16 = f16;
        spec.labels = spec.text = true;
        spec.attributes = {"gap"};
        return spec;
    }

    void fill(DumpWriter& w) {
        for (int s = 0; s < 2; ++s) {
            ExampleRecord r;
            r.tokens = {5, 6, 7, 0};
            r.length = 3 - s;
            r.label = s;
            r.text = "ex" + std::to_string(s);
            r.attributes = {1.5 * s};
            w.write_example(s, r);
            std::vector<float> h(12);
            for (int i = 0; i < 12; ++i)
                h[i] = 0.25f * i + s;
            for (int l : {0, 2}) {
                w.write_hidden(l, s, h.data());
                w.write_sentence(l, s, h.data());
            }
            w.write_gate(2, "u_f", s, h.data());
        }
        w.write_kernel(1, {1, 0.5f, 0.25f, 0.125f}, {1, 0.5f, 0.25f, 0.125f}, 1.0, 1.0);
    }

private slots:
    void writtenDumpValidates_data() {
        QTest::addColumn<bool>("f16");
        QTest::newRow("float32") << false;
        QTest::newRow("float16") << true;
    }
    void writtenDumpValidates() {
        QFETCH(bool, f16);
        const std::string path = dir_.filePath(f16 ? "w16.dump.h5" : "w32.dump.h5").toStdString();
        DumpWriter w(path, small_spec(f16));
        fill(w);
        QVERIFY(!std::filesystem::exists(path));  // nothing under the final name until finish()
        w.finish();
        const auto report = validate_file(path);
        for (const auto& v : report.violations)
            qWarning() << QString::fromStdString(v.text());
        QVERIFY(report.ok());
        const auto info = read_file_info(path);
        QCOMPARE(info.examples, 2u);
        QCOMPARE(info.length, 4u);
        QCOMPARE(info.layers.size(), std::size_t(2));
        QCOMPARE(info.layers[1].hidden->dtype, std::string(f16 ? "float16" : "float32"));
        QCOMPARE(info.kernels.size(), std::size_t(1));
    }

    void abandonedWriterLeavesNoFile() {
        const std::string path = dir_.filePath("abandoned.dump.h5").toStdString();
        std::string temp;
        {
            DumpWriter w(path, small_spec(false));
            temp = w.temp_path();
            QVERIFY(std::filesystem::exists(temp));
            ExampleRecord bad;
            bad.tokens = {1, 2};  // wrong L
            bad.length = 2;
            QVERIFY_THROWS_EXCEPTION(FormatError, w.write_example(0, bad));
        }
        QVERIFY(!std::filesystem::exists(path));
        QVERIFY(!std::filesystem::exists(temp));
    }

    void unwritableDirectoryIsAClearError() {
        try {
            DumpWriter w("/proc/no-such-dir/x.dump.h5", small_spec(false));
            QFAIL("expected IoError");
        } catch (const IoError& e) {
            QVERIFY(QString(e.what()).contains("/proc/no-such-dir/x.dump.h5: cannot create"));
        }
    }
};

QTEST_APPLESS_MAIN(TestDumpWriter)
#include "test_dump_writer.moc"
