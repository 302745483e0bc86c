#include "views/efficiency_view.hpp"

#include "engine/core/error.hpp"

#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "views/chart_panel.hpp"
#include "views/result_table.hpp"

namespace routescope::views {
namespace {

// The lengths' axis (log 2) runs half an octave past the first and last length: the first and
// last tick labels then sit inside the plot, clear of the value axis's labels at its corners
// (with the range ending on a length, "128" at the corner met "1" of a time axis whose range
// happened to start near 1 ms).
void set_length_range(QLogValueAxis* axis, double first, double last) {
    axis->setRange(first / std::sqrt(2.0), last * std::sqrt(2.0));
}

}  // namespace

nlohmann::json EfficiencyViewSettings::to_json() const {
    nlohmann::json m = nlohmann::json::array();
    for (const auto& c : models)
        m.push_back({{"arch", c.arch},
                     {"layers", c.layers},
                     {"d_model", c.d_model},
                     {"intermediate", c.intermediate},
                     {"state", c.state}});
    return {{"models", m},
            {"lengths", lengths},
            {"forward_backward", forward_backward},
            {"timings", timings.toStdString()}};
}

EfficiencyViewSettings EfficiencyViewSettings::from_json(const nlohmann::json& j) {
    EfficiencyViewSettings s;
    // Every value checked for its type and range, named by its place: a wrong type reached
    // nlohmann's own message ("[json.exception.type_error.306] cannot use value() with number").
    if (j.contains("models")) {
        if (!j["models"].is_array()) throw FormatError("settings.models is not a list");
        s.models.clear();
        for (std::size_t i = 0; i < j["models"].size(); ++i) {
            const auto& m = j["models"][i];
            const std::string at = "settings.models[" + std::to_string(i) + "]";
            if (!m.is_object()) throw FormatError(at + " is not an object");
            if (m.contains("arch") && !m["arch"].is_string())
                throw FormatError(at + ".arch is not a string");
            try {
                s.models.push_back({m.value("arch", "bigs"), setting_int(m, "layers", 23, 1, 10000),
                                    setting_int(m, "d_model", 1024, 1, 1 << 20),
                                    setting_int(m, "intermediate", 0, 0, 1 << 22),
                                    setting_int(m, "state", 64, 0, 1 << 16)});
            } catch (const FormatError& e) {  // "settings.KEY: …" → "settings.models[i].KEY: …"
                throw FormatError(at + std::string(e.what()).substr(8));
            }
        }
    }
    if (j.contains("lengths")) {
        const auto& l = j["lengths"];
        if (!l.is_array()) throw FormatError("settings.lengths is not a list");
        s.lengths.clear();
        for (std::size_t i = 0; i < l.size(); ++i) {
            if (!l[i].is_number_integer() || l[i].get<std::int64_t>() < 1 ||
                l[i].get<std::int64_t>() > (std::int64_t{1} << 24))
                throw FormatError("settings.lengths[" + std::to_string(i) + "]: " + l[i].dump() +
                                  " is not a whole number in [1, 16777216]");
            s.lengths.push_back(l[i].get<qint64>());
        }
    }
    if (j.contains("forward_backward") && !j["forward_backward"].is_boolean())
        throw FormatError("settings.forward_backward is not true or false");
    s.forward_backward = j.value("forward_backward", false);
    if (j.contains("timings") && !j["timings"].is_string())
        throw FormatError("settings.timings is not a string (a file name)");
    s.timings = QString::fromStdString(j.value("timings", ""));
    return s;
}

EfficiencyView::EfficiencyView(EfficiencyViewSettings settings, QWidget* parent)
    : AnalysisView("efficiency", parent), settings_(std::move(settings)) {
    chart_ = make_chart_view(tr("FLOPs per sequence"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_);
    time_chart_ = make_chart_view(tr("Measured time per sequence"), figure_);
    time_chart_->hide();
    fl->addWidget(time_chart_);
    table_ = new QTableWidget(this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(status_);
    layout->addWidget(figure_, 3);
    layout->addWidget(table_, 1);
}

QString EfficiencyView::input_stem() const {
    QStringList names;
    for (const auto& m : settings_.models)
        names << QString::fromStdString(m.arch);
    return names.join("-");
}

void EfficiencyView::restore_settings(const nlohmann::json& j) {
    settings_ = EfficiencyViewSettings::from_json(j);
    start();
}

void EfficiencyView::start() {
    const auto s = settings_;
    struct Out {
        std::vector<analysis::FlopResult> flops;
        std::optional<analysis::ForwardTimings> timings;
    };
    run<Out>(
        tr("Counting FLOPs"),
        [s](AnalysisSteps& steps) {
            Out out;
            const std::vector<std::int64_t> lengths(s.lengths.begin(), s.lengths.end());
            steps.set_total(static_cast<int>(s.models.size()) + 1);
            for (const auto& m : s.models) {
                out.flops.push_back(analysis::flop_model(m, lengths));
                steps.done(static_cast<int>(out.flops.size()));
            }
            if (!s.timings.isEmpty())
                out.timings = analysis::read_forward_timings(s.timings.toStdString());
            return out;
        },
        [this](Out& r) {
            results_ = std::move(r.flops);
            timings_ = std::move(r.timings);
            redraw();
        });
}

namespace {
// Both charts' axes: the sequence length in powers of two against a quantity in decades.
std::pair<QLogValueAxis*, QLogValueAxis*> length_axes(QChart* chart, const char* y_format,
                                                      const QString& y_title) {
    auto* ax = new QLogValueAxis(chart);
    ax->setBase(2);
    ax->setLabelFormat("%d");
    ax->setTitleText(QObject::tr("sequence length L"));
    auto* ay = new QLogValueAxis(chart);
    ay->setBase(10);
    ay->setLabelFormat(y_format);
    ay->setTitleText(y_title);
    return {ax, ay};
}
}  // namespace

void EfficiencyView::redraw() {
    clear_chart(chart_);
    QChart* chart = chart_->chart();
    const auto [ax, ay] =
        length_axes(chart, "%.0e",
                    settings_.forward_backward ? tr("FLOPs, forward + backward (≈ 3 × forward)")
                                               : tr("FLOPs, forward"));
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    double lo = INFINITY, hi = 0;
    for (std::size_t model = 0; model < results_.size(); ++model) {
        const auto& r = results_[model];
        auto* s = new QLineSeries();
        style_as_model(s, model);  // the models in their order, as in every view
        s->setName(QString("%1 (%2 layers, d = %3)")
                       .arg(QString::fromStdString(r.config.arch))
                       .arg(r.config.layers)
                       .arg(r.config.d_model));
        for (const auto& row : r.rows) {
            const double y = settings_.forward_backward ? row.forward_backward : row.forward;
            s->append(static_cast<double>(row.length), y);
            lo = std::min(lo, y);
            hi = std::max(hi, y);
        }
        s->setPointsVisible(true);
        chart->addSeries(s);
        s->attachAxis(ax);
        s->attachAxis(ay);
    }
    if (!settings_.lengths.empty())
        set_length_range(ax, static_cast<double>(settings_.lengths.front()),
                         static_cast<double>(settings_.lengths.back()));
    // FLOPs in e-notation: widened to whole decades rather than labelled in octaves.
    if (hi > 0) set_labelled_log_range(ay, lo / 2, hi * 2, /*octaves=*/false);
    chart->setTitle(tr("FLOPs per sequence against L (2 FLOPs per multiply-accumulate)"));
    draw_timings();
    show_table(table_, figure_table());
}

void EfficiencyView::draw_timings() {
    clear_chart(time_chart_);
    time_chart_->setVisible(timings_.has_value());
    if (!timings_) return;
    QChart* chart = time_chart_->chart();
    const auto [ax, ay] = length_axes(chart, "%g", tr("measured time per sequence (ms, forward)"));
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    double lo = INFINITY, hi = 0, lmin = INFINITY, lmax = 0;
    // In the order of the FLOP chart's models, so that one architecture has one colour in both.
    std::vector<const analysis::ForwardTimingSeries*> order;
    for (const auto& t : timings_->series)
        order.push_back(&t);
    const auto rank = [this](const std::string& arch) {
        for (std::size_t i = 0; i < settings_.models.size(); ++i)
            if (settings_.models[i].arch == arch) return i;
        return settings_.models.size();
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](const auto* a, const auto* b) { return rank(a->arch) < rank(b->arch); });
    for (std::size_t model = 0; model < order.size(); ++model) {
        const auto& t = *order[model];
        auto* s = new QLineSeries();
        style_as_model(s, model);
        s->setName(QString::fromStdString(t.arch));
        for (std::size_t i = 0; i < t.lengths.size(); ++i) {
            if (!(t.ms[i] > 0)) continue;  // a log axis cannot show 0
            s->append(static_cast<double>(t.lengths[i]), t.ms[i]);
            lo = std::min(lo, t.ms[i]);
            hi = std::max(hi, t.ms[i]);
            lmin = std::min(lmin, static_cast<double>(t.lengths[i]));
            lmax = std::max(lmax, static_cast<double>(t.lengths[i]));
        }
        s->setPointsVisible(true);
        chart->addSeries(s);
        s->attachAxis(ax);
        s->attachAxis(ay);
    }
    if (lmax > 0) set_length_range(ax, lmin, lmax);
    // Times within two decades (4 to 25 ms) are labelled in octaves: 4, 8, 16, 32.
    if (hi > 0) set_labelled_log_range(ay, lo / 2, hi * 2, /*octaves=*/true);
    chart->setTitle(
        timings_->crossover > 0
            ? tr("Measured time against L (crossover at L = %1)").arg(timings_->crossover)
            : tr("Measured time against L (no crossover in the lengths run)"));
}

analysis::CsvTable EfficiencyView::figure_table() const {
    analysis::CsvTable out;
    for (const auto& r : results_)
        append_rows(out, r.table());
    if (!timings_) return out;
    // The measured time beside the count of the same architecture and length (empty where the
    // timings file has no such point).
    out.columns.push_back("measured_ms");
    for (auto& row : out.rows) {
        const double ms = timings_->ms_at(row[0].get<std::string>(), row[3].get<std::int64_t>());
        row.push_back(std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json());
    }
    return out;
}

nlohmann::json EfficiencyView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results_)
        out.push_back(r.provenance.to_json());
    if (timings_) out.push_back(timings_->provenance.to_json());
    return out;
}

}  // namespace routescope::views
