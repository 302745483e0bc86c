#pragma once
// Fonts of painted figures in pixels of the figure's own coordinates (1/96 inch), so that text
// keeps its size relative to the drawing on every device: the screen, a 300 dpi PNG, SVG and PDF.
#include <QFont>
#include <QFontInfo>

namespace routescope::views {

inline QFont figure_font(const QFont& base, double scale = 1.0) {
    QFont f = base;
    f.setPixelSize(std::max(6, static_cast<int>(QFontInfo(base).pixelSize() * scale + 0.5)));
    return f;
}

}  // namespace routescope::views
