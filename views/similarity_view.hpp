#pragma once
// Representation similarity of two models (issue 28; docs/analyses.md, "Representation
// similarity"): the layers × layers heatmap of one measure (rows: layers of A, columns: layers of
// B), and beside it the "diagonal by relative depth": for each layer of A at depth ℓ / n_A, the
// score against the layer of B at the nearest relative depth, with the permutation null's mean and
// the bootstrap interval where the measure has them (linear and RBF CKA, on the Gram sample).
// Clicking a cell shows its points: the first canonical pair of the two layers
// (analysis::canonical_scatter), one point per sampled vector, with ρ in the title.
#include "analysis/similarity.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QChartView;

namespace routescope::views {

class HeatmapWidget;

struct SimilarityViewSettings {
    QString dump_a, dump_b;
    QString measure = "linear_cka";  ///< one of analysis::similarity_measures()
    QString vectors = "token";       ///< token | sentence
    qint64 max_vectors = 100000;
    qint64 gram_m = 1000;
    int permutations = 100;
    int bootstrap = 100;
    /// The cell whose canonical pair is shown: layer of A, layer of B (−1: none).
    int scatter_a = -1, scatter_b = -1;
    nlohmann::json to_json() const;
    static SimilarityViewSettings from_json(const nlohmann::json& j);
};

class SimilarityView : public AnalysisView {
    Q_OBJECT
public:
    explicit SimilarityView(SimilarityViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    /// Redraws the last result (matrix, diagonal, scatter) with the current names: no recompute.
    void restyle() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    void set_measure(const QString& measure);
    const analysis::SimilarityResult& result() const { return result_; }
    HeatmapWidget* heatmap() const { return heatmap_; }
    QChartView* diagonal_chart() const { return diagonal_; }
    QChartView* scatter_chart() const { return scatter_; }
    /// Shows the first canonical pair of layer `layer_a` of A and `layer_b` of B (computed in a
    /// worker), as a click on their cell does.
    void show_scatter(int layer_a, int layer_b);
    /// The pair shown (empty until one is).
    const analysis::CanonicalScatter& scatter() const { return scatter_result_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    SimilarityViewSettings settings_;
    analysis::SimilarityResult result_;
    int n_layers_a_ = 1, n_layers_b_ = 1;
    QComboBox* measure_box_;
    QComboBox* vectors_box_;
    HeatmapWidget* heatmap_;
    QChartView* diagonal_;
    QChartView* scatter_;
    analysis::CanonicalScatter scatter_result_;
    QString scatter_error_;
    void redraw();
    void draw_scatter();
};

}  // namespace routescope::views
