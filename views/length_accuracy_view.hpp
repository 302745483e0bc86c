#pragma once
// Accuracy by input length (ANALYSES.md §6; the BiGS paper's Figure 6): per length bin the accuracy
// with its 95% Wilson interval and count; with a second model, bars side by side and the per-bin
// difference with McNemar's p. Clicking a bin lists its examples (text, label, predictions).
#include <optional>

#include "analysis/length_accuracy.hpp"
#include "views/analysis_view.hpp"

class QTableWidget;
class QComboBox;
class QSpinBox;

namespace routescope::views {

class IntervalBarChart;

struct LengthAccuracyViewSettings {
    QString a, b;  ///< b empty: one model
    QString binning = "quantile";
    int bins = 5;
    double width = 0;
    nlohmann::json to_json() const;
    static LengthAccuracyViewSettings from_json(const nlohmann::json& j);
};

/// The per-example columns listed when a bin is clicked (read in the worker with the result).
struct ExampleListing {
    std::vector<std::string> text;
    std::vector<std::int64_t> lengths, labels, predictions_a, predictions_b;
};

class LengthAccuracyView : public AnalysisView {
    Q_OBJECT
public:
    explicit LengthAccuracyView(LengthAccuracyViewSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;

    void show_bin(int bin);
    const analysis::LengthAccuracyResult* result() const { return result_ ? &*result_ : nullptr; }
    IntervalBarChart* chart() const { return chart_; }
    QTableWidget* examples() const { return examples_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override;

private:
    LengthAccuracyViewSettings settings_;
    std::optional<analysis::LengthAccuracyResult> result_;
    ExampleListing listing_;
    QComboBox* binning_box_;
    QSpinBox* bins_box_;
    IntervalBarChart* chart_;
    QTableWidget* examples_;
    void redraw();
};

}  // namespace routescope::views
