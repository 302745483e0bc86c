#pragma once
// Gate dynamics (ANALYSES.md §2): per-layer gate statistics in a table, the histogram and
// saturation fractions of the selected gate, and a token-aligned timeline (channels × positions) of
// one example with its tokens along the axis, picked from a list searchable by text.
#include <optional>

#include "analysis/gates.hpp"
#include "engine/core/error.hpp"
#include "views/analysis_view.hpp"
#include "views/heatmap_widget.hpp"

class QComboBox;
class QLineEdit;
class QChartView;
class QTableWidget;

namespace routescope::views {

class HeatmapWidget;

struct GatesViewSettings {
    QString dump;
    int layer = -1;  ///< −1: the first layer with gates
    QString gate;    ///< empty: the layer's first gate
    qint64 example = 0;
    nlohmann::json to_json() const;
    static GatesViewSettings from_json(const nlohmann::json& j);
};

/// What the worker reads for the timeline of one example: gate values [positions, channels].
struct GateTimeline {
    int layer = 0;
    QString gate;
    qint64 example = 0, length = 0;
    analysis::RowMatrixF values;
    QStringList tokens;
    int reverse_from = -1;   ///< Birdie: channels ≥ this scan right to left (−1: none)
    qint64 prefix_end = -1;  ///< first position of the causal region (−1: no prefix split)
};

class GatesView : public AnalysisView {
    Q_OBJECT
public:
    explicit GatesView(GatesViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;

    /// Shows gate `gate` of `layer` (histogram at once; the timeline is read in a worker).
    void select_gate(int layer, const QString& gate);
    void select_example(qint64 example);
    const analysis::GatesResult* result() const { return result_ ? &*result_ : nullptr; }
    const GateTimeline& timeline() const { return timeline_; }
    HeatmapWidget* timeline_heatmap() const { return timeline_map_; }
    /// The reverse half's panel of a bidirectional/prefix Birdie layer (hidden otherwise).
    HeatmapWidget* reverse_heatmap() const { return reverse_map_; }
    QChartView* histogram_chart() const { return histogram_; }
    QTableWidget* table() const { return table_; }
    QComboBox* example_box() const { return example_box_; }
    QLineEdit* search() const { return search_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;

private:
    GatesViewSettings settings_;
    std::optional<analysis::GatesResult> result_;
    std::vector<std::string> texts_;
    GateTimeline timeline_;
    QComboBox *gate_box_, *example_box_;
    QLineEdit* search_;
    QTableWidget* table_;
    HeatmapWidget *timeline_map_, *reverse_map_;
    QChartView* histogram_;
    void fill_examples();
    void draw_histogram();
    void load_timeline();
    /// The timeline's channels [first_channel, end_channel) as a heatmap (positions < length).
    HeatmapData timeline_panel(int first_channel, int end_channel, const QString& title) const;
};

}  // namespace routescope::views
