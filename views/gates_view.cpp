#include "views/gates_view.hpp"

#include <stdexcept>

#include "analysis/cached_analyses.hpp"
#include "analysis/layer_pairing.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <set>

#include "views/chart_panel.hpp"
#include "views/heatmap_widget.hpp"
#include "views/result_table.hpp"

#include "views/display_name.hpp"

namespace routescope::views {

nlohmann::json GatesViewSettings::to_json() const {
    return {{"dump", dump.toStdString()},     {"layer", layer},
            {"gate", gate.toStdString()},     {"example", example},
            {"dump_b", dump_b.toStdString()}, {"align", align.toStdString()}};
}

GatesViewSettings GatesViewSettings::from_json(const nlohmann::json& j) {
    GatesViewSettings s;
    s.dump = setting_string(j, "dump", s.dump);
    s.layer = setting_as_int(j, "layer", s.layer);
    s.gate = setting_string(j, "gate", s.gate);
    s.example = setting_as_int64(j, "example", s.example);
    // Project files written before compare mode have neither key: A only, aligned by layer.
    s.dump_b = setting_string(j, "dump_b", s.dump_b);
    s.align = setting_choice(j, "align", s.align, {"layer", "depth"});
    return s;
}

namespace {

QStringList gates_at(const analysis::GatesResult& r, int layer) {
    QStringList out;
    for (const auto& g : r.gates)
        if (g.layer == layer) out << QString::fromStdString(g.gate);
    return out;
}

std::vector<int> layers_of(const analysis::GatesResult& r) {
    std::set<int> s;
    for (const auto& g : r.gates)
        s.insert(g.layer);
    return {s.begin(), s.end()};
}

const analysis::GateStats* find_gate(const analysis::GatesResult& r, int layer,
                                     const QString& gate) {
    for (const auto& g : r.gates)
        if (g.layer == layer && QString::fromStdString(g.gate) == gate) return &g;
    return nullptr;
}

// The gate of `to` linked to (layer, gate) of `from`: the same layer (or, by depth, the layer of
// `to` nearest to the same relative depth ℓ / n_layers), then the gate of the same name, else the
// one at the same place in the layer's list (BiGS u_f ↔ Birdie f), else the layer's first.
std::pair<int, QString> counterpart(const analysis::GatesResult& from, std::int64_t n_from,
                                    const analysis::GatesResult& to, std::int64_t n_to, int layer,
                                    const QString& gate, bool depth) {
    const auto layers = layers_of(to);
    int target = -1;
    if (depth) {
        target = analysis::nearest_depth_layer(layer, n_from, layers, n_to);
    } else if (std::find(layers.begin(), layers.end(), layer) != layers.end()) {
        target = layer;
    }
    if (target < 0) return {-1, {}};
    const QStringList names = gates_at(to, target);
    if (names.contains(gate)) return {target, gate};
    const int at = static_cast<int>(gates_at(from, layer).indexOf(gate));
    if (at >= 0 && at < names.size()) return {target, names[at]};
    return {target, names.value(0)};
}

bool same_gates(const analysis::GatesResult& a, const analysis::GatesResult& b) {
    if (a.gates.size() != b.gates.size()) return false;
    for (std::size_t i = 0; i < a.gates.size(); ++i)
        if (a.gates[i].layer != b.gates[i].layer || a.gates[i].gate != b.gates[i].gate)
            return false;
    return true;
}

QString gate_list(const analysis::GatesResult& r) {
    QStringList names;
    for (const auto& g : r.gates)
        if (!names.contains(QString::fromStdString(g.gate)))
            names << QString::fromStdString(g.gate);
    return names.join(", ");
}

// The gate row and tokens of one example (a worker's job).
GateTimeline read_timeline(const QString& path, int layer, const QString& gate, qint64 example) {
    const analysis::DumpReader dump(path.toStdString());
    // An example the dump does not hold at all, said as the other views say it (Implicit
    // Attention, Arrays): blaming example_index misled for dumps that have none.
    if (example < 0 || example >= dump.examples())
        throw routescope::ConfigError(path.toStdString() + ": example " + std::to_string(example) +
                                      (dump.examples() > 0
                                           ? " is outside 0.." + std::to_string(dump.examples() - 1)
                                           : std::string(": the dump holds no examples")));
    const auto& rows = dump.example_of_row(layer);
    const auto it = std::find(rows.begin(), rows.end(), example);
    if (it == rows.end())
        throw routescope::ConfigError("example " + std::to_string(example) +
                                      " is not stored in layer " + std::to_string(layer) + " of " +
                                      path.toStdString() + " (example_index)");
    const auto row = static_cast<std::int64_t>(it - rows.begin());
    GateTimeline t{layer,
                   gate,
                   example,
                   dump.lengths().at(static_cast<std::size_t>(example)),
                   dump.gate_row(layer, gate.toStdString(), row),
                   {},
                   dump.gate_reverse_from(layer),
                   dump.prefix_end(example)};
    for (const auto& piece : dump.token_pieces(example))
        t.tokens << QString::fromStdString(piece);
    return t;
}

}  // namespace

GatesView::GatesView(GatesViewSettings settings, QWidget* parent)
    : AnalysisView("gates", parent), settings_(std::move(settings)) {
    gate_box_ = new QComboBox(this);
    gate_box_->setObjectName("gate");
    gate_box_->setToolTip(tr("Layer and gate shown in the histogram and timeline"));
    search_ = new QLineEdit(this);
    search_->setObjectName("exampleSearch");
    search_->setPlaceholderText(tr("Search examples by text…"));
    search_->setClearButtonEnabled(true);
    // Wide enough for its placeholder in full (a narrower field elides it).
    search_->setMinimumWidth(search_->fontMetrics().horizontalAdvance(search_->placeholderText()) +
                             48);
    example_box_ = new QComboBox(this);
    example_box_->setObjectName("example");
    example_box_->setMinimumContentsLength(30);
    example_box_->setToolTip(tr("Example shown in the token-aligned timeline"));
    align_box_ = new QComboBox(this);
    align_box_->setObjectName("align");
    align_box_->addItem(tr("same layer ℓ"), "layer");
    align_box_->addItem(tr("same relative depth ℓ / n_layers"), "depth");
    align_box_->setToolTip(
        tr("Which layer of B is shown beside A's (relative depth aligns models "
           "of different depth)"));
    align_box_->setCurrentIndex(std::max(0, align_box_->findData(settings_.align)));
    align_label_ = new QLabel(tr("B at:"), this);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Gate:"), this));
    controls->addWidget(gate_box_);
    controls->addWidget(new QLabel(tr("Example:"), this));
    controls->addWidget(search_);
    controls->addWidget(example_box_, 1);
    controls->addWidget(align_label_);
    controls->addWidget(align_box_);
    compare_note_ = new QLabel(this);
    compare_note_->setObjectName("compareNote");
    compare_note_->setWordWrap(true);
    compare_note_->hide();

    timeline_map_ = new HeatmapWidget(figure_);
    reverse_map_ = new HeatmapWidget(figure_);
    reverse_map_->setObjectName("reverseTimeline");
    reverse_map_->hide();
    timeline_b_map_ = new HeatmapWidget(figure_);
    timeline_b_map_->setObjectName("timelineB");
    difference_map_ = new HeatmapWidget(figure_);
    difference_map_->setObjectName("timelineDifference");
    difference_map_->hide();
    // Left out of a print that would be taller than a page (AnalysisView::prepare_print), as the
    // kernels view's A − B: at 89 mm the compare figure was 227 mm tall (figure probe, session 31).
    difference_map_->setProperty("printSecondary", true);
    // Compare mode: zoom, pan and reset of A, B and A − B move together.
    link_ranges({timeline_map_->interaction(), timeline_b_map_->interaction(),
                 difference_map_->interaction()});
    histogram_ = make_chart_view(tr("Histogram"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    auto* panels = new QVBoxLayout;
    panels->addWidget(timeline_map_, 1);
    panels->addWidget(reverse_map_, 1);
    panels->addWidget(timeline_b_map_, 1);
    panels->addWidget(difference_map_, 1);
    fl->addLayout(panels, 3);
    fl->addWidget(histogram_, 2);
    table_ = new QTableWidget(this);
    table_->setObjectName("gateStatistics");
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(compare_note_);
    layout->addWidget(status_);
    layout->addWidget(figure_, 3);
    layout->addWidget(table_, 1);
    for (QWidget* w : std::initializer_list<QWidget*>{align_label_, align_box_, timeline_b_map_})
        w->setVisible(comparing());

    connect(gate_box_, &QComboBox::currentIndexChanged, this, [this] {
        const auto key = gate_box_->currentData().toStringList();
        if (key.size() == 2) edit(tr("gate"), [this, key] { select_gate(key[0].toInt(), key[1]); });
    });
    connect(example_box_, &QComboBox::currentIndexChanged, this, [this] {
        if (example_box_->currentIndex() >= 0)
            edit(tr("example"),
                 [this] { select_example(example_box_->currentData().toLongLong()); });
    });
    connect(align_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("alignment"), [this] { set_align(align_box_->currentData().toString()); });
    });
    connect(search_, &QLineEdit::textChanged, this, [this] { fill_examples(); });
    connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (row < 0 || row >= static_cast<int>(table_rows_.size())) return;
        const auto [side, layer, gate] = table_rows_[static_cast<std::size_t>(row)];
        if (side == 0) return edit(tr("gate"), [&] { select_gate(layer, gate); });
        // A row of B: A's gate linked to it.
        if (!result_ || !result_b_) return;
        const auto a = counterpart(*result_b_, n_layers_b_, *result_, n_layers_a_, layer, gate,
                                   settings_.align == "depth");
        if (a.first >= 0) edit(tr("gate"), [&] { select_gate(a.first, a.second); });
    });
}

QString GatesView::title() const {
    if (comparing())
        return tr("Gates — %1 | %2")
            .arg(display_name(settings_.dump), display_name(settings_.dump_b));
    return tr("Gates — %1").arg(display_name(settings_.dump));
}
QStringList GatesView::input_files() const {
    QStringList out{settings_.dump};
    if (!settings_.dump_b.isEmpty()) out << settings_.dump_b;
    return out;
}

QString GatesView::input_stem() const {
    if (comparing()) return file_stem(settings_.dump) + "-vs-" + file_stem(settings_.dump_b);
    return file_stem(settings_.dump);
}

void GatesView::restore_settings(const nlohmann::json& j) {
    const auto s = GatesViewSettings::from_json(j);
    const bool rerun = s.dump != settings_.dump || s.dump_b != settings_.dump_b;
    settings_ = s;
    {
        QSignalBlocker block(align_box_);
        align_box_->setCurrentIndex(std::max(0, align_box_->findData(settings_.align)));
    }
    for (QWidget* w : std::initializer_list<QWidget*>{align_label_, align_box_, timeline_b_map_})
        w->setVisible(comparing());
    if (rerun && has_result()) return start();
    if (result_) {
        fill_examples();
        select_gate(settings_.layer, settings_.gate);
    }
}

void GatesView::start() {
    const QString path = settings_.dump, path_b = settings_.dump_b;
    struct Side {
        analysis::GatesResult result;
        std::vector<std::string> texts;
        bool has_text = false;
        std::int64_t n_layers = 1;
    };
    struct Out {
        Side a;
        std::optional<Side> b;
    };
    for (QWidget* w : std::initializer_list<QWidget*>{align_label_, align_box_, timeline_b_map_})
        w->setVisible(comparing());
    run<Out>(
        comparing() ? tr("Computing gate statistics of %1 and %2")
                          .arg(display_name(path), display_name(path_b))
                    : tr("Computing gate statistics of %1").arg(display_name(path)),
        [path, path_b](AnalysisSteps& steps) {
            auto side = [](const QString& p) {
                const analysis::DumpReader dump(p.toStdString());
                Side out{*analysis::cached_gate_statistics(dump, {}, {}),
                         {},
                         dump.has_text(),
                         std::max<std::int64_t>(1, dump.n_layers())};
                if (out.has_text)
                    out.texts = dump.text();
                else
                    for (std::int64_t i = 0; i < dump.examples(); ++i)
                        out.texts.push_back("example " + std::to_string(i));
                if (out.result.gates.empty())
                    throw routescope::ConfigError(
                        p.toStdString() +
                        ": this dump holds no gate activations, so there is nothing to show "
                        "(dumps of BiGS, Birdie, S-LSTM and gMLP models record them; "
                        "docs/formats/dump.md)");
                return out;
            };
            steps.set_total(path_b.isEmpty() ? 1 : 2);
            Out out{side(path), {}};
            steps.done(1);
            if (!path_b.isEmpty()) {
                out.b = side(path_b);
                steps.done(2);
            }
            return out;
        },
        [this](Out& out) {
            result_ = std::move(out.a.result);
            texts_ = std::move(out.a.texts);
            text_a_ = out.a.has_text;
            n_layers_a_ = out.a.n_layers;
            if (out.b) {
                result_b_ = std::move(out.b->result);
                texts_b_ = std::move(out.b->texts);
                text_b_ = out.b->has_text;
                n_layers_b_ = out.b->n_layers;
            } else {
                result_b_.reset();
                texts_b_.clear();
            }
            // The table: A's gates, then B's under a model column in compare mode.
            table_rows_.clear();
            for (const auto& g : result_->gates)
                table_rows_.emplace_back(0, g.layer, QString::fromStdString(g.gate));
            if (result_b_) {
                for (const auto& g : result_b_->gates)
                    table_rows_.emplace_back(1, g.layer, QString::fromStdString(g.gate));
            }
            show_table(table_, figure_table());
            {
                QSignalBlocker block(gate_box_);
                gate_box_->clear();
                for (const auto& g : result_->gates)
                    gate_box_->addItem(
                        tr("layer %1 · %2").arg(g.layer).arg(QString::fromStdString(g.gate)),
                        QStringList{QString::number(g.layer), QString::fromStdString(g.gate)});
            }
            fill_examples();
            const auto& first = result_->gates.front();
            // The gate the settings name (a project's): its layer and name, either left out
            // for the first that fits. One the dump lacks is the view's error
            // (docs/formats/project.md: settings that cannot be applied), not another drawn.
            const analysis::GateStats* chosen = nullptr;
            for (const auto& g : result_->gates)
                if (!chosen && (settings_.layer < 0 || g.layer == settings_.layer) &&
                    (settings_.gate.isEmpty() || QString::fromStdString(g.gate) == settings_.gate))
                    chosen = &g;
            if (!chosen)
                throw std::runtime_error(
                    "settings: " +
                    (settings_.layer >= 0 ? "layer " + std::to_string(settings_.layer) : "") +
                    (settings_.layer >= 0 && !settings_.gate.isEmpty() ? ", " : "") +
                    (settings_.gate.isEmpty() ? ""
                                              : "gate '" + settings_.gate.toStdString() + "'") +
                    " is not in " + settings_.dump.toStdString() + " (its first gate: layer " +
                    std::to_string(first.layer) + ", '" + first.gate + "')");
            select_gate(chosen->layer, QString::fromStdString(chosen->gate));
        });
}

void GatesView::fill_examples() {
    QSignalBlocker block(example_box_);
    example_box_->clear();
    const QString needle = search_->text();
    for (std::size_t i = 0; i < texts_.size(); ++i) {
        const QString text = QString::fromStdString(texts_[i]);
        if (!needle.isEmpty() && !text.contains(needle, Qt::CaseInsensitive)) continue;
        example_box_->addItem(QString("%1: %2").arg(i).arg(text.left(80)),
                              static_cast<qlonglong>(i));
        example_box_->setItemData(example_box_->count() - 1, text, Qt::ToolTipRole);
    }
    const int at = example_box_->findData(static_cast<qlonglong>(settings_.example));
    if (at >= 0)
        example_box_->setCurrentIndex(at);
    else if (example_box_->count() > 0 && !needle.isEmpty()) {
        // The search hides the shown example: show the first match.
        example_box_->setCurrentIndex(0);
        block.unblock();
        select_example(example_box_->currentData().toLongLong());
    }
}

std::pair<int, QString> GatesView::gate_b() const {
    if (!result_ || !result_b_) return {-1, {}};
    return counterpart(*result_, n_layers_a_, *result_b_, n_layers_b_, settings_.layer,
                       settings_.gate, settings_.align == "depth");
}

qint64 GatesView::example_b(qint64 example) const {
    if (!result_b_ || example < 0) return -1;
    const auto e = static_cast<std::size_t>(example);
    if (text_a_ && text_b_) {
        // The same example is the same text (dumps of one data set may order it differently).
        if (e >= texts_.size()) return -1;
        if (e < texts_b_.size() && texts_b_[e] == texts_[e]) return example;
        const auto it = std::find(texts_b_.begin(), texts_b_.end(), texts_[e]);
        return it == texts_b_.end() ? -1 : static_cast<qint64>(it - texts_b_.begin());
    }
    return e < texts_b_.size() ? example : -1;
}

void GatesView::set_align(const QString& align) {
    settings_.align = align;
    {
        QSignalBlocker block(align_box_);
        align_box_->setCurrentIndex(std::max(0, align_box_->findData(align)));
    }
    if (result_) select_gate(settings_.layer, settings_.gate);
}

void GatesView::select_gate(int layer, const QString& gate) {
    settings_.layer = layer;
    settings_.gate = gate;
    {
        QSignalBlocker block(gate_box_);
        gate_box_->setCurrentIndex(
            std::max(0, gate_box_->findData(QStringList{QString::number(layer), gate})));
    }
    draw_histogram();
    load_timeline();
}

void GatesView::select_example(qint64 example) {
    settings_.example = example;
    load_timeline();
}

void GatesView::draw_histogram() {
    clear_chart(histogram_);
    if (!result_) return;
    const analysis::GateStats* a = find_gate(*result_, settings_.layer, settings_.gate);
    if (!a) return;
    const analysis::GateStats* b = nullptr;
    if (result_b_) {
        const auto [layer_b, name_b] = gate_b();
        if (layer_b >= 0) b = find_gate(*result_b_, layer_b, name_b);
    }
    for (int row = 0; row < static_cast<int>(table_rows_.size()); ++row) {
        const auto& [side, layer, gate] = table_rows_[static_cast<std::size_t>(row)];
        if (side == 0 && layer == a->layer && gate == settings_.gate) table_->selectRow(row);
    }
    auto stats_text = [this](const analysis::GateStats& g) {
        QString sat = tr("< 0.1: %1%, > 0.9: %2%")
                          .arg(100 * g.below_0_1, 0, 'f', 1)
                          .arg(100 * g.above_0_9, 0, 'f', 1);
        if (g.above_0_99 >= 0) sat += tr(", > 0.99: %1%").arg(100 * g.above_0_99, 0, 'f', 1);
        // Values a fixed range cannot hold (a dump whose gates are not its arch's) are counted,
        // not drawn: the figure says so instead of a histogram that silently sums to less.
        if (const auto outside = g.below_range + g.above_range; outside > 0)
            sat += tr(" · %1 of %2 values outside the %3 range, not drawn")
                       .arg(outside)
                       .arg(g.values)
                       .arg(QString::fromStdString(g.range.source));
        // Compared, the heatmaps' titles name each side's layer and gate, and the table beside
        // the figure (and its CSV) holds the saturation shares: the histogram's title keeps one
        // short line per side (at 183 mm and 10 pt its four lines left the plot too short for
        // its y title, which --check-layout found clipped).
        if (result_b_) {
            QString line = tr("mean %1, std %2").arg(g.mean, 0, 'f', 3).arg(g.std, 0, 'f', 3);
            if (const auto outside = g.below_range + g.above_range; outside > 0)
                line += tr(" · %1 outside the range").arg(outside);
            return line;
        }
        return tr("Layer %1 %2: mean %3, std %4 · %5")
            .arg(g.layer)
            .arg(QString::fromStdString(g.gate))
            .arg(g.mean, 0, 'f', 3)
            .arg(g.std, 0, 'f', 3)
            .arg(sat);
    };
    // Steps over the histogram's equal-width bins on the gate's range.
    // Each model's colour (B's lightened when it is A's model: two layers of one dump).
    auto add = [this](const analysis::GateStats& g, const QString& name, const QColor& colour) {
        const double w = (g.range.hi - g.range.lo) / std::max<std::size_t>(1, g.histogram.size());
        std::vector<double> x, y;
        for (std::size_t bin = 0; bin < g.histogram.size(); ++bin) {
            const double f =
                g.values ? static_cast<double>(g.histogram[bin]) / static_cast<double>(g.values)
                         : 0;
            x.push_back(g.range.lo + bin * w);
            y.push_back(f);
            x.push_back(g.range.lo + (bin + 1) * w);
            y.push_back(f);
        }
        style_in(add_line(histogram_, name, x, y), colour);
    };
    add(*a,
        // Named as B's series is (the two may be of different layers when depths differ).
        result_b_ ? tr("A: layer %1 %2").arg(a->layer).arg(QString::fromStdString(a->gate))
                  : QString::fromStdString(a->gate),
        model_colour_of(settings_.dump));
    if (b) {
        const QString dump_b = settings_.dump_b.isEmpty() ? settings_.dump : settings_.dump_b;
        add(*b, tr("B: layer %1 %2").arg(b->layer).arg(QString::fromStdString(b->gate)),
            compared_colour(settings_.dump, dump_b));
    }
    x_axis(histogram_, tr("gate value (%1 range)").arg(QString::fromStdString(a->range.source)));
    y_axis(histogram_, tr("fraction of values"));
    fit_axes(histogram_);
    x_axis(histogram_)
        ->setRange(b ? std::min(a->range.lo, b->range.lo) : a->range.lo,
                   b ? std::max(a->range.hi, b->range.hi) : a->range.hi);
    // A chart title is HTML: "< 0.1" must be escaped or it reads as a tag and vanishes.
    QString title = stats_text(*a).toHtmlEscaped();
    if (result_b_)
        title = tr("A: %1<br>B: %2")
                    .arg(title, b ? stats_text(*b).toHtmlEscaped() : tr("no gate at this layer"));
    histogram_->chart()->setTitle(title);
}

void GatesView::load_timeline() {
    if (!result_ || settings_.gate.isEmpty()) return;
    const QString path = settings_.dump, path_b = settings_.dump_b;
    const int layer = settings_.layer;
    const QString gate = settings_.gate;
    const qint64 example = settings_.example;
    const auto [layer_b, gate_name_b] = gate_b();
    const qint64 ex_b = example_b(example);
    struct Out {
        GateTimeline a, b;
        QString b_missing;  ///< why B has no timeline (compare mode)
    };
    // A second, small worker job: the gate rows and tokens of one example (never read on this
    // thread).
    run<Out>(
        tr("Reading gate %1 of layer %2, example %3").arg(gate).arg(layer).arg(example),
        [path, path_b, layer, gate, example, layer_b, gate_name_b, ex_b](AnalysisSteps&) {
            Out out{read_timeline(path, layer, gate, example), {}, {}};
            out.b.layer = -1;
            if (path_b.isEmpty()) return out;
            if (layer_b < 0)
                out.b_missing = tr("B has no gates in layer %1").arg(layer);
            else if (ex_b < 0)
                out.b_missing =
                    tr("B does not hold example %1 (no example with its text)").arg(example);
            else
                try {
                    out.b = read_timeline(path_b, layer_b, gate_name_b, ex_b);
                } catch (const std::exception& e) {
                    out.b_missing = QString::fromUtf8(e.what());
                }
            return out;
        },
        [this](Out& t) {
            timeline_ = std::move(t.a);
            timeline_b_ = std::move(t.b);
            compare_note_text_ = t.b_missing;
            show_timelines();
        });
}

void GatesView::show_timelines() {
    const int channels = static_cast<int>(timeline_.values.cols());
    const QString title = tr("Layer %1 gate %2, example %3")
                              .arg(timeline_.layer)
                              .arg(timeline_.gate)
                              .arg(timeline_.example);
    difference_shown_ = false;
    if (!comparing()) {
        const bool split = timeline_.reverse_from > 0 && timeline_.reverse_from < channels;
        if (split) {
            timeline_map_->set_data(
                timeline_panel(timeline_, 0, timeline_.reverse_from,
                               tr("%1 · forward half (channels 0–%2, left to right)")
                                   .arg(title)
                                   .arg(timeline_.reverse_from - 1)));
            reverse_map_->set_data(
                timeline_panel(timeline_, timeline_.reverse_from, channels,
                               tr("%1 · reverse half (channels %2–%3, right to left)")
                                   .arg(title)
                                   .arg(timeline_.reverse_from)
                                   .arg(channels - 1)));
            reverse_map_->show();
        } else {
            timeline_map_->set_data(timeline_panel(timeline_, 0, channels, title));
            reverse_map_->set_data({});
            reverse_map_->hide();
        }
        difference_map_->hide();
        return;
    }
    // Compare mode: one panel per model over all its channels (the halves of a bidirectional
    // Birdie layer are named in the panel's note), on one colour range.
    reverse_map_->set_data({});
    reverse_map_->hide();
    const QString name_a = display_stem(settings_.dump);
    const QString name_b = display_stem(settings_.dump_b);
    HeatmapData a = timeline_panel(timeline_, 0, channels, tr("A (%1) · %2").arg(name_a, title));
    HeatmapData b;
    if (timeline_b_.layer >= 0) {
        b = timeline_panel(timeline_b_, 0, static_cast<int>(timeline_b_.values.cols()),
                           tr("B (%1) · layer %2 gate %3, example %4")
                               .arg(name_b)
                               .arg(timeline_b_.layer)
                               .arg(timeline_b_.gate)
                               .arg(timeline_b_.example));
        link_colour_ranges(a, b);
    } else {
        b.title = tr("B (%1): %2").arg(name_b, compare_note_text_);
    }
    // A − B: defined for the same layers and gates and timelines of one shape and tokens.
    if (timeline_b_.layer >= 0) {
        if (timeline_b_.layer != timeline_.layer)
            compare_note_text_ = tr("A − B is not drawn: B's linked layer is %1, A's %2.")
                                     .arg(timeline_b_.layer)
                                     .arg(timeline_.layer);
        else if (!same_gates(*result_, *result_b_))
            compare_note_text_ =
                gate_list(*result_) == gate_list(*result_b_)
                    ? tr("A − B is not drawn: the models have gates in different layers.")
                    : tr("A − B is not drawn: the models' gates differ (A: %1; B: %2).")
                          .arg(gate_list(*result_), gate_list(*result_b_));
        else if (a.rows != b.rows || a.columns != b.columns || a.column_labels != b.column_labels)
            compare_note_text_ =
                tr("A − B is not drawn: the timelines differ in channels or tokens "
                   "(A: %1 × %2, B: %3 × %4).")
                    .arg(a.rows)
                    .arg(a.columns)
                    .arg(b.rows)
                    .arg(b.columns);
        else {
            difference_map_->set_data(
                difference_of(a, b, tr("A − B · %1").arg(title), tr("A − B is not drawn")));
            difference_shown_ = true;
            compare_note_text_.clear();
        }
    }
    timeline_map_->set_data(std::move(a));
    timeline_b_map_->set_data(std::move(b));
    difference_map_->setVisible(difference_shown_);
    if (!difference_shown_) difference_map_->set_data({});
    update_difference_note();
}

void GatesView::update_difference_note() {
    compare_note_->setText(compare_note_text_);
    compare_note_->setVisible(comparing() && !compare_note_text_.isEmpty());
}

HeatmapData GatesView::timeline_panel(const GateTimeline& t, int first_channel, int end_channel,
                                      const QString& title) const {
    HeatmapData d;
    const qint64 positions = std::min<qint64>(t.length, t.values.rows());
    d.rows = end_channel - first_channel;
    d.columns = static_cast<int>(positions);
    d.values.resize(static_cast<std::size_t>(d.rows) * d.columns);
    for (int c = 0; c < d.rows; ++c) {
        d.row_labels << QString::number(first_channel + c);
        for (int p = 0; p < d.columns; ++p)
            d.values[static_cast<std::size_t>(c) * d.columns + p] = t.values(p, first_channel + c);
    }
    for (int p = 0; p < d.columns; ++p)
        d.column_labels << t.tokens.value(p, QString::number(p));
    d.title = title;
    d.x_label = tr("token");
    d.y_label = tr("channel");
    d.value_label = tr("gate value");
    if (t.prefix_end > 0 && t.prefix_end < positions) {
        // The line is drawn through the first suffix (causal-region) token.
        d.marked_column = static_cast<int>(t.prefix_end);
        d.note = tr("line: first token of the causal suffix (prefix = tokens 0–%1, "
                    "/data/reset_mask)")
                     .arg(t.prefix_end - 1);
    }
    const int channels = static_cast<int>(t.values.cols());
    if (comparing() && t.reverse_from > 0 && t.reverse_from < channels) {
        const QString halves = tr("channels 0–%1 scan left to right, %2–%3 right to left")
                                   .arg(t.reverse_from - 1)
                                   .arg(t.reverse_from)
                                   .arg(channels - 1);
        d.note = d.note.isEmpty() ? halves : d.note + " · " + halves;
    }
    return d;
}

analysis::CsvTable GatesView::figure_table() const {
    if (!result_) return {};
    if (!result_b_) return result_->table();
    analysis::CsvTable out;
    append_rows(
        out, with_keys(result_->table(), {"model"}, {display_stem(settings_.dump).toStdString()}));
    append_rows(out, with_keys(result_b_->table(), {"model"},
                               {display_stem(settings_.dump_b).toStdString()}));
    return out;
}

nlohmann::json GatesView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    if (result_) out.push_back(result_->provenance.to_json());
    if (result_b_) out.push_back(result_b_->provenance.to_json());
    return out;
}

}  // namespace routescope::views
