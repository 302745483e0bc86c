#pragma once
// What a reader of an exported figure sees, taken from the figure's own drawing (issue 26): every
// text drawn, with its box on the page, its font size and whether the painter clipped it, and
// every plot area a panel drew into. A figure is painted once into a recording device that keeps
// these instead of pixels; figure_layout_problems then names each text that is elided, clipped,
// off the page, on top of another text or on top of a plot. The export test verifies the boxes
// against independent renderings of the SVG and PDF (librsvg, poppler).
#include <QRectF>
#include <QSizeF>
#include <QString>
#include <QStringList>
#include <vector>

class QPainter;

namespace routescope::views {

struct FigureText {
    QString text;
    QRectF box;            ///< on the page, in the page's units (1/96 inch)
    double font_px = 0;    ///< the text's height (ascent + descent) on the page
    bool clipped = false;  ///< the painter's clip did not hold the whole box
    bool in_plot = false;  ///< drawn as a label inside a plot (a cell's value): may sit on it
};

/// A colour bar (or a colour key) as drawn: its labelled values are the numbers written beside
/// it (right of a vertical bar, at either end of a horizontal one).
struct FigureColourBar {
    QRectF box;  ///< on the page
    Qt::Orientation orientation = Qt::Vertical;
};

/// A text wrapped to lines so narrow that a word of it was broken into pieces of a few
/// characters (a y-axis title along a sliver of a plot came out one glyph a line).
struct FigureBrokenText {
    QString text;
    int characters = 0;  ///< the most characters of the broken word one line holds
};

struct FigureLayout {
    QSizeF page;  ///< 1/96 inch
    std::vector<FigureText> texts;
    std::vector<QRectF> plot_areas;  ///< on the page
    std::vector<FigureColourBar> colour_bars;
    std::vector<FigureBrokenText> broken;
    /// What a panel could not draw at this size, said by the panel (note_layout_problem).
    QStringList panel_problems;
};

/// The numbers written beside `bar` (right of a vertical bar, at the ends of a horizontal one),
/// each once, in the order drawn.
QStringList colour_bar_labels(const FigureLayout& layout, const FigureColourBar& bar);

/// Paints with `paint(painter)` into a recording device of `page` and returns what it drew.
template <typename Paint>
FigureLayout record_figure_layout(QSizeF page, Paint paint);

/// Each problem a reader would see, one sentence each naming the text: elided ("…" or "..."),
/// clipped by the painter, outside the page, overlapping another text, on a plot area, or broken
/// inside a word into lines of fewer than kReadableLineChars characters; each colour bar
/// labelled with fewer than two values (its scale cannot be read); and each part of a panel the
/// panel could not draw (note_layout_problem). Empty when the figure reads.
QStringList figure_layout_problems(const FigureLayout& layout);

/// A word wider than its line is broken where the line ends (a file name in a legend): readable
/// while a line holds at least this many of its characters, not when it is cut into a column of
/// a few glyphs a line.
inline constexpr int kReadableLineChars = 6;

/// Called by draw_wrapped (figure_font.hpp) when it breaks a word of `text` into lines of at most
/// `characters` characters, fewer than kReadableLineChars. Does nothing unless the painter
/// records a figure's layout.
void note_broken_text(QPainter& painter, const QString& text, int characters);

/// Called by a panel that leaves out part of its figure for want of room (a heatmap's cells, a
/// row label): `problem`, one sentence, is listed by figure_layout_problems, so that a figure
/// whose data exists never passes the check with an empty panel. Does nothing unless the
/// painter records a figure's layout.
void note_layout_problem(QPainter& painter, const QString& problem);

/// Called by a panel as it paints: `area` (the painter's coordinates) is where its data is drawn.
/// Does nothing unless the painter records a figure's layout.
void note_plot_area(QPainter& painter, const QRectF& area);

/// Called by a panel as it paints a colour bar or colour key at `bar` (the painter's
/// coordinates), whose values it labels with numbers beside it. Does nothing unless the painter
/// records a figure's layout.
void note_colour_bar(QPainter& painter, const QRectF& bar, Qt::Orientation orientation);

/// While one lives, texts the painter draws are labels inside a plot (cell values, a circle's
/// name), allowed on a plot area. Does nothing unless the painter records a figure's layout.
class InPlotText {
public:
    explicit InPlotText(QPainter& painter);
    ~InPlotText();
    InPlotText(const InPlotText&) = delete;
    InPlotText& operator=(const InPlotText&) = delete;

private:
    QPainter& painter_;
    bool before_ = false;
};

namespace detail {
class FigureRecorder;
FigureRecorder* make_figure_recorder(QSizeF page);
QPainter* begin_recording(FigureRecorder* recorder);
FigureLayout finish_recording(FigureRecorder* recorder, QPainter* painter);
}  // namespace detail

template <typename Paint>
FigureLayout record_figure_layout(QSizeF page, Paint paint) {
    detail::FigureRecorder* recorder = detail::make_figure_recorder(page);
    QPainter* painter = detail::begin_recording(recorder);
    try {
        paint(*painter);
    } catch (...) {
        detail::finish_recording(recorder, painter);
        throw;
    }
    return detail::finish_recording(recorder, painter);
}

}  // namespace routescope::views
