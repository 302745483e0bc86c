#pragma once
// Efficiency (ANALYSES.md §7; the BiGS paper's Table 8): forward FLOPs of one sequence against its
// length L for each architecture, from the analysis library's op-count model, on log-log axes; with
// a timings file (the output of `routescope-cli bench forward`) also the measured time per sequence
// against L beside it, and the crossover where the first architecture becomes faster.
#include <optional>

#include "analysis/flops.hpp"
#include "analysis/forward_timings.hpp"
#include "views/analysis_view.hpp"

class QChartView;
class QTableWidget;

namespace routescope::views {

struct EfficiencyViewSettings {
    std::vector<analysis::FlopConfig> models = {{"bigs", 23, 1024, 0, 64},
                                                {"bert", 24, 1024, 0, 64}};
    std::vector<qint64> lengths = {128, 256, 512, 1024, 2048, 4096};
    bool forward_backward = false;
    QString timings;  ///< `routescope-cli bench forward` output (empty: FLOPs only)
    nlohmann::json to_json() const;
    static EfficiencyViewSettings from_json(const nlohmann::json& j);
};

class EfficiencyView : public AnalysisView {
    Q_OBJECT
public:
    explicit EfficiencyView(EfficiencyViewSettings settings = {}, QWidget* parent = nullptr);
    QString title() const override { return tr("Efficiency — FLOPs against L"); }
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    const std::vector<analysis::FlopResult>& results() const { return results_; }
    QChartView* chart() const { return chart_; }
    /// The measured-time chart (hidden without a timings file).
    QChartView* time_chart() const { return time_chart_; }
    const std::optional<analysis::ForwardTimings>& timings() const { return timings_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;

private:
    EfficiencyViewSettings settings_;
    std::vector<analysis::FlopResult> results_;
    std::optional<analysis::ForwardTimings> timings_;
    QChartView* chart_;
    QChartView* time_chart_;
    QTableWidget* table_;
    void redraw();
    void draw_timings();
};

}  // namespace routescope::views
