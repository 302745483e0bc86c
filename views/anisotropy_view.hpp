#pragma once
// Anisotropy (ANALYSES.md §3; the S-LSTM paper's Figure 6): histograms of pairwise cosines of token
// vectors and of sentence vectors for one layer, several dumps overlaid, and the summary numbers of
// every layer and dump in a table. The layer selection is shared by all dumps (compare mode).
#include <array>

#include "analysis/anisotropy.hpp"
#include "engine/core/error.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QChartView;
class QTableWidget;

namespace routescope::views {

struct AnisotropyViewSettings {
    QStringList dumps;
    int layer = -1;  ///< −1: the last layer
    qint64 m = 5000;
    bool centred = false;
    quint64 seed = 0;
    nlohmann::json to_json() const;
    static AnisotropyViewSettings from_json(const nlohmann::json& j);
};

class AnisotropyView : public AnalysisView {
    Q_OBJECT
public:
    explicit AnisotropyView(AnisotropyViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;

    void select_layer(int layer);
    int selected_layer() const { return settings_.layer; }
    /// [dump][layer index][0 token, 1 sentence]
    const std::vector<std::vector<std::array<analysis::AnisotropyResult, 2>>>& results() const {
        return results_;
    }
    const std::vector<int>& layers() const { return layers_; }
    QChartView* token_chart() const { return token_; }
    QChartView* sentence_chart() const { return sentence_; }
    QTableWidget* summary() const { return summary_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    AnisotropyViewSettings settings_;
    std::vector<std::vector<std::array<analysis::AnisotropyResult, 2>>> results_;
    std::vector<int> layers_;
    QComboBox* layer_box_;
    QChartView *token_, *sentence_;
    QTableWidget* summary_;
    void redraw();
};

}  // namespace routescope::views
