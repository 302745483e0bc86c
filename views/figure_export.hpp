#pragma once
// Figure export (ARCHITECTURE.md, "The GUI"): one painter path drawn into a PNG at a chosen DPI, an
// SVG (vector: QSvgGenerator records the painter's paths), a PDF (QPdfWriter), the data shown as
// CSV, and a provenance JSON beside each figure naming the inputs and their hashes.
#include <QSize>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

#include "analysis/csv_table.hpp"

class QPainter;
class QRect;

namespace routescope::views {

/// What a view offers to export. Sizes are logical pixels of 1/96 inch.
class FigureSource {
public:
    virtual ~FigureSource() = default;
    virtual QSize figure_size() const = 0;
    virtual void paint_figure(QPainter& painter, const QRect& target) const = 0;
    /// The numbers the figure shows (from the analysis result's own table).
    virtual analysis::CsvTable figure_table() const = 0;
    /// {"results": [provenance of each result shown], "settings": the view's settings}.
    virtual nlohmann::json figure_provenance() const = 0;
    /// A file-name stem ("kernels-model_a").
    virtual QString figure_name() const = 0;
};

enum class FigureFormat { Png, Svg, Pdf, Csv };

/// "png", "svg", "pdf", "csv" (case-insensitive); throws ConfigError otherwise.
FigureFormat figure_format_from_suffix(const QString& suffix);
QString figure_format_suffix(FigureFormat format);

/// The pixel size of a PNG of a `logical` figure at `dpi` (96 dpi = one pixel per logical pixel).
QSize png_pixel_size(QSize logical, int dpi);

/// Writes the figure (or its CSV) to `path` and its provenance to provenance_path(path). Returns
/// the files written; throws IoError naming the file when one cannot be written.
QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          int dpi = 150);
/// The same with the format from the path's suffix.
QStringList export_figure(const FigureSource& source, const QString& path, int dpi = 150);
/// `dir/stem.png|svg|pdf|csv` for every format; returns the files written.
QStringList export_all_formats(const FigureSource& source, const QString& dir, int dpi = 150);

/// figure.png → figure.png.provenance.json
QString provenance_path(const QString& figure_path);
/// The JSON written beside `figure_path`: the source's provenance plus figure, format, application.
nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, int dpi);

}  // namespace routescope::views
