#include "views/attention_view.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "views/display_name.hpp"
#include "views/heatmap_widget.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json AttentionViewSettings::to_json() const {
    return {{"dump", dump.toStdString()},
            {"dump_b", dump_b.toStdString()},
            {"layer", layer},
            {"example", example},
            {"mode", mode.toStdString()},
            {"normalise", normalise.toStdString()},
            {"head", head}};
}

AttentionViewSettings AttentionViewSettings::from_json(const nlohmann::json& j) {
    AttentionViewSettings s;
    s.dump = setting_string(j, "dump", s.dump);
    s.dump_b = setting_string(j, "dump_b", s.dump_b);
    s.layer = setting_as_int(j, "layer", s.layer);
    s.example = setting_as_int64(j, "example", s.example);
    s.mode = setting_string(j, "mode", s.mode);
    s.normalise = setting_string(j, "normalise", s.normalise);
    s.head = setting_as_int(j, "head", s.head);
    return s;
}

namespace {

QString normalise_text(const QString& n) {
    if (n == "minmax") return QObject::tr("|·| min-max per row");
    if (n == "rownorm") return QObject::tr("|·| / row sum");
    return QObject::tr("raw");
}

}  // namespace

AttentionView::AttentionView(AttentionViewSettings settings, QWidget* parent)
    : AnalysisView("implicit_attention", parent), settings_(std::move(settings)) {
    mode_box_ = new QComboBox(this);
    mode_box_->setObjectName("mode");
    mode_box_->addItem(tr("A_f + A_b (both convolutions)"), "sum");
    mode_box_->addItem(tr("forward A_f"), "forward");
    mode_box_->addItem(tr("backward A_b"), "backward");
    mode_box_->addItem(tr("gated by the inputs (BiGS)"), "gated");
    normalise_box_ = new QComboBox(this);
    normalise_box_->setObjectName("normalise");
    normalise_box_->addItem(tr("raw"), "raw");
    normalise_box_->addItem(tr("|·| min-max per row"), "minmax");
    normalise_box_->addItem(tr("|·| / row sum"), "rownorm");
    head_box_ = new QSpinBox(this);
    head_box_->setObjectName("head");
    head_box_->setRange(-1, 1024);
    head_box_->setSpecialValueText(tr("mean of heads"));
    head_box_->setToolTip(
        tr("For a dump with attention probabilities (BERT, dump --attention): "
           "one head, or the mean of the heads"));
    layer_box_ = new QSpinBox(this);
    layer_box_->setObjectName("layer");
    layer_box_->setRange(0, 4096);
    example_box_ = new QSpinBox(this);
    example_box_->setObjectName("example");
    example_box_->setRange(0, 1 << 30);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Layer:"), this));
    controls->addWidget(layer_box_);
    controls->addWidget(new QLabel(tr("Example:"), this));
    controls->addWidget(example_box_);
    controls->addWidget(new QLabel(tr("Matrix:"), this));
    controls->addWidget(mode_box_);
    controls->addWidget(new QLabel(tr("Rows:"), this));
    controls->addWidget(normalise_box_);
    controls->addWidget(new QLabel(tr("Head:"), this));
    controls->addWidget(head_box_);
    controls->addStretch(1);
    a_ = new HeatmapWidget(figure_);
    a_->setObjectName("attentionA");
    b_ = new HeatmapWidget(figure_);
    b_->setObjectName("attentionB");
    diff_ = new HeatmapWidget(figure_);
    diff_->setObjectName("attentionDifference");
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(a_);
    fl->addWidget(b_);
    fl->addWidget(diff_);
    compare_note_ = new QLabel(this);
    compare_note_->setObjectName("compareNote");
    compare_note_->setWordWrap(true);
    compare_note_->hide();
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(compare_note_);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    sync_controls();
    // The spin boxes step (their arrows: one edit per control while they move); the two menus
    // are choices.
    auto rerun = [this](const QString& what, bool steps) {
        edit(
            what,
            [this] {
                settings_.layer = layer_box_->value();
                settings_.example = example_box_->value();
                settings_.mode = mode_box_->currentData().toString();
                settings_.normalise = normalise_box_->currentData().toString();
                settings_.head = head_box_->value();
                start();
            },
            steps);
    };
    connect(head_box_, &QSpinBox::valueChanged, this, [rerun] { rerun(tr("head"), true); });
    connect(mode_box_, &QComboBox::currentIndexChanged, this,
            [rerun] { rerun(tr("mode"), false); });
    connect(normalise_box_, &QComboBox::currentIndexChanged, this,
            [rerun] { rerun(tr("normalisation"), false); });
    connect(layer_box_, &QSpinBox::valueChanged, this, [rerun] { rerun(tr("layer"), true); });
    connect(example_box_, &QSpinBox::valueChanged, this, [rerun] { rerun(tr("example"), true); });
}

void AttentionView::sync_controls() {
    const QSignalBlocker b1(mode_box_), b2(normalise_box_), b3(layer_box_), b4(example_box_),
        b5(head_box_);
    head_box_->setValue(settings_.head);
    mode_box_->setCurrentIndex(std::max(0, mode_box_->findData(settings_.mode)));
    normalise_box_->setCurrentIndex(std::max(0, normalise_box_->findData(settings_.normalise)));
    layer_box_->setValue(settings_.layer);
    example_box_->setValue(static_cast<int>(settings_.example));
}

QString AttentionView::matrix_text(const analysis::ImplicitAttentionResult& r) const {
    if (r.source == "decay")  // Birdie: the forget gates' decay products (implicit_attention.hpp)
        return tr("forget-gate decay, %1")
            .arg(r.options.mode == "sum"        ? tr("all state channels")
                 : r.options.mode == "forward"  ? tr("forward scan")
                 : r.options.mode == "backward" ? tr("reverse scan")
                                                : tr("gated by o, i, z"));
    if (r.source == "spatial")  // gMLP: the spatial weight W
        return r.options.mode == "forward"    ? tr("spatial weight W, lower triangle")
               : r.options.mode == "backward" ? tr("spatial weight W, upper triangle")
                                              : tr("spatial weight W");
    if (r.source != "attention" && r.causal && r.options.mode != "forward")
        return r.options.mode == "sum"
                   ? tr("A_f alone (a causal layer: no backward convolution)")
                   : tr("gated by u_f (a causal layer: no backward convolution)");
    if (r.source != "attention")
        return mode_box_->itemText(
            std::max(0, mode_box_->findData(QString::fromStdString(r.options.mode))));
    return r.options.head < 0 ? tr("attention, mean of %n head(s)", nullptr, r.heads)
                              : tr("attention, head %1 of %2").arg(r.options.head).arg(r.heads);
}

QString AttentionView::title() const {
    return settings_.dump_b.isEmpty()
               ? tr("Implicit attention — %1").arg(file_stem(settings_.dump))
               : tr("Implicit attention — %1 | %2")
                     .arg(file_stem(settings_.dump), file_stem(settings_.dump_b));
}

QStringList AttentionView::input_files() const {
    QStringList out{settings_.dump};
    if (!settings_.dump_b.isEmpty()) out << settings_.dump_b;
    return out;
}

QString AttentionView::input_stem() const {
    return settings_.dump_b.isEmpty()
               ? file_stem(settings_.dump)
               : file_stem(settings_.dump) + "-vs-" + file_stem(settings_.dump_b);
}

void AttentionView::restore_settings(const nlohmann::json& j) {
    const auto s = AttentionViewSettings::from_json(j);
    const bool rerun = s.to_json() != settings_.to_json();
    settings_ = s;
    sync_controls();
    if (rerun && has_result())
        start();
    else
        redraw();
}

void AttentionView::start() {
    const auto s = settings_;
    run<std::vector<analysis::ImplicitAttentionResult>>(
        tr("Computing implicit attention"),
        [s](AnalysisSteps& steps) {
            std::vector<analysis::ImplicitAttentionResult> out;
            const QStringList files =
                s.dump_b.isEmpty() ? QStringList{s.dump} : QStringList{s.dump, s.dump_b};
            steps.set_total(static_cast<int>(files.size()));
            for (const auto& f : files) {
                const analysis::DumpReader dump(f.toStdString());
                analysis::ImplicitAttentionOptions o;
                o.layer = s.layer;
                o.example = s.example;
                o.mode = s.mode.toStdString();
                o.normalise = s.normalise.toStdString();
                o.head = s.head;
                out.push_back(analysis::implicit_attention(dump, o));
                steps.done(static_cast<int>(out.size()));
            }
            if (out.size() == 2 && out[0].length != out[1].length)
                throw std::runtime_error(
                    "the two dumps hold different examples: example " + std::to_string(s.example) +
                    " has " + std::to_string(out[0].length) + " tokens in the first and " +
                    std::to_string(out[1].length) + " in the second");
            return out;
        },
        [this](std::vector<analysis::ImplicitAttentionResult>& r) {
            results_ = std::move(r);
            redraw();
        });
}

void AttentionView::redraw() {
    const bool compare = results_.size() == 2;
    b_->setVisible(compare);
    diff_->setVisible(compare);
    if (!compare) {
        compare_note_text_.clear();
        compare_note_->hide();
    }
    if (results_.empty()) return;
    auto data_of = [&](const analysis::ImplicitAttentionResult& r, const QString& name) {
        HeatmapData d;
        d.rows = d.columns = static_cast<int>(r.length);
        d.values = r.matrix;
        for (const auto& t : r.tokens) {
            d.row_labels << QString::fromStdString(t);
            d.column_labels << QString::fromStdString(t);
        }
        d.title =
            tr("%1, layer %2, example %3").arg(name).arg(r.options.layer).arg(r.options.example);
        d.x_label = tr("source token s");
        d.y_label = tr("query token t");
        d.value_label = tr("%1 (%2)").arg(matrix_text(r), normalise_text(settings_.normalise));
        // Probabilities and magnitudes are never negative; raw convolution weights are.
        d.diverging = settings_.normalise == "raw" && settings_.mode != "gated" &&
                      r.source != "attention" && r.source != "decay";
        d.note =
            tr("Matrix: %1; rows: %2").arg(matrix_text(r), normalise_text(settings_.normalise));
        return d;
    };
    // The mode applies to convolutions; the head to attention probabilities.
    bool any_attention = false, any_convolution = false;
    for (const auto& r : results_) {
        any_attention = any_attention || r.source == "attention";
        any_convolution = any_convolution || r.source != "attention";
    }
    mode_box_->setEnabled(any_convolution);
    head_box_->setEnabled(any_attention);
    HeatmapData a = data_of(results_[0], file_stem(settings_.dump));
    if (!compare) {
        a_->set_data(a);
        return;
    }
    HeatmapData b = data_of(results_[1], file_stem(settings_.dump_b));
    // A − B and one colour range are for two matrices of one kind (two convolutions, two
    // attentions). Session 28: a BiGS's signed convolution (|max| 3.6) beside BERT's attention
    // probabilities (0.035 to 0.089) on one range drew B as one flat colour, and A − B subtracted
    // probabilities from convolution weights. Different kinds keep their own ranges and bars.
    const QString kind_a = kind_text(results_[0]), kind_b = kind_text(results_[1]);
    const bool same_kind = results_[0].source == results_[1].source;
    if (same_kind) {
        link_colour_ranges(a, b);
        HeatmapData d = a;
        for (std::size_t i = 0; i < d.values.size(); ++i)
            d.values[i] = results_[0].matrix[i] - results_[1].matrix[i];
        d.title = tr("A − B");
        // The difference's own quantity, not A's.
        d.value_label =
            a.value_label == b.value_label ? tr("A − B, %1").arg(a.value_label) : tr("A − B");
        d.diverging = true;
        d.lo = d.hi = std::numeric_limits<double>::quiet_NaN();
        diff_->set_data(d);
        compare_note_text_.clear();
    } else {
        diff_->set_data({});
        compare_note_text_ = tr("A − B is not drawn: A is %1 and B %2, which are not on one "
                                "scale; each has its own colour range.")
                                 .arg(kind_a, kind_b);
        // In print too, where the line above the figure is not.
        b.note = tr("%1 · a colour range of its own (A is %2)").arg(b.note, kind_a);
    }
    diff_->setVisible(same_kind);
    compare_note_->setText(compare_note_text_);
    compare_note_->setVisible(!compare_note_text_.isEmpty());
    a_->set_data(a);
    b_->set_data(b);
}

QString AttentionView::kind_text(const analysis::ImplicitAttentionResult& r) const {
    if (r.source == "attention") return tr("attention probabilities");
    if (r.source == "decay") return tr("a forget-gate decay matrix");
    if (r.source == "spatial") return tr("a spatial weight matrix");
    return tr("a convolution matrix");
}

analysis::CsvTable AttentionView::figure_table() const {
    analysis::CsvTable out;
    const QStringList names{display_stem(settings_.dump), display_stem(settings_.dump_b)};
    for (std::size_t i = 0; i < results_.size(); ++i)
        append_rows(out, with_keys(results_[i].table(), {"model"},
                                   {names.value(static_cast<int>(i)).toStdString()}));
    return out;
}

nlohmann::json AttentionView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : results_)
        out.push_back(r.provenance.to_json());
    return out;
}

}  // namespace routescope::views
