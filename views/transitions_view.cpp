#include "views/transitions_view.hpp"

#include "analysis/cached_analyses.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "views/chart_panel.hpp"
#include "views/display_name.hpp"
#include "views/heatmap_widget.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json TransitionsViewSettings::to_json() const {
    nlohmann::json d = nlohmann::json::array();
    for (const auto& p : dumps)
        d.push_back(p.toStdString());
    return {{"dumps", d},
            {"measure", measure.toStdString()},
            {"max_sentences", max_sentences},
            {"x", x.toStdString()}};
}

TransitionsViewSettings TransitionsViewSettings::from_json(const nlohmann::json& j) {
    TransitionsViewSettings s;
    s.dumps = setting_strings(j, "dumps", s.dumps);
    s.measure = setting_choice(j, "measure", s.measure, {"relative", "l2", "angle", "positions"});
    s.max_sentences = setting_as_int64(j, "max_sentences", s.max_sentences);
    s.x = setting_choice(j, "x", s.x, {"layer", "depth"});
    return s;
}

namespace {
double measure_of(const analysis::TransitionStats& s, const QString& measure) {
    if (measure == "l2") return s.l2;
    if (measure == "angle") return s.angle_degrees;
    return s.relative;
}

/// "1–3, 5": the layers, runs of consecutive ones as ranges.
QString layer_ranges(const std::vector<int>& layers) {
    QStringList parts;
    for (std::size_t i = 0; i < layers.size();) {
        std::size_t j = i;
        while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1)
            ++j;
        parts << (j == i ? QString::number(layers[i])
                         : QStringLiteral("%1–%2").arg(layers[i]).arg(layers[j]));
        i = j + 1;
    }
    return parts.join(", ");
}

/// Why the measure has no value at some layers of one model, for the figure (an empty chart, or a
/// curve with gaps, said nothing: the relative change and the angle of a zero layer are null,
/// analysis/transitions.cpp); empty when every layer has one. The norm-0 case is the usual one;
/// layers that share no stored example have no vector at all.
QString undefined_note(const analysis::TransitionsResult& r, const QString& measure) {
    if (measure != "relative" && measure != "angle") return {};  // the L2 change always has one
    const QString what = measure == "angle" ? QObject::tr("the angle is undefined")
                                            : QObject::tr("the relative change is undefined");
    QStringList lines;
    for (const bool zero : {true, false}) {
        // Each vector kind's layers with no value; one line when the kinds agree.
        std::vector<int> layers[2];
        for (const auto& row : r.layers) {
            const analysis::TransitionStats* kinds[2] = {&row.tokens, &row.sentences};
            for (int k = 0; k < 2; ++k)
                if (!std::isfinite(measure_of(*kinds[k], measure)) && (kinds[k]->count > 0) == zero)
                    layers[k].push_back(row.layer);
        }
        const auto line = [&](const std::vector<int>& ls, const QString& vectors) {
            if (ls.empty()) return;
            const QString where = ls.size() == 1
                                      ? QObject::tr("layer ℓ = %1").arg(ls.front())
                                      : QObject::tr("layers ℓ = %1").arg(layer_ranges(ls));
            lines << (zero ? QObject::tr("%1: every %2 vector has norm 0 in layer ℓ or ℓ − 1, so "
                                         "%3 (not drawn)")
                           : QObject::tr("%1: no %2 vector to compare, so %3 (not drawn)"))
                         .arg(where, vectors, what);
        };
        if (layers[0] == layers[1]) {
            line(layers[0], QObject::tr("token and sentence"));
        } else {
            line(layers[0], QObject::tr("token"));
            line(layers[1], QObject::tr("sentence"));
        }
    }
    return lines.join("; ");
}

}  // namespace

TransitionsView::TransitionsView(TransitionsViewSettings settings, QWidget* parent)
    : AnalysisView("transitions", parent), settings_(std::move(settings)) {
    measure_box_ = new QComboBox(this);
    measure_box_->setObjectName("measure");
    measure_box_->addItem(tr("‖Δh‖ / ‖h^(ℓ−1)‖"), "relative");
    measure_box_->addItem(tr("‖h^(ℓ) − h^(ℓ−1)‖₂"), "l2");
    measure_box_->addItem(tr("angle (degrees)"), "angle");
    measure_box_->addItem(tr("step × position heatmap (‖Δh_t‖₂)"), "positions");
    x_box_ = new QComboBox(this);
    x_box_->setObjectName("xAxis");
    x_box_->addItem(tr("layer ℓ"), "layer");
    x_box_->addItem(tr("relative depth ℓ / n_layers"), "depth");
    x_box_->setToolTip(tr("Relative depth aligns models of different depth"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Measure:"), this));
    controls->addWidget(measure_box_);
    controls->addWidget(new QLabel(tr("Along:"), this));
    controls->addWidget(x_box_);
    controls->addStretch(1);
    chart_ = make_chart_view(tr("Layer transitions"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_);
    position_map_ = new HeatmapWidget(figure_);
    position_map_->setObjectName("stepPositionChange");
    position_map_->hide();
    fl->addWidget(position_map_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    measure_box_->setCurrentIndex(std::max(0, measure_box_->findData(settings_.measure)));
    connect(measure_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("measure"), [this] { set_measure(measure_box_->currentData().toString()); });
    });
    x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
    connect(x_box_, &QComboBox::currentIndexChanged, this,
            [this] { edit(tr("x axis"), [this] { set_x(x_box_->currentData().toString()); }); });
}

QString TransitionsView::title() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << QFileInfo(d).fileName();
    return tr("Transitions — %1").arg(names.join(" | "));
}

QStringList TransitionsView::input_files() const {
    return settings_.dumps;
}

QString TransitionsView::input_stem() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << file_stem(d);
    return names.join("-vs-");
}

void TransitionsView::restore_settings(const nlohmann::json& j) {
    const auto s = TransitionsViewSettings::from_json(j);
    const bool rerun = s.dumps != settings_.dumps || s.max_sentences != settings_.max_sentences;
    settings_ = s;
    {
        QSignalBlocker block(measure_box_);
        measure_box_->setCurrentIndex(std::max(0, measure_box_->findData(settings_.measure)));
    }
    {
        QSignalBlocker block(x_box_);
        x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
    }
    if (rerun && has_result())
        start();
    else
        redraw();
}

void TransitionsView::start() {
    const auto s = settings_;
    struct Out {
        std::vector<analysis::TransitionsResult> results;
        std::vector<std::int64_t> n_layers;
    };
    run<Out>(
        tr("Computing layer transitions"),
        [s](AnalysisSteps& steps) {
            Out out;
            steps.set_total(static_cast<int>(s.dumps.size()));
            for (const auto& p : s.dumps) {
                const analysis::DumpReader dump(p.toStdString());
                analysis::TransitionsOptions o;
                o.max_sentences = s.max_sentences;
                out.results.push_back(*analysis::cached_layer_transitions(dump, o));
                out.n_layers.push_back(dump.n_layers());
                steps.done(static_cast<int>(out.results.size()));
            }
            return out;
        },
        [this](Out& r) {
            results_ = std::move(r.results);
            n_layers_ = std::move(r.n_layers);
            redraw();
        });
}

void TransitionsView::set_measure(const QString& measure) {
    settings_.measure = measure;
    redraw();
}

void TransitionsView::set_x(const QString& x) {
    settings_.x = x;
    {
        QSignalBlocker block(x_box_);
        x_box_->setCurrentIndex(std::max(0, x_box_->findData(x)));
    }
    redraw();
}

void TransitionsView::redraw() {
    const bool positions = settings_.measure == "positions";
    chart_->setVisible(!positions);
    position_map_->setVisible(positions);
    if (positions) return draw_positions();
    clear_chart(chart_);
    const bool depth = settings_.x == "depth";
    double x_lo = INFINITY, x_hi = -INFINITY;  // the layers, drawn or not
    bool drawn = false;
    for (std::size_t d = 0; d < results_.size(); ++d) {
        const QString dump = settings_.dumps.value(static_cast<int>(d));
        const QString name = display_stem(dump);
        const double n = d < n_layers_.size() && n_layers_[d] > 0 ? double(n_layers_[d]) : 1.0;
        std::vector<double> x, tok, sen;
        for (const auto& row : results_[d].layers) {
            x.push_back(depth ? row.layer / n : row.layer);
            tok.push_back(measure_of(row.tokens, settings_.measure));
            sen.push_back(measure_of(row.sentences, settings_.measure));
            x_lo = std::min(x_lo, x.back());
            x_hi = std::max(x_hi, x.back());
            drawn = drawn || std::isfinite(tok.back()) || std::isfinite(sen.back());
        }
        // The model's colour, sentences dashed (or, one layer, squares beside circles).
        add_marked_curve(chart_, tr("%1 tokens").arg(name), x, tok, dump, false);
        add_marked_curve(chart_, tr("%1 sentences").arg(name), x, sen, dump, true);
    }
    x_axis(chart_, depth ? tr("relative depth ℓ / n_layers") : tr("layer ℓ"));
    y_axis(chart_, measure_box_->currentText());
    // Layer numbers before the fit, so it ends the axis at the last layer (chart_panel.cpp);
    // relative depth after it (its fixed quarter steps).
    if (!depth) set_layer_ticks(x_axis(chart_), false);
    fit_axes(chart_);
    // Nothing drawn (the measure undefined at every layer): the x axis still spans the layers the
    // note names, not 0 to 1.
    if (!drawn && x_lo <= x_hi)
        x_axis(chart_)->setRange(x_lo < x_hi ? x_lo : x_lo - 0.5, x_lo < x_hi ? x_hi : x_hi + 0.5);
    if (depth) set_layer_ticks(x_axis(chart_), true);
    // Under the title (which the figure wraps and draws), a line per model whose measure is
    // undefined somewhere; compared, named by the model (a legend of curves with no line
    // otherwise said nothing).
    QString title = tr("Layer transitions: %1").arg(measure_box_->currentText()).toHtmlEscaped();
    for (std::size_t d = 0; d < results_.size(); ++d) {
        const QString note = undefined_note(results_[d], settings_.measure);
        if (note.isEmpty()) continue;
        const QString line =
            results_.size() > 1
                ? tr("%1 — %2").arg(display_stem(settings_.dumps.value(static_cast<int>(d))), note)
                : note;
        title += "<br>" + line.toHtmlEscaped();
    }
    chart_->chart()->setTitle(title);
}

void TransitionsView::draw_positions() {
    HeatmapData d;
    if (results_.empty() || results_.front().layers.empty()) {
        position_map_->set_data(d);
        return;
    }
    const auto& layers = results_.front().layers;
    // Columns up to the last position some example reaches.
    int columns = 0;
    for (const auto& row : layers)
        for (std::size_t t = 0; t < row.position_count.size(); ++t)
            if (row.position_count[t] > 0) columns = std::max(columns, static_cast<int>(t) + 1);
    d.rows = static_cast<int>(layers.size());
    d.columns = columns;
    for (const auto& row : layers) {
        d.row_labels << (row.from_layer == row.layer - 1
                             ? QString::number(row.layer)
                             : tr("%1←%2").arg(row.layer).arg(row.from_layer));
        for (int t = 0; t < columns; ++t)
            d.values.push_back(row.position_l2[static_cast<std::size_t>(t)]);
    }
    const QString name = display_stem(settings_.dumps.value(0));
    const bool slstm = results_.front().arch == "slstm";
    d.title = tr("%1: ‖h^(ℓ)_t − h^(ℓ−1)_t‖₂, mean over examples").arg(name);
    d.x_label = tr("position t");
    d.y_label = slstm ? tr("recurrent step ℓ") : tr("layer ℓ");
    d.value_label = tr("mean ‖Δh_t‖₂");
    if (results_.size() > 1) d.note = tr("heatmap of the first dump only");
    position_map_->set_data(d);
}

analysis::CsvTable TransitionsView::figure_table() const {
    analysis::CsvTable out;
    for (std::size_t d = 0; d < results_.size(); ++d)
        append_rows(
            out, with_keys(results_[d].table(), {"model", "n_layers"},
                           {display_stem(settings_.dumps.value(static_cast<int>(d))).toStdString(),
                            d < n_layers_.size() ? n_layers_[d] : 0}));
    return out;
}

nlohmann::json TransitionsView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results_)
        out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
