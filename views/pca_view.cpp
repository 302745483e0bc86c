#include "views/pca_view.hpp"

#include "analysis/cached_analyses.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "views/chart_figure.hpp"
#include "views/chart_panel.hpp"
#include "views/colour_map.hpp"
#include "views/result_table.hpp"

#include "views/display_name.hpp"

namespace routescope::views {
namespace {
/// Up to this many curves the legend names each layer; beyond, a colour key names the depths.
constexpr std::size_t kMaxLayerEntries = 8;
}  // namespace

nlohmann::json PcaViewSettings::to_json() const {
    nlohmann::json d = nlohmann::json::array();
    for (const auto& p : dumps)
        d.push_back(p.toStdString());
    return {{"dumps", d},
            {"energy", energy},
            {"max_sentences", max_sentences},
            {"x", x.toStdString()},
            {"p", p}};
}

PcaViewSettings PcaViewSettings::from_json(const nlohmann::json& j) {
    PcaViewSettings s;
    if (j.contains("dumps"))
        s.dumps = setting_strings(j, "dumps", s.dumps);
    else if (j.contains("dump"))  // project files written before compare mode: one model
        s.dumps << setting_string(j, "dump", QString());
    s.energy = setting_bool(j, "energy", s.energy);
    s.max_sentences = setting_as_int64(j, "max_sentences", s.max_sentences);
    s.x = setting_choice(j, "x", s.x, {"layer", "depth"});
    // One of the thresholds the k(p) chart offers (its combo box): "p": 0.95 was drawn as k(0.90)
    // under the title k(0.95).
    if (j.contains("p")) {
        const auto& v = j.at("p");
        const auto offered = analysis::PcaOptions{}.thresholds;
        const auto it = std::find_if(offered.begin(), offered.end(), [&v](double t) {
            return v.is_number() && std::abs(v.get<double>() - t) < 1e-9;
        });
        if (it == offered.end()) {
            std::string list;
            for (double t : offered)
                list += (list.empty() ? "" : ", ") + QString::number(t, 'f', 2).toStdString();
            throw FormatError("settings.p: " + data::abbreviated(v.dump()) +
                              " is not one of the thresholds " + list);
        }
        s.p = *it;
    }
    return s;
}

PcaView::PcaView(PcaViewSettings settings, QWidget* parent)
    : AnalysisView("pca", parent), settings_(std::move(settings)) {
    x_box_ = new QComboBox(this);
    x_box_->setObjectName("xAxis");
    x_box_->addItem(tr("layer ℓ"), "layer");
    x_box_->addItem(tr("relative depth ℓ / n_layers"), "depth");
    x_box_->setToolTip(tr("Relative depth aligns models of different depth"));
    x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
    p_box_ = new QComboBox(this);
    p_box_->setObjectName("threshold");
    p_box_->setToolTip(tr("The fraction p of the k(p) chart"));
    for (double p : analysis::PcaOptions{}.thresholds)
        p_box_->addItem(QString::number(p, 'f', 2), p);
    auto select_p = [this] {
        int at = 0;
        for (int i = 0; i < p_box_->count(); ++i)
            if (std::abs(p_box_->itemData(i).toDouble() - settings_.p) < 1e-9) at = i;
        p_box_->setCurrentIndex(at);
    };
    select_p();
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("k(p) at p ="), this));
    controls->addWidget(p_box_);
    controls->addWidget(new QLabel(tr("along:"), this));
    controls->addWidget(x_box_);
    controls->addStretch(1);
    chart_ = make_chart_view(tr("Mean cumulative explained variance"), figure_);
    k_chart_ = make_chart_view(tr("Mean k(p) per layer"), figure_);
    k_chart_->setObjectName("kChart");
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_, 3);
    fl->addWidget(k_chart_, 2);
    table_ = new QTableWidget(this);
    table_->setObjectName("kTable");
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(table_, 2);
    layout->addWidget(figure_, 3);
    connect(x_box_, &QComboBox::currentIndexChanged, this,
            [this] { edit(tr("x axis"), [this] { set_x(x_box_->currentData().toString()); }); });
    connect(p_box_, &QComboBox::currentIndexChanged, this,
            [this] { edit(tr("threshold"), [this] { set_p(p_box_->currentData().toDouble()); }); });
}

QString PcaView::model_name(std::size_t m) const {
    return display_stem(settings_.dumps.value(static_cast<int>(m)));
}

QString PcaView::title() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << display_name(d);
    return tr("PCA — %1").arg(names.join(" | "));
}
QStringList PcaView::input_files() const {
    return settings_.dumps;
}

QString PcaView::input_stem() const {
    QStringList names;
    for (const auto& d : settings_.dumps)
        names << file_stem(d);
    return names.join("-vs-");
}

void PcaView::restore_settings(const nlohmann::json& j) {
    const auto s = PcaViewSettings::from_json(j);
    const bool rerun = s.dumps != settings_.dumps || s.energy != settings_.energy ||
                       s.max_sentences != settings_.max_sentences;
    settings_ = s;
    {
        QSignalBlocker block(x_box_);
        x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
    }
    {
        QSignalBlocker block(p_box_);
        for (int i = 0; i < p_box_->count(); ++i)
            if (std::abs(p_box_->itemData(i).toDouble() - settings_.p) < 1e-9)
                p_box_->setCurrentIndex(i);
    }
    if (rerun && has_result())
        start();
    else
        redraw();
}

void PcaView::start() {
    const auto s = settings_;
    struct Out {
        std::vector<std::vector<analysis::PcaResult>> results;
        std::vector<std::int64_t> n_layers;
    };
    QStringList names;
    for (const auto& d : s.dumps)
        names << display_name(d);
    run<Out>(
        tr("Computing PCA redundancy of %1").arg(names.join(", ")),
        [s](AnalysisSteps& steps) {
            Out out;
            std::vector<std::unique_ptr<analysis::DumpReader>> dumps;
            int total = 0;
            for (const auto& p : s.dumps) {
                dumps.push_back(std::make_unique<analysis::DumpReader>(p.toStdString()));
                // As `analyze pca` says it: a dump without /layers drew an empty figure.
                if (dumps.back()->layers().empty())
                    throw routescope::ConfigError(dumps.back()->path() +
                                                  ": the dump has no layers to analyse");
                total += static_cast<int>(dumps.back()->layers().size());
            }
            steps.set_total(total);
            int done = 0;
            for (const auto& dump : dumps) {
                out.results.emplace_back();
                out.n_layers.push_back(dump->n_layers());
                for (int l : dump->layers()) {
                    analysis::PcaOptions o;
                    o.layer = l;
                    o.energy = s.energy;
                    o.max_sentences = s.max_sentences;
                    out.results.back().push_back(*analysis::cached_pca_redundancy(*dump, o));
                    steps.done(++done);
                }
            }
            return out;
        },
        [this](Out& r) {
            results_ = std::move(r.results);
            n_layers_ = std::move(r.n_layers);
            redraw();
        });
}

void PcaView::set_x(const QString& x) {
    settings_.x = x;
    {
        QSignalBlocker block(x_box_);
        x_box_->setCurrentIndex(std::max(0, x_box_->findData(x)));
    }
    redraw();
}

void PcaView::set_p(double p) {
    settings_.p = p;
    {
        QSignalBlocker block(p_box_);
        for (int i = 0; i < p_box_->count(); ++i)
            if (std::abs(p_box_->itemData(i).toDouble() - p) < 1e-9) p_box_->setCurrentIndex(i);
    }
    redraw();
}

void PcaView::redraw() {
    clear_chart(chart_);
    clear_chart(k_chart_);
    const bool several = results_.size() > 1;
    // Layers differ in colour, on a sequential map ordered by depth (viridis up to 0.9: its
    // last tenth is too light on white), models in line style (solid, dashed, dotted, ...).
    // Session 28: the layers took Qt's five theme colours in turn, so a 24-layer model's
    // layers 0, 5, 10, 15 and 20 shared one.
    const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                   Qt::DashDotDotLine};
    constexpr double kDeepest = 0.9;
    std::size_t curves = 0;
    bool same_depth = true;
    int first_layer = std::numeric_limits<int>::max(), last_layer = 0;
    for (std::size_t m = 0; m < results_.size(); ++m) {
        curves += results_[m].size();
        same_depth =
            same_depth && (m == 0 || (m < n_layers_.size() && n_layers_[m] == n_layers_[0]));
        for (const auto& r : results_[m]) {
            first_layer = std::min(first_layer, r.options.layer);
            last_layer = std::max(last_layer, r.options.layer);
        }
    }
    // Models of different depths share the colour of a relative depth ℓ / n_layers.
    const bool by_depth = several && !same_depth;
    // One legend entry per layer while there are few; else a key of the colours, and in compare
    // mode one entry per model (its line style).
    const bool keyed = several || curves > kMaxLayerEntries;
    auto position = [&](std::size_t m, int layer) {
        if (by_depth) {
            const double n =
                m < n_layers_.size() && n_layers_[m] > 0 ? static_cast<double>(n_layers_[m]) : 1;
            return std::clamp(layer / n, 0.0, 1.0);
        }
        return last_layer > first_layer
                   ? static_cast<double>(layer - first_layer) / (last_layer - first_layer)
                   : 0.0;
    };
    for (std::size_t m = 0; m < results_.size(); ++m) {
        if (several) {  // the model's entry: its line style in a neutral colour
            auto* entry = add_line(chart_, model_name(m), {}, {});
            style_in(entry, QColor(70, 70, 70), styles[m % std::size(styles)]);
        }
        for (std::size_t l = 0; l < results_[m].size(); ++l) {
            const auto& r = results_[m][l];
            std::vector<double> k;
            for (std::size_t i = 0; i < r.mean_curve.size(); ++i)
                k.push_back(static_cast<double>(i + 1));
            const QString name = several ? tr("%1 · ℓ%2").arg(model_name(m)).arg(r.options.layer)
                                         : tr("layer %1").arg(r.options.layer);
            auto* s = add_line(chart_, name, k, r.mean_curve);
            style_in(
                s,
                QColor::fromRgb(ColourMap::viridis().at(kDeepest * position(m, r.options.layer))),
                styles[m % std::size(styles)]);
            if (keyed)
                for (auto* marker : chart_->chart()->legend()->markers(s)) {
                    marker->setVisible(false);
                    marker->setProperty("legendHidden", true);
                }
        }
    }
    ColourKey key;
    if (keyed && curves > 0) {
        key.map = &ColourMap::viridis();
        key.t1 = kDeepest;
        if (by_depth) {
            key.label = tr("relative depth ℓ / n_layers");
            key.lo_text = QStringLiteral("0");
            key.hi_text = QStringLiteral("1");
        } else {
            key.label = tr("layer");
            key.lo_text = QString::number(first_layer);
            key.hi_text = QString::number(last_layer);
        }
    }
    set_colour_key(chart_, key);
    x_axis(chart_, tr("components k"));
    set_integer_ticks(x_axis(chart_));
    y_axis(chart_, settings_.energy ? tr("explained energy (σ)") : tr("explained variance (σ²)"));
    fit_axes(chart_);
    y_axis(chart_)->setRange(0, 1);

    // Mean k(p) of all sentences against layer or relative depth, one line per model.
    const bool depth = settings_.x == "depth";
    for (std::size_t m = 0; m < results_.size(); ++m) {
        const double n =
            m < n_layers_.size() && n_layers_[m] > 0 ? static_cast<double>(n_layers_[m]) : 1.0;
        std::vector<double> x, y;
        for (const auto& r : results_[m]) {
            const auto& t = r.options.thresholds;
            std::size_t at = 0;
            for (std::size_t i = 0; i < t.size(); ++i)
                if (std::abs(t[i] - settings_.p) < 1e-9) at = i;
            if (at >= r.overall.mean_k.size()) continue;
            x.push_back(depth ? r.options.layer / n : r.options.layer);
            y.push_back(r.overall.mean_k[at]);
        }
        auto* line = add_line(k_chart_, model_name(m), x, y);
        line->setPointsVisible(true);
        style_as_model_of(line, settings_.dumps.value(static_cast<int>(m)));
    }
    x_axis(k_chart_, depth ? tr("relative depth ℓ / n_layers") : tr("layer ℓ"));
    y_axis(k_chart_, tr("mean k(%1)").arg(settings_.p, 0, 'f', 2));
    // Layer numbers before the fit, so it ends the axis at the last layer (chart_panel.cpp);
    // relative depth after it (its fixed quarter steps).
    if (!depth) set_layer_ticks(x_axis(k_chart_), false);
    fit_axes(k_chart_);
    if (depth) set_layer_ticks(x_axis(k_chart_), true);
    k_chart_->chart()->setTitle(tr("Mean k(%1) of all sentences").arg(settings_.p, 0, 'f', 2));
    show_table(table_, figure_table());
}

analysis::CsvTable PcaView::figure_table() const {
    analysis::CsvTable out;
    for (std::size_t m = 0; m < results_.size(); ++m)
        for (const auto& r : results_[m])
            append_rows(out, results_.size() > 1
                                 ? with_keys(r.table(), {"model", "n_layers"},
                                             {model_name(m).toStdString(),
                                              m < n_layers_.size() ? n_layers_[m] : 0})
                                 : r.table());
    return out;
}

nlohmann::json PcaView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& model : results_)
        for (const auto& r : model)
            out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
