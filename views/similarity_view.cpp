#include "views/similarity_view.hpp"

#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <tuple>

#include "analysis/layer_pairing.hpp"
#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "views/chart_panel.hpp"
#include "views/display_name.hpp"
#include "views/heatmap_widget.hpp"
#include "views/result_table.hpp"

namespace routescope::views {

nlohmann::json SimilarityViewSettings::to_json() const {
    return {{"dump_a", dump_a.toStdString()},   {"dump_b", dump_b.toStdString()},
            {"measure", measure.toStdString()}, {"vectors", vectors.toStdString()},
            {"max_vectors", max_vectors},       {"gram_m", gram_m},
            {"permutations", permutations},     {"bootstrap", bootstrap},
            {"scatter", {scatter_a, scatter_b}}};
}

SimilarityViewSettings SimilarityViewSettings::from_json(const nlohmann::json& j) {
    SimilarityViewSettings s;
    s.dump_a = setting_string(j, "dump_a", s.dump_a);
    s.dump_b = setting_string(j, "dump_b", s.dump_b);
    s.measure = setting_choice(j, "measure", s.measure, analysis::similarity_measures());
    s.vectors = setting_choice(j, "vectors", s.vectors, {"token", "sentence"});
    s.max_vectors = setting_as_int64(j, "max_vectors", s.max_vectors);
    s.gram_m = setting_as_int64(j, "gram_m", s.gram_m);
    s.permutations = setting_as_int(j, "permutations", s.permutations);
    s.bootstrap = setting_as_int(j, "bootstrap", s.bootstrap);
    // [layer of A, layer of B], or [-1, -1] for none; a layer the dumps lack is refused when the
    // result shows which they have (show_result).
    if (j.contains("scatter")) {
        const auto& c = j.at("scatter");
        if (!c.is_array() || c.size() != 2)
            throw FormatError("settings.scatter: " + data::abbreviated(c.dump()) +
                              " is not [layer of A, layer of B]");
        constexpr int kMax = std::numeric_limits<int>::max();
        s.scatter_a = static_cast<int>(whole_number_at(c[0], -1, kMax, "settings.scatter[0]"));
        s.scatter_b = static_cast<int>(whole_number_at(c[1], -1, kMax, "settings.scatter[1]"));
    }
    return s;
}

namespace {

QString measure_title(const QString& m) {
    if (m == "linear_cka") return QObject::tr("linear CKA");
    if (m == "linear_cka_unbiased") return QObject::tr("linear CKA (unbiased HSIC)");
    if (m == "rbf_cka") return QObject::tr("RBF CKA (σ = median distance)");
    if (m == "svcca") return QObject::tr("SVCCA (99% variance)");
    if (m == "pwcca") return QObject::tr("PWCCA");
    if (m == "procrustes") return QObject::tr("Procrustes distance (0 = same shape)");
    return m;
}

// The workspace's name of the model (display_name.hpp), else the file's stem.
QString name_of(const QString& path) {
    QString n = display_stem(path);
    if (n.endsWith(".dump")) n.chop(5);
    return n;
}

}  // namespace

SimilarityView::SimilarityView(SimilarityViewSettings settings, QWidget* parent)
    : AnalysisView("similarity", parent), settings_(std::move(settings)) {
    measure_box_ = new QComboBox(this);
    measure_box_->setObjectName("measure");
    for (const auto& m : analysis::similarity_measures())
        measure_box_->addItem(measure_title(QString::fromStdString(m)), QString::fromStdString(m));
    vectors_box_ = new QComboBox(this);
    vectors_box_->setObjectName("vectors");
    vectors_box_->addItem(tr("token vectors"), "token");
    vectors_box_->addItem(tr("sentence vectors"), "sentence");
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Measure:"), this));
    controls->addWidget(measure_box_);
    controls->addWidget(new QLabel(tr("Vectors:"), this));
    controls->addWidget(vectors_box_);
    controls->addStretch(1);
    heatmap_ = new HeatmapWidget(figure_);
    heatmap_->setObjectName("similarityMatrix");
    diagonal_ = make_chart_view(tr("By relative depth"), figure_);
    diagonal_->setObjectName("similarityDiagonal");
    scatter_ = make_chart_view(tr("First canonical pair"), figure_);
    scatter_->setObjectName("similarityScatter");
    scatter_->setVisible(false);  // until a cell is clicked
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(heatmap_, 3);
    auto* right = new QVBoxLayout;
    right->addWidget(diagonal_, 1);
    right->addWidget(scatter_, 1);
    fl->addLayout(right, 2);
    connect(heatmap_, &HeatmapWidget::cellClicked, this, [this](int row, int column) {
        const auto& r = result_;
        if (row < 0 || column < 0 || row >= static_cast<int>(r.layers_a.size()) ||
            column >= static_cast<int>(r.layers_b.size()))
            return;
        edit(tr("cell"), [&] {
            show_scatter(r.layers_a[static_cast<std::size_t>(row)],
                         r.layers_b[static_cast<std::size_t>(column)]);
        });
    });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    measure_box_->setCurrentIndex(std::max(0, measure_box_->findData(settings_.measure)));
    vectors_box_->setCurrentIndex(std::max(0, vectors_box_->findData(settings_.vectors)));
    connect(measure_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("measure"), [this] { set_measure(measure_box_->currentData().toString()); });
    });
    connect(vectors_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("vectors"), [this] {
            settings_.vectors = vectors_box_->currentData().toString();
            start();
        });
    });
}

QString SimilarityView::title() const {
    return tr("Similarity — %1 | %2").arg(name_of(settings_.dump_a), name_of(settings_.dump_b));
}

QStringList SimilarityView::input_files() const {
    // Only the dumps it has: with one, the analysis says what to select (never an empty path
    // that the workspace would add as a file and a project would save).
    QStringList out;
    for (const QString& f : {settings_.dump_a, settings_.dump_b})
        if (!f.isEmpty()) out << f;
    return out;
}

QString SimilarityView::input_stem() const {
    return file_stem(settings_.dump_a) + "-vs-" + file_stem(settings_.dump_b);
}

namespace {
/// FormatError when the settings' scatter cell names a layer the result did not compare, as
/// `analyze similarity --scatter 9,9` refuses it: a project's "scatter": [9, 9] was exported with
/// a note in place of the panel and exit 0.
void check_scatter_cell(const SimilarityViewSettings& s, const analysis::SimilarityResult& r) {
    for (const auto& [layer, layers, which] :
         {std::tuple{s.scatter_a, &r.layers_a, "A"}, std::tuple{s.scatter_b, &r.layers_b, "B"}}) {
        if (layer < 0 || std::find(layers->begin(), layers->end(), layer) != layers->end())
            continue;
        const std::string compared = layers->empty() ? std::string("none")
                                                     : std::to_string(layers->front()) + " … " +
                                                           std::to_string(layers->back());
        throw FormatError("settings.scatter: layer " + std::to_string(layer) + " of " + which +
                          " is not among the layers compared (" + compared + ")");
    }
}
}  // namespace

void SimilarityView::restore_settings(const nlohmann::json& j) {
    const auto s = SimilarityViewSettings::from_json(j);
    const bool other_cell =
        s.scatter_a != settings_.scatter_a || s.scatter_b != settings_.scatter_b;
    const bool rerun = s.dump_a != settings_.dump_a || s.dump_b != settings_.dump_b ||
                       s.vectors != settings_.vectors || s.max_vectors != settings_.max_vectors ||
                       s.gram_m != settings_.gram_m || s.permutations != settings_.permutations ||
                       s.bootstrap != settings_.bootstrap;
    // On the result shown (a new one is checked when it comes, in start()).
    if (!rerun && has_result() && !busy()) check_scatter_cell(s, result_);
    settings_ = s;
    {
        QSignalBlocker block(measure_box_);
        measure_box_->setCurrentIndex(std::max(0, measure_box_->findData(settings_.measure)));
    }
    {
        QSignalBlocker block(vectors_box_);
        vectors_box_->setCurrentIndex(std::max(0, vectors_box_->findData(settings_.vectors)));
    }
    if (rerun && has_result()) {
        start();  // the scatter follows the new result
        return;
    }
    redraw();
    if (!other_cell) return;
    if (settings_.scatter_a >= 0 && settings_.scatter_b >= 0 && has_result())
        show_scatter(settings_.scatter_a, settings_.scatter_b);
    else
        draw_scatter();  // hidden
}

void SimilarityView::start() {
    const auto s = settings_;
    struct Out {
        analysis::SimilarityResult result;
        int n_a = 1, n_b = 1;
    };
    run<Out>(
        tr("Computing representation similarity"),
        [s](AnalysisSteps& steps) {
            constexpr int kSteps = 1000;  // the analysis's own steps, scaled to these
            steps.set_total(kSteps);
            if (s.dump_a.isEmpty() || s.dump_b.isEmpty())
                throw std::runtime_error(
                    "Similarity compares two dumps: select two dumps of the same examples (A "
                    "and B) in the workspace, then choose Analysis › Similarity.");
            const analysis::DumpReader a(s.dump_a.toStdString());
            const analysis::DumpReader b(s.dump_b.toStdString());
            analysis::SimilarityOptions o;
            o.sentence_vectors = s.vectors == "sentence";
            o.max_vectors = s.max_vectors;
            o.gram_m = s.gram_m;
            o.permutations = s.permutations;
            o.bootstrap = s.bootstrap;
            // Cancel is honoured inside the analysis (each chunk, layer pair, permutation and
            // resample), not only between steps: a run of minutes stops within a second.
            o.cancelled = [&steps] {
                try {
                    steps.check();
                    return false;
                } catch (const AnalysisSteps::Cancelled&) {
                    return true;
                }
            };
            int reported = 0;
            o.progress = [&steps, &reported](std::int64_t done, std::int64_t total) {
                const auto now = static_cast<int>(kSteps * done / std::max<std::int64_t>(1, total));
                if (now == reported) return steps.check();
                reported = now;
                steps.done(now);  // throws Cancelled when cancelled
            };
            Out out;
            try {
                out.result = analysis::representation_similarity(a, b, o);
            } catch (const analysis::Cancelled&) {
                steps.check();  // the view's Cancel: no result, no error
                throw;
            }
            out.n_a = static_cast<int>(std::max<std::int64_t>(1, a.n_layers()));
            out.n_b = static_cast<int>(std::max<std::int64_t>(1, b.n_layers()));
            steps.done(kSteps);
            return out;
        },
        [this](Out& r) {
            check_scatter_cell(settings_, r.result);  // the view's error: nothing drawn
            result_ = std::move(r.result);
            n_layers_a_ = r.n_a;
            n_layers_b_ = r.n_b;
            scatter_result_ = {};
            scatter_error_.clear();
            redraw();
            if (settings_.scatter_a >= 0 && settings_.scatter_b >= 0)
                QMetaObject::invokeMethod(
                    this, [this] { show_scatter(settings_.scatter_a, settings_.scatter_b); },
                    Qt::QueuedConnection);
        });
}

void SimilarityView::restyle() {
    if (!has_result() || busy()) {
        start();
        return;
    }
    redraw();
    draw_scatter();
}

void SimilarityView::show_scatter(int layer_a, int layer_b) {
    settings_.scatter_a = layer_a;
    settings_.scatter_b = layer_b;
    const auto s = settings_;
    const analysis::SimilarityResult r = result_;
    struct Out {
        analysis::CanonicalScatter scatter;
        QString error;
    };
    run<Out>(
        tr("Computing the first canonical pair of layers %1 and %2").arg(layer_a).arg(layer_b),
        [s, r, layer_a, layer_b](AnalysisSteps& steps) {
            steps.set_total(1);
            Out out;
            try {
                const analysis::DumpReader a(s.dump_a.toStdString());
                const analysis::DumpReader b(s.dump_b.toStdString());
                out.scatter = analysis::canonical_scatter(a, b, r, layer_a, layer_b);
            } catch (const ConfigError& e) {
                out.error = QString::fromUtf8(e.what());  // shown on the panel; the matrix stays
            }
            steps.done(1);
            return out;
        },
        [this](Out& out) {
            scatter_result_ = std::move(out.scatter);
            scatter_error_ = out.error;
            draw_scatter();
        });
}

void SimilarityView::draw_scatter() {
    clear_chart(scatter_);
    // Whether a cell is chosen, not isVisible(): that is false while the window or the view's tab
    // is hidden (a headless export, another tab), and the panel kept its old, empty drawing.
    const bool cell = settings_.scatter_a >= 0 && settings_.scatter_b >= 0;
    scatter_->setVisible(cell);
    if (!cell) return;
    const QString name_a = name_of(settings_.dump_a), name_b = name_of(settings_.dump_b);
    if (!scatter_error_.isEmpty()) {
        scatter_->chart()->setTitle(scatter_error_.toHtmlEscaped());
        return;
    }
    const auto& p = scatter_result_;
    auto* points = new QScatterSeries();
    points->setName(tr("%n vector(s)", nullptr, static_cast<int>(p.x.size())));
    points->setMarkerSize(4);
    points->setColor(model_colour_of(settings_.dump_a));
    points->setBorderColor(Qt::transparent);
    QList<QPointF> xy;
    for (std::size_t i = 0; i < p.x.size(); ++i)
        xy.append({p.x[i], p.y[i]});
    points->replace(xy);
    scatter_->chart()->addSeries(points);
    // Short axis titles (a long one wraps past the panel's height at 183 mm and 10 pt); what the
    // variates are goes into the chart's title, which wraps across the width.
    // Chart and axis titles are HTML to Qt Charts and to the figure: the names are escaped.
    points->attachAxis(
        x_axis(scatter_, tr("%1, layer %2").arg(name_a.toHtmlEscaped()).arg(p.layer_a)));
    points->attachAxis(
        y_axis(scatter_, tr("%1, layer %2").arg(name_b.toHtmlEscaped()).arg(p.layer_b)));
    fit_axes(scatter_);
    scatter_->chart()->setTitle(tr("First canonical pair (unit variance): ρ = %1 on %2 + %3 "
                                   "principal directions")
                                    .arg(p.rho, 0, 'f', 3)
                                    .arg(p.dims_a)
                                    .arg(p.dims_b));
}

void SimilarityView::set_measure(const QString& measure) {
    settings_.measure = measure;
    {
        QSignalBlocker block(measure_box_);
        measure_box_->setCurrentIndex(std::max(0, measure_box_->findData(measure)));
    }
    redraw();
}

namespace {
// analysis/similarity.cpp's note that a score lies outside its bootstrap interval.
bool is_bootstrap_note(const std::string& note) {
    return note.find("outside its bootstrap interval") != std::string::npos;
}
}  // namespace

void SimilarityView::redraw() {
    const auto& r = result_;
    const auto it =
        std::find(r.measures.begin(), r.measures.end(), settings_.measure.toStdString());
    clear_chart(diagonal_);
    if (it == r.measures.end() || r.layers_a.empty() || r.layers_b.empty()) {
        HeatmapData empty;
        empty.title = tr("%1 was not computed").arg(measure_title(settings_.measure));
        for (const auto& n : r.notes)
            empty.note += QString::fromStdString(n);
        heatmap_->set_data(empty);
        return;
    }
    const auto& values = r.values[static_cast<std::size_t>(it - r.measures.begin())];
    const QString name_a = name_of(settings_.dump_a), name_b = name_of(settings_.dump_b);
    const QString title = measure_title(settings_.measure);
    HeatmapData d;
    d.rows = static_cast<int>(r.layers_a.size());
    d.columns = static_cast<int>(r.layers_b.size());
    for (int l : r.layers_a)
        d.row_labels << QString::number(l);
    for (int l : r.layers_b)
        d.column_labels << QString::number(l);
    for (const auto& row : values)
        for (double v : row)
            d.values.push_back(v);
    d.title = tr("%1: %2 against %3").arg(title, name_a, name_b);
    d.y_label = tr("layer of %1").arg(name_a);
    d.x_label = tr("layer of %1").arg(name_b);
    d.value_label = title;
    const bool distance = settings_.measure == "procrustes";
    d.lo = 0;
    d.hi = distance ? 2.0 : 1.0;
    if (settings_.measure == "linear_cka_unbiased") d.lo = std::numeric_limits<double>::quiet_NaN();
    d.note = tr("N = %1 %2 vectors (of %3); the interval and null on a Gram sample of n = %4 "
                "examples")
                 .arg(static_cast<qint64>(r.examples.size()))
                 .arg(r.options.sentence_vectors ? tr("sentence") : tr("token"))
                 .arg(r.available)
                 .arg(static_cast<qint64>(r.gram_sample.size()));
    // What the analysis said of the result (a layer without variance, whose cells are
    // undefined; measures left out): on the figure, not only in the JSON.
    // (Not the bootstrap's: it is about the interval of the diagonal chart, whose legend says it.)
    for (const auto& n : r.notes)
        if (!is_bootstrap_note(n)) d.note += "\n" + QString::fromStdString(n);
    heatmap_->set_data(d);

    // The diagonal: each layer of A against B's layer at the nearest relative depth.
    const analysis::GramStatistics* gram =
        settings_.measure == "linear_cka" && r.has_linear_gram ? &r.linear_gram
        : settings_.measure == "rbf_cka" && r.has_rbf_gram     ? &r.rbf_gram
                                                               : nullptr;
    std::vector<double> x, y, observed, null_mean, low, high, xg;
    for (std::size_t i = 0; i < r.layers_a.size(); ++i) {
        const int partner =
            analysis::nearest_depth_layer(r.layers_a[i], n_layers_a_, r.layers_b, n_layers_b_);
        const auto j = static_cast<std::size_t>(
            std::find(r.layers_b.begin(), r.layers_b.end(), partner) - r.layers_b.begin());
        if (j >= r.layers_b.size()) continue;
        x.push_back(analysis::relative_depth(r.layers_a[i], n_layers_a_));
        y.push_back(values[i][j]);
        if (gram && !gram->null_mean.empty()) {
            xg.push_back(x.back());
            observed.push_back(gram->observed[i][j]);
            null_mean.push_back(gram->null_mean[i][j]);
            low.push_back(gram->ci_low[i][j]);
            high.push_back(gram->ci_high[i][j]);
        }
    }
    // Short legend names (the figure's note says what n and N are).
    add_line(diagonal_, tr("N = %1").arg(static_cast<qint64>(r.examples.size())), x, y)
        ->setPointsVisible(true);
    if (gram && !xg.empty()) {
        const QString n = QString::number(static_cast<qint64>(r.gram_sample.size()));
        auto* sample = add_line(diagonal_, tr("n = %1").arg(n), xg, observed);
        sample->setPointsVisible(true);
        auto dashed = [&](const QString& label, const std::vector<double>& v, QColor colour) {
            auto* s = add_line(diagonal_, label, xg, v);
            QPen pen = s->pen();
            pen.setStyle(Qt::DashLine);
            pen.setColor(colour);
            s->setPen(pen);
            return s;
        };
        const QColor band = sample->pen().color();
        // Resampling repeats examples and raises CKA: where the score lies outside its interval
        // (analysis/similarity.cpp's note) the band is the resampled score's spread, said so.
        const std::string prefix = settings_.measure.toStdString() + ": ";
        const bool above = std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) {
            return n.starts_with(prefix) && is_bootstrap_note(n);
        });
        dashed(above ? tr("resampled (n)") : tr("95% CI (n)"), low, band);
        auto* upper = dashed(QString(), high, band);
        for (auto* marker : diagonal_->chart()->legend()->markers(upper)) {
            marker->setVisible(false);  // one legend entry for the interval
            marker->setProperty("legendHidden", true);
        }
        dashed(tr("null mean (n)"), null_mean, Qt::gray);
    }
    x_axis(diagonal_, tr("relative depth ℓ / n_layers of %1").arg(name_a.toHtmlEscaped()));
    y_axis(diagonal_, title);
    fit_axes(diagonal_);
    diagonal_->chart()->setTitle(
        tr("Each layer against %1's at the same depth").arg(name_b.toHtmlEscaped()));
}

analysis::CsvTable SimilarityView::figure_table() const {
    return with_keys(
        result_.table(), {"model_a", "model_b"},
        {name_of(settings_.dump_a).toStdString(), name_of(settings_.dump_b).toStdString()});
}

nlohmann::json SimilarityView::result_provenance() const {
    return result_.provenance.to_json();
}

}  // namespace routescope::views
