#include "views/gates_view.hpp"

#include "analysis/cached_analyses.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/chart_panel.hpp"
#include "views/heatmap_widget.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json GatesViewSettings::to_json() const {
    return {{"dump", dump.toStdString()},
            {"layer", layer},
            {"gate", gate.toStdString()},
            {"example", example}};
}

GatesViewSettings GatesViewSettings::from_json(const nlohmann::json& j) {
    GatesViewSettings s;
    s.dump = QString::fromStdString(j.value("dump", ""));
    s.layer = j.value("layer", s.layer);
    s.gate = QString::fromStdString(j.value("gate", ""));
    s.example = j.value("example", s.example);
    return s;
}

GatesView::GatesView(GatesViewSettings settings, QWidget* parent)
    : AnalysisView("gates", parent), settings_(std::move(settings)) {
    gate_box_ = new QComboBox(this);
    gate_box_->setObjectName("gate");
    gate_box_->setToolTip(tr("Layer and gate shown in the histogram and timeline"));
    search_ = new QLineEdit(this);
    search_->setObjectName("exampleSearch");
    search_->setPlaceholderText(tr("Search examples by text…"));
    search_->setClearButtonEnabled(true);
    example_box_ = new QComboBox(this);
    example_box_->setObjectName("example");
    example_box_->setMinimumContentsLength(30);
    example_box_->setToolTip(tr("Example shown in the token-aligned timeline"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Gate:"), this));
    controls->addWidget(gate_box_);
    controls->addWidget(new QLabel(tr("Example:"), this));
    controls->addWidget(search_);
    controls->addWidget(example_box_, 1);

    timeline_map_ = new HeatmapWidget(figure_);
    reverse_map_ = new HeatmapWidget(figure_);
    reverse_map_->setObjectName("reverseTimeline");
    reverse_map_->hide();
    histogram_ = make_chart_view(tr("Histogram"), figure_);
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    auto* panels = new QVBoxLayout;
    panels->addWidget(timeline_map_, 1);
    panels->addWidget(reverse_map_, 1);
    fl->addLayout(panels, 3);
    fl->addWidget(histogram_, 2);
    table_ = new QTableWidget(this);
    table_->setObjectName("gateStatistics");
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 3);
    layout->addWidget(table_, 1);

    connect(gate_box_, &QComboBox::currentIndexChanged, this, [this] {
        const auto key = gate_box_->currentData().toStringList();
        if (key.size() == 2) select_gate(key[0].toInt(), key[1]);
    });
    connect(example_box_, &QComboBox::currentIndexChanged, this, [this] {
        if (example_box_->currentIndex() >= 0)
            select_example(example_box_->currentData().toLongLong());
    });
    connect(search_, &QLineEdit::textChanged, this, [this] { fill_examples(); });
    connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (result_ && row < static_cast<int>(result_->gates.size())) {
            const auto& g = result_->gates[static_cast<std::size_t>(row)];
            select_gate(g.layer, QString::fromStdString(g.gate));
        }
    });
}

QString GatesView::title() const {
    return tr("Gates — %1").arg(QFileInfo(settings_.dump).fileName());
}
QString GatesView::input_stem() const {
    return QFileInfo(settings_.dump).baseName();
}

void GatesView::restore_settings(const nlohmann::json& j) {
    const auto s = GatesViewSettings::from_json(j);
    const bool rerun = s.dump != settings_.dump;
    settings_ = s;
    if (rerun && has_result()) return start();
    if (result_) select_gate(settings_.layer, settings_.gate);
}

void GatesView::start() {
    const QString path = settings_.dump;
    using Out = std::pair<analysis::GatesResult, std::vector<std::string>>;
    run<Out>(
        tr("Computing gate statistics of %1").arg(QFileInfo(path).fileName()),
        [path](AnalysisSteps&) {
            const analysis::DumpReader dump(path.toStdString());
            Out out{*analysis::cached_gate_statistics(dump, {}, {}), {}};
            if (dump.has_text())
                out.second = dump.text();
            else
                for (std::int64_t i = 0; i < dump.examples(); ++i)
                    out.second.push_back("example " + std::to_string(i));
            return out;
        },
        [this](Out& out) {
            result_ = std::move(out.first);
            texts_ = std::move(out.second);
            if (result_->gates.empty())
                throw routescope::ConfigError(
                    "the dump has no /layers/<l>/gates datasets (DUMP_FORMAT.md): nothing to show");
            show_table(table_, result_->table());
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
            bool found = false;
            for (const auto& g : result_->gates)
                found = found || (g.layer == settings_.layer &&
                                  QString::fromStdString(g.gate) == settings_.gate);
            if (found)
                select_gate(settings_.layer, settings_.gate);
            else
                select_gate(first.layer, QString::fromStdString(first.gate));
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
    for (std::size_t i = 0; i < result_->gates.size(); ++i) {
        const auto& g = result_->gates[i];
        if (g.layer != settings_.layer || QString::fromStdString(g.gate) != settings_.gate)
            continue;
        table_->selectRow(static_cast<int>(i));
        // Steps over the histogram's equal-width bins on the gate's range.
        const double w = (g.range.hi - g.range.lo) / std::max<std::size_t>(1, g.histogram.size());
        std::vector<double> x, y;
        for (std::size_t b = 0; b < g.histogram.size(); ++b) {
            const double f =
                g.values ? static_cast<double>(g.histogram[b]) / static_cast<double>(g.values) : 0;
            x.push_back(g.range.lo + b * w);
            y.push_back(f);
            x.push_back(g.range.lo + (b + 1) * w);
            y.push_back(f);
        }
        add_line(histogram_, QString::fromStdString(g.gate), x, y);
        x_axis(histogram_, tr("gate value (%1 range)").arg(QString::fromStdString(g.range.source)));
        y_axis(histogram_, tr("fraction of values"));
        fit_axes(histogram_);
        x_axis(histogram_)->setRange(g.range.lo, g.range.hi);
        QString sat = tr("< 0.1: %1%, > 0.9: %2%")
                          .arg(100 * g.below_0_1, 0, 'f', 1)
                          .arg(100 * g.above_0_9, 0, 'f', 1);
        if (g.above_0_99 >= 0) sat += tr(", > 0.99: %1%").arg(100 * g.above_0_99, 0, 'f', 1);
        histogram_->chart()->setTitle(tr("Layer %1 %2: mean %3, std %4 · %5")
                                          .arg(g.layer)
                                          .arg(QString::fromStdString(g.gate))
                                          .arg(g.mean, 0, 'f', 3)
                                          .arg(g.std, 0, 'f', 3)
                                          .arg(sat));
    }
}

void GatesView::load_timeline() {
    if (!result_ || settings_.gate.isEmpty()) return;
    const QString path = settings_.dump;
    const int layer = settings_.layer;
    const QString gate = settings_.gate;
    const qint64 example = settings_.example;
    // A second, small worker job: the gate row and tokens of one example (never read on this
    // thread).
    run<GateTimeline>(
        tr("Reading gate %1 of layer %2, example %3").arg(gate).arg(layer).arg(example),
        [path, layer, gate, example](AnalysisSteps&) {
            const analysis::DumpReader dump(path.toStdString());
            const auto& rows = dump.example_of_row(layer);
            const auto it = std::find(rows.begin(), rows.end(), example);
            if (it == rows.end())
                throw routescope::ConfigError("example " + std::to_string(example) +
                                              " is not stored in layer " + std::to_string(layer) +
                                              " of " + path.toStdString() + " (example_index)");
            const auto row = static_cast<std::int64_t>(it - rows.begin());
            GateTimeline t{layer,
                           gate,
                           example,
                           dump.lengths().at(static_cast<std::size_t>(example)),
                           dump.gate_row(layer, gate.toStdString(), row),
                           {},
                           dump.gate_reverse_from(layer),
                           dump.prefix_end(example)};
            std::vector<std::string> vocab;
            try {
                vocab = dump.vocab();
            } catch (const std::exception&) {
                // No /vocab: token ids along the axis.
            }
            for (std::int32_t id : dump.tokens(example))
                t.tokens << (id >= 0 && static_cast<std::size_t>(id) < vocab.size()
                                 ? QString::fromStdString(vocab[static_cast<std::size_t>(id)])
                                 : QString::number(id));
            return t;
        },
        [this](GateTimeline& t) {
            timeline_ = std::move(t);
            const int channels = static_cast<int>(timeline_.values.cols());
            const bool split = timeline_.reverse_from > 0 && timeline_.reverse_from < channels;
            const QString title = tr("Layer %1 gate %2, example %3")
                                      .arg(timeline_.layer)
                                      .arg(timeline_.gate)
                                      .arg(timeline_.example);
            if (split) {
                timeline_map_->set_data(
                    timeline_panel(0, timeline_.reverse_from,
                                   tr("%1 · forward half (channels 0–%2, left to right)")
                                       .arg(title)
                                       .arg(timeline_.reverse_from - 1)));
                reverse_map_->set_data(
                    timeline_panel(timeline_.reverse_from, channels,
                                   tr("%1 · reverse half (channels %2–%3, right to left)")
                                       .arg(title)
                                       .arg(timeline_.reverse_from)
                                       .arg(channels - 1)));
                reverse_map_->show();
            } else {
                timeline_map_->set_data(timeline_panel(0, channels, title));
                reverse_map_->set_data({});
                reverse_map_->hide();
            }
        });
}

HeatmapData GatesView::timeline_panel(int first_channel, int end_channel,
                                      const QString& title) const {
    HeatmapData d;
    const qint64 positions = std::min<qint64>(timeline_.length, timeline_.values.rows());
    d.rows = end_channel - first_channel;
    d.columns = static_cast<int>(positions);
    d.values.resize(static_cast<std::size_t>(d.rows) * d.columns);
    for (int c = 0; c < d.rows; ++c) {
        d.row_labels << QString::number(first_channel + c);
        for (int p = 0; p < d.columns; ++p)
            d.values[static_cast<std::size_t>(c) * d.columns + p] =
                timeline_.values(p, first_channel + c);
    }
    for (int p = 0; p < d.columns; ++p)
        d.column_labels << timeline_.tokens.value(p, QString::number(p));
    d.title = title;
    d.x_label = tr("token");
    d.y_label = tr("channel");
    d.value_label = tr("gate value");
    if (timeline_.prefix_end > 0 && timeline_.prefix_end < positions) {
        // The line is drawn through the first suffix (causal-region) token.
        d.marked_column = static_cast<int>(timeline_.prefix_end);
        d.note = tr("line: first token of the causal suffix (prefix = tokens 0–%1, "
                    "/data/reset_mask)")
                     .arg(timeline_.prefix_end - 1);
    }
    return d;
}

analysis::CsvTable GatesView::figure_table() const {
    return result_ ? result_->table() : analysis::CsvTable{};
}

nlohmann::json GatesView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    if (result_) out.push_back(result_->provenance.to_json());
    return out;
}

}  // namespace routescope::views
