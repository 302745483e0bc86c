#pragma once
// PCA redundancy (ANALYSES.md §4; the S-LSTM paper's Table 6): the k(p) table per layer (all
// sentences and by length bucket) and the mean cumulative explained-variance curve of each layer,
// for one model or several (compare mode: one curve per layer and model, the table under a model
// column, and mean k(p) against the layer ℓ or, aligning models of different depth, the relative
// depth ℓ / n_layers).
#include "analysis/pca.hpp"
#include "views/analysis_view.hpp"

class QChartView;
class QComboBox;
class QTableWidget;

namespace routescope::views {

struct PcaViewSettings {
    QStringList dumps;  ///< one per model (project files with a single "dump" still read)
    bool energy = false;
    qint64 max_sentences = 0;
    QString x = "layer";  ///< k(p) chart along: layer (ℓ) | depth (ℓ / n_layers)
    double p = 0.90;      ///< the threshold of the k(p) chart
    nlohmann::json to_json() const;
    static PcaViewSettings from_json(const nlohmann::json& j);
};

class PcaView : public AnalysisView {
    Q_OBJECT
public:
    explicit PcaView(PcaViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    /// [model][layer] results.
    const std::vector<std::vector<analysis::PcaResult>>& results() const { return results_; }
    const std::vector<std::int64_t>& n_layers() const { return n_layers_; }
    /// "layer" or "depth".
    void set_x(const QString& x);
    void set_p(double p);
    QChartView* chart() const { return chart_; }
    /// Mean k(p) against layer or relative depth, one line per model.
    QChartView* k_chart() const { return k_chart_; }
    QTableWidget* table() const { return table_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    PcaViewSettings settings_;
    std::vector<std::vector<analysis::PcaResult>> results_;  ///< [model][layer]
    std::vector<std::int64_t> n_layers_;                     ///< each model's depth
    QComboBox *x_box_, *p_box_;
    QChartView *chart_, *k_chart_;
    QTableWidget* table_;
    QString model_name(std::size_t m) const;
    void redraw();
};

}  // namespace routescope::views
