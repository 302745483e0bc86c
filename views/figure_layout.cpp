#include "views/figure_layout.hpp"

#include <QPaintDevice>
#include <QPaintEngine>
#include <QPainter>
#include <QPainterPath>
#include <QTextItem>

#include <algorithm>
#include <cmath>
#include <memory>

namespace routescope::views {
namespace detail {

/// A paint engine that draws nothing and keeps every text item's box and the clip it met.
class RecordingEngine : public QPaintEngine {
public:
    RecordingEngine() : QPaintEngine(QPaintEngine::AllFeatures) {}
    bool begin(QPaintDevice*) override { return true; }
    bool end() override { return true; }
    void updateState(const QPaintEngineState&) override {}
    Type type() const override { return QPaintEngine::User; }
    void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
    void drawImage(const QRectF&, const QImage&, const QRectF&, Qt::ImageConversionFlags) override {
    }
    void drawPath(const QPainterPath&) override {}
    void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
    void drawPolygon(const QPoint*, int, PolygonDrawMode) override {}
    void drawLines(const QLineF*, int) override {}
    void drawLines(const QLine*, int) override {}
    void drawRects(const QRectF*, int) override {}
    void drawRects(const QRect*, int) override {}
    void drawEllipse(const QRectF&) override {}
    void drawPoints(const QPointF*, int) override {}
    void drawTiledPixmap(const QRectF&, const QPixmap&, const QPointF&) override {}

    void drawTextItem(const QPointF& p, const QTextItem& item) override {
        QPainter* pa = painter();
        const QTransform t = pa->combinedTransform();
        const QRectF local(p.x(), p.y() - item.ascent(), item.width(),
                           item.ascent() + item.descent());
        FigureText text;
        text.text = item.text();
        text.box = t.mapRect(local);
        // The height on the page: a rotated text's height is its box's width.
        const double scale = std::sqrt(std::abs(t.determinant()));
        text.font_px = (item.ascent() + item.descent()) * scale;
        if (pa->hasClipping()) {
            const QPainterPath clip = t.map(pa->clipPath());
            // Half a pixel of slack: a clip rectangle that ends on the text's edge clips nothing.
            // Vertically a quarter of the box: the box is the line's ascent and descent, which a
            // fallback font (CJK) makes taller than the label's rectangle of one primary-font line,
            // so drawText clipped to that rectangle with the glyphs whole inside ("'日本語' is
            // clipped" on every such label of a correct figure; figure probe, session 31).
            const double v = std::max(0.5, text.box.height() * 0.25);
            const QRectF inner = text.box.adjusted(0.5, v, -0.5, -v);
            text.clipped = !inner.isEmpty() && !clip.contains(inner);
        }
        text.in_plot = in_plot;
        if (!text.text.trimmed().isEmpty()) layout.texts.push_back(std::move(text));
    }

    FigureLayout layout;
    bool in_plot = false;
};

class FigureRecorder : public QPaintDevice {
public:
    explicit FigureRecorder(QSizeF page) : size_(page) { engine_.layout.page = page; }
    QPaintEngine* paintEngine() const override { return &engine_; }
    RecordingEngine& engine() { return engine_; }

protected:
    int metric(PaintDeviceMetric m) const override {
        switch (m) {
            case PdmWidth:
                return static_cast<int>(std::ceil(size_.width()));
            case PdmHeight:
                return static_cast<int>(std::ceil(size_.height()));
            case PdmWidthMM:
                return static_cast<int>(std::ceil(size_.width() * 25.4 / 96));
            case PdmHeightMM:
                return static_cast<int>(std::ceil(size_.height() * 25.4 / 96));
            case PdmNumColors:
                return 0x7fffffff;
            case PdmDepth:
                return 32;
            case PdmDpiX:
            case PdmDpiY:
            case PdmPhysicalDpiX:
            case PdmPhysicalDpiY:
                return 96;
            case PdmDevicePixelRatio:
                return 1;
            case PdmDevicePixelRatioScaled:
                return static_cast<int>(devicePixelRatioFScale());
            default:
                return 0;
        }
    }

private:
    QSizeF size_;
    mutable RecordingEngine engine_;
};

FigureRecorder* make_figure_recorder(QSizeF page) {
    return new FigureRecorder(page);
}

QPainter* begin_recording(FigureRecorder* recorder) {
    auto* painter = new QPainter(recorder);
    return painter;
}

FigureLayout finish_recording(FigureRecorder* recorder, QPainter* painter) {
    painter->end();
    delete painter;
    FigureLayout out = std::move(recorder->engine().layout);
    delete recorder;
    return out;
}

namespace {
RecordingEngine* recording_engine(QPainter& painter) {
    auto* device = dynamic_cast<FigureRecorder*>(painter.device());
    return device ? &device->engine() : nullptr;
}
}  // namespace
}  // namespace detail

void note_plot_area(QPainter& painter, const QRectF& area) {
    if (auto* engine = detail::recording_engine(painter))
        engine->layout.plot_areas.push_back(painter.combinedTransform().mapRect(area));
}

void note_colour_bar(QPainter& painter, const QRectF& bar, Qt::Orientation orientation) {
    if (auto* engine = detail::recording_engine(painter))
        engine->layout.colour_bars.push_back(
            {painter.combinedTransform().mapRect(bar), orientation});
}

void note_broken_text(QPainter& painter, const QString& text, int characters) {
    if (auto* engine = detail::recording_engine(painter))
        engine->layout.broken.push_back({text, characters});
}

void note_layout_problem(QPainter& painter, const QString& problem) {
    if (auto* engine = detail::recording_engine(painter)) engine->layout.panel_problems << problem;
}

InPlotText::InPlotText(QPainter& painter) : painter_(painter) {
    if (auto* engine = detail::recording_engine(painter_)) {
        before_ = engine->in_plot;
        engine->in_plot = true;
    }
}

InPlotText::~InPlotText() {
    if (auto* engine = detail::recording_engine(painter_)) engine->in_plot = before_;
}

namespace {
QString quoted(const FigureText& t) {
    return QStringLiteral("'%1'").arg(t.text.trimmed());
}

/// Boxes overlap when they share more than a sliver: a fifth of the smaller text's height both
/// ways (two runs of one line, split where the font changes, touch but do not overlap).
bool overlap(const QRectF& a, const QRectF& b, double slack) {
    const QRectF i = a.intersected(b);
    return i.width() > slack && i.height() > slack;
}
}  // namespace

QStringList colour_bar_labels(const FigureLayout& layout, const FigureColourBar& bar) {
    QStringList out;
    const QRectF& b = bar.box;
    for (const FigureText& t : layout.texts) {
        QString number = t.text.trimmed();
        number.replace(QChar(0x2212), QLatin1Char('-'));
        bool ok = false;
        number.toDouble(&ok);
        if (!ok || out.contains(number)) continue;
        const QRectF& box = t.box;
        const double h = t.font_px, reach = 0.6 * t.font_px;
        bool beside = false;
        if (bar.orientation == Qt::Vertical)  // right of the bar, centred along its height
            beside = box.center().y() >= b.top() - h / 2 &&
                     box.center().y() <= b.bottom() + h / 2 && box.left() >= b.right() - 1 &&
                     box.left() <= b.right() + reach;
        else  // at either end, on the bar's line
            beside = box.center().y() >= b.top() - h / 2 &&
                     box.center().y() <= b.bottom() + h / 2 &&
                     ((box.right() <= b.left() + 1 && box.right() >= b.left() - reach) ||
                      (box.left() >= b.right() - 1 && box.left() <= b.right() + reach));
        if (beside) out << number;
    }
    return out;
}

QStringList figure_layout_problems(const FigureLayout& layout) {
    QStringList out;
    for (const FigureColourBar& bar : layout.colour_bars) {
        const QStringList labels = colour_bar_labels(layout, bar);
        if (labels.size() < 2)
            out << QStringLiteral("a colour bar (%1, %2, %3 × %4) is labelled with %5")
                       .arg(bar.box.x(), 0, 'f', 1)
                       .arg(bar.box.y(), 0, 'f', 1)
                       .arg(bar.box.width(), 0, 'f', 1)
                       .arg(bar.box.height(), 0, 'f', 1)
                       .arg(labels.isEmpty()
                                ? QStringLiteral("no value")
                                : QStringLiteral("one value only, '%1': its scale cannot be read")
                                      .arg(labels.front()));
    }
    // A text broken inside a word into a column of a few glyphs a line (a y-axis title along a
    // sliver of a plot: "‖", "Δ", "h", "‖", ... one a line) cannot be read, though every piece is
    // whole and apart from the others.
    for (const FigureBrokenText& b : layout.broken)
        out << QStringLiteral("'%1' is broken inside a word, %2 a line")
                   .arg(b.text.simplified())
                   .arg(b.characters == 1 ? QStringLiteral("one character")
                                          : QStringLiteral("%1 characters").arg(b.characters));
    out << layout.panel_problems;
    const QRectF page(QPointF(0, 0), layout.page);
    const auto& texts = layout.texts;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const FigureText& t = texts[i];
        if (t.text.contains(QChar(0x2026)) || t.text.contains(QStringLiteral("...")))
            out << QStringLiteral("%1 is elided").arg(quoted(t));
        if (t.clipped) out << QStringLiteral("%1 is clipped").arg(quoted(t));
        if (!page.adjusted(-0.5, -0.5, 0.5, 0.5).contains(t.box))
            out << QStringLiteral("%1 runs off the page (%2, %3, %4 × %5 on a %6 × %7 page)")
                       .arg(quoted(t))
                       .arg(t.box.x(), 0, 'f', 1)
                       .arg(t.box.y(), 0, 'f', 1)
                       .arg(t.box.width(), 0, 'f', 1)
                       .arg(t.box.height(), 0, 'f', 1)
                       .arg(page.width(), 0, 'f', 1)
                       .arg(page.height(), 0, 'f', 1);
        for (std::size_t j = i + 1; j < texts.size(); ++j) {
            const FigureText& u = texts[j];
            const double slack = 0.2 * std::min(t.font_px, u.font_px);
            if (overlap(t.box, u.box, slack))
                out << QStringLiteral("%1 overlaps %2").arg(quoted(t), quoted(u));
        }
        if (t.in_plot) continue;
        for (const QRectF& plot : layout.plot_areas) {
            // Tick labels sit against the plot's edge: a fifth of the text's height may touch it.
            if (overlap(t.box, plot, 0.2 * t.font_px)) {
                out << QStringLiteral("%1 lies on a plot").arg(quoted(t));
                break;
            }
        }
    }
    return out;
}

}  // namespace routescope::views
