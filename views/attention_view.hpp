#pragma once
// The implicit attention of an SSM layer for one example (issue 28; docs/analyses.md, "Implicit
// attention of an SSM layer"): the example's tokens on both axes (rows: the query t, columns: the
// source s), the mode (forward, backward, sum, gated) and the row normalisation named on the
// figure. With a second dump of the same examples: A | B | A − B on one colour range when both
// are matrices of one kind (two convolutions, two attentions); A | B, each on its own range, and
// a note saying why there is no A − B when they are not (a BiGS beside a BERT).
#include <QSpinBox>

#include "analysis/implicit_attention.hpp"
#include "views/analysis_view.hpp"

class QComboBox;

namespace routescope::views {

class HeatmapWidget;

struct AttentionViewSettings {
    QString dump, dump_b;
    int layer = 1;
    qint64 example = 0;
    QString mode = "sum";       ///< forward | backward | sum | gated
    QString normalise = "raw";  ///< raw | minmax | rownorm
    int head = -1;              ///< a BERT dump's attention head (−1: the mean of the heads)
    nlohmann::json to_json() const;
    static AttentionViewSettings from_json(const nlohmann::json& j);
};

class AttentionView : public AnalysisView {
    Q_OBJECT
public:
    explicit AttentionView(AttentionViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    const std::vector<analysis::ImplicitAttentionResult>& results() const { return results_; }
    HeatmapWidget* heatmap_a() const { return a_; }
    HeatmapWidget* heatmap_b() const { return b_; }
    HeatmapWidget* heatmap_difference() const { return diff_; }
    /// Compare mode: why A − B is not drawn (A and B are matrices of different kinds), or empty.
    QString difference_note() const { return compare_note_text_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    AttentionViewSettings settings_;
    std::vector<analysis::ImplicitAttentionResult> results_;
    QComboBox* mode_box_;
    QComboBox* normalise_box_;
    QSpinBox* head_box_;
    /// "A_f + A_b (both convolutions)" or "attention, mean of 4 heads" for result `r`.
    QString matrix_text(const analysis::ImplicitAttentionResult& r) const;
    /// The kind of matrix: "attention probabilities", "a convolution matrix", ...
    QString kind_text(const analysis::ImplicitAttentionResult& r) const;
    QLabel* compare_note_ = nullptr;
    QString compare_note_text_;
    QSpinBox* layer_box_;
    QSpinBox* example_box_;
    HeatmapWidget *a_, *b_, *diff_;
    void redraw();
    void sync_controls();
};

}  // namespace routescope::views
