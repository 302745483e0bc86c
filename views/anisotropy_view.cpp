#include "views/anisotropy_view.hpp"

#include "analysis/cached_analyses.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <array>
#include <stdexcept>
#include <string>

#include "views/chart_panel.hpp"
#include "views/result_table.hpp"

#include "views/display_name.hpp"

namespace routescope::views {

nlohmann::json AnisotropyViewSettings::to_json() const {
    nlohmann::json d = nlohmann::json::array();
    for (const auto& p : dumps)
        d.push_back(p.toStdString());
    return {{"dumps", d}, {"layer", layer}, {"m", m}, {"centred", centred}, {"seed", seed}};
}

AnisotropyViewSettings AnisotropyViewSettings::from_json(const nlohmann::json& j) {
    AnisotropyViewSettings s;
    s.dumps = setting_strings(j, "dumps", s.dumps);
    s.layer = setting_as_int(j, "layer", s.layer);
    s.m = setting_as_int64(j, "m", s.m);
    s.centred = setting_bool(j, "centred", s.centred);
    s.seed = setting_as_uint64(j, "seed", s.seed);
    return s;
}

AnisotropyView::AnisotropyView(AnisotropyViewSettings settings, QWidget* parent)
    : AnalysisView("anisotropy", parent), settings_(std::move(settings)) {
    layer_box_ = new QComboBox(this);
    layer_box_->setObjectName("layer");
    layer_box_->setToolTip(tr("Layer shown in the histograms (all dumps)"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Layer:"), this));
    controls->addWidget(layer_box_);
    controls->addStretch(1);
    token_ = make_chart_view(tr("Token vectors: cos(h_i, h_j)"), figure_);
    sentence_ = make_chart_view(tr("Sentence vectors: cos(s_i, s_j)"), figure_);
    auto* charts = new QHBoxLayout(figure_);
    charts->setContentsMargins(0, 0, 0, 0);
    charts->addWidget(token_);
    charts->addWidget(sentence_);
    summary_ = new QTableWidget(this);
    summary_->setObjectName("summary");
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 3);
    layout->addWidget(summary_, 1);
    connect(layer_box_, &QComboBox::currentIndexChanged, this, [this] {
        if (layer_box_->currentIndex() >= 0)
            edit(tr("layer"), [this] { select_layer(layer_box_->currentData().toInt()); });
    });
}

QString AnisotropyView::title() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << display_name(d);
    return tr("Anisotropy — %1").arg(names.join(" | "));
}

QStringList AnisotropyView::input_files() const {
    return settings_.dumps;
}

QString AnisotropyView::input_stem() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << file_stem(d);
    return names.join("-vs-");
}

void AnisotropyView::restore_settings(const nlohmann::json& j) {
    const auto s = AnisotropyViewSettings::from_json(j);
    const bool rerun = s.dumps != settings_.dumps || s.m != settings_.m ||
                       s.centred != settings_.centred || s.seed != settings_.seed;
    settings_ = s;
    if (rerun && has_result())
        start();
    else
        redraw();
}

void AnisotropyView::start() {
    const auto s = settings_;
    using Out = std::pair<std::vector<int>,
                          std::vector<std::vector<std::array<analysis::AnisotropyResult, 2>>>>;
    run<Out>(
        tr("Computing anisotropy of %n dump(s)", nullptr, static_cast<int>(s.dumps.size())),
        [s](AnalysisSteps& steps) {
            std::vector<std::unique_ptr<analysis::DumpReader>> readers;
            for (const auto& p : s.dumps)
                readers.push_back(std::make_unique<analysis::DumpReader>(p.toStdString()));
            if (readers.empty()) throw routescope::ConfigError("no dump to analyse");
            // As `analyze anisotropy` says it: a dump without /layers drew empty panels and
            // wrote a CSV of one empty line.
            for (const auto& r : readers)
                if (r->layers().empty())
                    throw routescope::ConfigError(r->path() +
                                                  ": the dump has no layers to analyse");
            // Layers every dump has, so the overlay compares like with like.
            std::vector<int> layers;
            for (int l : readers[0]->layers()) {
                bool everywhere = true;
                for (const auto& r : readers)
                    everywhere = everywhere && r->has_layer(l);
                if (everywhere) layers.push_back(l);
            }
            Out out{layers, {}};
            steps.set_total(static_cast<int>(readers.size() * layers.size()));
            int done = 0;
            for (const auto& r : readers) {
                out.second.emplace_back();
                for (int l : layers) {
                    std::array<analysis::AnisotropyResult, 2> pair;
                    for (int sentence = 0; sentence < 2; ++sentence) {
                        analysis::AnisotropyOptions o;
                        o.layer = l;
                        o.sentence_vectors = sentence == 1;
                        o.m = s.m;
                        o.centred = s.centred;
                        o.seed = s.seed;
                        pair[static_cast<std::size_t>(sentence)] =
                            *analysis::cached_anisotropy(*r, o);
                    }
                    out.second.back().push_back(std::move(pair));
                    steps.done(++done);
                }
            }
            return out;
        },
        [this](Out& out) {
            // A layer the settings name (a project's) that the dumps lack is the view's error
            // (docs/formats/project.md: settings that cannot be applied), as the kernels and
            // gates views say it, not the last layer drawn in its place.
            const std::vector<int>& layers = out.first;
            if (settings_.layer >= 0 &&
                std::find(layers.begin(), layers.end(), settings_.layer) == layers.end()) {
                const bool one = settings_.dumps.size() == 1;
                const std::string files =
                    settings_.dumps.join(settings_.dumps.size() > 2 ? ", " : " and ").toStdString();
                const std::string range = layers.empty() ? std::string("none")
                                                         : std::to_string(layers.front()) + " … " +
                                                               std::to_string(layers.back());
                throw std::runtime_error(
                    "settings.layer: " + std::to_string(settings_.layer) + " is not a layer of " +
                    files + (one ? " (its layers: " : " (the layers all of them have: ") + range +
                    ")");
            }
            layers_ = out.first;
            results_ = std::move(out.second);
            if (std::find(layers_.begin(), layers_.end(), settings_.layer) == layers_.end())
                settings_.layer = layers_.empty() ? -1 : layers_.back();
            {
                QSignalBlocker block(layer_box_);
                layer_box_->clear();
                for (int l : layers_)
                    layer_box_->addItem(tr("layer %1").arg(l), l);
            }
            redraw();
        });
}

void AnisotropyView::select_layer(int layer) {
    settings_.layer = layer;
    redraw();
}

void AnisotropyView::redraw() {
    clear_chart(token_);
    clear_chart(sentence_);
    const auto it = std::find(layers_.begin(), layers_.end(), settings_.layer);
    if (it == layers_.end()) return;
    const auto li = static_cast<std::size_t>(it - layers_.begin());
    {
        QSignalBlocker block(layer_box_);
        layer_box_->setCurrentIndex(static_cast<int>(li));
    }
    for (std::size_t d = 0; d < results_.size(); ++d)
        for (int kind = 0; kind < 2; ++kind) {
            const auto& r = results_[d][li][static_cast<std::size_t>(kind)];
            const auto& h = r.stats.histogram;
            // Fraction of pairs per bin over [−1, 1] (bins of equal width): comparable across M.
            std::vector<double> x, y;
            const double w = 2.0 / std::max<std::size_t>(1, h.size());
            for (std::size_t i = 0; i < h.size(); ++i) {
                x.push_back(-1 + (i + 0.5) * w);
                y.push_back(r.stats.pairs
                                ? static_cast<double>(h[i]) / static_cast<double>(r.stats.pairs)
                                : 0.0);
            }
            QChartView* chart = kind == 0 ? token_ : sentence_;
            const QString dump = settings_.dumps.value(static_cast<int>(d));
            style_as_model_of(
                add_line(chart,
                         tr("%1 (mean %2)").arg(display_stem(dump)).arg(r.stats.mean, 0, 'f', 3), x,
                         y),
                dump);
        }
    for (QChartView* c : {token_, sentence_}) {
        x_axis(c, tr("cosine"));
        y_axis(c, tr("fraction of pairs"));
        fit_axes(c);
        x_axis(c)->setRange(-1, 1);
    }
    token_->chart()->setTitle(
        tr("Layer %1, token vectors (one random token per sentence)").arg(settings_.layer));
    sentence_->chart()->setTitle(tr("Layer %1, sentence vectors").arg(settings_.layer));

    analysis::CsvTable summary;
    summary.columns = {"model",     "layer",        "vectors", "source", "M",
                       "pairs",     "mean",         "median",  "std",    "fraction_negative",
                       "mean_norm", "pc1_variance", "isotropy"};
    for (std::size_t d = 0; d < results_.size(); ++d)
        for (std::size_t l = 0; l < layers_.size(); ++l)
            for (int kind = 0; kind < 2; ++kind) {
                const auto& r = results_[d][l][static_cast<std::size_t>(kind)];
                summary.rows.push_back(
                    {display_stem(settings_.dumps.value(static_cast<int>(d))).toStdString(),
                     layers_[l], kind ? "sentence" : "token", r.vector_source, r.m_used,
                     r.stats.pairs, r.stats.mean, r.stats.median, r.stats.std,
                     r.stats.fraction_negative, r.stats.mean_norm, r.stats.pc1_variance,
                     r.stats.isotropy});
            }
    show_table(summary_, summary);
}

analysis::CsvTable AnisotropyView::figure_table() const {
    analysis::CsvTable out;
    const auto it = std::find(layers_.begin(), layers_.end(), settings_.layer);
    if (it == layers_.end()) return out;
    const auto li = static_cast<std::size_t>(it - layers_.begin());
    for (std::size_t d = 0; d < results_.size(); ++d)
        for (int kind = 0; kind < 2; ++kind)
            append_rows(
                out,
                with_keys(results_[d][li][static_cast<std::size_t>(kind)].table(),
                          {"model", "vectors"},
                          {display_stem(settings_.dumps.value(static_cast<int>(d))).toStdString(),
                           kind ? "sentence" : "token"}));
    return out;
}

nlohmann::json AnisotropyView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    const auto it = std::find(layers_.begin(), layers_.end(), settings_.layer);
    if (it == layers_.end()) return out;
    const auto li = static_cast<std::size_t>(it - layers_.begin());
    for (const auto& d : results_)
        for (const auto& r : d[li])
            out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
