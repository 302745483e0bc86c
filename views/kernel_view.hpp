#pragma once
// Kernel browser (ANALYSES.md §1; the BiGS paper's Figure 3): heatmap of layers × relative position
// r = −R..R, click a layer for its full kernels, frequency response and poles, with the effective
// length. Compare mode: A | B | A − B with one linked layer selection.
#include <optional>

#include "analysis/kernels.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QSpinBox;
class QLabel;
class QChartView;

namespace routescope::views {

class HeatmapWidget;

struct KernelSource {
    QString path;
    bool checkpoint = false;                             ///< false: a dump's /kernels (or /mixing)
    static KernelSource from_path(const QString& path);  ///< *.ckpt.h5 → checkpoint
};

struct KernelViewSettings {
    KernelSource a;
    std::optional<KernelSource> b;  ///< compare mode
    int radius = 10;                ///< R (ANALYSES.md default)
    int length = 512;               ///< L of kernels computed from a checkpoint
    QString scaling = "minmax";     ///< minmax (per row, the paper's) | signed | magnitude
    int layer = -1;                 ///< selected layer (−1: none yet)
    /// The channel group shown, 0..H−1 of a model with H kernels per SSM (model.ssm.n_kernels).
    int group = 0;
    nlohmann::json to_json() const;
    static KernelViewSettings from_json(const nlohmann::json& j);
};

class KernelView : public AnalysisView {
    Q_OBJECT
public:
    explicit KernelView(KernelViewSettings settings, QWidget* parent = nullptr);

    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& settings) override;
    analysis::CsvTable figure_table() const override;

    void set_scaling(const QString& scaling);
    void select_layer(int layer);
    int selected_layer() const { return settings_.layer; }
    const analysis::KernelsResult* result_a() const { return a_ ? &*a_ : nullptr; }
    const analysis::KernelsResult* result_b() const { return b_ ? &*b_ : nullptr; }
    HeatmapWidget* heatmap_a() const { return heat_a_; }
    HeatmapWidget* heatmap_b() const { return heat_b_; }
    HeatmapWidget* heatmap_difference() const { return heat_diff_; }
    QChartView* curve_chart() const { return curve_; }
    QChartView* response_chart() const { return response_; }
    QChartView* pole_chart() const { return poles_; }
    QString effective_length_text() const;

signals:
    void layerSelected(int layer);

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    KernelViewSettings settings_;
    std::optional<analysis::KernelsResult> a_, b_;
    QComboBox *scaling_box_, *mixing_box_;  ///< mixing_box_: gMLP's layer of W (dumps with /mixing)
    QSpinBox *radius_box_, *length_box_, *group_box_ = nullptr;
    QLabel* readout_;
    HeatmapWidget *heat_a_, *heat_b_, *heat_diff_;
    QChartView *curve_, *response_, *poles_;
    void redraw();
    void draw_details();
};

}  // namespace routescope::views
