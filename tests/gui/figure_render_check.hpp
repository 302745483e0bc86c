#pragma once
// The export check that sees what a reader sees (issue 26, acceptance 1). The figure's own layout
// (views/figure_layout.hpp: every text's box, clip and plot areas, recorded as the figure paints)
// is checked for elided, clipped, off-page and overlapping text, and then verified against
// independent renderings: the SVG rendered by librsvg (rsvg-convert) with and without its <text>
// elements, whose difference is the text a reader sees, and the PDF rendered by poppler
// (pdftoppm). A text the layout places where the rendering shows none, or shows cut short, or
// rendered text where the layout has none, is a problem too.
#include <QString>
#include <QStringList>

#include "views/figure_layout.hpp"

namespace view_test {

/// Why the renderers cannot run here (rsvg-convert or pdftoppm missing), or empty.
QString renderers_missing();

/// Problems of `layout` that the SVG at `svg` shows when rendered at `dpi` by librsvg; `work` is
/// a directory for the renderings.
QStringList svg_rendering_problems(const routescope::views::FigureLayout& layout,
                                   const QString& svg, const QString& work, int dpi = 288);

/// Problems of `layout` that the PDF at `pdf` shows when rendered at `dpi` by poppler: a page of
/// another size, a text the layout places where the page shows nothing.
QStringList pdf_rendering_problems(const routescope::views::FigureLayout& layout,
                                   const QString& pdf, const QString& work, int dpi = 288);

}  // namespace view_test
