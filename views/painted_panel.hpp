#pragma once
// A widget whose whole picture comes from one paint(QPainter&, QRect) method, so a figure can draw
// it into any device (screen, PNG, SVG, PDF) at any size.
#include <QRect>

class QPainter;

namespace routescope::views {

class PaintedPanel {
public:
    virtual ~PaintedPanel() = default;
    virtual void paint(QPainter& painter, const QRect& target) const = 0;
    /// The height a print layout gives the panel at `width` (AnalysisView::prepare_print):
    /// `height` (its aspect's), or more when its texts at the print's fonts need it.
    virtual double print_height(double width, double height) const {
        (void)width;
        return height;
    }
};

}  // namespace routescope::views
