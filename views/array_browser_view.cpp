#include "views/array_browser_view.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include <chrono>
#include <limits>

#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"
#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "views/display_name.hpp"
#include "views/heatmap_widget.hpp"

namespace routescope::views {

nlohmann::json ArrayBrowserSettings::to_json() const {
    return {{"file", file.toStdString()},
            {"dataset", dataset.toStdString()},
            {"row_axis", row_axis},
            {"column_axis", column_axis},
            {"index", index},
            {"outlier_sd", outlier_sd}};
}

ArrayBrowserSettings ArrayBrowserSettings::from_json(const nlohmann::json& j) {
    ArrayBrowserSettings s;
    s.file = setting_string(j, "file", s.file);
    s.dataset = setting_string(j, "dataset", s.dataset);
    s.row_axis = setting_as_int(j, "row_axis", s.row_axis);
    s.column_axis = setting_as_int(j, "column_axis", s.column_axis);
    if (j.contains("index")) {
        const auto& index = j.at("index");
        if (!index.is_array())
            throw FormatError("settings.index: " + data::abbreviated(index.dump()) +
                              " is not a list of whole numbers");
        for (std::size_t i = 0; i < index.size(); ++i)
            s.index.push_back(whole_number_at(index[i], std::numeric_limits<std::int64_t>::min(),
                                              std::numeric_limits<std::int64_t>::max(),
                                              "settings.index[" + std::to_string(i) + "]"));
    }
    s.outlier_sd =
        setting_number(j, "outlier_sd", s.outlier_sd, 0, std::numeric_limits<double>::max());
    return s;
}

namespace {

/// Tokens of the example a fixed row of /layers/<l>/... or /data/tokens holds, when the file is a
/// dump and a position axis is shown; empty otherwise.
QStringList tokens_for(const std::string& file, const analysis::DatasetEntry& e,
                       const std::vector<std::int64_t>& index) {
    QStringList out;
    try {
        const analysis::DumpReader dump(file);
        std::int64_t example = -1;
        if (e.path == "/data/tokens") {
            example = index.empty() ? 0 : index[0];
        } else if (e.path.rfind("/layers/", 0) == 0 && !e.axes.empty() && e.axes[0] == "rows") {
            const int layer = std::stoi(e.path.substr(8));
            const auto& rows = dump.example_of_row(layer);
            const std::int64_t row = index.empty() ? 0 : index[0];
            if (row >= 0 && row < static_cast<std::int64_t>(rows.size()))
                example = rows[static_cast<std::size_t>(row)];
        }
        if (example < 0) return out;
        for (const auto& piece : dump.token_pieces(example))
            out << QString::fromStdString(piece);
    } catch (const std::exception&) {
        out.clear();  // not a dump, no vocabulary: indices only
    }
    return out;
}

}  // namespace

ArrayBrowserView::ArrayBrowserView(ArrayBrowserSettings settings, QWidget* parent)
    : AnalysisView("array_browser", parent), settings_(std::move(settings)) {
    dataset_box_ = new QComboBox(this);
    dataset_box_->setObjectName("dataset");
    dataset_box_->setMinimumContentsLength(24);
    rows_box_ = new QComboBox(this);
    rows_box_->setObjectName("rowAxis");
    columns_box_ = new QComboBox(this);
    columns_box_->setObjectName("columnAxis");
    outlier_box_ = new QDoubleSpinBox(this);
    outlier_box_->setObjectName("outlierSd");
    outlier_box_->setRange(0, 100);
    outlier_box_->setDecimals(1);
    outlier_box_->setSpecialValueText(tr("off"));
    outlier_box_->setToolTip(tr("Mark values beyond this many standard deviations of the slice"));
    outlier_box_->setValue(settings_.outlier_sd);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Dataset:"), this));
    controls->addWidget(dataset_box_);
    controls->addWidget(new QLabel(tr("Rows:"), this));
    controls->addWidget(rows_box_);
    controls->addWidget(new QLabel(tr("Columns:"), this));
    controls->addWidget(columns_box_);
    sliders_ = new QHBoxLayout;
    controls->addLayout(sliders_);
    controls->addWidget(new QLabel(tr("Outliers beyond (sd):"), this));
    controls->addWidget(outlier_box_);
    controls->addStretch(1);
    map_ = new HeatmapWidget(figure_);
    map_->setObjectName("arrayGrid");
    auto* fl = new QHBoxLayout(figure_);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(map_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    connect(dataset_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("dataset"), [this] { set_dataset(dataset_box_->currentData().toString()); });
    });
    connect(rows_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("rows"),
             [this] { set_axes(rows_box_->currentData().toInt(), settings_.column_axis); });
    });
    connect(columns_box_, &QComboBox::currentIndexChanged, this, [this] {
        edit(tr("columns"),
             [this] { set_axes(settings_.row_axis, columns_box_->currentData().toInt()); });
    });
    connect(outlier_box_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        edit_steps(tr("outlier threshold"), [this, v] {
            settings_.outlier_sd = v;
            redraw();
        });
    });
}

const analysis::DatasetEntry* ArrayBrowserView::entry() const {
    for (const auto& e : datasets_)
        if (QString::fromStdString(e.path) == settings_.dataset) return &e;
    return nullptr;
}

QString ArrayBrowserView::title() const {
    return tr("Arrays — %1").arg(QFileInfo(settings_.file).fileName());
}

QString ArrayBrowserView::input_stem() const {
    QString d = settings_.dataset;
    d.replace('/', '_');
    return file_stem(settings_.file) + d;
}

void ArrayBrowserView::restore_settings(const nlohmann::json& j) {
    const auto s = ArrayBrowserSettings::from_json(j);
    const bool rerun = s.to_json() != settings_.to_json();
    settings_ = s;
    {
        const QSignalBlocker b(outlier_box_);
        outlier_box_->setValue(settings_.outlier_sd);
    }
    if (rerun && has_result())
        start();
    else
        redraw();
}

void ArrayBrowserView::set_dataset(const QString& path) {
    if (path == settings_.dataset) return;
    settings_.dataset = path;
    settings_.index.clear();
    if (const auto* e = entry()) {
        const int rank = static_cast<int>(e->shape.size());
        settings_.row_axis = rank >= 2 ? rank - 2 : -1;
        settings_.column_axis = rank - 1;
    }
    start();
}

void ArrayBrowserView::set_axes(int row_axis, int column_axis) {
    if (row_axis == column_axis) {  // swapping: the other one takes the old place
        if (row_axis == settings_.row_axis)
            row_axis = settings_.column_axis;
        else
            column_axis = settings_.row_axis;
    }
    settings_.row_axis = row_axis;
    settings_.column_axis = column_axis;
    start();
}

void ArrayBrowserView::set_index(int axis, std::int64_t value) {
    if (axis < 0) return;
    if (settings_.index.size() <= static_cast<std::size_t>(axis))
        settings_.index.resize(static_cast<std::size_t>(axis) + 1, 0);
    settings_.index[static_cast<std::size_t>(axis)] = value;
    start();
}

void ArrayBrowserView::start() {
    const auto s = settings_;
    const bool need_list = datasets_.empty();
    struct Out {
        std::vector<analysis::DatasetEntry> datasets;
        ArrayBrowserSettings settings;
        analysis::Slice slice;
        QStringList rows, columns;
        analysis::InputFile input;
        double ms = 0;
    };
    auto existing = datasets_;
    run<Out>(
        tr("Reading the slice"),
        [s, need_list, existing](AnalysisSteps& steps) {
            steps.set_total(1);
            const auto t0 = std::chrono::steady_clock::now();
            Out out;
            out.settings = s;
            out.datasets = need_list ? analysis::list_datasets(s.file.toStdString()) : existing;
            if (out.datasets.empty())
                throw std::runtime_error(s.file.toStdString() + ": no numeric dataset to show");
            const analysis::DatasetEntry* e = nullptr;
            for (const auto& d : out.datasets)
                if (QString::fromStdString(d.path) == s.dataset) e = &d;
            // A dataset the settings name and the file lacks is refused (docs/formats/project.md,
            // Saving): "/layers/9/hidden" showed and exported /layers/0/hidden without a word.
            if (!e && !s.dataset.isEmpty())
                throw FormatError("settings.dataset: '" +
                                  data::abbreviated(s.dataset.toStdString()) +
                                  "' is not a numeric dataset of " + s.file.toStdString());
            if (!e) {  // none named: the first dataset with the most axes
                e = &out.datasets.front();
                for (const auto& d : out.datasets)
                    if (d.shape.size() > e->shape.size()) e = &d;
                out.settings.dataset = QString::fromStdString(e->path);
                out.settings.row_axis = out.settings.column_axis =
                    ArrayBrowserSettings::kDatasetAxes;
                out.settings.index.clear();
            }
            const int rank = static_cast<int>(e->shape.size());
            constexpr int unset = ArrayBrowserSettings::kDatasetAxes;
            int& row = out.settings.row_axis;
            int& column = out.settings.column_axis;
            if (rank == 1) {
                // A rank-1 dataset is one row: read_slice takes it so whatever the axes say, and
                // the axes drawn are the ones read (axis 1 and 2 of a rank-1 dataset read past
                // its axis names: a crash).
                row = -1;
                column = 0;
            } else if (row == unset && column == unset) {  // the dataset's last two axes
                row = rank - 2;
                column = rank - 1;
            } else if (column == unset) {  // the one given is kept; the other is the last free
                column = row == rank - 1 ? rank - 2 : rank - 1;
            } else if (row == unset) {
                row = column == rank - 2 ? rank - 1 : rank - 2;
            }
            analysis::SliceRequest r;
            r.dataset = e->path;
            r.row_axis = out.settings.row_axis;
            r.column_axis = out.settings.column_axis;
            r.index = out.settings.index;
            out.slice = analysis::read_slice(s.file.toStdString(), r);
            // The file's SHA-256 for the provenance (remembered per file: hashed once, not per
            // slice).
            out.input = analysis::file_input(s.file.toStdString(), "file");
            const QStringList tokens = tokens_for(s.file.toStdString(), *e, r.index);
            auto position = [&](int axis) {
                return axis >= 0 && axis < static_cast<int>(e->axes.size()) &&
                       e->axes[static_cast<std::size_t>(axis)] == "positions";
            };
            if (position(r.row_axis) && tokens.size() >= out.slice.rows)
                out.rows = tokens.mid(0, static_cast<int>(out.slice.rows));
            if (position(r.column_axis) && tokens.size() >= out.slice.columns)
                out.columns = tokens.mid(0, static_cast<int>(out.slice.columns));
            out.ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            steps.done(1);
            return out;
        },
        [this](Out& r) {
            QElapsedTimer clock;
            clock.start();
            const bool new_list = datasets_.empty();
            datasets_ = std::move(r.datasets);
            settings_ = r.settings;
            slice_ = std::move(r.slice);
            input_ = std::move(r.input);
            row_labels_ = r.rows;
            column_labels_ = r.columns;
            if (new_list || index_boxes_.isEmpty() ||
                rows_box_->count() != static_cast<int>(entry() ? entry()->shape.size() : 0))
                rebuild_controls();
            redraw();
            last_ms_ = r.ms + static_cast<double>(clock.nsecsElapsed()) / 1e6;
        });
}

void ArrayBrowserView::rebuild_controls() {
    const QSignalBlocker b1(dataset_box_), b2(rows_box_), b3(columns_box_);
    if (dataset_box_->count() != static_cast<int>(datasets_.size())) {
        dataset_box_->clear();
        for (const auto& d : datasets_) {
            QString shape;
            for (auto n : d.shape)
                shape += (shape.isEmpty() ? "" : " × ") + QString::number(n);
            dataset_box_->addItem(
                QString("%1 [%2] %3")
                    .arg(QString::fromStdString(d.path), shape, QString::fromStdString(d.dtype)),
                QString::fromStdString(d.path));
        }
    }
    dataset_box_->setCurrentIndex(std::max(0, dataset_box_->findData(settings_.dataset)));
    for (auto* box : index_boxes_)
        box->deleteLater();
    index_boxes_.clear();
    rows_box_->clear();
    columns_box_->clear();
    const auto* e = entry();
    if (!e) return;
    const int rank = static_cast<int>(e->shape.size());
    if (rank == 1) rows_box_->addItem(tr("(one row)"), -1);
    for (int a = 0; a < rank; ++a) {
        const QString name = QString::fromStdString(e->axes[static_cast<std::size_t>(a)]);
        if (rank > 1) rows_box_->addItem(name, a);
        columns_box_->addItem(name, a);
    }
    rows_box_->setCurrentIndex(std::max(0, rows_box_->findData(settings_.row_axis)));
    columns_box_->setCurrentIndex(std::max(0, columns_box_->findData(settings_.column_axis)));
    for (int a = 0; a < rank; ++a) {
        if (a == settings_.row_axis || a == settings_.column_axis) continue;
        auto* box = new QSpinBox(this);
        box->setObjectName(QString("index%1").arg(a));
        box->setPrefix(QString::fromStdString(e->axes[static_cast<std::size_t>(a)]) + " ");
        box->setRange(0, static_cast<int>(std::max<std::int64_t>(0, e->shape[a] - 1)));
        box->setValue(a < static_cast<int>(settings_.index.size())
                          ? static_cast<int>(settings_.index[static_cast<std::size_t>(a)])
                          : 0);
        connect(box, &QSpinBox::valueChanged, this,
                [this, a](int v) { edit_steps(tr("index"), [this, a, v] { set_index(a, v); }); });
        sliders_->addWidget(box);
        index_boxes_ << box;
    }
}

void ArrayBrowserView::redraw() {
    const auto* e = entry();
    if (!e) return;
    HeatmapData d;
    d.rows = static_cast<int>(slice_.rows);
    d.columns = static_cast<int>(slice_.columns);
    d.values = slice_.values;
    d.row_labels = row_labels_;
    d.column_labels = column_labels_;
    auto axis_name = [&](int a) {
        return a < 0 || a >= static_cast<int>(e->axes.size())
                   ? QString()
                   : QString::fromStdString(e->axes[static_cast<std::size_t>(a)]);
    };
    d.y_label = axis_name(settings_.row_axis);
    d.x_label = axis_name(settings_.column_axis);
    QString fixed;
    for (int a = 0; a < static_cast<int>(e->shape.size()); ++a)
        if (a != settings_.row_axis && a != settings_.column_axis)
            fixed += QString(" %1 = %2")
                         .arg(axis_name(a))
                         .arg(a < static_cast<int>(settings_.index.size())
                                  ? settings_.index[static_cast<std::size_t>(a)]
                                  : 0);
    d.title = QString::fromStdString(e->path) + fixed;
    d.value_label = QString::fromStdString(e->dtype);
    const auto marks = analysis::outliers(slice_, settings_.outlier_sd);
    std::int64_t marked = 0;
    for (bool m : marks)
        marked += m ? 1 : 0;
    d.marked = marks;
    d.note = tr("%1 NaN/±Inf (magenta, white, black); %2 beyond %3 sd of the slice (red)")
                 .arg(slice_.non_finite)
                 .arg(marked)
                 .arg(settings_.outlier_sd > 0 ? QString::number(settings_.outlier_sd) : "∞");
    map_->set_data(d);
}

analysis::CsvTable ArrayBrowserView::figure_table() const {
    analysis::CsvTable t;
    t.columns = {"row", "column", "value"};
    for (std::int64_t i = 0; i < slice_.rows; ++i)
        for (std::int64_t j = 0; j < slice_.columns; ++j) {
            const double v = slice_.values[static_cast<std::size_t>(i * slice_.columns + j)];
            t.rows.push_back({i, j, std::isfinite(v) ? nlohmann::json(v) : nlohmann::json()});
        }
    return t;
}

nlohmann::json ArrayBrowserView::result_provenance() const {
    // As every view's: the analysis, its input with its SHA-256, the parameters (the slice shown)
    // and the version, in a list of results.
    analysis::Provenance p;
    p.analysis = "array_browser";
    p.inputs = {input_};
    p.parameters = settings_.to_json();
    return nlohmann::json::array({p.to_json()});
}

}  // namespace routescope::views
