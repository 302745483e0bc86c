#pragma once
// Gate dynamics (ANALYSES.md §2): per-layer gate statistics in a table, the histogram and
// saturation fractions of the selected gate, and a token-aligned timeline (channels × positions) of
// one example with its tokens along the axis, picked from a list searchable by text.
// Compare mode (a second dump B of the same examples): A | B timelines on one colour range with the
// example, layer and gate selection linked (B follows A: the same example text, the same layer, or
// the same relative depth, and the gate of the same name), B's histogram over A's, both tables
// under a model column; A − B of the timelines where it is defined (both dumps have the same
// layers and gate names and the timelines the same shape, e.g. two checkpoints of one
// architecture). Different architectures (BiGS u_f, u_b beside Birdie f, i, z, o) show side by
// side without a difference.
#include <optional>
#include <tuple>
#include <utility>

#include "analysis/gates.hpp"
#include "engine/core/error.hpp"
#include "views/analysis_view.hpp"
#include "views/heatmap_widget.hpp"

class QComboBox;
class QLabel;
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
    QString dump_b;           ///< compare mode: B (empty: A only)
    QString align = "layer";  ///< how B's layer follows A's: layer (ℓ) | depth (ℓ / n_layers)
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

    // Compare mode.
    bool comparing() const { return !settings_.dump_b.isEmpty(); }
    const analysis::GatesResult* result_b() const { return result_b_ ? &*result_b_ : nullptr; }
    const GateTimeline& timeline_b() const { return timeline_b_; }
    HeatmapWidget* timeline_heatmap_b() const { return timeline_b_map_; }
    HeatmapWidget* difference_heatmap() const { return difference_map_; }
    /// Whether A − B is drawn (same layers and gates, timelines of one shape).
    bool difference_shown() const { return difference_shown_; }
    /// Why A − B is not drawn (empty when it is, or when not comparing).
    QString difference_note() const { return compare_note_text_; }
    /// B's layer and gate linked to A's (layer −1: B has none there).
    std::pair<int, QString> gate_b() const;
    /// B's example linked to A's example `example` (−1: B does not hold it).
    qint64 example_b(qint64 example) const;
    /// "layer" or "depth".
    void set_align(const QString& align);

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    GatesViewSettings settings_;
    std::optional<analysis::GatesResult> result_, result_b_;
    std::vector<std::string> texts_, texts_b_;
    bool text_a_ = false, text_b_ = false;  ///< whether the dumps hold /data/text
    std::int64_t n_layers_a_ = 1, n_layers_b_ = 1;
    GateTimeline timeline_, timeline_b_;
    bool difference_shown_ = false;
    QString compare_note_text_;
    QComboBox *gate_box_, *example_box_, *align_box_;
    QLabel *align_label_, *compare_note_;
    QLineEdit* search_;
    QTableWidget* table_;
    HeatmapWidget *timeline_map_, *reverse_map_, *timeline_b_map_, *difference_map_;
    /// Rows of the table: (0 = A, 1 = B, layer, gate).
    std::vector<std::tuple<int, int, QString>> table_rows_;
    void show_timelines();
    void update_difference_note();
    QChartView* histogram_;
    void fill_examples();
    void draw_histogram();
    void load_timeline();
    /// The timeline's channels [first_channel, end_channel) as a heatmap (positions < length).
    HeatmapData timeline_panel(const GateTimeline& t, int first_channel, int end_channel,
                               const QString& title) const;
};

}  // namespace routescope::views
