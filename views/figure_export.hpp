#pragma once
// Figure export (ARCHITECTURE.md, "The GUI"): one painter path drawn into a PNG at a chosen DPI, an
// SVG (vector: QSvgGenerator records the painter's paths), a PDF (QPdfWriter), the data shown as
// CSV, and a provenance JSON beside each figure naming the inputs and their hashes.
#include <QSize>
#include <QSizeF>
#include <QString>
#include <QStringList>
#include <functional>
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
    /// Before a print-sized export: lay the figure out for a print of `print` logical pixels
    /// (1/96 inch) with text `font_px` such pixels high (0: the on-screen fonts), only panel
    /// `panel` of panel_titles() when it is 0 or more; figure_size() is then the size of that
    /// layout, which paint_figure scales to the print. Returns what restores the on-screen
    /// figure. The default keeps the on-screen layout (its text scales with it) and has no
    /// panels to choose from.
    virtual std::function<void()> prepare_print(QSizeF print, double font_px, int panel) const;
    /// The figure's panels in reading order, by their titles (for choosing one to export).
    virtual QStringList panel_titles() const { return {}; }
};

/// Physical size and text size of an exported figure (issue 18). A width of 0 keeps the on-screen
/// size (1 logical pixel = 1/96 inch); a font size of 0 keeps the on-screen fonts.
struct FigureExportOptions {
    int dpi = 150;        ///< PNG resolution (SVG and PDF are vector)
    double width_mm = 0;  ///< printed width; the height follows the figure's aspect
    double font_pt = 0;   ///< every text of the figure at this size in print
    int panel = -1;       ///< export only this panel (FigureSource::panel_titles); -1: all
};

/// Journal column widths: Nature's and Science's single column 89 mm, double column 183 mm.
constexpr double kSingleColumnMm = 89.0;
constexpr double kDoubleColumnMm = 183.0;
/// Font sizes offered for print (points at print size).
inline constexpr double kFontPresetsPt[] = {7.0, 8.0, 9.0, 10.0};

/// "single" (89 mm), "double" (183 mm), "screen" (0: on-screen size) or a width in mm
/// ("120"); throws ConfigError naming the text otherwise (widths must be 20..1000 mm).
double figure_width_mm_from_text(const QString& text);
/// Checks the options (DPI 10..2400, width 0 or 20..1000 mm, font 0 or 4..36 pt); throws
/// ConfigError naming the bad one.
void check_export_options(const FigureExportOptions& options);
/// The printed size in logical pixels (1/96 inch) of a figure of on-screen size `logical`.
QSizeF print_size(QSize logical, const FigureExportOptions& options);

enum class FigureFormat { Png, Svg, Pdf, Csv };

/// "png", "svg", "pdf", "csv" (case-insensitive); throws ConfigError otherwise.
FigureFormat figure_format_from_suffix(const QString& suffix);
QString figure_format_suffix(FigureFormat format);

/// The pixel size of a PNG of a `logical` figure at `dpi` (96 dpi = one pixel per logical pixel).
QSize png_pixel_size(QSizeF logical, int dpi);

/// Writes the figure (or its CSV) to `path` and its provenance to provenance_path(path). Returns
/// the files written; throws IoError naming the file when one cannot be written, ConfigError
/// (nothing written) when either is an input an ExportInputs protects.
QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          int dpi = 150);
/// The same with the format from the path's suffix.
QStringList export_figure(const FigureSource& source, const QString& path, int dpi = 150);
/// `dir/stem.png|svg|pdf|csv` for every format; returns the files written.
QStringList export_all_formats(const FigureSource& source, const QString& dir, int dpi = 150);
/// The same three with a physical size and font size.
QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          const FigureExportOptions& options);
QStringList export_figure(const FigureSource& source, const QString& path,
                          const FigureExportOptions& options);
/// `stem`: the files' name without suffix (empty: the source's figure_name()). `written`, when
/// given, gets every file written, also those of the formats written before one failed (the
/// IoError then says which failed). ConfigError, and none of the figure's files written, when
/// one of them (figure, CSV or provenance) is an input an ExportInputs protects.
QStringList export_all_formats(const FigureSource& source, const QString& dir,
                               const FigureExportOptions& options, const QString& stem = {},
                               QStringList* written = nullptr);

/// The files no export writes while an object of this class lives: a project's inputs (its dumps,
/// checkpoints, predictions, run logs, the project file itself). A figure, CSV or provenance whose
/// name is one of them, or another name of one (a symbolic link, a linked folder, a hard link),
/// is refused before anything of that figure is written: `--export` wrote a figure's CSV through
/// a link onto the project's own dump. Nested objects add to the outer ones' files. The GUI
/// thread's exports only (not thread-safe).
class ExportInputs {
public:
    explicit ExportInputs(const QStringList& files);
    ~ExportInputs();
    ExportInputs(const ExportInputs&) = delete;
    ExportInputs& operator=(const ExportInputs&) = delete;

private:
    qsizetype before_ = 0;
};
/// Throws ConfigError naming `output` and the input when `output` is one of the files an
/// ExportInputs protects (or a link to one); nothing when none is.
void refuse_overwriting_export_inputs(const QString& output);

/// `results` (the "results" of a figure_provenance: a result's provenance or a list of them) with
/// each input named by the file of `files` (the view's own input files) that has its hash. The
/// result cache answers by content: a figure of final/copy.dump.h5 drawn after one of the same
/// bytes in orig.dump.h5 got that result, and with it the path orig.dump.h5, while the figure was
/// drawn from the copy. When several of `files` have an input's hash, the results of one analysis
/// with the same parameters on those bytes are of different files, taken in the order of `files`
/// (the inputs of one result too: A and B of a comparison). An input whose hash none of `files`
/// has (a file rewritten since, a run's log) keeps its path.
nlohmann::json results_named_by_inputs(nlohmann::json results, const QStringList& files);

/// figure.png → figure.png.provenance.json
QString provenance_path(const QString& figure_path);
/// The JSON written beside `figure_path`: the source's provenance plus figure, format, application.
nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, int dpi);
nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, const FigureExportOptions& options);
/// The same for a figure exported at `print` logical pixels (a print layout's reflowed size).
nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, const FigureExportOptions& options,
                                   QSizeF print);

/// The figure as the export with `options` lays it out (figure_layout.hpp): every text with its
/// box on the page and every plot area, for figure_layout_problems.
struct FigureLayout;
FigureLayout figure_layout(const FigureSource& source, const FigureExportOptions& options);

}  // namespace routescope::views
