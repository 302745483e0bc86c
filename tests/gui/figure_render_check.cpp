#include "figure_render_check.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

#include <algorithm>
#include <cmath>

namespace view_test {
namespace {
using routescope::views::FigureLayout;
using routescope::views::FigureText;

QString run(const QString& program, const QStringList& args) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(120000)) return program + " did not finish";
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return program + " failed: " + QString::fromUtf8(p.readAll());
    return {};
}

QImage render_svg(const QString& svg, const QString& png, int dpi, QString* error) {
    *error = run(QStandardPaths::findExecutable("rsvg-convert"),
                 {"--dpi-x", QString::number(dpi), "--dpi-y", QString::number(dpi),
                  "--background-color", "white", "--output", png, svg});
    return error->isEmpty() ? QImage(png).convertToFormat(QImage::Format_RGB32) : QImage();
}

bool dark(QRgb c) {
    return qGray(c) < 200;
}

bool differs(QRgb a, QRgb b) {
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) +
               std::abs(qBlue(a) - qBlue(b)) >
           60;
}

/// The box in the rendering's pixels, grown by `grow` pixels, within the image.
QRect pixels(const QRectF& box, double scale, double grow, const QSize& image) {
    const QRectF r(box.x() * scale - grow, box.y() * scale - grow, box.width() * scale + 2 * grow,
                   box.height() * scale + 2 * grow);
    return r.toAlignedRect().intersected(QRect(QPoint(0, 0), image));
}

QString name(const FigureText& t) {
    return "'" + t.text.trimmed() + "'";
}

QString size_problem(const QImage& image, const FigureLayout& layout, double scale,
                     const QString& what) {
    const QSizeF expected = layout.page * scale;
    if (std::abs(image.width() - expected.width()) > 2 ||
        std::abs(image.height() - expected.height()) > 2)
        return QStringLiteral("the %1 rendering is %2 × %3 pixels, the layout's page %4 × %5")
            .arg(what)
            .arg(image.width())
            .arg(image.height())
            .arg(expected.width(), 0, 'f', 0)
            .arg(expected.height(), 0, 'f', 0);
    return {};
}
}  // namespace

QString renderers_missing() {
    QStringList missing;
    if (QStandardPaths::findExecutable("rsvg-convert").isEmpty())
        missing << "rsvg-convert (librsvg2-bin)";
    if (QStandardPaths::findExecutable("pdftoppm").isEmpty()) missing << "pdftoppm (poppler-utils)";
    return missing.isEmpty() ? QString() : missing.join(" and ") + " not installed";
}

QStringList svg_rendering_problems(const FigureLayout& layout, const QString& svg,
                                   const QString& work, int dpi) {
    QStringList out;
    QDir().mkpath(work);
    const QString stem = work + "/" + QFileInfo(svg).completeBaseName();
    QString error;
    const QImage full = render_svg(svg, stem + ".full.png", dpi, &error);
    if (full.isNull()) return {svg + ": " + error};
    const double scale = dpi / 96.0;
    if (QString p = size_problem(full, layout, scale, "SVG"); !p.isEmpty()) return {svg + ": " + p};

    // The same drawing without its text: the difference is the text as librsvg draws it.
    QFile f(svg);
    if (!f.open(QIODevice::ReadOnly)) return {svg + ": cannot read it"};
    QString xml = QString::fromUtf8(f.readAll());
    xml.remove(
        QRegularExpression(R"(<text\b.*?</text>)", QRegularExpression::DotMatchesEverythingOption));
    const QString bare_svg = stem + ".notext.svg";
    QFile bare_file(bare_svg);
    if (!bare_file.open(QIODevice::WriteOnly) || bare_file.write(xml.toUtf8()) < 0)
        return {bare_svg + ": cannot write it"};
    bare_file.close();
    const QImage bare = render_svg(bare_svg, stem + ".notext.png", dpi, &error);
    if (bare.isNull() || bare.size() != full.size()) return {bare_svg + ": " + error};

    QImage ink(full.size(), QImage::Format_Grayscale8);  // 255 where text shows
    ink.fill(0);
    for (int y = 0; y < full.height(); ++y) {
        const auto* a = reinterpret_cast<const QRgb*>(full.constScanLine(y));
        const auto* b = reinterpret_cast<const QRgb*>(bare.constScanLine(y));
        uchar* m = ink.scanLine(y);
        for (int x = 0; x < full.width(); ++x)
            m[x] = differs(a[x], b[x]) ? 255 : 0;
    }

    QImage claimed(full.size(), QImage::Format_Grayscale8);  // 255 inside some text's box
    claimed.fill(0);
    for (const FigureText& t : layout.texts) {
        const double grow = 1.5 + 0.25 * t.font_px * scale;
        const QRect loose = pixels(t.box, scale, grow, full.size());
        for (int y = loose.top(); y <= loose.bottom(); ++y)
            std::fill_n(claimed.scanLine(y) + loose.left(), loose.width(), 255);

        const QRect tight = pixels(t.box, scale, 1.0, full.size());
        int count = 0, left = INT32_MAX, right = -1;
        for (int y = tight.top(); y <= tight.bottom(); ++y) {
            const uchar* m = ink.constScanLine(y);
            for (int x = tight.left(); x <= tight.right(); ++x)
                if (m[x]) {
                    ++count;
                    left = std::min(left, x);
                    right = std::max(right, x);
                }
        }
        if (count == 0) {
            out << svg + ": " + name(t) +
                       " does not show in the rendering (hidden or off the page)";
            continue;
        }
        // A line of three or more characters drawn upright fills most (¾) of its advance; drawn
        // shorter, the renderer cut it (a clip, the page's edge).
        const bool upright = t.box.width() > t.box.height();
        const int glyphs = static_cast<int>(t.text.simplified().remove(' ').size());
        const double width = t.box.width() * scale;  // the whole box, past the page or not
        if (upright && glyphs >= 3 && (right - left + 1) < 0.75 * width)
            out << svg + QStringLiteral(": %1 shows only %2 of its %3 pixels' width")
                             .arg(name(t))
                             .arg(right - left + 1)
                             .arg(width, 0, 'f', 0);
    }
    // Text the layout does not know of: the boxes would be wrong, and so would every check above.
    int stray = 0;
    QPoint first;
    for (int y = 0; y < ink.height(); ++y) {
        const uchar* m = ink.constScanLine(y);
        const uchar* c = claimed.constScanLine(y);
        for (int x = 0; x < ink.width(); ++x)
            if (m[x] && !c[x] && stray++ == 0) first = QPoint(x, y);
    }
    if (stray > 4)
        out << svg + QStringLiteral(
                         ": the rendering shows text where the layout has none "
                         "(%1 pixels, the first at %2, %3 of %4 × %5)")
                         .arg(stray)
                         .arg(first.x())
                         .arg(first.y())
                         .arg(ink.width())
                         .arg(ink.height());
    return out;
}

QStringList pdf_rendering_problems(const FigureLayout& layout, const QString& pdf,
                                   const QString& work, int dpi) {
    QDir().mkpath(work);
    const QString stem = work + "/" + QFileInfo(pdf).completeBaseName() + ".pdf";
    const QString error = run(QStandardPaths::findExecutable("pdftoppm"),
                              {"-png", "-r", QString::number(dpi), "-singlefile", pdf, stem});
    if (!error.isEmpty()) return {pdf + ": " + error};
    const QImage page = QImage(stem + ".png").convertToFormat(QImage::Format_RGB32);
    if (page.isNull()) return {pdf + ": pdftoppm wrote no page"};
    const double scale = dpi / 96.0;
    if (QString p = size_problem(page, layout, scale, "PDF"); !p.isEmpty()) return {pdf + ": " + p};
    QStringList out;
    for (const FigureText& t : layout.texts) {
        const QRect box = pixels(t.box, scale, 0.5, page.size());
        bool shown = false;
        for (int y = box.top(); y <= box.bottom() && !shown; ++y) {
            const auto* row = reinterpret_cast<const QRgb*>(page.constScanLine(y));
            for (int x = box.left(); x <= box.right() && !shown; ++x)
                shown = dark(row[x]) || differs(row[x], qRgb(255, 255, 255));
        }
        if (!shown) out << pdf + ": " + name(t) + " does not show on the page";
    }
    return out;
}

}  // namespace view_test
