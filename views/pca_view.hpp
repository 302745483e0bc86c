#pragma once
// PCA redundancy (ANALYSES.md §4; the S-LSTM paper's Table 6): the k(p) table per layer (all
// sentences and by length bucket) and the mean cumulative explained-variance curve of each layer.
#include "analysis/pca.hpp"
#include "views/analysis_view.hpp"

class QChartView;
class QTableWidget;

namespace routescope::views {

struct PcaViewSettings {
    QString dump;
    bool energy = false;
    qint64 max_sentences = 0;
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
    const std::vector<analysis::PcaResult>& results() const { return results_; }
    QChartView* chart() const { return chart_; }
    QTableWidget* table() const { return table_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;

private:
    PcaViewSettings settings_;
    std::vector<analysis::PcaResult> results_;  ///< one per layer
    QChartView* chart_;
    QTableWidget* table_;
    void redraw();
};

}  // namespace routescope::views
