#include "views/pca_view.hpp"

#include "analysis/cached_analyses.hpp"

#include <QChartView>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/chart_panel.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json PcaViewSettings::to_json() const {
    return {{"dump", dump.toStdString()}, {"energy", energy}, {"max_sentences", max_sentences}};
}

PcaViewSettings PcaViewSettings::from_json(const nlohmann::json& j) {
    PcaViewSettings s;
    s.dump = QString::fromStdString(j.value("dump", ""));
    s.energy = j.value("energy", s.energy);
    s.max_sentences = j.value("max_sentences", s.max_sentences);
    return s;
}

PcaView::PcaView(PcaViewSettings settings, QWidget* parent)
    : AnalysisView("pca", parent), settings_(std::move(settings)) {
    chart_ = make_chart_view(tr("Mean cumulative explained variance"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_);
    table_ = new QTableWidget(this);
    table_->setObjectName("kTable");
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(status_);
    layout->addWidget(table_, 2);
    layout->addWidget(figure_, 3);
}

QString PcaView::title() const {
    return tr("PCA — %1").arg(QFileInfo(settings_.dump).fileName());
}
QString PcaView::input_stem() const {
    return QFileInfo(settings_.dump).baseName();
}

void PcaView::restore_settings(const nlohmann::json& j) {
    const auto s = PcaViewSettings::from_json(j);
    const bool rerun = s.to_json() != settings_.to_json();
    settings_ = s;
    if (rerun && has_result())
        start();
    else
        redraw();
}

void PcaView::start() {
    const auto s = settings_;
    run<std::vector<analysis::PcaResult>>(
        tr("Computing PCA redundancy of %1").arg(QFileInfo(s.dump).fileName()),
        [s](AnalysisSteps& steps) {
            const analysis::DumpReader dump(s.dump.toStdString());
            const auto layers = dump.layers();
            std::vector<analysis::PcaResult> out;
            steps.set_total(static_cast<int>(layers.size()));
            for (int l : layers) {
                analysis::PcaOptions o;
                o.layer = l;
                o.energy = s.energy;
                o.max_sentences = s.max_sentences;
                out.push_back(*analysis::cached_pca_redundancy(dump, o));
                steps.done(static_cast<int>(out.size()));
            }
            return out;
        },
        [this](std::vector<analysis::PcaResult>& r) {
            results_ = std::move(r);
            redraw();
        });
}

void PcaView::redraw() {
    clear_chart(chart_);
    for (const auto& r : results_) {
        std::vector<double> k;
        for (std::size_t i = 0; i < r.mean_curve.size(); ++i)
            k.push_back(static_cast<double>(i + 1));
        add_line(chart_, tr("layer %1").arg(r.options.layer), k, r.mean_curve);
    }
    x_axis(chart_, tr("components k"));
    y_axis(chart_, settings_.energy ? tr("explained energy (σ)") : tr("explained variance (σ²)"));
    fit_axes(chart_);
    y_axis(chart_)->setRange(0, 1);
    show_table(table_, figure_table());
}

analysis::CsvTable PcaView::figure_table() const {
    analysis::CsvTable out;
    for (const auto& r : results_)
        append_rows(out, r.table());
    return out;
}

nlohmann::json PcaView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results_)
        out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
