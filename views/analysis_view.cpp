#include "views/analysis_view.hpp"

#include <QChartView>
#include <QCryptographicHash>
#include <QLabel>
#include <QLayout>
#include <QPainter>
#include <QPointer>
#include <QRegularExpression>
#include <QTextDocument>
#include <QVBoxLayout>

#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_interaction.hpp"
#include "views/chart_options.hpp"
#include "views/figure_font.hpp"
#include "views/heatmap_widget.hpp"
#include "views/interval_bar_chart.hpp"
#include "views/painted_panel.hpp"

namespace routescope::views {
namespace {
constexpr QSize kDefaultFigure{960, 600};  // logical pixels: 10 × 6.25 in at 96 dpi
// A print-sized figure is laid out at 3× its print size (prepare_print): 1 mm of print = 11.3
// layout pixels, and a point of text 4 whole layout pixels.
constexpr double kLayoutScale = 3.0;
}  // namespace

namespace {
bool is_panel(QWidget* w) {
    return dynamic_cast<PaintedPanel*>(w) || qobject_cast<QChartView*>(w);
}

/// The figure's panels (painted panels and charts, at any depth but not inside another panel),
/// visible, with their rectangles in the figure, in reading order of the on-screen figure: by
/// rows (tops within a fifth of the smaller height), then left to right.
std::vector<std::pair<QWidget*, QRect>> print_units(QWidget* figure) {
    std::vector<std::pair<QWidget*, QRect>> units;
    for (QWidget* c : figure->findChildren<QWidget*>()) {
        if (!is_panel(c) || !c->isVisibleTo(figure)) continue;
        bool nested = false;
        for (QWidget* p = c->parentWidget(); p && p != figure; p = p->parentWidget())
            nested = nested || is_panel(p);
        if (!nested) units.emplace_back(c, QRect(c->mapTo(figure, QPoint(0, 0)), c->size()));
    }
    std::stable_sort(units.begin(), units.end(), [](const auto& a, const auto& b) {
        const QRect &ga = a.second, &gb = b.second;
        const int slack = std::min(ga.height(), gb.height()) / 5;
        if (std::abs(ga.top() - gb.top()) > slack) return ga.top() < gb.top();
        return ga.left() < gb.left();
    });
    return units;
}

/// A panel's title as the figure shows it (chart titles are HTML to Qt Charts).
QString panel_title(QWidget* w) {
    QString t;
    if (auto* chart = qobject_cast<QChartView*>(w))
        t = chart_title(chart);
    else if (auto* heat = dynamic_cast<HeatmapWidget*>(w))
        t = heat->data().title;
    else if (auto* bars = dynamic_cast<IntervalBarChart*>(w))
        t = bars->data().title;
    if (Qt::mightBeRichText(t)) {
        QTextDocument doc;
        doc.setHtml(t);
        t = doc.toPlainText();
    }
    return t.simplified();
}

/// The zoom, pan and reset of a panel, if it has them.
PlotInteraction* panel_interaction(QWidget* w) {
    if (auto* chart = qobject_cast<QChartView*>(w)) return chart_interaction(chart);
    if (auto* heat = dynamic_cast<HeatmapWidget*>(w)) return heat->interaction();
    if (auto* bars = dynamic_cast<IntervalBarChart*>(w)) return bars->interaction();
    return nullptr;
}
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

void AnalysisView::apply_settings(const nlohmann::json& settings) {
    const OwnChange own(this);
    restore_settings(settings);
}

void AnalysisView::edit(const QString& what, const std::function<void()>& change, bool continuous) {
    if (own_changes_ > 0) return change();
    nlohmann::json before = settings();
    {
        // Whatever the setter sets in other controls on the way is part of this one edit.
        const OwnChange own(this);
        change();
    }
    nlohmann::json after = settings();
    if (after != before) emit settingsEdited(what, before, after, continuous);
}

void AnalysisView::set_status(const QString& text) {
    status_->setText(text);
    status_->setVisible(!text.isEmpty());
}

void AnalysisView::begin(const QString& what) {
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    started_ = std::make_shared<std::atomic<bool>>(false);
    progress_ = {0, 0};
    busy_ = true;
    error_.clear();
    set_status(tr("%1…").arg(what));
    emit analysisStarted(what);
}

void AnalysisView::end_ok() {
    busy_ = false;
    has_result_ = true;
    set_status({});
    apply_pending_limits();
    watch_charts();
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

QString setting_choice(const nlohmann::json& j, const char* key, const QString& fallback,
                       std::initializer_list<const char*> allowed) {
    return setting_choice(j, key, fallback,
                          std::vector<std::string>(allowed.begin(), allowed.end()));
}

QString setting_choice(const nlohmann::json& j, const char* key, const QString& fallback,
                       const std::vector<std::string>& allowed) {
    if (!j.contains(key)) return fallback;
    const std::string v = j.at(key).is_string() ? j.at(key).get<std::string>() : j.at(key).dump();
    std::string list;
    for (const auto& a : allowed) {
        if (v == a) return QString::fromStdString(v);
        list += (list.empty() ? "" : ", ") + a;
    }
    throw FormatError(std::string("settings.") + key + ": '" + data::abbreviated(v) +
                      "' is not one of " + list);
}

namespace {
/// "settings.KEY: V " (V abbreviated), the start of every message about a setting's value.
std::string setting_said(const std::string& at, const char* key, const nlohmann::json& v) {
    return at + "." + key + ": " + data::abbreviated(v.dump()) + " ";
}
}  // namespace

std::int64_t setting_int(const nlohmann::json& j, const char* key, std::int64_t fallback,
                         std::int64_t lo, std::int64_t hi, const std::string& at) {
    if (!j.contains(key)) return fallback;
    return whole_number_at(j.at(key), lo, hi, at + "." + key);
}

std::int64_t whole_number_at(const nlohmann::json& v, std::int64_t lo, std::int64_t hi,
                             const std::string& place) {
    // The number as the file holds it: an unsigned one above hi is refused before any cast (a
    // cast first turned 4294967297 into 1 and 2^63 into a negative number). A whole number
    // written 3.0 is one (as in the run configuration); 2.5 is not.
    bool ok = false;
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        ok = hi >= 0 && u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo;
    } else if (v.is_number_integer()) {
        const std::int64_t n = v.get<std::int64_t>();
        ok = n >= lo && n <= hi;
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        ok = std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15 &&
             d >= static_cast<double>(lo) && d <= static_cast<double>(hi);
    }
    if (ok)
        return v.is_number_unsigned()  ? static_cast<std::int64_t>(v.get<std::uint64_t>())
               : v.is_number_integer() ? v.get<std::int64_t>()
                                       : static_cast<std::int64_t>(v.get<double>());
    throw FormatError(place + ": " + data::abbreviated(v.dump()) + " is not a whole number in [" +
                      std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

int setting_as_int(const nlohmann::json& j, const char* key, int fallback, const std::string& at) {
    return static_cast<int>(setting_int(j, key, fallback, std::numeric_limits<int>::min(),
                                        std::numeric_limits<int>::max(), at));
}

std::int64_t setting_as_int64(const nlohmann::json& j, const char* key, std::int64_t fallback,
                              const std::string& at) {
    return setting_int(j, key, fallback, std::numeric_limits<std::int64_t>::min(),
                       std::numeric_limits<std::int64_t>::max(), at);
}

std::uint64_t setting_as_uint64(const nlohmann::json& j, const char* key, std::uint64_t fallback,
                                const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
        return static_cast<std::uint64_t>(v.get<std::int64_t>());
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && std::floor(d) == d && d >= 0 && d < 9.0e15)
            return static_cast<std::uint64_t>(d);
    }
    throw FormatError(setting_said(at, key, v) + "is not a whole number in [0, " +
                      std::to_string(std::numeric_limits<std::uint64_t>::max()) + "]");
}

double setting_number(const nlohmann::json& j, const char* key, double fallback, double lo,
                      double hi, const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= lo &&
        v.get<double>() <= hi)
        return v.get<double>();
    throw FormatError(setting_said(at, key, v) + "is not a number in [" + number_text(lo) + ", " +
                      number_text(hi) + "]");
}

bool setting_bool(const nlohmann::json& j, const char* key, bool fallback, const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (v.is_boolean()) return v.get<bool>();
    throw FormatError(setting_said(at, key, v) + "is not true or false");
}

QString setting_string(const nlohmann::json& j, const char* key, const QString& fallback,
                       const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    throw FormatError(setting_said(at, key, v) + "is not a string");
}

QStringList setting_strings(const nlohmann::json& j, const char* key, const QStringList& fallback,
                            const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (!v.is_array()) throw FormatError(setting_said(at, key, v) + "is not a list of strings");
    QStringList out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
            throw FormatError(at + "." + key + "[" + std::to_string(i) +
                              "]: " + data::abbreviated(v[i].dump()) + " is not a string");
        out << QString::fromStdString(v[i].get<std::string>());
    }
    return out;
}

nlohmann::json setting_object(const nlohmann::json& j, const char* key,
                              const nlohmann::json& fallback, const std::string& at) {
    if (!j.contains(key)) return fallback;
    const auto& v = j.at(key);
    if (v.is_object()) return v;
    throw FormatError(setting_said(at, key, v) + "is not an object");
}

QString AnalysisView::figure_name() const {
    // Letters and digits of any script are kept (a dump named 名前 and one named 日本 both
    // became "pca-_"); other runs of characters become one "_". No input: the kind alone.
    const QString inputs = input_stem();
    QString stem = inputs.isEmpty() ? kind_ : kind_ + "-" + inputs;
    stem.replace(QRegularExpression(QStringLiteral("[^\\p{L}\\p{N}_.-]+")), "_");
    // A file name holds at most 255 bytes, and the longest suffix added is
    // ".provenance.json" with a "-N": nine runs' names joined by "-vs-" made the export fail
    // ("cannot write PNG"). Longer stems keep their first 160 bytes and a hash of the whole.
    constexpr int kMaxBytes = 160;
    if (stem.toUtf8().size() > kMaxBytes + 20) {
        const QString hash = QString::fromLatin1(
            QCryptographicHash::hash(stem.toUtf8(), QCryptographicHash::Sha1).toHex().left(10));
        QString head;
        for (const QChar c : stem) {  // whole characters (UTF-8 of several bytes kept whole)
            if ((head + c).toUtf8().size() > kMaxBytes) break;
            head += c;
        }
        if (!head.isEmpty() && head.back().isHighSurrogate()) head.chop(1);
        stem = head + "-" + hash;
    }
    return stem;
}

nlohmann::json AnalysisView::figure_provenance() const {
    // Each input named by the view's own file: the result cache answers by content, and a result
    // first computed on an identical copy carries that copy's path.
    nlohmann::json doc = {{"view", kind_.toStdString()},
                          {"results", results_named_by_inputs(result_provenance(), input_files())},
                          {"settings", settings()}};
    // A zoomed panel shows less than its data: the range it shows is part of the figure.
    nlohmann::json zoom = nlohmann::json::array();
    const auto units = print_units(figure_);
    for (std::size_t i = 0; i < units.size(); ++i) {
        PlotInteraction* interaction = panel_interaction(units[i].first);
        if (!interaction || !interaction->zoomed()) continue;
        // In the axes' values, as a project's chart limits are (a log axis's interaction range
        // is log10 of them); a heatmap's, which has no value axes, in cells.
        const VisibleRange r = interaction->visible_range();
        std::array<double, 4> xy{r.x.lo, r.x.hi, r.y.lo, r.y.hi};
        if (auto* chart = qobject_cast<QChartView*>(units[i].first))
            if (const auto limits = zoomed_axis_limits(chart)) xy = *limits;
        zoom.push_back({{"panel", i + 1},
                        {"title", panel_title(units[i].first).toStdString()},
                        {"x", {xy[0], xy[1]}},
                        {"y", {xy[2], xy[3]}}});
    }
    if (!zoom.empty()) doc["zoom"] = zoom;
    return doc;
}

nlohmann::json AnalysisView::chart_options() const {
    using P = FigureChartView::LegendPosition;
    nlohmann::json out = nlohmann::json::array();
    bool any = false;
    qsizetype index = 0;
    for (auto* chart : figure_->findChildren<FigureChartView*>()) {
        nlohmann::json o = nlohmann::json::object();
        if (chart->legend_position() == P::Right) o["legend"] = "right";
        if (chart->legend_position() == P::Hidden) o["legend"] = "hidden";
        if (log_scale_wanted(chart, Qt::Horizontal)) o["log_x"] = true;
        if (log_scale_wanted(chart, Qt::Vertical)) o["log_y"] = true;
        if (const auto p = pending_limits_.find(index); p != pending_limits_.end())
            o["limits"] = p->second;  // restored, not yet shown: as they will be
        else if (const auto l = zoomed_axis_limits(chart))
            o["limits"] = {{"x", {(*l)[0], (*l)[1]}}, {"y", {(*l)[2], (*l)[3]}}};
        any = any || !o.empty();
        out.push_back(o);
        ++index;
    }
    return any ? out : nlohmann::json::array();
}

void AnalysisView::apply_chart_options(const nlohmann::json& options) {
    using P = FigureChartView::LegendPosition;
    if (!options.is_array()) return;
    const auto charts = figure_->findChildren<FigureChartView*>();
    for (qsizetype i = 0; i < charts.size() && i < static_cast<qsizetype>(options.size()); ++i) {
        const auto& o = options[static_cast<std::size_t>(i)];
        if (!o.is_object()) continue;
        // Log scales (Axis › Logarithmic): taken now if the chart has its data, else when it does.
        for (const auto& [key, orientation] :
             {std::pair{"log_x", Qt::Horizontal}, std::pair{"log_y", Qt::Vertical}})
            if (o.contains(key) && o[key].is_boolean() && o[key].get<bool>())
                (void)set_log_scale(charts[i], orientation, true);
        if (o.contains("limits")) {
            const auto& l = o["limits"];
            const auto pair = [&](const char* k) {
                return l.is_object() && l.contains(k) && l[k].is_array() && l[k].size() == 2 &&
                       l[k][0].is_number() && l[k][1].is_number();
            };
            if (pair("x") && pair("y")) pending_limits_[i] = l;
        }
        if (!o.contains("legend") || !o["legend"].is_string()) continue;
        const std::string legend = o["legend"].get<std::string>();
        charts[i]->set_legend_position(legend == "right"    ? P::Right
                                       : legend == "hidden" ? P::Hidden
                                                            : P::Below);
    }
    if (has_result_ && !busy_) apply_pending_limits();
    watch_charts();
}

void AnalysisView::watch_charts() {
    // A chart's zoom is its PlotInteraction's (a heatmap's too: it reports, chart_options() then
    // reads the same); the legend and log scales are the FigureChartView's. A view that redraws
    // may add charts: each new one is connected once.
    for (auto* chart : figure_->findChildren<FigureChartView*>())
        chart->on_options_changed([this] { note_chart_change(); });
    for (auto* plot : figure_->findChildren<PlotInteraction*>()) {
        connect(plot, &PlotInteraction::rangeChanged, this, &AnalysisView::note_chart_change,
                Qt::UniqueConnection);
        connect(plot, &PlotInteraction::wasReset, this, &AnalysisView::note_chart_change,
                Qt::UniqueConnection);
    }
}

void AnalysisView::note_chart_change() {
    emit chartOptionsChanged();
}

void AnalysisView::apply_pending_limits() {
    if (pending_limits_.empty()) return;
    const auto charts = figure_->findChildren<FigureChartView*>();
    for (const auto& [i, l] : pending_limits_) {
        if (i >= charts.size()) continue;
        apply_log_scales(charts[i]);  // limits saved on a log axis are log values
        // Limits that no longer fit the data (another file, a log axis) or that no axis can draw
        // (visible_range.hpp: an overflowing span, one too narrow to label, the data too far off
        // the plot) are dropped quietly: the chart shows its data, as before the project was
        // saved with them.
        (void)set_axis_limits(charts[i], l["x"][0].get<double>(), l["x"][1].get<double>(),
                              l["y"][0].get<double>(), l["y"][1].get<double>());
    }
    pending_limits_.clear();
}

QStringList AnalysisView::panel_titles() const {
    QStringList out;
    for (const auto& [w, g] : print_units(figure_))
        out << panel_title(w);
    return out;
}

QStringList AnalysisView::export_to(const QString& path, int dpi) const {
    return export_figure(*this, path, dpi);
}

QStringList AnalysisView::export_to(const QString& path, const FigureExportOptions& options) const {
    return export_figure(*this, path, options);
}

std::function<void()> AnalysisView::prepare_print(QSizeF print, double font_px, int panel) const {
    // The panels are laid out at kLayoutScale × the print and drawn scaled down to it, so that
    // the text, `font_px` in print, is font_px × kLayoutScale in the layout and text and drawing
    // keep the proportions of the print (as a matplotlib figure of the same size and font).
    //
    // A print narrower than the on-screen arrangement needs reflows it (issue 26): the panels
    // go into as many columns as kMinPanelMm allows (one at 89 mm, two at 183 mm), in reading
    // order, each as wide as its column and as high as its aspect makes it (below).
    // Secondary panels (the property printSecondary) are left out when the figure would be
    // taller than kMaxHeightMm. The figure's height follows (PrintLayout).
    constexpr double kMinPanelMm = kMinPrintColumnMm, kMaxHeightMm = 180, kGapMm = 2;
    const double mm = 96 / 25.4;  // logical pixels per mm
    const double scale = kLayoutScale;

    struct ChartFonts {
        QPointer<QChart> chart;
        QFont title, legend;
        std::vector<std::tuple<QPointer<QAbstractAxis>, QFont, QFont>> axes;
        QPointer<QChartView> view;
        QSize view_minimum;
    };
    std::vector<ChartFonts> saved;
    const QFont figure_font_before = figure_->font();
    const bool had_font = figure_->testAttribute(Qt::WA_SetFont);
    const QSize size_before = figure_->size();
    {
        // With a font size: every text at font_px in print, whole layout pixels (within
        // 1/(2 × 4 × 3) of a point). Without ("on-screen fonts"): every text at its on-screen
        // size in print (one screen pixel = 1/96 inch), so the layout's fonts grow with it; a
        // font the screen gave in points is set in pixels too, which every device (SVG's 0.1 mm
        // units included) draws at the same size.
        const int px = font_px > 0 ? std::max(1, static_cast<int>(font_px * scale + 0.5)) : 0;
        auto sized = [px, scale](QFont f) {
            f.setPixelSize(
                px > 0 ? px
                       : std::max(1, static_cast<int>(QFontInfo(f).pixelSize() * scale + 0.5)));
            // No ligatures in print (figure_font.hpp): a PDF's text layer mapped "fi", "ff", "fl"
            // to U+FB01, U+FB00, U+FB02, so the figure's words ("effective", "first") could not
            // be searched or copied; every script is still shaped (Arabic letters join).
            return without_ligatures(f);
        };
        figure_->setFont(sized(figure_->font()));  // painted panels draw in their widget's font
        print_font_px = px;
        for (QChartView* view : figure_->findChildren<QChartView*>()) {
            QChart* chart = view->chart();
            ChartFonts s{chart, chart->titleFont(), chart->legend()->font(), {},
                         view,  view->minimumSize()};
            // The print's geometry, not the chart's minimum: Qt Charts sizes a chart at least as
            // large as its layout's minimum, which grows with the print's fonts and the room the
            // view keeps for its texts, and a QChartView raises its own minimum to it (and never
            // lowers it again). A PCA chart at 183 mm and 14 pt was drawn at 1439 × 1125 layout
            // pixels into a panel of 1026 × 564: its texts at 36 pt, over the next panel.
            chart->setMinimumSize(QSizeF(0, 0));
            view->setMinimumSize(0, 0);
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

    std::vector<QWidget*> units;
    for (const auto& [w, g] : print_units(figure_))
        units.push_back(w);
    // One panel alone: the others are left out, and it fills the print's width.
    std::vector<QPointer<QWidget>> left_out;
    if (panel >= 0 && panel < static_cast<int>(units.size())) {
        for (int i = 0; i < static_cast<int>(units.size()); ++i)
            if (i != panel) left_out.emplace_back(units[static_cast<std::size_t>(i)]);
        units = {units[static_cast<std::size_t>(panel)]};
    }
    // Panels with nothing to show (the property printEmpty: the A − B of two models of other
    // depths, the poles of a dump) are left out of a print, not printed as an empty quadrant
    // with its note (session 32); on the screen they stay, saying why they are empty.
    // The panels of `from` without `property`; those with it join left_out (unless all have it).
    const auto without = [&left_out](const std::vector<QWidget*>& from, const char* property) {
        std::vector<QWidget*> kept, dropped;
        for (QWidget* w : from)
            (w->property(property).toBool() ? dropped : kept).push_back(w);
        if (kept.empty()) return from;
        left_out.insert(left_out.end(), dropped.begin(), dropped.end());
        return kept;
    };
    if (units.size() > 1) units = without(units, "printEmpty");
    const double width_mm = print.width() / mm;
    const int columns = std::clamp(static_cast<int>(width_mm / kMinPanelMm), 1,
                                   std::max(1, static_cast<int>(units.size())));
    // A print narrower than the on-screen figure is reflowed (a print of the on-screen width,
    // only the fonts changed, keeps the on-screen arrangement). Each panel's aspect is its own
    // (printAspect) or a fixed one, taller for narrow prints, where text takes a larger share of
    // a panel: never the on-screen one, so that an export does not depend on the window's size.
    const double default_aspect = width_mm < 120 ? 0.62 : 0.55;
    const bool reflow = !units.empty() && (panel >= 0 || print.width() < size_before.width() - 0.5);
    std::vector<std::pair<QPointer<QWidget>, QRect>> geometry_before;
    std::vector<QPointer<QLayout>> disabled_layouts;
    QSize layout(static_cast<int>(print.width() * scale + 0.5),
                 static_cast<int>(print.height() * scale + 0.5));
    if (reflow) {
        const double gap = kGapMm * mm * scale;
        const double column_width = (layout.width() - gap * (columns - 1)) / columns;
        auto aspect = [default_aspect](QWidget* w) {
            const QVariant a = w->property("printAspect");
            return a.isValid() ? a.toDouble() : default_aspect;
        };
        // The panels are placed by hand: the figure's layouts stand still, and a box that holds
        // panels (not itself drawn) spans the whole figure, so that its panels' coordinates are
        // the figure's.
        if (figure_->layout()) {
            disabled_layouts.emplace_back(figure_->layout());
            figure_->layout()->setEnabled(false);
        }
        for (QWidget* w : units) {
            geometry_before.emplace_back(w, w->geometry());
            for (QWidget* p = w->parentWidget(); p && p != figure_; p = p->parentWidget()) {
                if (std::any_of(geometry_before.begin(), geometry_before.end(),
                                [p](const auto& g) { return g.first == p; }))
                    continue;
                geometry_before.emplace_back(p, p->geometry());
                if (p->layout()) {
                    disabled_layouts.emplace_back(p->layout());
                    p->layout()->setEnabled(false);
                }
            }
        }
        // Each panel as high as its aspect makes it, or higher where its texts at the print's
        // size (a legend of long names in several rows, a title over two lines) would leave its
        // plot a sliver: a chart grows until its plot has a quarter of its width and room for
        // every word of its y-axis title on a line (session 37: a transitions view at 89 mm and
        // 10 pt, four entries of long names, drew its y title one glyph a line).
        const int panel_width = QRectF(0, 0, column_width, 1).toRect().width();
        std::map<QWidget*, double> heights;
        for (QWidget* w : units) {
            double h = column_width * aspect(w);
            if (auto* chart = dynamic_cast<FigureChartView*>(w))
                h = std::max(h, static_cast<double>(chart->print_height(
                                    panel_width, static_cast<int>(std::lround(h)))));
            else if (auto* painted = dynamic_cast<PaintedPanel*>(w))
                h = std::max(h, painted->print_height(panel_width, h));
            heights[w] = h;
        }
        auto height_of = [&](const std::vector<QWidget*>& shown) {
            double h = 0;
            for (std::size_t i = 0; i < shown.size(); i += columns) {
                double row = 0;
                for (std::size_t j = i; j < std::min(shown.size(), i + columns); ++j)
                    row = std::max(row, heights[shown[j]]);
                h += row + (i > 0 ? gap : 0);
            }
            return h;
        };
        std::vector<QWidget*> shown = units;
        if (height_of(shown) > kMaxHeightMm * mm * scale) shown = without(units, "printSecondary");
        for (const auto& w : left_out)
            w->setVisible(false);
        layout.setHeight(static_cast<int>(std::ceil(height_of(shown))));
        figure_->resize(layout);
        for (QWidget* w : units)
            for (QWidget* p = w->parentWidget(); p && p != figure_; p = p->parentWidget())
                p->setGeometry(QRect(QPoint(0, 0), layout));
        double y = 0;
        for (std::size_t i = 0; i < shown.size(); i += columns) {
            double row = 0;
            for (std::size_t j = i; j < std::min(shown.size(), i + columns); ++j) {
                const double h = heights[shown[j]];
                row = std::max(row, h);
                shown[j]->setGeometry(
                    QRectF((j - i) * (column_width + gap), y, column_width, h).toRect());
            }
            y += row + gap;
        }
    } else {
        figure_->resize(layout);
        if (figure_->layout()) figure_->layout()->activate();
    }
    return [this, saved, figure_font_before, had_font, size_before, geometry_before, left_out,
            disabled_layouts] {
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
        if (!figure_) return;
        figure_->setFont(had_font ? figure_font_before : QFont());
        for (const auto& w : left_out)
            if (QWidget* p = w.data()) p->setVisible(true);
        for (const auto& [w, g] : geometry_before)
            if (QWidget* p = w.data()) p->setGeometry(g);
        for (const auto& l : disabled_layouts)
            if (QLayout* p = l.data()) p->setEnabled(true);
        figure_->resize(size_before);
        if (figure_->layout()) figure_->layout()->activate();
        // The minimum sizes last, once each chart's room for its texts is the screen's again: a
        // chart view resized on the way took its chart's print-sized minimum as its own.
        for (const auto& s : saved) {
            if (auto* view = dynamic_cast<FigureChartView*>(s.view.data())) view->fit_decorations();
            if (s.chart) s.chart->setMinimumSize(QSizeF(-1, -1));  // the layout's own again
            if (s.view) s.view->setMinimumSize(s.view_minimum);
        }
    };
}

}  // namespace routescope::views
