#pragma once
// Fonts of painted figures in pixels of the figure's own coordinates (1/96 inch), so that text
// keeps its size relative to the drawing on every device: the screen, a 300 dpi PNG, SVG and PDF.
#include <QFont>
#include <QFontInfo>

#include <algorithm>

namespace routescope::views {

/// While a figure is laid out for a print with a font size (FigureSource::prepare_print), the
/// pixel size of every text of it, the smaller annotations included (a journal's minimum text
/// size applies to them too); 0 otherwise. GUI thread only.
inline int print_font_px = 0;

inline QFont figure_font(const QFont& base, double scale = 1.0) {
    QFont f = base;
    if (print_font_px > 0)
        f.setPixelSize(print_font_px);
    else
        f.setPixelSize(std::max(6, static_cast<int>(QFontInfo(base).pixelSize() * scale + 0.5)));
    return f;
}

/// The height of `text` wrapped at word boundaries to `width` (one line when it fits, more when
/// not: a figure wraps a title or axis label rather than eliding it); 0 for no text.
inline double wrapped_text_height(const QFontMetricsF& fm, const QString& text, double width) {
    if (text.isEmpty()) return 0;
    return fm
        .boundingRect(QRectF(0, 0, std::max(1.0, width), 1e6), Qt::TextWordWrap | Qt::AlignHCenter,
                      text)
        .height();
}

}  // namespace routescope::views
