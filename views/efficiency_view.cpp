#include "views/efficiency_view.hpp"

#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/chart_panel.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json EfficiencyViewSettings::to_json() const {
    nlohmann::json m = nlohmann::json::array();
    for (const auto& c : models)
        m.push_back({{"arch", c.arch},
                     {"layers", c.layers},
                     {"d_model", c.d_model},
                     {"intermediate", c.intermediate},
                     {"state", c.state}});
    return {{"models", m}, {"lengths", lengths}, {"forward_backward", forward_backward}};
}

EfficiencyViewSettings EfficiencyViewSettings::from_json(const nlohmann::json& j) {
    EfficiencyViewSettings s;
    if (j.contains("models")) {
        s.models.clear();
        for (const auto& m : j["models"])
            s.models.push_back({m.value("arch", "bigs"), m.value("layers", 23),
                                m.value("d_model", 1024), m.value("intermediate", 0),
                                m.value("state", 64)});
    }
    if (j.contains("lengths")) s.lengths = j["lengths"].get<std::vector<qint64>>();
    s.forward_backward = j.value("forward_backward", false);
    return s;
}

EfficiencyView::EfficiencyView(EfficiencyViewSettings settings, QWidget* parent)
    : AnalysisView("efficiency", parent), settings_(std::move(settings)) {
    chart_ = make_chart_view(tr("FLOPs per sequence"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_);
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
    run<std::vector<analysis::FlopResult>>(
        tr("Counting FLOPs"),
        [s](AnalysisSteps& steps) {
            std::vector<analysis::FlopResult> out;
            const std::vector<std::int64_t> lengths(s.lengths.begin(), s.lengths.end());
            steps.set_total(static_cast<int>(s.models.size()));
            for (const auto& m : s.models) {
                out.push_back(analysis::flop_model(m, lengths));
                steps.done(static_cast<int>(out.size()));
            }
            return out;
        },
        [this](std::vector<analysis::FlopResult>& r) {
            results_ = std::move(r);
            redraw();
        });
}

void EfficiencyView::redraw() {
    clear_chart(chart_);
    QChart* chart = chart_->chart();
    auto* ax = new QLogValueAxis(chart);
    ax->setBase(2);
    ax->setLabelFormat("%d");
    ax->setTitleText(tr("sequence length L"));
    auto* ay = new QLogValueAxis(chart);
    ay->setBase(10);
    ay->setLabelFormat("%.0e");
    ay->setTitleText(settings_.forward_backward ? tr("FLOPs, forward + backward (≈ 3 × forward)")
                                                : tr("FLOPs, forward"));
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    double lo = INFINITY, hi = 0;
    for (const auto& r : results_) {
        auto* s = new QLineSeries();
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
        ax->setRange(static_cast<double>(settings_.lengths.front()),
                     static_cast<double>(settings_.lengths.back()));
    if (hi > 0) ay->setRange(lo / 2, hi * 2);
    chart->setTitle(tr("FLOPs per sequence against L (2 FLOPs per multiply-accumulate)"));
    show_table(table_, figure_table());
}

analysis::CsvTable EfficiencyView::figure_table() const {
    analysis::CsvTable out;
    for (const auto& r : results_)
        append_rows(out, r.table());
    return out;
}

nlohmann::json EfficiencyView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results_)
        out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
