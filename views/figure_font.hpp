#pragma once
// Fonts of painted figures in pixels of the figure's own coordinates (1/96 inch), so that text
// keeps its size relative to the drawing on every device: the screen, a 300 dpi PNG, SVG and PDF.
#include <QFont>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QPainter>
#include <QString>

#include <algorithm>

#include "views/figure_layout.hpp"

namespace routescope::views {

/// While a figure is laid out for a print with a font size (FigureSource::prepare_print), the
/// pixel size of every text of it, the smaller annotations included (a journal's minimum text
/// size applies to them too); 0 otherwise. GUI thread only.
inline int print_font_px = 0;

/// `f` drawn without the ligatures that only decorate: a PDF's text layer mapped "ff", "fi", "fl"
/// to U+FB00–FB02, and the figure's words ("effective", "float32") could not be searched or
/// copied. Every script is still shaped: Arabic letters join, lam-alef and Indic conjuncts stay.
/// Not QFont::PreferNoShaping, which did this for Latin but leaves unshaped every script outside
/// Qt's short list of those that "require OpenType" (Syriac to Sinhala, Khmer, N'Ko): Arabic and
/// Hebrew labels were drawn as isolated letters in the PNG and PDF. Qt 6 turns the cosmetic
/// ligature features (liga, clig, dlig, hlig) off for the scripts where they are cosmetic when a
/// font has a letter spacing; a spacing of 100% is one that moves no glyph. Kerning stays off as
/// PreferNoShaping had it, so that Latin text keeps the glyphs and advances it had in the
/// figures' fonts (DejaVu and the system's sans); a font with contextual alternates (calt: Inter,
/// Fira) now applies them, which Qt 6.4 cannot switch off (QFont::setFeature is Qt 6.7).
inline QFont without_ligatures(QFont f) {
    f.setLetterSpacing(QFont::PercentageSpacing, 100);
    f.setKerning(false);
    return f;
}

inline QFont figure_font(const QFont& base, double scale = 1.0) {
    QFont f = base;
    if (print_font_px > 0)
        f.setPixelSize(print_font_px);
    else
        f.setPixelSize(std::max(6, static_cast<int>(QFontInfo(base).pixelSize() * scale + 0.5)));
    return without_ligatures(f);
}

/// How a figure wraps `text` to `width`: at word boundaries, or anywhere when one of its words is
/// wider than `width` (a file name without spaces in a title or legend stayed one line and ran
/// off the page).
inline int wrap_flag(const QFontMetricsF& fm, const QString& text, double width) {
    qsizetype start = 0;
    for (qsizetype i = 0; i <= text.size(); ++i)
        if (i == text.size() || text[i].isSpace()) {
            if (i > start && fm.horizontalAdvance(text.mid(start, i - start)) > width)
                return Qt::TextWrapAnywhere;
            start = i + 1;
        }
    return Qt::TextWordWrap;
}

/// The width of `text`'s widest word (words split at white space); 0 for no text.
inline double longest_word_width(const QFontMetricsF& fm, const QString& text) {
    double widest = 0;
    qsizetype start = 0;
    for (qsizetype i = 0; i <= text.size(); ++i)
        if (i == text.size() || text[i].isSpace()) {
            if (i > start)
                widest = std::max(widest, fm.horizontalAdvance(text.mid(start, i - start)));
            start = i + 1;
        }
    return widest;
}

/// The height of `text` wrapped to `width` as wrap_flag says (one line when it fits, more when
/// not: a figure wraps a title or axis label rather than eliding it); 0 for no text.
inline double wrapped_text_height(const QFontMetricsF& fm, const QString& text, double width) {
    if (text.isEmpty()) return 0;
    width = std::max(1.0, width);
    return fm
        .boundingRect(QRectF(0, 0, width, 1e6), wrap_flag(fm, text, width) | Qt::AlignHCenter, text)
        .height();
}

/// The most characters of `text`'s narrowest broken word one line of `width` holds: each word
/// wider than the line is cut where the line ends; text.size() when no word is wider.
inline int broken_word_line_chars(const QFontMetricsF& fm, const QString& text, double width) {
    int fewest = static_cast<int>(text.size());
    qsizetype start = 0;
    for (qsizetype i = 0; i <= text.size(); ++i)
        if (i == text.size() || text[i].isSpace()) {
            const QString word = text.mid(start, i - start);
            start = i + 1;
            if (word.isEmpty() || fm.horizontalAdvance(word) <= width) continue;
            int fits = 1;  // a line holds at least one glyph, however narrow
            while (fits < word.size() && fm.horizontalAdvance(word.left(fits + 1)) <= width)
                ++fits;
            fewest = std::min(fewest, fits);
        }
    return fewest;
}

/// Draws `text` in `box` with `align`, wrapped to the box's width as wrap_flag says. A word cut
/// into lines of fewer than kReadableLineChars characters is noted for the layout check.
inline void draw_wrapped(QPainter& painter, const QRectF& box, int align, const QString& text) {
    const QFontMetricsF fm(painter.font());
    const int flag = wrap_flag(fm, text, box.width());
    if (flag == Qt::TextWrapAnywhere) {
        const int chars = broken_word_line_chars(fm, text, std::max(1.0, box.width()));
        if (chars < kReadableLineChars) note_broken_text(painter, text, chars);
    }
    painter.drawText(box, flag | align, text);
}

}  // namespace routescope::views
