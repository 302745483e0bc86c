#pragma once
// The array browser (issue 28): any numeric dataset of a dump or checkpoint as a colour grid. The
// user assigns two of its named axes (examples, positions, channels, layers, …) to rows and
// columns; every other axis gets a spin box (the slider) holding its index. Only the shown slice
// is read (one hyperslab), so a dataset of any size browses at the same speed. NaN (magenta),
// ±Inf (white, black) and values beyond k standard deviations of the slice (red) are marked;
// position axes of an example are labelled with its tokens; hover shows the exact value and its
// indices. A dataset of rank 1 is one row.
#include <QElapsedTimer>
#include <QList>

#include "analysis/array_slice.hpp"
#include "analysis/provenance.hpp"
#include "views/analysis_view.hpp"

class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QSpinBox;

namespace routescope::views {

class HeatmapWidget;

struct ArrayBrowserSettings {
    QString file;
    QString dataset;  ///< empty: the first dataset of the file
    /// kDatasetAxes (a project that names a dataset but not its axes): the dataset's last two
    /// axes (one row and its only axis for a rank-1 dataset), chosen when it is read.
    static constexpr int kDatasetAxes = -2;
    int row_axis = kDatasetAxes, column_axis = kDatasetAxes;
    std::vector<std::int64_t> index;  ///< per axis
    double outlier_sd = 4.0;          ///< 0: no outlier marking
    nlohmann::json to_json() const;
    static ArrayBrowserSettings from_json(const nlohmann::json& j);
};

class ArrayBrowserView : public AnalysisView {
    Q_OBJECT
public:
    explicit ArrayBrowserView(ArrayBrowserSettings settings, QWidget* parent = nullptr);
    QString title() const override;
    void start() override;
    nlohmann::json settings() const override { return settings_.to_json(); }
    void restore_settings(const nlohmann::json& j) override;
    analysis::CsvTable figure_table() const override;
    HeatmapWidget* heatmap() const { return map_; }
    const analysis::Slice& slice() const { return slice_; }
    const std::vector<analysis::DatasetEntry>& datasets() const { return datasets_; }
    /// Shows another slice: index of a non-displayed axis (what its spin box does).
    void set_index(int axis, std::int64_t value);
    void set_dataset(const QString& path);
    void set_axes(int row_axis, int column_axis);
    /// Milliseconds of the last slice read + redraw (printed by the test, not asserted).
    double last_redraw_ms() const { return last_ms_; }

protected:
    nlohmann::json result_provenance() const override;
    QString input_stem() const override;
    QStringList input_files() const override { return {settings_.file}; }

private:
    ArrayBrowserSettings settings_;
    std::vector<analysis::DatasetEntry> datasets_;
    analysis::Slice slice_;
    analysis::InputFile input_;  ///< the file shown, with its hash (provenance)
    QStringList row_labels_, column_labels_;
    QComboBox *dataset_box_, *rows_box_, *columns_box_;
    QDoubleSpinBox* outlier_box_;
    QHBoxLayout* sliders_;
    QList<QSpinBox*> index_boxes_;
    HeatmapWidget* map_;
    double last_ms_ = 0;
    const analysis::DatasetEntry* entry() const;
    void rebuild_controls();
    void redraw();
};

}  // namespace routescope::views
