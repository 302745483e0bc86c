#include "views/figure_export.hpp"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>

#include "engine/core/error.hpp"
#include "routescope/version.hpp"

namespace routescope::views {
namespace {
constexpr double kLogicalDpi = 96.0;  // one logical pixel = 1/96 inch, as Qt's desktop default
constexpr int kPdfDpi = 600;          // PDF coordinate resolution; vector parts stay vector

void check_size(QSize s, const QString& path) {
    if (s.width() < 1 || s.height() < 1)
        throw IoError("cannot export " + path.toStdString() + ": the figure is empty (" +
                      std::to_string(s.width()) + "×" + std::to_string(s.height()) + ")");
}

void write_text(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        throw IoError("cannot write " + path.toStdString() + ": " + f.errorString().toStdString());
}

void export_png(const FigureSource& source, const QString& path, int dpi) {
    const QSize logical = source.figure_size();
    check_size(logical, path);
    QImage image(png_pixel_size(logical, dpi), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    const double scale = dpi / kLogicalDpi;
    // Record the resolution so that viewers and LaTeX place the figure at its physical size.
    image.setDotsPerMeterX(static_cast<int>(dpi / 0.0254 + 0.5));
    image.setDotsPerMeterY(static_cast<int>(dpi / 0.0254 + 0.5));
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.scale(scale, scale);
        source.paint_figure(painter, QRect(QPoint(0, 0), logical));
    }
    if (!image.save(path, "PNG")) throw IoError("cannot write PNG " + path.toStdString());
}

void export_svg(const FigureSource& source, const QString& path) {
    const QSize logical = source.figure_size();
    check_size(logical, path);
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(logical);
    svg.setViewBox(QRect(QPoint(0, 0), logical));
    svg.setResolution(static_cast<int>(kLogicalDpi));
    svg.setTitle(source.figure_name());
    svg.setDescription(QStringLiteral("Routescope %1").arg(QString::fromUtf8(kVersion)));
    QPainter painter;
    if (!painter.begin(&svg)) throw IoError("cannot write SVG " + path.toStdString());
    painter.setRenderHint(QPainter::Antialiasing);
    source.paint_figure(painter, QRect(QPoint(0, 0), logical));
    painter.end();
    if (!QFileInfo(path).exists()) throw IoError("cannot write SVG " + path.toStdString());
}

void export_pdf(const FigureSource& source, const QString& path) {
    const QSize logical = source.figure_size();
    check_size(logical, path);
    QPdfWriter pdf(path);
    pdf.setResolution(kPdfDpi);
    pdf.setPageSize(QPageSize(QSizeF(logical.width() / kLogicalDpi, logical.height() / kLogicalDpi),
                              QPageSize::Inch, source.figure_name(), QPageSize::ExactMatch));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setTitle(source.figure_name());
    pdf.setCreator(QStringLiteral("Routescope %1").arg(QString::fromUtf8(kVersion)));
    QPainter painter;
    if (!painter.begin(&pdf)) throw IoError("cannot write PDF " + path.toStdString());
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(kPdfDpi / kLogicalDpi, kPdfDpi / kLogicalDpi);
    source.paint_figure(painter, QRect(QPoint(0, 0), logical));
    painter.end();
    if (QFileInfo(path).size() == 0) throw IoError("cannot write PDF " + path.toStdString());
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

QSize png_pixel_size(QSize logical, int dpi) {
    const double scale = dpi / kLogicalDpi;
    return {static_cast<int>(logical.width() * scale + 0.5),
            static_cast<int>(logical.height() * scale + 0.5)};
}

QString provenance_path(const QString& figure_path) {
    return figure_path + QStringLiteral(".provenance.json");
}

nlohmann::json provenance_document(const FigureSource& source, const QString& figure_path,
                                   FigureFormat format, int dpi) {
    nlohmann::json doc = source.figure_provenance();
    doc["figure"] = QFileInfo(figure_path).fileName().toStdString();
    doc["format"] = figure_format_suffix(format).toStdString();
    if (format == FigureFormat::Png) {
        doc["dpi"] = dpi;
        const QSize px = png_pixel_size(source.figure_size(), dpi);
        doc["pixels"] = {px.width(), px.height()};
    }
    doc["application"] = {{"name", kProjectName}, {"version", kVersion}};
    doc["created"] = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    return doc;
}

QStringList export_figure(const FigureSource& source, const QString& path, FigureFormat format,
                          int dpi) {
    if (dpi < 10 || dpi > 2400)
        throw ConfigError("export DPI must be in 10..2400, got " + std::to_string(dpi));
    switch (format) {
        case FigureFormat::Png:
            export_png(source, path, dpi);
            break;
        case FigureFormat::Svg:
            export_svg(source, path);
            break;
        case FigureFormat::Pdf:
            export_pdf(source, path);
            break;
        case FigureFormat::Csv:
            write_text(path, QByteArray::fromStdString(source.figure_table().to_csv()));
            break;
    }
    const QString prov = provenance_path(path);
    write_text(prov, QByteArray::fromStdString(
                         provenance_document(source, path, format, dpi).dump(2) + "\n"));
    return {path, prov};
}

QStringList export_figure(const FigureSource& source, const QString& path, int dpi) {
    return export_figure(source, path, figure_format_from_suffix(QFileInfo(path).suffix()), dpi);
}

QStringList export_all_formats(const FigureSource& source, const QString& dir, int dpi) {
    if (!QDir().mkpath(dir)) throw IoError("cannot create directory " + dir.toStdString());
    QStringList out;
    for (auto format : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Csv})
        out += export_figure(
            source, QDir(dir).filePath(source.figure_name() + "." + figure_format_suffix(format)),
            format, dpi);
    return out;
}

}  // namespace routescope::views
