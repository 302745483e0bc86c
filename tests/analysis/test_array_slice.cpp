// analysis::read_slice (the array browser's reader) gives each dataset's values whatever float
// type the file stores them in. float16 in the IEEE little-endian layout is read as bits and
// converted by engine/io/half.hpp; any other 2-byte float (big-endian binary16, bfloat16 declared
// as an HDF5 float type) must go through HDF5's conversion rather than be taken for binary16.
// h5py writes the file; numpy says what each cell is.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>

#include "analysis/array_slice.hpp"

using namespace routescope::analysis;

class TestArraySlice : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string file_;
    QJsonObject want_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        file_ = dir_.filePath("types.h5").toStdString();
        QProcess py;
        py.start(
            QStringLiteral(ROUTESCOPE_PYTHON),
            {"-c",
             "import sys, h5py, numpy as np\n"
             "v = np.array([[0.5, -1.25, 3.0, 96.0], [2.0**-10, -0.0, 6.0e-8, 1.0e30]])\n"
             "with h5py.File(sys.argv[1], 'w') as f:\n"
             "    f['f16le'] = v[:, :3].astype('<f2')\n"
             "    f['f16be'] = v[:, :3].astype('>f2')\n"
             "    f['f32'] = v.astype('<f4')\n"
             "    f['f64be'] = v.astype('>f8')\n"
             "    f['i16'] = np.array([[1, -2], [300, -32768]], dtype='<i2')\n"
             "    bf = h5py.h5t.IEEE_F32LE.copy()\n"
             "    bf.set_fields(15, 7, 8, 0, 7)\n"
             "    bf.set_size(2)\n"
             "    bf.set_ebias(127)\n"
             "    bits = (v.astype('<f4').view('<u4') >> 16).astype('<u2')\n"
             "    space = h5py.h5s.create_simple(v.shape)\n"
             "    d = h5py.h5d.create(f.id, b'bf16', bf, space)\n"
             "    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(bits), mtype=bf)\n"
             "    want = {k: f[k][()].astype(np.float64).tolist() for k in "
             "('f16le', 'f16be', 'f32', 'f64be')}\n"
             "want['bf16'] = (bits.astype('<u4') << 16).view('<f4').astype(np.float64).tolist()\n"
             "import json\n"
             "print(json.dumps(want))\n",
             dir_.filePath("types.h5")});
        QVERIFY(py.waitForFinished(60000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        want_ = QJsonDocument::fromJson(py.readAllStandardOutput()).object();
        QVERIFY(!want_.isEmpty());
    }

    void everyFloatTypeReadsAsItsValues_data() {
        QTest::addColumn<QString>("dataset");
        QTest::addColumn<int>("columns");
        QTest::newRow("float16 little-endian") << "f16le" << 3;
        QTest::newRow("float16 big-endian") << "f16be" << 3;
        QTest::newRow("bfloat16 (a 2-byte float that is not binary16)") << "bf16" << 4;
        QTest::newRow("float32") << "f32" << 4;
        QTest::newRow("float64 big-endian") << "f64be" << 4;
    }
    void everyFloatTypeReadsAsItsValues() {
        QFETCH(QString, dataset);
        QFETCH(int, columns);
        // numpy's values of what each dataset holds (bfloat16: the float32 bits' top half, the
        // last row's 1e30 truncated to 9.95e29).
        const QJsonArray want = want_[dataset].toArray();
        QCOMPARE(want.size(), 2);
        SliceRequest request;
        request.dataset = "/";
        request.dataset += dataset.toStdString();
        request.index = {0, 0};
        const Slice s = read_slice(file_, request);
        QCOMPARE(s.rows, std::int64_t(2));
        QCOMPARE(s.columns, std::int64_t(columns));
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < columns; ++j) {
                const double got = s.values[static_cast<std::size_t>(i * columns + j)];
                const double expected = want[i].toArray()[j].toDouble();
                if (got != expected)
                    qWarning("%s [%d, %d]: %.17g, want %.17g", qPrintable(dataset), i, j, got,
                             expected);
                QCOMPARE(got, expected);
            }
        QCOMPARE(s.non_finite, std::int64_t(0));
    }

    void listingNamesTheTypes() {
        const auto entries = list_datasets(file_);
        std::map<std::string, std::string> dtype;
        for (const auto& e : entries)
            dtype[e.path] = e.dtype;
        QCOMPARE(dtype["/f16le"], std::string("float16"));
        QCOMPARE(dtype["/f16be"], std::string("float16"));
        QCOMPARE(dtype["/i16"], std::string("int16"));
    }

    void aGroupCycleIsListedOnce() {
        // Session 37 (hostile files): a hard link back to a group being walked (h5py's
        // f['layers/1/loop'] = f['layers'], which validate ignores as an object the format does
        // not name) made the listing recurse until the workbench died of a stack overflow; a
        // group linked twice, and an external link, are not walked again or followed either.
        const QString path = dir_.filePath("cycle.h5");
        QProcess py;
        py.start(QStringLiteral(ROUTESCOPE_PYTHON),
                 {"-c",
                  "import sys, h5py, numpy as np\n"
                  "with h5py.File(sys.argv[1], 'w') as f:\n"
                  "    f['layers/1/hidden'] = np.zeros((2, 3, 4), dtype='<f4')\n"
                  "    f['layers/2/hidden'] = np.ones((2, 3, 4), dtype='<f4')\n"
                  "    f['layers/1/loop'] = f['layers']\n"
                  "    f['again'] = f['layers/2']\n"
                  "    f['elsewhere'] = h5py.ExternalLink('/dev/zero', '/x')\n",
                  path});
        QVERIFY(py.waitForFinished(60000));
        QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
        QElapsedTimer timer;
        timer.start();
        const auto entries = list_datasets(path.toStdString());
        QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed()) + " ms"));
        std::vector<std::string> paths;
        for (const auto& e : entries)
            paths.push_back(e.path);
        QCOMPARE(paths.size(), std::size_t(2));  // each dataset once, by its first path
        QCOMPARE(paths[0], std::string("/again/hidden"));
        QCOMPARE(paths[1], std::string("/layers/1/hidden"));
    }
};

QTEST_APPLESS_MAIN(TestArraySlice)
#include "test_array_slice.moc"
