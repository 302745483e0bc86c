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
};

}  // namespace routescope::views
