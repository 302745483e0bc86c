// The analysis views render dumps of the non-BiGS architectures (issue 7), written by the project's
// own CLI from freshly initialised tiny checkpoints (`train` with 0 steps, then `dump --gates`):
// - Birdie (prefix mode, alternate pattern): the gates timeline of the prefix layer is two panels,
//   the forward half (channels < N/2) and the reverse half, with the prefix/suffix boundary marked
//   at round(0.75·n) (train.prefix_fraction's default, computed here from the example's length);
//   the causal layer is one panel;
// - gMLP: the kernel browser shows the spatial matrix W of the chosen layer, cell for cell the
//   checkpoint's layers.<l−1>.spatial.weight[:L, :L] (read from the checkpoint with HDF5);
// - S-LSTM: the transitions view's step × position heatmap, one row per recurrent step, whose
//   cells are the mean ‖h^(ℓ)_t − h^(ℓ−1)_t‖ recomputed here from the dump's hidden states.
// Screenshots go to ROUTESCOPE_TEST_OUTPUT (view_arch_*.png).
#include <H5Cpp.h>

#include <QChartView>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QtTest>

#include <cmath>

#include "view_test_support.hpp"
#include "views/gates_view.hpp"
#include "views/heatmap_widget.hpp"
#include "views/kernel_view.hpp"
#include "views/transitions_view.hpp"

using namespace routescope::views;

namespace {

std::vector<float> read_floats(const QString& file, const std::string& path) {
    H5::H5File f(file.toStdString(), H5F_ACC_RDONLY);
    H5::DataSet ds = f.openDataSet(path);
    std::vector<float> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(), H5::PredType::NATIVE_FLOAT);
    return v;
}

std::vector<int> read_lengths(const QString& file) {
    H5::H5File f(file.toStdString(), H5F_ACC_RDONLY);
    H5::DataSet ds = f.openDataSet("data/lengths");
    std::vector<int> v(static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints()));
    ds.read(v.data(), H5::PredType::NATIVE_INT);
    return v;
}

}  // namespace

class TestArchViews : public QObject {
    Q_OBJECT
    QString dir_, birdie_, gmlp_, slstm_;

private slots:
    void initTestCase() {
        dir_ = view_test::data_dir("arch_views");
        birdie_ =
            view_test::arch_dump(dir_, "birdie",
                                 R"({"arch": "birdie", "d_model": 32, "n_layers": 2, "max_len": 64,
                                "d_inner": 16, "ln_eps": 1e-5, "birdie": {"mode": "prefix"}})");
        gmlp_ =
            view_test::arch_dump(dir_, "gmlp",
                                 R"({"arch": "gmlp", "d_model": 32, "n_layers": 2, "max_len": 64,
                              "d_inner": 64, "ln_eps": 1e-5})");
        slstm_ = view_test::arch_dump(
            dir_, "slstm", R"({"arch": "slstm", "d_model": 32, "n_layers": 3, "max_len": 64})");
        QVERIFY(!birdie_.isEmpty() && !gmlp_.isEmpty() && !slstm_.isEmpty());
    }

    void birdieGatesTimelineSplitsTheHalvesAndMarksThePrefix() {
        GatesViewSettings s;
        s.dump = birdie_;
        s.layer = 1;
        s.gate = "f";
        s.example = 2;
        GatesView view(s);
        view.resize(1200, 800);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view_test::wait_for(&view));  // the timeline's own worker
        const int n = read_lengths(birdie_)[2];
        const int prefix =
            std::clamp(static_cast<int>(std::lround(0.75 * n)), 1, std::max(1, n - 1));
        const auto& fwd = view.timeline_heatmap()->data();
        const auto& rev = view.reverse_heatmap()->data();
        QVERIFY(view.reverse_heatmap()->isVisible());
        QCOMPARE(fwd.rows, 8);
        QCOMPARE(rev.rows, 8);
        QCOMPARE(fwd.columns, n);
        QCOMPARE(rev.row_labels.front(), QString("8"));
        QVERIFY(rev.title.contains("reverse"));
        QCOMPARE(fwd.marked_column, prefix);
        QCOMPARE(rev.marked_column, prefix);
        // The reverse panel's first cell is channel 8 of f at position 0 of example 2.
        const auto f = read_floats(birdie_, "layers/1/gates/f");
        const std::size_t L = f.size() / (6 * 16);
        QCOMPARE(static_cast<float>(rev.values[0]), f[(2 * L + 0) * 16 + 8]);
        QVERIFY(view_test::screenshot(&view, "view_arch_birdie_gates_prefix"));

        // Layer 2 is causal under the alternate pattern: one panel of all 16 channels.
        view.select_gate(2, "f");
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(!view.reverse_heatmap()->isVisible());
        QCOMPARE(view.timeline_heatmap()->data().rows, 16);
        QVERIFY(view_test::screenshot(&view, "view_arch_birdie_gates_causal"));
    }

    void gmlpMatricesInTheKernelBrowser() {
        KernelViewSettings s;
        s.a = KernelSource::from_path(gmlp_);
        KernelView view(s);
        view.resize(1100, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        view.select_layer(2);
        const auto& d = view.heatmap_a()->data();
        QVERIFY(d.title.contains("layer 2"));
        const auto W = read_floats(QDir(dir_).filePath("gmlp/model.ckpt.h5"),
                                   "params/layers.1.spatial.weight");  // [64, 64]
        QCOMPARE(d.rows, 32);
        QCOMPARE(d.columns, 32);
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 32; ++j)
                QCOMPARE(static_cast<float>(d.values[static_cast<std::size_t>(i) * 32 + j]),
                         W[static_cast<std::size_t>(i) * 64 + j]);
        QVERIFY(view_test::screenshot(&view, "view_arch_gmlp_mixing"));
    }

    void slstmStepPositionHeatmapInTheTransitionsView() {
        TransitionsViewSettings s;
        s.dumps = {slstm_};
        s.measure = "positions";
        TransitionsView view(s);
        view.resize(1000, 600);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view.position_heatmap()->isVisible());
        const auto& d = view.position_heatmap()->data();
        const auto lengths = read_lengths(slstm_);
        QCOMPARE(d.rows, 3);  // recurrent steps 1..3
        QCOMPARE(d.columns, *std::max_element(lengths.begin(), lengths.end()));
        QVERIFY(d.y_label.contains("step"));
        // Mean ‖h^(2)_t − h^(1)_t‖ at t = 0 over the 6 examples, from the dump itself.
        const auto h1 = read_floats(slstm_, "layers/1/hidden");
        const auto h2 = read_floats(slstm_, "layers/2/hidden");
        const std::size_t dm = 32, L = h1.size() / (6 * dm);
        double sum = 0;
        for (std::size_t e = 0; e < 6; ++e) {
            double sq = 0;
            for (std::size_t c = 0; c < dm; ++c) {
                const double x = double(h2[e * L * dm + c]) - double(h1[e * L * dm + c]);
                sq += x * x;
            }
            sum += std::sqrt(sq);
        }
        QVERIFY2(std::abs(d.values[static_cast<std::size_t>(d.columns)] - sum / 6) < 1e-5,
                 qPrintable(QString::number(d.values[static_cast<std::size_t>(d.columns)])));
        QVERIFY(view_test::screenshot(&view, "view_arch_slstm_step_position"));

        // The other measures are the usual curves.
        view.set_measure("relative");
        QVERIFY(!view.position_heatmap()->isVisible());
        QVERIFY(view.chart()->isVisible());
    }

    void slstmGatesRender() {
        GatesViewSettings s;
        s.dump = slstm_;
        GatesView view(s);
        view.resize(1200, 700);
        view.show();
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY2(view.has_result(), qPrintable(view.error()));
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(!view.reverse_heatmap()->isVisible());
        QVERIFY(view.timeline_heatmap()->data().rows > 0);
        QVERIFY(view_test::screenshot(&view, "view_arch_slstm_gates"));
    }

    void gatesOfAGatelessModelSayWhichModelsHaveGates() {
        // Issue 26: in the user's terms, not "no /layers/<l>/gates".
        const QString bert = view_test::arch_dump(
            dir_, "bert",
            R"({"arch": "bert", "d_model": 32, "n_layers": 2, "max_len": 64, "n_heads": 2})",
            /*gates=*/false);
        QVERIFY(!bert.isEmpty());
        GatesViewSettings s;
        s.dump = bert;
        GatesView view(s);
        view.start();
        QVERIFY(view_test::wait_for(&view));
        QVERIFY(!view.has_result());
        QVERIFY2(view.error().contains("BERT dumps have no gates; open a BiGS, Birdie, S-LSTM "
                                       "or gMLP dump"),
                 qPrintable(view.error()));
        QVERIFY(!view.error().contains("/layers/"));
    }
};

QTEST_MAIN(TestArchViews)
#include "test_arch_views.moc"
