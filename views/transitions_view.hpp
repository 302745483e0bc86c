#pragma once
// Layer transitions (ANALYSES.md §5; the S-LSTM paper's Figure 7): how far each layer moves token
// and sentence vectors, one curve per model and vector kind. Models of different depth can be
// aligned by relative depth ℓ / n_layers (the x setting). As the measure "positions": the
// step × position change heatmap of the first dump (rows: layer / S-LSTM recurrent step ℓ ≥ 1,
// columns: positions, value: mean ‖h^(ℓ)_t − h^(ℓ−1)_t‖₂ as analysis/transitions computes it).
#include "analysis/transitions.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QChartView;

namespace routescope::views {

class HeatmapWidget;

struct TransitionsViewSettings {
    QStringList dumps;
    QString measure = "relative";  ///< l2 | relative | angle | positions (heatmap)
    qint64 max_sentences = 0;
    QString x = "layer";  ///< layer (ℓ) | depth (ℓ / n_layers, models of different depth aligned)
    nlohmann::json to_json() const;
    static TransitionsViewSettings from_json(const nlohmann::json& j);
};

class TransitionsView : public AnalysisView {
    Q_OBJECT
public:
    explicit TransitionsView(TransitionsViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    void set_measure(const QString& measure);
    /// "layer" or "depth" (relative depth ℓ / n_layers of each model).
    void set_x(const QString& x);
    const std::vector<analysis::TransitionsResult>& results() const { return results_; }
    QChartView* chart() const { return chart_; }
    HeatmapWidget* position_heatmap() const { return position_map_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    TransitionsViewSettings settings_;
    std::vector<analysis::TransitionsResult> results_;
    std::vector<std::int64_t> n_layers_;  ///< each model's depth (its dump's n_layers)
    QComboBox* measure_box_;
    QComboBox* x_box_;
    QChartView* chart_;
    HeatmapWidget* position_map_;
    void redraw();
    void draw_positions();
};

}  // namespace routescope::views
