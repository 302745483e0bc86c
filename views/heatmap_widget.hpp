#pragma once
// A heatmap of a rows × columns table of values: its own QImage (one pixel per cell, coloured
// once when the data or the colour map changes, scaled when drawn), axes with tick labels, a
// colour bar, a hover readout (the cell's exact value) and row clicks. Zoom and pan show a
// window of whole cells (visible_cells(); chart_interaction.hpp handles the mouse and keys).
// paint() is the only drawing code: paintEvent and figure export both call it, so the screen, PNG,
// SVG and PDF show the same figure.
#include <QFontMetricsF>
#include <QImage>
#include <QStringList>
#include <QWidget>

#include <limits>
#include <vector>

#include "views/chart_interaction.hpp"
#include "views/colour_map.hpp"
#include "views/painted_panel.hpp"

namespace routescope::views {

struct HeatmapData {
    int rows = 0, columns = 0;
    std::vector<double> values;  ///< row-major, rows × columns
    QStringList row_labels;      ///< one per row; empty: the row index
    QStringList column_labels;   ///< one per column; empty: the column index
    QString title, x_label, y_label, value_label;
    bool diverging = false;  ///< signed values: diverging map on a range symmetric about 0
    double lo = std::numeric_limits<double>::quiet_NaN();  ///< colour range; NaN: the data's
    double hi = std::numeric_limits<double>::quiet_NaN();
    int marked_column = -1;  ///< a vertical line through this column (lag 0, a boundary)
    /// Cells drawn in the marker colour instead of their value's (outliers in the array
    /// browser); empty or rows × columns. Non-finite values are always marked: NaN magenta,
    /// +Inf white, −Inf black.
    std::vector<bool> marked;
    QString note;  ///< one line under the figure
};

/// Compare mode: A and B share one colour range, the union of their values (symmetric about 0
/// when either is diverging), so that one colour means one value in both. Leaves both alone when
/// either has a fixed range already (lo set).
void link_colour_ranges(HeatmapData& a, HeatmapData& b);
/// The A − B panel of compare mode: a's axes and labels, analysis::difference of the values on a
/// diverging map centred on 0 titled `title` (value label "A − B"); no cells (rows = columns = 0)
/// when the two differ in shape or labels, titled `undefined` instead.
HeatmapData difference_of(const HeatmapData& a, const HeatmapData& b, const QString& title,
                          const QString& undefined);

class HeatmapWidget : public QWidget, public PaintedPanel {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    void set_data(HeatmapData data);
    const HeatmapData& data() const { return data_; }
    /// One pixel per cell: width = columns, height = rows.
    const QImage& image() const { return image_; }
    double range_lo() const { return lo_; }
    double range_hi() const { return hi_; }
    const ColourMap& colour_map() const;

    /// Draws the whole figure (title, axes, cells, colour bar) into `target`. On vector devices
    /// (SVG, PDF) the cells are one embedded image, each cell a block of whole pixels (no
    /// seams between cells in any renderer); axes, ticks and text stay vector.
    void paint(QPainter& painter, const QRect& target) const override;
    /// At least `height`, and as much more as keeps the cells kMinPlotHeightShare of `width` high
    /// and each word of the axis labels along them on a line, whatever the title, labels and
    /// note under the cells take at the current fonts (a wrapped title left the cells no room).
    double print_height(double width, double height) const override;
    /// The rectangle the cells occupy when the figure is drawn into `target`.
    QRect plot_rect(const QRect& target) const;
    /// The cells' height a print keeps at least, as a share of the panel's width (as charts).
    static constexpr double kMinPlotHeightShare = 0.25;
    /// Row labels are drawn whole while the cells keep this share of the figure's width; a longer
    /// label is elided (on the screen; an export's layout check reports it).
    static constexpr double kMinCellWidthShare = 0.1;
    /// The cell under a point of the widget, or {-1, -1}.
    QPoint cell_at(const QPoint& position) const;
    QString readout() const { return readout_; }
    /// The cells shown: x = first column, y = first row, width = columns, height = rows. Every
    /// cell until a zoom; set_data keeps the window when the shape stays the same.
    QRect visible_cells() const { return visible_; }
    /// Shows `cells` (clipped to the data, at least one cell).
    void set_visible_cells(const QRect& cells);
    QRect all_cells() const { return {0, 0, data_.columns, data_.rows}; }
    /// Zoom, pan, reset (link_ranges ties the A and B panels of compare mode).
    PlotInteraction* interaction() const { return interaction_; }
    int selected_row() const { return selected_row_; }
    void set_selected_row(int row);

    QSize sizeHint() const override { return {640, 360}; }
    QSize minimumSizeHint() const override { return {240, 160}; }

signals:
    void hovered(int row, int column, double value);
    void rowClicked(int row);
    void cellClicked(int row, int column);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    HeatmapData data_;
    QImage image_;
    double lo_ = 0, hi_ = 1;
    int selected_row_ = -1;
    QString readout_;
    QRect visible_;
    PlotInteraction* interaction_ = nullptr;

    double value(int row, int column) const {
        return data_.values[static_cast<std::size_t>(row) * data_.columns + column];
    }
    double normalised(double v) const;
    QString row_label(int row) const;
    QString column_label(int column) const;

    // Where plot_rect puts things: the plot, the row labels' column and the y title's strip.
    struct Layout {
        QRect plot;
        double label_left = 0, label_width = 0;  ///< the row labels' column
        double widest_label = 0;                 ///< the widest row label, whole
    };
    Layout layout(const QRect& target) const;
    double widest_row_label(const QFont& font) const;
    // The widest row label at a font, measured once per font and data (every row: a label left
    // out of a sample was drawn wider than its column).
    mutable QString widest_font_key_;
    mutable double widest_ = 0;
};

}  // namespace routescope::views
