#include "views/kernel_view.hpp"

#include <stdexcept>

#include "analysis/cached_analyses.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScatterSeries>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <numbers>

#include "views/chart_figure.hpp"
#include "views/chart_panel.hpp"
#include "views/heatmap_widget.hpp"

#include "views/display_name.hpp"
#include "views/result_table.hpp"

namespace routescope::views {
namespace {

const analysis::LayerKernel* find_layer(const analysis::KernelsResult& r, int layer) {
    for (const auto& l : r.layers)
        if (l.layer == layer) return &l;
    return nullptr;
}

/// The displayed value of each cell under a scaling (ANALYSES.md §1, "Display value").
std::vector<double> displayed(const analysis::LayerKernel& l, const QString& scaling) {
    if (scaling == "signed") return l.relative;
    if (scaling == "magnitude") {
        std::vector<double> out(l.relative.size());
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i] = std::abs(l.relative[i]);
        return out;
    }
    return l.scaled;
}

QString scaling_label(const QString& scaling) {
    if (scaling == "signed") return QObject::tr("kernel value");
    if (scaling == "magnitude") return QObject::tr("|kernel|");
    return QObject::tr("|kernel|, min-max per layer");
}

HeatmapData heatmap_of(const analysis::KernelsResult& r, const QString& scaling,
                       const QString& title, int layer) {
    HeatmapData d;
    d.title = title;
    if (r.layers.empty() && !r.mixing.empty()) {
        // gMLP: the spatial matrix W of the chosen layer, else the first (row m mixes positions
        // n).
        const analysis::MixingMatrix* chosen = &r.mixing.front();
        for (const auto& m : r.mixing)
            if (m.layer == layer) chosen = &m;
        const auto& m = *chosen;
        d.rows = static_cast<int>(m.w.rows());
        d.columns = static_cast<int>(m.w.cols());
        d.values.assign(m.w.data(), m.w.data() + m.w.size());
        d.diverging = true;
        d.title = QObject::tr("%1 — spatial matrix W, layer %2").arg(title).arg(m.layer);
        d.x_label = QObject::tr("position n");
        d.y_label = QObject::tr("position m");
        d.value_label = QObject::tr("W[m, n]");
        return d;
    }
    // The relative positions the kernels reach: R asked, but at most L − 1 (relative_kernel clamps
    // it; a dump of L = 8 under the default R = 10 drew "No data" while its CSV held r = −7..7).
    const int radius =
        r.layers.empty() ? r.radius : static_cast<int>(r.layers.front().relative.size() - 1) / 2;
    d.rows = static_cast<int>(r.layers.size());
    d.columns = 2 * radius + 1;
    for (const auto& l : r.layers) {
        d.row_labels << QString::number(l.layer);
        const auto v = displayed(l, scaling);
        d.values.insert(d.values.end(), v.begin(), v.end());
    }
    for (int c = -radius; c <= radius; ++c)
        d.column_labels << QString::number(c);
    d.diverging = scaling == "signed";
    if (scaling == "minmax") {
        d.lo = 0;
        d.hi = 1;
    }
    d.marked_column = radius;
    d.x_label = QObject::tr("relative position r (< 0: tokens before)");
    d.y_label = QObject::tr("layer");
    d.value_label = scaling_label(scaling);
    // A causal model (forward SSMs only) reads nothing to its right: its lag 0 is K_f[0] + D_f.
    const bool causal = !r.layers.empty() && r.layers.front().backward.empty();
    d.note = causal ? QObject::tr(
                          "causal model (forward SSMs only): r = 0 is K_f[0] + D_f, and "
                          "r > 0 is 0")
                    : QObject::tr(
                          "r = 0: mean of K_f[0] + D_f and K_b[0] + D_b (lag 0 is in both "
                          "directions)");
    if (r.groups > 1)  // several kernels per SSM: which one this is
        d.note += QObject::tr("; channel group %1 of %2").arg(r.group).arg(r.groups);
    return d;
}

std::vector<double> iota(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = static_cast<double>(i);
    return x;
}

analysis::KernelsResult compute(const KernelSource& s, const analysis::KernelOptions& options) {
    if (s.checkpoint)
        return *analysis::cached_kernels_from_checkpoint(s.path.toStdString(), {}, options);
    const analysis::DumpReader dump(s.path.toStdString());
    return *analysis::cached_kernels_from_dump(dump, {}, options);
}

}  // namespace

KernelSource KernelSource::from_path(const QString& path) {
    return {path,
            path.endsWith(QLatin1String(".ckpt.h5")) || path.endsWith(QLatin1String(".ckpt.hdf5"))};
}

nlohmann::json KernelViewSettings::to_json() const {
    nlohmann::json j = {{"a", {{"path", a.path.toStdString()}, {"checkpoint", a.checkpoint}}},
                        {"radius", radius},
                        {"length", length},
                        {"scaling", scaling.toStdString()},
                        {"layer", layer},
                        {"group", group}};
    if (b) j["b"] = {{"path", b->path.toStdString()}, {"checkpoint", b->checkpoint}};
    return j;
}

KernelViewSettings KernelViewSettings::from_json(const nlohmann::json& j) {
    KernelViewSettings s;
    // {"path": …, "checkpoint": …}, each named by its place ("settings.a.path: 5 is not …").
    auto source = [&j](const char* key) {
        const nlohmann::json o = setting_object(j, key, nlohmann::json::object());
        const std::string at = std::string("settings.") + key;
        return KernelSource{setting_string(o, "path", QString(), at),
                            setting_bool(o, "checkpoint", false, at)};
    };
    s.a = source("a");
    if (j.contains("b")) s.b = source("b");
    // The ranges of the view's own controls ("length": 16777216 took gigabytes and minutes).
    s.radius = static_cast<int>(setting_int(j, "radius", s.radius, 1, 65535));
    s.length = static_cast<int>(setting_int(j, "length", s.length, 2, 1 << 20));
    s.scaling = setting_choice(j, "scaling", s.scaling, {"minmax", "signed", "magnitude"});
    s.layer = setting_as_int(j, "layer", s.layer);
    s.group = setting_as_int(j, "group", s.group);
    return s;
}

KernelView::KernelView(KernelViewSettings settings, QWidget* parent)
    : AnalysisView("kernels", parent), settings_(std::move(settings)) {
    auto* controls = new QHBoxLayout;
    scaling_box_ = new QComboBox(this);
    scaling_box_->setObjectName("scaling");
    scaling_box_->addItem(tr("|K| min-max per layer"), "minmax");
    scaling_box_->addItem(tr("Signed values (diverging)"), "signed");
    scaling_box_->addItem(tr("|K|, no scaling"), "magnitude");
    scaling_box_->setToolTip(
        tr("How the heatmap shows each layer's kernel (docs/user-guide.md, \"Kernels\")"));
    radius_box_ = new QSpinBox(this);
    radius_box_->setRange(1, 65535);
    radius_box_->setPrefix(tr("R = "));
    radius_box_->setToolTip(tr("Relative positions −R..R (clamped to L − 1)"));
    length_box_ = new QSpinBox(this);
    length_box_->setRange(2, 1 << 20);
    length_box_->setPrefix(tr("L = "));
    length_box_->setToolTip(tr("Length of kernels computed from checkpoint parameters"));
    length_box_->setEnabled(settings_.a.checkpoint || (settings_.b && settings_.b->checkpoint));
    group_box_ = new QSpinBox(this);
    group_box_->setObjectName("kernelGroup");
    group_box_->setPrefix(tr("channel group "));
    group_box_->setToolTip(
        tr("The model has several kernels per SSM (model.ssm.n_kernels), each acting on a group "
           "of channels: the group whose kernels are shown"));
    group_box_->hide();  // shown once a result says the model has several groups
    readout_ = new QLabel(this);
    readout_->setObjectName("readout");
    readout_->setMinimumWidth(260);
    controls->addWidget(new QLabel(tr("Show:"), this));
    controls->addWidget(scaling_box_);
    controls->addWidget(radius_box_);
    controls->addWidget(length_box_);
    controls->addWidget(group_box_);
    mixing_box_ = new QComboBox(this);
    mixing_box_->setObjectName("mixingLayer");
    mixing_box_->setToolTip(tr("gMLP: the layer whose spatial matrix W is shown"));
    mixing_box_->hide();
    controls->addWidget(mixing_box_);
    controls->addStretch(1);
    controls->addWidget(readout_);

    connect(mixing_box_, &QComboBox::currentIndexChanged, this, [this] {
        if (mixing_box_->currentIndex() >= 0)
            edit(tr("layer"), [this] { select_layer(mixing_box_->currentData().toInt()); });
    });
    heat_a_ = new HeatmapWidget(figure_);
    heat_b_ = new HeatmapWidget(figure_);
    heat_diff_ = new HeatmapWidget(figure_);
    heat_b_->setVisible(settings_.b.has_value());
    heat_diff_->setVisible(settings_.b.has_value());
    // Compare mode: zoom, pan and reset of A, B and A − B move together.
    link_ranges({heat_a_->interaction(), heat_b_->interaction(), heat_diff_->interaction()});
    curve_ = make_chart_view(tr("Kernel"), figure_);
    response_ = make_chart_view(tr("Frequency response |rfft(K)|"), figure_);
    poles_ = make_chart_view(tr("Poles exp(ΔA_n)"), figure_);
    // A print narrower than the three columns leaves these out when the stacked figure would be
    // taller than a page (AnalysisView::prepare_print).
    for (QWidget* secondary : std::initializer_list<QWidget*>{heat_diff_, response_, poles_})
        secondary->setProperty("printSecondary", true);
    auto* grid = new QGridLayout(figure_);
    grid->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout;
    top->addWidget(heat_a_);
    top->addWidget(heat_b_);
    top->addWidget(heat_diff_);
    grid->addLayout(top, 0, 0, 1, 3);
    grid->addWidget(curve_, 1, 0);
    grid->addWidget(response_, 1, 1);
    grid->addWidget(poles_, 1, 2);
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);

    for (HeatmapWidget* h : {heat_a_, heat_b_, heat_diff_}) {
        connect(h, &HeatmapWidget::rowClicked, this, [this](int row) {
            if (a_ && row < static_cast<int>(a_->layers.size()))
                edit(tr("layer"), [this, row] {
                    select_layer(a_->layers[static_cast<std::size_t>(row)].layer);
                });
        });
        connect(h, &HeatmapWidget::hovered, this,
                [this, h](int, int, double) { readout_->setText(h->readout()); });
    }
    connect(heat_b_, &HeatmapWidget::rowClicked, this, [this](int row) {
        if (b_ && row < static_cast<int>(b_->layers.size()))
            edit(tr("layer"),
                 [this, row] { select_layer(b_->layers[static_cast<std::size_t>(row)].layer); });
    });
    restore_settings(settings_.to_json());
    connect(scaling_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("scaling"), [this] { set_scaling(scaling_box_->currentData().toString()); });
    });
    connect(radius_box_, &QSpinBox::editingFinished, this, [this] {
        if (radius_box_->value() != settings_.radius)
            edit(tr("radius"), [this] {
                settings_.radius = radius_box_->value();
                start();
            });
    });
    connect(group_box_, &QSpinBox::valueChanged, this, [this](int g) {
        if (g != settings_.group)
            edit(tr("channel group"), [this, g] {
                settings_.group = g;
                start();
            });
    });
    connect(length_box_, &QSpinBox::editingFinished, this, [this] {
        if (length_box_->value() != settings_.length)
            edit(tr("length"), [this] {
                settings_.length = length_box_->value();
                start();
            });
    });
}

QString KernelView::title() const {
    QString t = tr("Kernels — %1").arg(display_name(settings_.a.path));
    if (settings_.b) t += tr(" | %1").arg(display_name(settings_.b->path));
    return t;
}

QStringList KernelView::input_files() const {
    QStringList out{settings_.a.path};
    if (settings_.b) out << settings_.b->path;
    return out;
}

QString KernelView::input_stem() const {
    // The files' names without their suffix (user-guide.md, "Names"): a run's RUN/model.ckpt.h5
    // is RUN. Not the display name ("bert.seed1 · bigs · folder"), which changes with the folder
    // and the names given in the Workspace.
    QString s = file_stem(settings_.a.path);
    if (settings_.b) s += "-vs-" + file_stem(settings_.b->path);
    return s;
}

void KernelView::restore_settings(const nlohmann::json& j) {
    const KernelViewSettings s = KernelViewSettings::from_json(j);
    const bool rerun = s.a.path != settings_.a.path || s.radius != settings_.radius ||
                       s.length != settings_.length || s.group != settings_.group ||
                       s.b.has_value() != settings_.b.has_value() ||
                       (s.b && s.b->path != settings_.b->path);
    settings_ = s;
    QSignalBlocker b1(scaling_box_), b2(radius_box_), b3(length_box_), b4(group_box_);
    scaling_box_->setCurrentIndex(std::max(0, scaling_box_->findData(settings_.scaling)));
    radius_box_->setValue(settings_.radius);
    length_box_->setValue(settings_.length);
    group_box_->setMaximum(std::max(group_box_->maximum(), settings_.group));
    group_box_->setValue(settings_.group);
    heat_b_->setVisible(settings_.b.has_value());
    heat_diff_->setVisible(settings_.b.has_value());
    if (rerun && has_result())
        start();
    else
        redraw();
}

void KernelView::start() {
    const KernelViewSettings s = settings_;
    using Pair = std::pair<analysis::KernelsResult, std::optional<analysis::KernelsResult>>;
    run<Pair>(
        tr("Computing kernels of %1").arg(display_name(s.a.path)),
        [s](AnalysisSteps& steps) {
            analysis::KernelOptions options;
            options.radius = s.radius;
            options.length = s.length;
            options.group = s.group;
            steps.set_total(s.b ? 2 : 1);
            Pair out{compute(s.a, options), std::nullopt};
            steps.done(1);
            if (s.b) {
                out.second = compute(*s.b, options);
                steps.done(2);
            }
            return out;
        },
        [this](Pair& r) {
            a_ = std::move(r.first);
            {
                QSignalBlocker block(mixing_box_);
                mixing_box_->clear();
                if (a_->layers.empty())
                    for (const auto& m : a_->mixing)
                        mixing_box_->addItem(tr("W of layer %1").arg(m.layer), m.layer);
                mixing_box_->setVisible(mixing_box_->count() > 0);
            }
            b_ = std::move(r.second);
            {
                // Several kernels per SSM: the group box, 0..H−1 (the fewer of the two models').
                QSignalBlocker block(group_box_);
                const std::int64_t groups = b_ ? std::min(a_->groups, b_->groups) : a_->groups;
                group_box_->setRange(0, static_cast<int>(std::max<std::int64_t>(1, groups) - 1));
                group_box_->setValue(settings_.group);
                group_box_->setVisible(groups > 1 || settings_.group > 0);
            }
            // A layer the settings name (a project's) that the model lacks is the view's error
            // (docs/formats/project.md: settings that cannot be applied), not another layer
            // drawn in its place.
            if (settings_.layer >= 0 && !a_->layers.empty() && !find_layer(*a_, settings_.layer))
                throw std::runtime_error(
                    "settings.layer: " + std::to_string(settings_.layer) + " is not a layer of " +
                    settings_.a.path.toStdString() +
                    " (its SSM layers: " + std::to_string(a_->layers.front().layer) + " … " +
                    std::to_string(a_->layers.back().layer) + ")");
            if (settings_.layer < 0 || !find_layer(*a_, settings_.layer))
                settings_.layer = a_->layers.empty() ? -1 : a_->layers.back().layer;
            redraw();
        });
}

void KernelView::set_scaling(const QString& scaling) {
    settings_.scaling = scaling;
    {
        QSignalBlocker block(scaling_box_);
        scaling_box_->setCurrentIndex(std::max(0, scaling_box_->findData(scaling)));
    }
    redraw();
}

void KernelView::select_layer(int layer) {
    if (a_ && a_->layers.empty()) {
        {
            QSignalBlocker block(mixing_box_);
            mixing_box_->setCurrentIndex(std::max(0, mixing_box_->findData(layer)));
        }
        // gMLP: a layer is one spatial matrix W, shown in place of the first.
        bool found = false;
        for (const auto& m : a_->mixing)
            found = found || m.layer == layer;
        if (!found || settings_.layer == layer) return;
        settings_.layer = layer;
        redraw();
        emit layerSelected(layer);
        return;
    }
    if (!a_ || !find_layer(*a_, layer)) return;
    settings_.layer = layer;
    int row = 0;
    for (std::size_t i = 0; i < a_->layers.size(); ++i)
        if (a_->layers[i].layer == layer) row = static_cast<int>(i);
    for (HeatmapWidget* h : {heat_a_, heat_b_, heat_diff_})
        h->set_selected_row(row);
    draw_details();
    emit layerSelected(layer);
}

void KernelView::redraw() {
    if (!a_) return;
    // Compared, the panels say which is A and which B: the curves' legends and the effective
    // length name them so.
    const QString a_name = display_name(settings_.a.path);
    HeatmapData shown_a =
        heatmap_of(*a_, settings_.scaling, b_ ? "A: " + a_name : a_name, settings_.layer);
    if (b_) {
        HeatmapData shown_b = heatmap_of(*b_, settings_.scaling,
                                         "B: " + display_name(settings_.b->path), settings_.layer);
        link_colour_ranges(shown_a, shown_b);
        heat_a_->set_data(std::move(shown_a));
        heat_b_->set_data(std::move(shown_b));
        // A − B of what is shown, when both have the same layers and positions.
        HeatmapData diff = difference_of(heat_a_->data(), heat_b_->data(), tr("A − B"),
                                         tr("A − B undefined: the layers or positions differ"));
        heat_diff_->set_data(diff);
        heat_diff_->setProperty("printEmpty", diff.values.empty());
    } else {
        heat_a_->set_data(std::move(shown_a));
    }
    if (settings_.layer >= 0)
        select_layer(settings_.layer);
    else
        draw_details();
}

QString KernelView::effective_length_text() const {
    if (!a_) return {};
    const auto* la = find_layer(*a_, settings_.layer);
    if (!la) return {};
    const auto* lb = b_ ? find_layer(*b_, settings_.layer) : nullptr;
    if (!lb) return tr("effective length (90% of Σ|K|): %1").arg(la->effective_length);
    return tr("effective length (90% of Σ|K|): A %1 | B %2")
        .arg(la->effective_length)
        .arg(lb->effective_length);
}

void KernelView::draw_details() {
    for (QChartView* v : {curve_, response_, poles_})
        clear_chart(v);
    if (!a_) return;
    struct Shown {
        const analysis::LayerKernel* layer;
        QString name;
        QColor colour;  ///< the model's (B's lightened when it is A's model)
    };
    std::vector<Shown> shown;
    if (const auto* l = find_layer(*a_, settings_.layer))
        shown.push_back({l, b_ ? "A " : "", model_colour_of(settings_.a.path)});
    if (b_ && settings_.b)
        if (const auto* l = find_layer(*b_, settings_.layer))
            shown.push_back({l, "B ", compared_colour(settings_.a.path, settings_.b->path)});
    // No kernel to draw (a gMLP's dump holds spatial matrices W, shown in the heatmap): the
    // curve, response and pole panels are left out of a print, not printed empty.
    for (QChartView* v : {curve_, response_, poles_})
        v->setProperty("printEmpty", shown.empty());
    if (shown.empty()) return;
    for (std::size_t model = 0; model < shown.size(); ++model) {
        const Shown& s = shown[model];
        // The model's colour, as in every view; backward curves dashed.
        style_in(add_line(curve_, s.name + tr("K_f (tokens to the left)"),
                          iota(s.layer->forward.size()), s.layer->forward),
                 s.colour);
        // A causal model (forward SSMs only) has no K_b: no curve for it.
        if (!s.layer->backward.empty())
            style_in(add_line(curve_, s.name + tr("K_b (tokens to the right)"),
                              iota(s.layer->backward.size()), s.layer->backward),
                     s.colour, Qt::DashLine);
        auto freq = [](std::size_t bins, std::size_t n) {
            std::vector<double> f(bins);
            for (std::size_t k = 0; k < bins; ++k)
                f[k] = static_cast<double>(k) / static_cast<double>(std::max<std::size_t>(1, n));
            return f;
        };
        style_in(add_line(response_, s.name + tr("forward"),
                          freq(s.layer->response_forward.size(), s.layer->forward.size()),
                          s.layer->response_forward),
                 s.colour);
        if (!s.layer->backward.empty())
            style_in(add_line(response_, s.name + tr("backward"),
                              freq(s.layer->response_backward.size(), s.layer->backward.size()),
                              s.layer->response_backward),
                     s.colour, Qt::DashLine);
        for (const auto* poles : {&s.layer->poles_forward, &s.layer->poles_backward}) {
            if (poles->empty()) continue;
            auto* scatter = new QScatterSeries();
            scatter->setName(s.name +
                             (poles == &s.layer->poles_forward ? tr("forward") : tr("backward")));
            scatter->setMarkerSize(7);
            // The model's colour; backward poles as squares.
            scatter->setColor(s.colour);
            scatter->setBorderColor(s.colour);
            if (poles == &s.layer->poles_backward)
                scatter->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
            for (const auto& p : *poles)
                scatter->append(p.real(), p.imag());
            poles_->chart()->addSeries(scatter);
            scatter->attachAxis(x_axis(poles_, tr("Re λ")));
            scatter->attachAxis(y_axis(poles_, tr("Im λ")));
        }
    }
    const int layer = settings_.layer;
    curve_->chart()->setTitle(tr("Layer %1 kernel — %2").arg(layer).arg(effective_length_text()));
    x_axis(curve_, tr("lag l"));
    y_axis(curve_, tr("K[l]"));
    fit_axes(curve_);
    x_axis(response_, tr("frequency (cycles per token)"));
    y_axis(response_, tr("|rfft(K)|"));
    fit_axes(response_);
    poles_->setProperty("printEmpty", poles_->chart()->series().isEmpty());
    if (poles_->chart()->series().isEmpty()) {
        poles_->chart()->setTitle(tr("Poles: computed from a checkpoint only"));
    } else {
        poles_->chart()->setTitle(tr("Layer %1 poles exp(ΔA_n) (|λ| → 1: long memory)").arg(layer));
        std::vector<double> cx, cy;
        for (int i = 0; i <= 128; ++i) {
            cx.push_back(std::cos(2 * std::numbers::pi * i / 128));
            cy.push_back(std::sin(2 * std::numbers::pi * i / 128));
        }
        auto* circle = add_line(poles_, tr("|λ| = 1"), cx, cy);
        circle->setPen(QPen(Qt::gray, 1, Qt::DashLine));
        // Equal aspect: the unit circle is a circle, so |λ| reads the same in every direction.
        QRectF bounds(-1.1, -1.1, 2.2, 2.2);
        for (const auto& each : shown)
            for (const auto* poles : {&each.layer->poles_forward, &each.layer->poles_backward})
                for (const auto& pole : *poles)
                    if (std::isfinite(pole.real()) && std::isfinite(pole.imag()))
                        bounds =
                            bounds.united(QRectF(pole.real() - 0.05, pole.imag() - 0.05, 0.1, 0.1));
        keep_equal_aspect(poles_->chart(), bounds);
    }
}

analysis::CsvTable KernelView::figure_table() const {
    if (!a_) return {};
    analysis::CsvTable t = a_->table();
    if (!b_) return t;
    // Compare mode: both results in one table, with a column naming each model as its legend
    // does (user-guide.md, "Names"), not "A" and "B".
    analysis::CsvTable out;
    append_rows(out, with_keys(t, {"model"}, {display_name(settings_.a.path).toStdString()}));
    append_rows(out,
                with_keys(b_->table(), {"model"}, {display_name(settings_.b->path).toStdString()}));
    return out;
}

nlohmann::json KernelView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    if (a_) out.push_back(a_->provenance.to_json());
    if (b_) out.push_back(b_->provenance.to_json());
    return out;
}

}  // namespace routescope::views
