#include "views/length_accuracy_view.hpp"

#include <cmath>
#include <limits>

#include "analysis/cached_analyses.hpp"
#include "analysis/length_accuracy.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/chart_panel.hpp"
#include "views/interval_bar_chart.hpp"

#include "views/display_name.hpp"

namespace routescope::views {

nlohmann::json LengthAccuracyViewSettings::to_json() const {
    return {{"a", a.toStdString()},
            {"b", b.toStdString()},
            {"binning", binning.toStdString()},
            {"bins", bins},
            {"width", width}};
}

LengthAccuracyViewSettings LengthAccuracyViewSettings::from_json(const nlohmann::json& j) {
    LengthAccuracyViewSettings s;
    s.a = setting_string(j, "a", s.a);
    s.b = setting_string(j, "b", s.b);
    s.binning = setting_choice(j, "binning", s.binning, {"quantile", "width"});
    // As `analyze length-accuracy --bins` takes them; a width of 0 is "from the bins".
    s.bins = static_cast<int>(setting_int(j, "bins", s.bins, 1, analysis::kMaxBins));
    s.width = setting_number(j, "width", s.width, 0, std::numeric_limits<double>::max());
    return s;
}

LengthAccuracyView::LengthAccuracyView(LengthAccuracyViewSettings settings, QWidget* parent)
    : AnalysisView("length_accuracy", parent), settings_(std::move(settings)) {
    binning_box_ = new QComboBox(this);
    binning_box_->addItem(tr("Quantile bins (equal counts)"), "quantile");
    binning_box_->addItem(tr("Fixed width"), "width");
    bins_box_ = new QSpinBox(this);
    bins_box_->setRange(1, static_cast<int>(analysis::kMaxBins));  // as a project may set
    bins_box_->setPrefix(tr("bins: "));
    binning_box_->setCurrentIndex(std::max(0, binning_box_->findData(settings_.binning)));
    bins_box_->setValue(settings_.bins);
    auto* controls = new QHBoxLayout;
    controls->addWidget(binning_box_);
    controls->addWidget(bins_box_);
    controls->addStretch(1);
    chart_ = new IntervalBarChart(figure_);
    chart_->setProperty("printAspect", 0.8);  // bars over differences: taller than a chart
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(chart_);
    examples_ = new QTableWidget(this);
    examples_->setObjectName("binExamples");
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 3);
    layout->addWidget(examples_, 1);
    connect(chart_, &IntervalBarChart::binClicked, this, &LengthAccuracyView::show_bin);
    connect(bins_box_, &QSpinBox::editingFinished, this, [this] {
        if (bins_box_->value() != settings_.bins) {
            edit(tr("bins"), [this] {
                settings_.bins = bins_box_->value();
                start();
            });
        }
    });
    connect(binning_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("binning"), [this] {
            settings_.binning = binning_box_->currentData().toString();
            start();
        });
    });
}

QString LengthAccuracyView::title() const {
    QString t = tr("Accuracy by length — %1").arg(display_name(settings_.a));
    if (!settings_.b.isEmpty()) t += " | " + display_name(settings_.b);
    return t;
}

QStringList LengthAccuracyView::input_files() const {
    QStringList out{settings_.a};
    if (!settings_.b.isEmpty()) out << settings_.b;
    return out;
}

QString LengthAccuracyView::input_stem() const {
    QString s = file_stem(settings_.a);
    if (!settings_.b.isEmpty()) s += "-vs-" + file_stem(settings_.b);
    return s;
}

void LengthAccuracyView::restore_settings(const nlohmann::json& j) {
    settings_ = LengthAccuracyViewSettings::from_json(j);
    start();
}

namespace {
analysis::LengthAccuracyOptions options_of(const LengthAccuracyViewSettings& s,
                                           const std::vector<std::int64_t>& lengths) {
    analysis::LengthAccuracyOptions o;
    o.binning = s.binning.toStdString();
    o.bins = s.bins;
    if (s.binning == "width") {
        // A width giving about `bins` bins over the observed lengths.
        const auto [lo, hi] = std::minmax_element(lengths.begin(), lengths.end());
        o.width = s.width > 0
                      ? s.width
                      : std::max(1.0, std::ceil(static_cast<double>(*hi - *lo + 1) / s.bins));
    }
    return o;
}

/// An evaluation's predictions (routescope-cli eval --out *.jsonl) instead of a dump.
std::pair<analysis::LengthAccuracyResult, ExampleListing> predictions_result(
    const LengthAccuracyViewSettings& s) {
    const auto a = analysis::PredictionFile::read(s.a.toStdString());
    std::optional<analysis::PredictionFile> b;
    if (!s.b.isEmpty()) b = analysis::PredictionFile::read(s.b.toStdString());
    std::pair<analysis::LengthAccuracyResult, ExampleListing> out{
        analysis::length_accuracy(a, b ? &*b : nullptr, options_of(s, a.lengths)), {}};
    out.second.text = a.text;
    out.second.lengths = a.lengths;
    out.second.labels = a.labels;
    out.second.predictions_a = a.predictions;
    if (b) out.second.predictions_b = b->predictions;
    return out;
}
}  // namespace

void LengthAccuracyView::start() {
    const auto s = settings_;
    using Out = std::pair<analysis::LengthAccuracyResult, ExampleListing>;
    run<Out>(
        tr("Computing accuracy by length"),
        [s](AnalysisSteps&) {
            if (s.a.endsWith(".jsonl")) return predictions_result(s);
            const analysis::DumpReader a(s.a.toStdString());
            std::unique_ptr<analysis::DumpReader> b;
            if (!s.b.isEmpty()) b = std::make_unique<analysis::DumpReader>(s.b.toStdString());
            analysis::LengthAccuracyOptions o;
            o.binning = s.binning.toStdString();
            o.bins = s.bins;
            if (s.binning == "width") {
                // A width giving about `bins` bins over the observed lengths.
                const auto [lo, hi] = std::minmax_element(a.lengths().begin(), a.lengths().end());
                o.width =
                    s.width > 0
                        ? s.width
                        : std::max(1.0, std::ceil(static_cast<double>(*hi - *lo + 1) / s.bins));
            }
            Out out{*analysis::cached_length_accuracy(a, b.get(), o), {}};
            if (a.has_text()) out.second.text = a.text();
            out.second.lengths = a.lengths();
            out.second.labels = a.labels();
            out.second.predictions_a = a.predictions();
            if (b) out.second.predictions_b = b->predictions();
            return out;
        },
        [this](Out& out) {
            result_ = std::move(out.first);
            listing_ = std::move(out.second);
            redraw();
        });
}

void LengthAccuracyView::redraw() {
    if (!result_) return;
    IntervalBarData d;
    d.title = tr("Accuracy by length");
    d.x_label = tr("input length (tokens), bin");
    d.y_label = tr("accuracy");
    d.difference_label = tr("B − A");
    auto series = [&](const QString& path, bool second) {
        IntervalBarSeries s;
        s.name = display_stem(path);
        s.colour = model_colour_of(path);  // the model's colour in every view
        for (const auto& bin : result_->bins) {
            const auto& c = second ? bin.b : bin.a;
            s.value.push_back(c.accuracy);
            s.low.push_back(c.wilson_low);
            s.high.push_back(c.wilson_high);
            s.count.push_back(c.count);
        }
        return s;
    };
    // A bin is [lo, hi) (the last [lo, hi]): "15–164" read as closed, with 164 in two bins. Input
    // lengths are whole numbers, so a bin's lengths are written as the whole range it holds
    // ("15–163"); another variable's bins in interval notation, and so is a bin of lengths that
    // holds no whole length (quantile edges 8.4 and 9 of lengths 8, 9, 9: "[8.4, 9)", not "9",
    // which named the lengths of the next bin).
    const bool whole = result_->options.variable == "length";
    for (std::size_t i = 0; i < result_->bins.size(); ++i) {
        const auto& bin = result_->bins[i];
        const bool last = i + 1 == result_->bins.size();
        const double first = std::ceil(bin.lo),
                     end = last ? std::floor(bin.hi) : std::ceil(bin.hi) - 1;
        if (whole && end >= first) {
            d.bins << (end > first
                           ? QStringLiteral("%1–%2").arg(first, 0, 'f', 0).arg(end, 0, 'f', 0)
                           : QString::number(first, 'f', 0));
        } else {
            // An empty bin of lengths with the digits its edges need to read as not whole
            // (1234.5 at four digits was "1234").
            const int digits = whole ? 6 : 4;
            d.bins << QStringLiteral("[%1, %2%3")
                          .arg(bin.lo, 0, 'g', digits)
                          .arg(bin.hi, 0, 'g', digits)
                          .arg(last ? QStringLiteral("]") : QStringLiteral(")"));
        }
    }
    d.series.push_back(series(settings_.a, false));
    if (result_->compared) {
        d.series.push_back(series(settings_.b, true));
        for (const auto& bin : result_->bins) {
            d.difference.push_back(bin.difference);
            d.p_value.push_back(bin.p_value);
        }
    }
    d.y_lo = 0;
    d.y_hi = 1.05;
    chart_->set_data(d);
    examples_->clear();
    examples_->setRowCount(0);
}

void LengthAccuracyView::show_bin(int bin) {
    if (!result_ || bin < 0 || bin >= static_cast<int>(result_->bins.size())) return;
    const auto& ex = result_->bins[static_cast<std::size_t>(bin)].examples;
    const bool two = result_->compared;
    examples_->clear();
    QStringList headers{tr("example"), tr("length"), tr("label"),
                        two ? tr("prediction A") : tr("prediction")};
    if (two) headers << tr("prediction B");
    headers << tr("text");
    examples_->setColumnCount(static_cast<int>(headers.size()));
    examples_->setHorizontalHeaderLabels(headers);
    examples_->setRowCount(static_cast<int>(ex.size()));
    for (int r = 0; r < static_cast<int>(ex.size()); ++r) {
        const auto i = static_cast<std::size_t>(ex[static_cast<std::size_t>(r)]);
        int c = 0;
        auto put = [&](const QString& text) {
            examples_->setItem(r, c++, new QTableWidgetItem(text));
        };
        put(QString::number(i));
        put(QString::number(listing_.lengths.at(i)));
        put(QString::number(listing_.labels.at(i)));
        put(QString::number(listing_.predictions_a.at(i)));
        if (two) put(QString::number(listing_.predictions_b.at(i)));
        put(i < listing_.text.size() ? QString::fromStdString(listing_.text[i]) : QString());
        const bool wrong = listing_.predictions_a.at(i) != listing_.labels.at(i);
        if (wrong) examples_->item(r, 3)->setForeground(QColor(176, 0, 32));
    }
    examples_->resizeColumnsToContents();
    examples_->horizontalHeader()->setStretchLastSection(true);
}

analysis::CsvTable LengthAccuracyView::figure_table() const {
    if (!result_) return {};
    if (!result_->compared) return result_->table();
    // Compare mode: one row per model and bin under a `model` column naming the model as its
    // legend does (user-guide.md, "Names"), the first model's rows first, as the other compare
    // views write theirs; "accuracy" and "accuracy_b" named neither model. A bin's comparison of
    // the two (B − A, the discordant pairs, McNemar's p) is the pair's: the same on both rows.
    analysis::CsvTable out;
    out.columns = {"model",          "bin_low",        "bin_high", "count",    "accuracy",
                   "wilson_low",     "wilson_high",    "mcc",      "macro_f1", "difference",
                   "only_a_correct", "only_b_correct", "mcnemar_p"};
    for (const bool second : {false, true}) {
        const std::string model = display_stem(second ? settings_.b : settings_.a).toStdString();
        for (const analysis::AccuracyBin& bin : result_->bins) {
            const analysis::ClassificationScores& s = second ? bin.b : bin.a;
            out.rows.push_back({model, bin.lo, bin.hi, s.count, s.accuracy, s.wilson_low,
                                s.wilson_high, s.mcc, s.macro_f1, bin.difference, bin.only_a,
                                bin.only_b, bin.p_value});
        }
    }
    return out;
}

nlohmann::json LengthAccuracyView::result_provenance() const {
    nlohmann::json out = nlohmann::json::array();
    if (result_) out.push_back(result_->provenance.to_json());
    return out;
}

}  // namespace routescope::views
