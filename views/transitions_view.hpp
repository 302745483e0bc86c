#pragma once
// Layer transitions (ANALYSES.md §5; the S-LSTM paper's Figure 7): how far each layer moves token
// and sentence vectors, one curve per model and vector kind. Models of different depth can be
// aligned by relative depth ℓ / n_layers (the x setting).
#include "analysis/transitions.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QChartView;

namespace routescope::views {

struct TransitionsViewSettings {
    QStringList dumps;
    QString measure = "relative";  ///< l2 | relative | angle
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

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;

private:
    TransitionsViewSettings settings_;
    std::vector<analysis::TransitionsResult> results_;
    std::vector<std::int64_t> n_layers_;  ///< each model's depth (its dump's n_layers)
    QComboBox* measure_box_;
    QComboBox* x_box_;
    QChartView* chart_;
    void redraw();
};

}  // namespace routescope::views
