#include "views/figure_export.hpp"

#include <QBuffer>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QFontInfo>
#include <QHash>
#include <QImage>
#include <QImageWriter>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSvgGenerator>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/file_fingerprint.hpp"
#include "engine/core/error.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "routescope/version.hpp"
#include "views/figure_layout.hpp"

namespace routescope::views {
namespace {
constexpr double kLogicalDpi = 96.0;  // one logical pixel = 1/96 inch, as Qt's desktop default
constexpr int kPdfDpi = 600;          // PDF coordinate resolution; vector parts stay vector

void check_size(QSize s, const QString& path) {
    if (s.width() < 1 || s.height() < 1)
        throw IoError("cannot export " + path.toStdString() + ": the figure is empty (" +
                      std::to_string(s.width()) + "×" + std::to_string(s.height()) + ")");
}

/// The source laid out for the print (FigureSource::prepare_print) while it lives; paints the
/// figure into the print rectangle (0, 0, print) of the painter's coordinates.
class PrintLayout {
public:
    PrintLayout(const FigureSource& source, const QString& path, const FigureExportOptions& o)
        : source_(source) {
        const QSize logical = source.figure_size();
        check_size(logical, path);
        print_ = print_size(logical, o);
        if (o.width_mm > 0 || o.font_pt > 0 || o.panel >= 0) {
            if (o.panel >= source.panel_titles().size())
                throw ConfigError("cannot export panel " + std::to_string(o.panel + 1) + " of " +
                                  path.toStdString() + ": the figure has " +
                                  std::to_string(source.panel_titles().size()) + " panels");
            restore_ = source.prepare_print(print_, o.font_pt * kLogicalDpi / 72.0, o.panel);
            // A print layout may reflow the panels (stacked in one column at 89 mm): the
            // figure's height follows the layout's aspect, its width is the print's.
            const QSize laid = source.figure_size();
            if (o.width_mm > 0 && laid.width() > 0)
                print_.setHeight(print_.width() * laid.height() / laid.width());
        }
    }
    ~PrintLayout() {
        if (restore_) restore_();
    }
    PrintLayout(const PrintLayout&) = delete;
    PrintLayout& operator=(const PrintLayout&) = delete;
    QSizeF print() const { return print_; }
    void paint(QPainter& painter) const {
        const QSize layout = source_.figure_size();
        painter.save();
        painter.scale(print_.width() / layout.width(), print_.height() / layout.height());
        source_.paint_figure(painter, QRect(QPoint(0, 0), layout));
        painter.restore();
    }

private:
    const FigureSource& source_;
    QSizeF print_;
    std::function<void()> restore_;
};

/// QSvgGenerator names a font by the family the figure asked for, Qt's generic "Sans Serif",
/// which is no CSS family: renderers that do not ask fontconfig (browsers, resvg, Illustrator)
/// fall back to their default, a serif face with other metrics, and labels laid out for the face
/// Qt measured overrun their boxes. Each family becomes the face Qt drew with (as the PDF embeds
/// it), then CSS's generic sans-serif.
/// `svg` with each character XML 1.0 forbids written as U+FFFD (the replacement character):
/// QSvgGenerator writes text as it is, and a model named "model\x07A" (a rename, a dump's file
/// name) or a token with an ESC made the SVG ill-formed XML that no viewer opens. The C0 controls
/// other than tab, newline and carriage return are single bytes that UTF-8 never uses inside a
/// longer character; U+FFFE and U+FFFF are EF BF BE and EF BF BF.
QByteArray xml_safe(QByteArray svg) {
    static const QByteArray replacement = QByteArrayLiteral("\xEF\xBF\xBD");
    QByteArray out;
    out.reserve(svg.size());
    for (qsizetype i = 0; i < svg.size(); ++i) {
        const auto c = static_cast<unsigned char>(svg[i]);
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            out += replacement;
        } else if (c == 0xEF && i + 2 < svg.size() &&
                   static_cast<unsigned char>(svg[i + 1]) == 0xBF &&
                   (static_cast<unsigned char>(svg[i + 2]) == 0xBE ||
                    static_cast<unsigned char>(svg[i + 2]) == 0xBF)) {
            out += replacement;
            i += 2;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

QByteArray name_drawn_fonts(const QByteArray& svg) {
    const QString xml = QString::fromUtf8(svg);
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    QHash<QString, QString> drawn;
    QString out;
    out.reserve(xml.size() + xml.size() / 16);
    qsizetype at = 0;
    for (auto it = family.globalMatch(xml); it.hasNext();) {
        const auto m = it.next();
        const QString asked = m.captured(1);
        auto face = drawn.constFind(asked);
        if (face == drawn.constEnd()) {
            QString name = QFontInfo(QFont(asked)).family();
            name.remove(QLatin1Char('\'')).remove(QLatin1Char('"')).remove(QLatin1Char('&'));
            face =
                drawn.insert(asked, name.isEmpty() ? QStringLiteral("sans-serif")
                                                   : QStringLiteral("'%1', sans-serif").arg(name));
        }
        out += QStringView(xml).mid(at, m.capturedStart() - at);
        out += QStringLiteral("font-family=\"%1\"").arg(face.value());
        at = m.capturedEnd();
    }
    out += QStringView(xml).mid(at);
    return out.toUtf8();
}

/// A figure drawn, not yet written: its file's bytes and its printed size.
struct Drawn {
    QByteArray bytes;
    QSizeF print;
};

Drawn export_png(const FigureSource& source, const QString& path, const FigureExportOptions& o) {
    const PrintLayout print(source, path, o);
    const QSize pixels = png_pixel_size(print.print(), o.dpi);
    // At most 2^28 pixels (1 GiB of image): a 1000 mm figure at 2400 dpi is 94,488 × 56,906
    // pixels, 21.5 GB, which QImage allocated (minutes of drawing, the machine's memory) or failed
    // to, saying only "cannot write PNG".
    constexpr double kMaxPngPixels = 268435456.0;
    const double count = static_cast<double>(pixels.width()) * pixels.height();
    if (count > kMaxPngPixels)
        throw IoError("cannot write PNG " + path.toStdString() + ": " +
                      std::to_string(pixels.width()) + " × " + std::to_string(pixels.height()) +
                      " pixels (" + std::to_string(static_cast<long long>(count * 4 / (1 << 20))) +
                      " MiB of image) is more than the 268 million pixels (1 GiB) a PNG export "
                      "draws: lower the DPI or the width; SVG and PDF keep the vector drawing at "
                      "any size");
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull())
        throw IoError("cannot write PNG " + path.toStdString() + ": no memory for an image of " +
                      std::to_string(pixels.width()) + " × " + std::to_string(pixels.height()) +
                      " pixels: lower the DPI or the width");
    image.fill(Qt::white);
    const double scale = o.dpi / kLogicalDpi;
    // Record the resolution so that viewers and LaTeX place the figure at its physical size.
    image.setDotsPerMeterX(static_cast<int>(o.dpi / 0.0254 + 0.5));
    image.setDotsPerMeterY(static_cast<int>(o.dpi / 0.0254 + 0.5));
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.scale(scale, scale);
        print.paint(painter);
    }
    // Encoded in memory, then written as every text output is (export_figure): QImageWriter on a
    // full disk said "Unknown error (Unknown error)", and QSvgGenerator and QPdfWriter report no
    // write error at all (a truncated file stood under the final name).
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QImageWriter writer(&buffer, "PNG");
        if (!writer.write(image))
            throw IoError("cannot write PNG " + path.toStdString() + ": " +
                          writer.errorString().toStdString());
    }
    return {bytes, print.print()};
}

Drawn export_svg(const FigureSource& source, const QString& path, const FigureExportOptions& o) {
    const PrintLayout print(source, path, o);
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        double units_per_pixel = 1;  // SVG user units per logical pixel
        if (o.width_mm > 0) {
            // Declared in 0.1 mm (254 dpi), so that width="89mm" is exact, and drawn in the same
            // units (the painter scaled from logical pixels): QSvgGenerator turns a font given in
            // points into user units by its resolution, so a view box in other units would
            // print such text 254/96 times too large.
            constexpr int kSvgDpi = 254;
            const QSize declared(
                static_cast<int>(print.print().width() * kSvgDpi / kLogicalDpi + 0.5),
                static_cast<int>(print.print().height() * kSvgDpi / kLogicalDpi + 0.5));
            svg.setSize(declared);
            svg.setResolution(kSvgDpi);
            svg.setViewBox(QRect(QPoint(0, 0), declared));
            units_per_pixel = kSvgDpi / kLogicalDpi;
        } else {
            const QSize logical = print.print().toSize();
            svg.setSize(logical);
            svg.setViewBox(QRect(QPoint(0, 0), logical));
            svg.setResolution(static_cast<int>(kLogicalDpi));
        }
        svg.setTitle(source.figure_name());
        svg.setDescription(QStringLiteral("Routescope %1").arg(QString::fromUtf8(kVersion)));
        QPainter painter;
        if (!painter.begin(&svg)) throw IoError("cannot write SVG " + path.toStdString());
        painter.setRenderHint(QPainter::Antialiasing);
        painter.scale(units_per_pixel, units_per_pixel);
        print.paint(painter);
        painter.end();
    }
    return {name_drawn_fonts(xml_safe(std::move(bytes))), print.print()};
}

Drawn export_pdf(const FigureSource& source, const QString& path, const FigureExportOptions& o) {
    const PrintLayout print(source, path, o);
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        {
            QPdfWriter pdf(&buffer);
            pdf.setResolution(kPdfDpi);
            const QSizeF mm = print.print() * (25.4 / kLogicalDpi);
            pdf.setPageSize(
                QPageSize(mm, QPageSize::Millimeter, source.figure_name(), QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            pdf.setTitle(source.figure_name());
            pdf.setCreator(QStringLiteral("Routescope %1").arg(QString::fromUtf8(kVersion)));
            QPainter painter;
            if (!painter.begin(&pdf)) throw IoError("cannot write PDF " + path.toStdString());
            painter.setRenderHint(QPainter::Antialiasing);
            painter.scale(kPdfDpi / kLogicalDpi, kPdfDpi / kLogicalDpi);
            print.paint(painter);
            painter.end();
        }
    }
    if (bytes.isEmpty()) throw IoError("cannot write PDF " + path.toStdString());
    return {bytes, print.print()};
}
}  // namespace

FigureFormat figure_format_from_suffix(const QString& suffix) {
    const QString s = suffix.toLower();
    if (s == "png") return FigureFormat::Png;
    if (s == "svg") return FigureFormat::Svg;
    if (s == "pdf") return FigureFormat::Pdf;
    if (s == "csv") return FigureFormat::Csv;
    throw ConfigError("unknown figure format '" + suffix.toStdString() +
                      "' (png, svg, pdf or csv)");
}

QString figure_format_suffix(FigureFormat format) {
    switch (format) {
        case FigureFormat::Png:
            return "png";
        case FigureFormat::Svg:
            return "svg";
        case FigureFormat::Pdf:
            return "pdf";
        case FigureFormat::Csv:
            return "csv";
    }
    return {};
}

std::function<void()> FigureSource::prepare_print(QSizeF, double, int) const {
    return {};
}

double figure_width_mm_from_text(const QString& text) {
    const QString t = text.trimmed().toLower();
    if (t == "single") return kSingleColumnMm;
    if (t == "double") return kDoubleColumnMm;
    if (t == "screen") return 0;
    bool ok = false;
    const double mm = QString(t).remove(QStringLiteral("mm")).trimmed().toDouble(&ok);
    if (!ok || !(mm >= 20 && mm <= 1000))
        throw ConfigError("figure width '" + text.toStdString() +
                          "': expected single (89 mm), double (183 mm), screen or a width of "
                          "20..1000 mm");
    return mm;
}

void check_export_options(const FigureExportOptions& o) {
    if (o.dpi < 10 || o.dpi > 2400)
        throw ConfigError("export DPI must be in 10..2400, got " + std::to_string(o.dpi));
    if (!(o.width_mm == 0 || (o.width_mm >= 20 && o.width_mm <= 1000)))
        throw ConfigError("figure width must be 20..1000 mm (or 0 for the on-screen size), got " +
                          QString::number(o.width_mm, 'g', 10).toStdString());
    if (o.panel < -1)
        throw ConfigError("the panel to export must be 1 or more, got " +
                          std::to_string(o.panel + 1));
    if (!(o.font_pt == 0 || (o.font_pt >= 4 && o.font_pt <= 36)))
        throw ConfigError("figure font size must be 4..36 pt (or 0 for the on-screen fonts), got " +
                          QString::number(o.font_pt, 'g', 10).toStdString());
}

QSizeF print_size(QSize logical, const FigureExportOptions& options) {
    if (options.width_mm <= 0 || logical.width() < 1) return QSizeF(logical);
    const double w = options.width_mm / 25.4 * kLogicalDpi;
    return {w, w * logical.height() / logical.width()};
}

QSize png_pixel_size(QSizeF logical, int dpi) {
    const double scale = dpi / kLogicalDpi;
    return {static_cast<int>(logical.width() * scale + 0.5),
            static_cast<int>(logical.height() * scale + 0.5)};
}

nlohmann::json results_named_by_inputs(nlohmann::json results, const QStringList& files) {
    if (files.isEmpty()) return results;
    nlohmann::json* list = &results;
    nlohmann::json wrapped;
    if (results.is_object()) {  // a view that shows one result may give it alone
        wrapped = nlohmann::json::array({results});
        list = &wrapped;
    }
    if (!list->is_array()) return results;
    // The files' hashes once, when some input could be named by another file than its own
    // (fingerprint_file remembers a file's hash: the analysis has hashed it already).
    bool needed = files.size() > 1;
    for (const auto& r : *list)
        if (r.is_object() && r.contains("inputs") && r["inputs"].is_array())
            for (const auto& in : r["inputs"])
                if (in.is_object() &&
                    in.value("path", std::string()) != files.front().toStdString())
                    needed = true;
    if (!needed) return results;
    std::vector<std::string> hashes;
    for (const QString& f : files) {
        try {
            hashes.push_back(analysis::fingerprint_file(f.toStdString()).hash);
        } catch (const std::exception&) {
            hashes.emplace_back();  // gone or unreadable: names no input
        }
    }
    std::map<std::string, std::size_t> met;  // analysis, parameters, hash → inputs named so far
    for (auto& r : *list) {
        if (!r.is_object() || !r.contains("inputs") || !r["inputs"].is_array()) continue;
        const std::string what = r.value("analysis", std::string()) + "\n" +
                                 (r.contains("parameters") ? r["parameters"].dump() : "") + "\n";
        for (auto& in : r["inputs"]) {
            if (!in.is_object() || !in.contains("hash") || !in["hash"].is_string()) continue;
            const std::string hash = in["hash"].get<std::string>();
            if (hash.empty()) continue;
            std::vector<qsizetype> same;
            for (qsizetype i = 0; i < files.size(); ++i)
                if (hashes[static_cast<std::size_t>(i)] == hash) same.push_back(i);
            if (same.empty()) continue;
            std::size_t& n = met[what + hash];
            in["path"] = files[same[std::min(n, same.size() - 1)]].toStdString();
            ++n;
        }
    }
    return results.is_object() ? wrapped.front() : results;
}

QString provenance_path(const QString& figure_path) {
    return figure_path + QStringLiteral(".provenance.json");
}

nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, int dpi) {
    FigureExportOptions options;
    options.dpi = dpi;
    return provenance_document(source, figure_path, format, options);
}

nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, const FigureExportOptions& options) {
    return provenance_document(source, figure_path, format, options,
                               print_size(source.figure_size(), options));
}

nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, const FigureExportOptions& options,
                                   QSizeF print) {
    nlohmann::json doc = source.figure_provenance();
    doc["figure"] = QFileInfo(figure_path).fileName().toStdString();
    doc["format"] = figure_format_suffix(format).toStdString();
    if (format == FigureFormat::Png) {
        doc["dpi"] = options.dpi;
        const QSize px = png_pixel_size(print, options.dpi);
        doc["pixels"] = {px.width(), px.height()};
    }
    if (format != FigureFormat::Csv) {
        doc["size_mm"] = {print.width() * 25.4 / kLogicalDpi, print.height() * 25.4 / kLogicalDpi};
        if (options.font_pt > 0) doc["font_pt"] = options.font_pt;
        if (options.panel >= 0)
            doc["panel"] = {{"number", options.panel + 1},
                            {"title", source.panel_titles().value(options.panel).toStdString()}};
    }
    doc["application"] = {{"name", kProjectName}, {"version", kVersion}};
    doc["created"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    return doc;
}

namespace {
/// The files the live ExportInputs protect, outermost first.
QStringList& protected_inputs() {
    static QStringList files;
    return files;
}
}  // namespace

ExportInputs::ExportInputs(const QStringList& files) : before_(protected_inputs().size()) {
    protected_inputs() += files;
}

ExportInputs::~ExportInputs() {
    protected_inputs().resize(before_);
}

void refuse_overwriting_export_inputs(const QString& output) {
    const std::string out = output.toStdString();
    for (const QString& input : protected_inputs()) {
        const std::string in = input.toStdString();
        // Links followed as the atomic writer follows them (it writes the link's target), and a
        // hard link: either way the input's bytes would be replaced.
        if (!same_output_file(out, in)) continue;
        const bool other_name =
            QFileInfo(output).absoluteFilePath() != QFileInfo(input).absoluteFilePath();
        throw ConfigError(out + ": is the project's input " + in +
                          (other_name ? " (another name of it: a link)" : "") +
                          "; writing it would destroy that input, so this figure's files are not "
                          "written: remove or rename " +
                          out + ", or export into another folder");
    }
}

QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          const FigureExportOptions& options) {
    check_export_options(options);
    // Before anything is drawn or written: the figure and its provenance go together.
    refuse_overwriting_export_inputs(path);
    refuse_overwriting_export_inputs(provenance_path(path));
    Drawn drawn{{}, print_size(source.figure_size(), options)};
    switch (format) {
        case FigureFormat::Png:
            drawn = export_png(source, path, options);
            break;
        case FigureFormat::Svg:
            drawn = export_svg(source, path, options);
            break;
        case FigureFormat::Pdf:
            drawn = export_pdf(source, path, options);
            break;
        case FigureFormat::Csv:
            drawn.bytes = QByteArray::fromStdString(source.figure_table().to_csv());
            break;
    }
    const QString prov = provenance_path(path);
    const std::string doc =
        provenance_document(source, path, format, options, drawn.print).dump(2) + "\n";
    // The file and its provenance together, or neither: a figure whose provenance could not be
    // written (its name taken by a directory) stood without it and was counted as not written
    // (session 37). Each through a temporary renamed when complete, not QSaveFile: Qt 6.4's
    // commit() reported success after a write that failed for a full disk and left an empty file
    // (atomic_file.hpp).
    try {
        write_texts_atomically(
            {{path.toStdString(), drawn.bytes.toStdString()}, {prov.toStdString(), doc}});
    } catch (const Error& e) {
        std::string said = e.what();
        if (said.rfind(prov.toStdString(), 0) == 0)
            said += " (" + QFileInfo(path).fileName().toStdString() +
                    " is not written without its provenance)";
        throw IoError("cannot write " + said);
    }
    return {path, prov};
}

QStringList export_figure(const FigureSource& source, const QString& path,
                          const FigureExportOptions& options) {
    return export_figure(source, path, figure_format_from_suffix(QFileInfo(path).suffix()),
                         options);
}

QStringList export_all_formats(const FigureSource& source, const QString& dir,
                               const FigureExportOptions& options, const QString& stem,
                               QStringList* written) {
    check_export_options(options);
    if (!QDir().mkpath(dir)) {
        // Why, in the file system's terms (it said only "cannot create directory").
        QString why = "the file system refused it";
        for (QFileInfo at(dir); !at.absoluteFilePath().isEmpty();
             at = QFileInfo(at.absolutePath())) {
            // A dangling link is not there to exists() (it follows the link), and mkpath cannot
            // make a directory of its name: the link and what it names are the reason, as
            // routescope-cli experiment says of one.
            if (at.isSymLink() && !at.exists()) {
                std::error_code ec;
                const auto to =
                    std::filesystem::read_symlink(at.absoluteFilePath().toStdString(), ec);
                why = at.absoluteFilePath() + " is a symbolic link to " +
                      (ec ? at.symLinkTarget() : QString::fromStdString(to.string())) +
                      ", which does not exist";
                break;
            }
            if (at.exists() && !at.isDir()) {
                why = at.absoluteFilePath() + " is a file, not a directory";
                break;
            }
            if (at.isDir()) {
                if (!at.isWritable()) why = at.absoluteFilePath() + " is not writable";
                break;
            }
            if (at.absoluteFilePath() == at.absolutePath()) break;  // the root
        }
        throw IoError("cannot create directory " + dir.toStdString() + ": " + why.toStdString());
    }
    const QString name = stem.isEmpty() ? source.figure_name() : stem;
    // A view's files are refused together when one of them is an input: none is written (a
    // figure standing without its CSV, or beside a link onto the dump, would misstate the export).
    for (auto format :
         {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Csv}) {
        const QString path = QDir(dir).filePath(name + "." + figure_format_suffix(format));
        refuse_overwriting_export_inputs(path);
        refuse_overwriting_export_inputs(provenance_path(path));
    }
    // Each format on its own: a PNG too large to draw, or a disk that fills while it is written,
    // does not cost the view its SVG, PDF and CSV. Every failure is reported, once all were tried.
    QStringList out;
    // (file, what was said): said once when every format failed for the same reason (a full
    // disk), each with its own otherwise.
    std::vector<std::pair<std::string, std::string>> failed;
    for (auto format :
         {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Csv}) {
        const QString path = QDir(dir).filePath(name + "." + figure_format_suffix(format));
        try {
            const QStringList files = export_figure(source, path, format, options);
            out += files;
            if (written) *written += files;
        } catch (const ConfigError&) {
            throw;  // the options or the panel: the same for every format
        } catch (const std::exception& e) {
            failed.emplace_back(QFileInfo(path).fileName().toStdString(), e.what());
        }
    }
    if (failed.empty()) return out;
    // The reason is all that follows the file's name: "write error: No space left on device" of
    // "cannot write DIR/x.png: write error: ...", "is a directory; an output is a file: give its
    // name (...)" of a name a directory holds (only the text after the last ": " was kept, which
    // dropped "is a directory").
    const auto reason = [&dir](const std::string& file, const std::string& said) {
        const std::string path = QDir(dir).filePath(QString::fromStdString(file)).toStdString();
        for (const std::string& named : {path + ".provenance.json: ", path + ": "})
            if (const std::size_t at = said.find(named); at != std::string::npos)
                return said.substr(at + named.size());
        return said;
    };
    // Said once only when every failure names its figure's own file (not one its provenance's)
    // with the same reason.
    bool same = failed.size() > 1;
    for (const auto& f : failed) {
        const std::string own = QDir(dir).filePath(QString::fromStdString(f.first)).toStdString();
        same = same && f.second.find(own + ": ") != std::string::npos &&
               reason(f.first, f.second) == reason(failed.front().first, failed.front().second);
    }
    std::string text;
    if (same) {
        std::string files;
        for (std::size_t i = 0; i < failed.size(); ++i)
            files += (i == 0 ? "" : i + 1 == failed.size() ? " and " : ", ") + failed[i].first;
        text = "cannot write " + files + " in " + dir.toStdString() + ": " +
               reason(failed.front().first, failed.front().second);
    } else {
        for (const auto& f : failed)
            text += (text.empty() ? "" : "; ") + f.second;
    }
    throw IoError(text + (out.isEmpty() ? std::string()
                                        : " (the other formats were written: " +
                                              std::to_string(out.size() / 2) + " of 4)"));
}

FigureLayout figure_layout(const FigureSource& source, const FigureExportOptions& options) {
    check_export_options(options);
    const PrintLayout print(source, source.figure_name(), options);
    return record_figure_layout(print.print(), [&](QPainter& painter) { print.paint(painter); });
}

namespace {
FigureExportOptions at_dpi(int dpi) {
    FigureExportOptions o;
    o.dpi = dpi;
    return o;
}
}  // namespace

QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          int dpi) {
    return export_figure(source, path, format, at_dpi(dpi));
}

QStringList export_figure(const FigureSource& source, const QString& path, int dpi) {
    return export_figure(source, path, at_dpi(dpi));
}

QStringList export_all_formats(const FigureSource& source, const QString& dir, int dpi) {
    return export_all_formats(source, dir, at_dpi(dpi));
}

}  // namespace routescope::views
