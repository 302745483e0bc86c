#include "views/analysis_view.hpp"

#include <QChartView>
#include <QLabel>
#include <QLayout>
#include <QPainter>
#include <QPointer>
#include <QRegularExpression>
#include <QVBoxLayout>
#include <QValueAxis>

#include "views/chart_figure.hpp"
#include "views/figure_font.hpp"
#include "views/painted_panel.hpp"

namespace routescope::views {
namespace {
constexpr QSize kDefaultFigure{960, 600};  // logical pixels: 10 × 6.25 in at 96 dpi
// A print-sized figure is laid out at 3× its print size (prepare_print): 1 mm of print = 11.3
// layout pixels, and a point of text 4 whole layout pixels.
constexpr double kLayoutScale = 3.0;
}  // namespace

AnalysisView::AnalysisView(QString kind, QWidget* parent)
    : QWidget(parent),
      kind_(std::move(kind)),
      cancelled_(std::make_shared<std::atomic<bool>>(false)) {
    setObjectName(kind_ + "View");
    status_ = new QLabel(this);
    status_->setObjectName("analysisStatus");
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->hide();
    figure_ = new QWidget(this);
    figure_->setObjectName("figure");
    figure_->setAutoFillBackground(true);
    QPalette pal = figure_->palette();
    pal.setColor(QPalette::Window, Qt::white);
    figure_->setPalette(pal);
}

AnalysisView::~AnalysisView() {
    *cancelled_ = true;
}

void AnalysisView::set_status(const QString& text) {
    status_->setText(text);
    status_->setVisible(!text.isEmpty());
}

void AnalysisView::begin(const QString& what) {
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    busy_ = true;
    error_.clear();
    set_status(tr("%1…").arg(what));
    emit analysisStarted(what);
}

void AnalysisView::end_ok() {
    busy_ = false;
    has_result_ = true;
    set_status({});
    emit analysisFinished();
}

void AnalysisView::end_failed(const QString& message) {
    busy_ = false;
    error_ = message;
    set_status(tr("<b style='color:#b00020'>The analysis failed:</b> %1<br>Check that the file "
                  "holds what this "
                  "analysis reads (File › Open shows its structure), change the settings above and "
                  "run it again.")
                   .arg(message.toHtmlEscaped()));
    emit analysisFailed(message);
}

void AnalysisView::recheck_inputs() {
    if (!held_run_) return;
    auto pending = std::move(held_run_);
    held_run_ = nullptr;
    busy_ = false;  // the waiting run counted as busy; it asks the gate again
    pending();
}

void AnalysisView::cancel() {
    held_run_ = nullptr;  // an analysis that waits for its files and is cancelled never starts
    if (!busy_) return;
    *cancelled_ = true;
    busy_ = false;
    set_status(tr("Cancelled."));
    emit analysisCancelled();
}

QSize AnalysisView::figure_size() const {
    const QSize s = figure_->size();
    return s.width() >= 100 && s.height() >= 100 ? s : kDefaultFigure;
}

void AnalysisView::paint_figure(QPainter& painter, const QRect& target) const {
    const QSize logical = figure_size();
    if (figure_->size() != logical) {
        // Never laid out (a view exported before it was shown): give its panels their geometry.
        figure_->resize(logical);
        if (figure_->layout()) figure_->layout()->activate();
    }
    painter.save();
    painter.fillRect(target, Qt::white);
    const double sx = static_cast<double>(target.width()) / logical.width();
    const double sy = static_cast<double>(target.height()) / logical.height();
    const auto children = figure_->findChildren<QWidget*>();
    for (QWidget* w : children) {
        if (!w->isVisibleTo(figure_)) continue;
        auto* panel = dynamic_cast<PaintedPanel*>(w);
        auto* chart = qobject_cast<QChartView*>(w);
        if (!panel && !chart) continue;
        const QPoint at = w->mapTo(figure_, QPoint(0, 0));
        painter.save();
        painter.translate(target.left() + at.x() * sx, target.top() + at.y() * sy);
        painter.scale(sx, sy);
        const QRect local(QPoint(0, 0), w->size());
        if (panel)
            panel->paint(painter, local);
        else
            render_chart_figure(chart, painter, QRectF(local));
        painter.restore();
    }
    painter.restore();
}

QString AnalysisView::figure_name() const {
    QString stem = kind_ + "-" + input_stem();
    stem.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "_");
    return stem;
}

nlohmann::json AnalysisView::figure_provenance() const {
    return {
        {"view", kind_.toStdString()}, {"results", result_provenance()}, {"settings", settings()}};
}

QStringList AnalysisView::export_to(const QString& path, int dpi) const {
    return export_figure(*this, path, dpi);
}

QStringList AnalysisView::export_to(const QString& path, const FigureExportOptions& options) const {
    return export_figure(*this, path, options);
}

std::function<void()> AnalysisView::prepare_print(QSizeF print, double font_px) const {
    // The panels are laid out at kLayoutScale × the print and drawn scaled down to it: a print
    // 89 mm wide (336 logical pixels) is too narrow for the panels' minimum sizes at 1:1, and the
    // text, `font_px` in print, is font_px × kLayoutScale in the layout, so that text and drawing
    // keep the proportions of the print (as a matplotlib figure of the same size and font).
    double scale = kLayoutScale;
    const QSize min = figure_->minimumSizeHint();
    while (scale < 64 &&
           (print.width() * scale < min.width() || print.height() * scale < min.height()))
        scale *= 2;
    const QSize layout(static_cast<int>(print.width() * scale + 0.5),
                       static_cast<int>(print.height() * scale + 0.5));

    struct ChartFonts {
        QPointer<QChart> chart;
        QFont title, legend;
        std::vector<std::tuple<QPointer<QAbstractAxis>, QFont, QFont>> axes;
    };
    std::vector<ChartFonts> saved;
    const QFont figure_font_before = figure_->font();
    const bool had_font = figure_->testAttribute(Qt::WA_SetFont);
    const QSize size_before = figure_->size();
    if (font_px > 0) {
        // Whole layout pixels: the text is font_px × scale rounded, within 1/(2 × 4 × 3) of a
        // point.
        const int px =
            std::max(1, static_cast<int>(font_px * layout.width() / print.width() + 0.5));
        auto sized = [px](QFont f) {
            f.setPixelSize(px);
            return f;
        };
        figure_->setFont(sized(figure_->font()));  // painted panels draw in their widget's font
        print_font_px = px;
        for (QChartView* view : figure_->findChildren<QChartView*>()) {
            QChart* chart = view->chart();
            ChartFonts s{chart, chart->titleFont(), chart->legend()->font(), {}};
            chart->setTitleFont(sized(chart->titleFont()));
            chart->legend()->setFont(sized(chart->legend()->font()));
            for (QAbstractAxis* axis : chart->axes()) {
                s.axes.emplace_back(axis, axis->labelsFont(), axis->titleFont());
                axis->setLabelsFont(sized(axis->labelsFont()));
                axis->setTitleFont(sized(axis->titleFont()));
            }
            saved.push_back(std::move(s));
        }
    }
    figure_->resize(layout);
    if (figure_->layout()) figure_->layout()->activate();
    return [this, saved, figure_font_before, had_font, size_before] {
        print_font_px = 0;
        for (const auto& s : saved) {
            if (!s.chart) continue;
            s.chart->setTitleFont(s.title);
            s.chart->legend()->setFont(s.legend);
            for (const auto& [axis, labels, title] : s.axes)
                if (axis) {
                    axis->setLabelsFont(labels);
                    axis->setTitleFont(title);
                }
        }
        figure_->setFont(had_font ? figure_font_before : QFont());
        figure_->resize(size_before);
        if (figure_->layout()) figure_->layout()->activate();
    };
}

}  // namespace routescope::views
