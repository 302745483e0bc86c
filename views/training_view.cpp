#include "views/training_view.hpp"

#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "analysis/file_fingerprint.hpp"
#include "analysis/smoothing.hpp"
#include "engine/core/error.hpp"
#include "engine/data/file_text.hpp"
#include "views/chart_panel.hpp"
#include "views/display_name.hpp"

namespace routescope::views {
namespace {
constexpr int kRedrawMs = 250;  // live redraws at most 4 per second: a step can take 1 ms
// At most this many points per drawn series: a chart a thousand pixels wide shows no more, and
// Qt Charts rebuilds a line's whole path on any change (20 000 points: 85–245 ms of the GUI thread
// per redraw). Longer logs are drawn as the first and last point of every bucket of consecutive
// records plus the bucket's lowest and highest value, so spikes stay visible; the CSV and the
// provenance keep every record.
constexpr std::size_t kMaxDrawnPoints = 2000;

QList<QPointF> drawn_points(const std::vector<double>& x, const std::vector<double>& y) {
    QList<QPointF> all;
    all.reserve(static_cast<qsizetype>(std::min(x.size(), y.size())));
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
        if (std::isfinite(x[i]) && std::isfinite(y[i])) all.append({x[i], y[i]});
    if (static_cast<std::size_t>(all.size()) <= kMaxDrawnPoints) return all;
    const qsizetype buckets = static_cast<qsizetype>(kMaxDrawnPoints / 4);
    const qsizetype per = (all.size() + buckets - 1) / buckets;
    QList<QPointF> out;
    out.reserve(static_cast<qsizetype>(kMaxDrawnPoints));
    for (qsizetype b = 0; b < all.size(); b += per) {
        const qsizetype e = std::min(all.size(), b + per);
        qsizetype lo = b, hi = b;
        for (qsizetype i = b; i < e; ++i) {
            if (all[i].y() < all[lo].y()) lo = i;
            if (all[i].y() > all[hi].y()) hi = i;
        }
        // In x order: first, the extremes, last (duplicates dropped).
        qsizetype keep[4] = {b, std::min(lo, hi), std::max(lo, hi), e - 1};
        qsizetype last = -1;
        for (qsizetype k : keep)
            if (k != last) {
                out.append(all[k]);
                last = k;
            }
    }
    return out;
}

// Ten distinguishable colours for the Birdie arms (the same arm has the same colour in the mixture
// and the loss chart; the chart theme's own cycle repeats after five).
QColor arm_colour(qsizetype a) {
    static const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    return QColor(kColours[a % 10]);
}
}  // namespace

nlohmann::json TrainingViewSettings::to_json() const {
    nlohmann::json r = nlohmann::json::array();
    for (const auto& p : runs)
        r.push_back(p.toStdString());
    return {{"runs", r},
            {"x", x.toStdString()},
            {"smoothing", smoothing},
            {"run_filter", run_filter.toStdString()}};
}

TrainingViewSettings TrainingViewSettings::from_json(const nlohmann::json& j) {
    TrainingViewSettings s;
    s.runs = setting_strings(j, "runs", s.runs);
    s.x = setting_choice(j, "x", s.x, {"step", "time"});
    // The range of the view's control (a smoothing of 5 was drawn as 0.99 without a word).
    s.smoothing = setting_number(j, "smoothing", s.smoothing, 0.0, 0.99);
    s.run_filter = setting_string(j, "run_filter", s.run_filter);
    return s;
}

void TrainingLog::add(const QJsonObject& r) {
    const QString type = r.value("type").toString();
    // A step is a whole number from 0 up; a record with another (a log edited or written by
    // other code: "x", -5, 1e300) is skipped, not taken for a resumed run that erases the records
    // after its step.
    const QJsonValue step_value = r.value("step");
    const double step = step_value.toDouble(NAN);
    if (type != "start" && (!step_value.isDouble() || !(step >= 0) || step > 9.007199254740992e15 ||
                            step != std::floor(step)))
        return;
    if (type == "start") {
        device = r.value("device").toString();
        threads = r.value("threads").toInt();
    } else if (type == "step") {
        while (!steps.empty() && steps.back().step >= step)
            steps.pop_back();
        while (!evals.empty() && evals.back().step >= step)
            evals.pop_back();
        steps.push_back({step, r.value("elapsed").toDouble(), r.value("loss").toDouble(NAN),
                         r.value("lr").toDouble(NAN), r.value("grad_norm").toDouble(NAN),
                         r.value("tokens_per_s").toDouble(NAN)});
        while (!mixtures.empty() && mixtures.back().step >= step)
            mixtures.pop_back();
    } else if (type == "eval") {
        const double elapsed = steps.empty() ? 0.0 : steps.back().elapsed;
        evals.push_back(
            {step, elapsed, r.value("loss").toDouble(NAN), r.value("accuracy").toDouble(NAN)});
    } else if (type == "mixture") {
        // A resumed run measures its arms again at its first step: that record replaces the
        // earlier ones from there on.
        while (!mixtures.empty() && mixtures.back().step >= step)
            mixtures.pop_back();
        controller = r.value("controller").toString();
        const QJsonObject weights = r.value("mixture").toObject();
        for (const QString& arm : weights.keys())
            if (!arms.contains(arm)) arms << arm;
        Mixture m{step, steps.empty() ? 0.0 : steps.back().elapsed, {}, {}, {}};
        const QJsonObject losses = r.value("losses").toObject();
        const QJsonObject rewards = r.value("rewards").toObject();
        for (const QString& arm : arms) {
            m.weights.push_back(weights.value(arm).toDouble(NAN));
            m.losses.push_back(losses.value(arm).toDouble(NAN));
            m.rewards.push_back(rewards.value(arm).toDouble(NAN));
        }
        mixtures.push_back(std::move(m));
    }
}

TrainingLog TrainingLog::read(const QString& dir) {
    TrainingLog log;
    log.dir = dir;
    QFile f(QDir(dir).filePath("log.jsonl"));
    if (!f.exists()) return log;
    data::require_regular_file(f.fileName().toStdString(), "training log");
    if (!f.open(QIODevice::ReadOnly))
        throw IoError(f.fileName().toStdString() +
                      ": cannot read: " + f.errorString().toStdString());
    int complete = 0, records = 0;
    while (!f.atEnd()) {
        const QByteArray raw = f.readLine();
        if (raw.endsWith('\n')) ++complete;
        const QJsonDocument doc = QJsonDocument::fromJson(raw.trimmed());
        // A line being written by a running run is incomplete: skipped, it arrives live.
        if (doc.isObject()) {
            log.add(doc.object());
            ++records;
        }
    }
    // Whole lines and not one record: not a training log (binary, UTF-16, another format).
    if (complete > 0 && records == 0)
        throw FormatError(f.fileName().toStdString() + ": " + std::to_string(complete) +
                          " lines and not one JSON record; not a training log "
                          "(docs/cli.md, \"train\")");
    return log;
}

QString TrainingLog::recorded_device(const QString& dir) {
    QFile f(QDir(dir).filePath("log.jsonl"));
    if (!QFileInfo(f.fileName()).isFile() || !f.open(QIODevice::ReadOnly)) return {};
    // The start record is the first line; a resumed run's comes after its first run's records.
    // Called on the UI thread: at most 64 pieces of at most 64 KiB are read (a start record is a
    // few hundred bytes), so a log whose first line is gigabytes long cannot stall the window.
    QString device;
    for (int lines = 0; lines < 64 && !f.atEnd(); ++lines) {
        const QJsonDocument doc = QJsonDocument::fromJson(f.readLine(64 * 1024).trimmed());
        if (doc.isObject() && doc.object().value("type").toString() == "start")
            device = doc.object().value("device").toString();
    }
    return device;
}

QString TrainingLog::device_text(const QString& device) {
    if (device == "cpu") return QObject::tr("CPU");
    if (device == "cuda") return QObject::tr("CUDA");
    return device.isEmpty() ? QObject::tr("not recorded") : device;
}

TrainingView::TrainingView(TrainingViewSettings settings, QWidget* parent)
    : AnalysisView("training", parent), settings_(std::move(settings)) {
    x_box_ = new QComboBox(this);
    x_box_->setObjectName("xAxis");
    x_box_->addItem(tr("step"), "step");
    x_box_->addItem(tr("elapsed time (s)"), "time");
    x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Horizontal axis:"), this));
    controls->addWidget(x_box_);
    smoothing_box_ = new QDoubleSpinBox(this);
    smoothing_box_->setObjectName("smoothing");
    smoothing_box_->setRange(0, 0.99);
    smoothing_box_->setSingleStep(0.05);
    smoothing_box_->setDecimals(2);
    smoothing_box_->setValue(settings_.smoothing);
    smoothing_box_->setToolTip(
        tr("Exponential moving average of the training curves, as TensorBoard's smoothing "
           "(0: none); the raw curve stays faint beneath"));
    auto* smoothing_label = new QLabel(tr("&Smoothing:"), this);
    smoothing_label->setBuddy(smoothing_box_);
    controls->addWidget(smoothing_label);
    controls->addWidget(smoothing_box_);
    filter_edit_ = new QLineEdit(this);
    filter_edit_->setObjectName("runFilter");
    filter_edit_->setPlaceholderText(tr("all runs"));
    filter_edit_->setToolTip(
        tr("Show the runs whose directory name matches this regular "
           "expression (case-insensitive)"));
    filter_edit_->setClearButtonEnabled(true);
    // Wide enough for its placeholder in full (a narrower field elides it).
    filter_edit_->setMinimumWidth(
        filter_edit_->fontMetrics().horizontalAdvance(filter_edit_->placeholderText()) + 48);
    filter_edit_->setText(settings_.run_filter);
    auto* filter_label = new QLabel(tr("&Runs:"), this);
    filter_label->setBuddy(filter_edit_);
    controls->addWidget(filter_label);
    controls->addWidget(filter_edit_);
    connect(smoothing_box_, &QDoubleSpinBox::valueChanged, this,
            [this](double w) { edit_steps(tr("smoothing"), [this, w] { set_smoothing(w); }); });
    connect(filter_edit_, &QLineEdit::textChanged, this, [this](const QString& t) {
        edit_steps(tr("run filter"), [this, t] { set_run_filter(t); });
    });
    controls->addStretch(1);
    device_label_ = new QLabel(this);
    device_label_->setObjectName("runDevices");
    device_label_->setToolTip(tr("The engine device of each run (its log's start record)"));
    controls->addWidget(device_label_);
    loss_ = make_chart_view(tr("Loss"), figure_);
    lr_ = make_chart_view(tr("Learning rate"), figure_);
    grad_ = make_chart_view(tr("Gradient norm"), figure_);
    speed_ = make_chart_view(tr("Tokens per second"), figure_);
    // A single-column print keeps loss and gradient norm when four panels would be too tall.
    lr_->setProperty("printSecondary", true);
    speed_->setProperty("printSecondary", true);
    auto* grid = new QGridLayout(figure_);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(loss_, 0, 0);
    grid->addWidget(lr_, 0, 1);
    grid->addWidget(grad_, 1, 0);
    grid->addWidget(speed_, 1, 1);
    // Birdie: the controller's mixture and the per-arm losses it saw, under the controller's name
    // (the log's: "ema-bandit (a simpler bandit than the Birdie paper's learned reward model)").
    mixture_panel_ = new QWidget(figure_);
    mixture_panel_->setObjectName("mixturePanel");
    mixture_ = make_chart_view(tr("Objective mixture (bandit controller)"), mixture_panel_);
    arm_loss_ = make_chart_view(tr("Per-objective loss (held-out batch)"), mixture_panel_);
    controller_label_ = new QLabel(mixture_panel_);
    controller_label_->setObjectName("mixtureController");
    controller_label_->setWordWrap(true);
    auto* mixture_grid = new QGridLayout(mixture_panel_);
    mixture_grid->setContentsMargins(0, 0, 0, 0);
    mixture_grid->addWidget(controller_label_, 0, 0, 1, 2);
    mixture_grid->addWidget(mixture_, 1, 0);
    mixture_grid->addWidget(arm_loss_, 1, 1);
    for (QChartView* c : {mixture_, arm_loss_})
        c->chart()->legend()->setAlignment(Qt::AlignRight);  // nine arm names side by side clip
    mixture_panel_->setVisible(false);
    grid->addWidget(mixture_panel_, 2, 0, 1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    redraw_timer_ = new QTimer(this);
    redraw_timer_->setSingleShot(true);
    redraw_timer_->setInterval(kRedrawMs);
    connect(redraw_timer_, &QTimer::timeout, this, &TrainingView::update_live);
    connect(x_box_, &QComboBox::currentIndexChanged, this,
            [this] { edit(tr("x axis"), [this] { set_x(x_box_->currentData().toString()); }); });
    for (const QString& dir : settings_.runs)
        logs_.push_back({dir, {}, {}, {}, {}, {}, {}, 0});
}

QColor TrainingView::run_colour(const QString& dir) {
    // A run is the model of the checkpoint it writes: one colour for both in every view.
    if (model_key(dir) == QFileInfo(dir).absoluteFilePath())
        set_model_source(dir, QDir(dir).filePath("model.ckpt.h5"));
    return model_colour_of(dir);
}

QString TrainingView::title() const {
    QStringList names;
    for (const auto& d : settings_.runs)
        names << QFileInfo(d).fileName();
    return tr("Training — %1").arg(names.join(" | "));
}

QString TrainingView::input_stem() const {
    QStringList names;
    for (const auto& d : settings_.runs)
        names << QFileInfo(d).fileName();
    return names.join("-vs-");
}

QChartView* TrainingView::chart(const QString& metric) const {
    if (metric == "lr") return lr_;
    if (metric == "grad_norm") return grad_;
    if (metric == "tokens_per_s") return speed_;
    if (metric == "mixture") return mixture_;
    if (metric == "arm_loss") return arm_loss_;
    return loss_;
}

void TrainingView::restore_settings(const nlohmann::json& j) {
    const auto s = TrainingViewSettings::from_json(j);
    const bool reread = s.runs != settings_.runs;
    settings_ = s;
    {
        QSignalBlocker block(x_box_);
        x_box_->setCurrentIndex(std::max(0, x_box_->findData(settings_.x)));
        QSignalBlocker block_smoothing(smoothing_box_);
        smoothing_box_->setValue(settings_.smoothing);
        QSignalBlocker block_filter(filter_edit_);
        filter_edit_->setText(settings_.run_filter);
    }
    if (reread)
        start();
    else
        redraw();
}

void TrainingView::start() {
    const QStringList runs = settings_.runs;
    run<std::vector<TrainingLog>>(
        tr("Reading training logs"),
        [runs](AnalysisSteps& steps) {
            std::vector<TrainingLog> out;
            steps.set_total(static_cast<int>(runs.size()));
            for (const QString& dir : runs) {
                out.push_back(TrainingLog::read(dir));
                steps.done(static_cast<int>(out.size()));
            }
            return out;
        },
        [this](std::vector<TrainingLog>& logs) {
            logs_ = std::move(logs);
            // Records that arrived while the logs were read: those past each log's end.
            for (const auto& [dir, record] : pending_)
                for (auto& log : logs_) {
                    if (log.dir != dir) continue;
                    // A mixture record follows its step's record: compared with the mixtures.
                    const bool mixture = record.value("type").toString() == "mixture";
                    const double last =
                        mixture ? (log.mixtures.empty() ? -1.0 : log.mixtures.back().step)
                                : (log.steps.empty() ? -1.0 : log.steps.back().step);
                    if (record.value("step").toDouble() > last) log.add(record);
                }
            pending_.clear();
            redraw();
        });
}

void TrainingView::append_record(const QString& dir, const QJsonObject& record) {
    if (busy()) pending_.emplace_back(dir, record);
    for (auto& log : logs_)
        if (log.dir == dir) log.add(record);
    if (!redraw_timer_->isActive()) redraw_timer_->start();
}

void TrainingView::set_x(const QString& x) {
    settings_.x = x;
    redraw();
}

void TrainingView::set_smoothing(double weight) {
    weight = std::clamp(weight, 0.0, 0.99);
    if (weight == settings_.smoothing) return;
    settings_.smoothing = weight;
    {
        QSignalBlocker block(smoothing_box_);
        smoothing_box_->setValue(weight);
    }
    redraw();
}

void TrainingView::set_run_filter(const QString& pattern) {
    if (pattern == settings_.run_filter) return;
    settings_.run_filter = pattern;
    {
        QSignalBlocker block(filter_edit_);
        filter_edit_->setText(pattern);
    }
    const QRegularExpression re(pattern, QRegularExpression::CaseInsensitiveOption);
    // A pattern being typed may not parse yet: every run stays shown, the field says so.
    filter_edit_->setStyleSheet(re.isValid() ? QString() : QStringLiteral("color: #b00020"));
    redraw();
}

bool TrainingView::shown_run(const QString& dir) const {
    if (settings_.run_filter.isEmpty()) return true;
    const QRegularExpression re(settings_.run_filter, QRegularExpression::CaseInsensitiveOption);
    return !re.isValid() || re.match(QFileInfo(dir).fileName()).hasMatch();
}

void TrainingView::draw_steps(const TrainingLog& log, Drawn& d) const {
    if (!d.shown) return;
    const bool time = settings_.x == "time";
    std::vector<double> x, loss, lr, grad, speed, ex, el;
    for (const auto& st : log.steps) {
        x.push_back(time ? st.elapsed : st.step);
        loss.push_back(st.loss);
        lr.push_back(st.lr);
        grad.push_back(st.grad_norm);
        speed.push_back(st.tokens_per_s);
    }
    for (const auto& e : log.evals) {
        ex.push_back(time ? e.elapsed : e.step);
        el.push_back(e.loss);
    }
    const double w = settings_.smoothing;
    if (d.loss_raw) d.loss_raw->replace(drawn_points(x, loss));
    if (d.grad_raw) d.grad_raw->replace(drawn_points(x, grad));
    if (d.speed_raw) d.speed_raw->replace(drawn_points(x, speed));
    d.loss->replace(drawn_points(x, w > 0 ? analysis::debiased_ema(loss, w) : loss));
    d.lr->replace(drawn_points(x, lr));
    d.grad->replace(drawn_points(x, w > 0 ? analysis::debiased_ema(grad, w) : grad));
    d.speed->replace(drawn_points(x, w > 0 ? analysis::debiased_ema(speed, w) : speed));
    if (d.eval) d.eval->replace(drawn_points(ex, el));
    d.steps = log.steps.size();
    d.evals = log.evals.size();
    d.mixtures = log.mixtures.size();
    d.last_step = log.steps.empty() ? -1 : log.steps.back().step;
    d.last_eval = log.evals.empty() ? -1 : log.evals.back().step;
}

void TrainingView::draw_pending() {
    redraw_timer_->stop();
    update_live();
}

void TrainingView::update_live() {
    if (drawn_.size() != logs_.size() || drawn_x_ != settings_.x) return redraw();
    bool mixtures_changed = false;
    for (std::size_t i = 0; i < logs_.size(); ++i) {
        const TrainingLog& log = logs_[i];
        const Drawn& d = drawn_[i];
        if (!d.shown) continue;
        const bool cut = log.steps.size() < d.steps || log.evals.size() < d.evals ||
                         (d.steps > 0 && log.steps[d.steps - 1].step != d.last_step) ||
                         (d.evals > 0 && log.evals[d.evals - 1].step != d.last_eval);
        const bool missing = !d.loss || (log.evals.size() > d.evals && !d.eval);
        if (cut || missing) return redraw();
        mixtures_changed = mixtures_changed || log.mixtures.size() != d.mixtures;
    }
    for (std::size_t i = 0; i < logs_.size(); ++i)
        draw_steps(logs_[i], drawn_[i]);
    if (mixtures_changed) redraw_mixtures();
    for (QChartView* c : {loss_, lr_, grad_, speed_})
        fit_axes(c);
    note_empty_logs();
    show_devices();
}

QString TrainingView::device_text() const {
    QStringList parts;
    for (const TrainingLog& log : logs_) {
        QString part = QFileInfo(log.dir).fileName() + " " + TrainingLog::device_text(log.device);
        if (log.threads > 0) part += tr(" (%n thread(s))", nullptr, log.threads);
        parts << part;
    }
    return tr("Device: %1").arg(parts.join(" · "));
}

void TrainingView::show_devices() {
    device_label_->setText(device_text());
}

void TrainingView::redraw() {
    const bool time = settings_.x == "time";
    for (QChartView* c : {loss_, lr_, grad_, speed_})
        clear_chart(c);
    drawn_.clear();
    drawn_x_ = settings_.x;
    const bool smooth = settings_.smoothing > 0;
    for (std::size_t i = 0; i < logs_.size(); ++i) {
        const TrainingLog& log = logs_[i];
        Drawn d;
        d.shown = shown_run(log.dir);
        if (!d.shown) {
            drawn_.push_back(d);
            continue;
        }
        const QString name = QFileInfo(log.dir).fileName();
        // The run's colour everywhere: its model's (the checkpoint it writes), filtered or not.
        const QColor colour = run_colour(log.dir);
        auto styled = [&](QLineSeries* s, Qt::PenStyle style = Qt::SolidLine, int alpha = 255) {
            QPen pen = s->pen();
            QColor c = colour;
            c.setAlpha(alpha);
            pen.setColor(c);
            pen.setStyle(style);
            s->setPen(pen);
            return s;
        };
        // The raw curves first (beneath), faint and unnamed: no legend entry of their own.
        if (smooth) {
            d.loss_raw = styled(add_line(loss_, QString(), {}, {}), Qt::SolidLine, 60);
            d.grad_raw = styled(add_line(grad_, QString(), {}, {}), Qt::SolidLine, 60);
            d.speed_raw = styled(add_line(speed_, QString(), {}, {}), Qt::SolidLine, 60);
        }
        d.loss = styled(add_line(loss_, tr("%1 train").arg(name), {}, {}));
        d.lr = styled(add_line(lr_, name, {}, {}));
        d.grad = styled(add_line(grad_, name, {}, {}));
        d.speed = styled(add_line(speed_, name, {}, {}));
        if (!log.evals.empty()) {
            d.eval = styled(add_line(loss_, tr("%1 held-out").arg(name), {}, {}), Qt::DashLine);
            d.eval->setPointsVisible(true);
        }
        draw_steps(log, d);
        drawn_.push_back(d);
    }
    redraw_mixtures();
    const QString xt = time ? tr("elapsed (s)") : tr("step");
    x_axis(loss_, xt);
    y_axis(loss_, tr("loss (nats)"));
    x_axis(lr_, xt);
    y_axis(lr_, tr("learning rate"));
    x_axis(grad_, xt);
    y_axis(grad_, tr("‖g‖₂ before clipping"));
    x_axis(speed_, xt);
    y_axis(speed_, tr("tokens / s"));
    for (QChartView* c : {loss_, lr_, grad_, speed_})
        fit_axes(c);
    note_empty_logs();
    show_devices();
}

void TrainingView::note_empty_logs() {
    // An empty log drew four empty charts (axes 0 to 1, the run in the legend) without a word; a
    // run that has not logged yet is not an error (its records arrive live), so its charts stay
    // and say why they are empty. Chart titles are HTML: names are escaped.
    QStringList no_records, no_steps;
    for (std::size_t i = 0; i < logs_.size() && i < drawn_.size(); ++i) {
        if (!drawn_[i].shown || !logs_[i].steps.empty()) continue;
        const QString name = QFileInfo(logs_[i].dir).fileName().toHtmlEscaped();
        if (logs_[i].evals.empty())
            no_records << tr("%1: log.jsonl has no records yet").arg(name);
        else
            no_steps << tr("%1: log.jsonl has no step records yet").arg(name);
    }
    const auto titled = [](const QString& title, const QStringList& notes) {
        return notes.isEmpty() ? title : title + "<br>" + notes.join("<br>");
    };
    // The loss chart draws a run's held-out losses without steps; the others need steps.
    loss_->chart()->setTitle(titled(tr("Loss"), no_records));
    lr_->chart()->setTitle(titled(tr("Learning rate"), no_records + no_steps));
    grad_->chart()->setTitle(titled(tr("Gradient norm"), no_records + no_steps));
    speed_->chart()->setTitle(titled(tr("Tokens per second"), no_records + no_steps));
}

void TrainingView::redraw_mixtures() {
    const bool time = settings_.x == "time";
    for (QChartView* c : {mixture_, arm_loss_})
        clear_chart(c);
    QStringList controllers;
    bool any = false;
    for (std::size_t r = 0; r < logs_.size(); ++r) {
        const TrainingLog& log = logs_[r];
        if (log.mixtures.empty()) continue;
        any = true;
        if (!controllers.contains(log.controller)) controllers << log.controller;
        const QString run = QFileInfo(log.dir).fileName();
        std::vector<double> x;
        for (const auto& m : log.mixtures)
            x.push_back(time ? m.elapsed : m.step);
        for (qsizetype a = 0; a < log.arms.size(); ++a) {
            const QString name = logs_.size() > 1 ? run + ": " + log.arms[a] : log.arms[a];
            std::vector<double> w, l;
            for (const auto& m : log.mixtures) {
                w.push_back(m.weights[std::size_t(a)]);
                l.push_back(m.losses[std::size_t(a)]);
            }
            for (QLineSeries* s :
                 {add_line(mixture_, name, x, w), add_line(arm_loss_, name, x, l)}) {
                s->setPointsVisible(true);
                QPen pen = s->pen();
                pen.setColor(arm_colour(a));
                if (r > 0) pen.setStyle(Qt::DashLine);  // later runs dashed, colours by arm
                s->setPen(pen);
            }
        }
    }
    mixture_panel_->setVisible(any);
    controller_label_->setText(
        tr("Birdie objective mixture, set by the run's controller: %1. Each arm's loss is measured "
           "on a fixed held-out batch at every update.")
            .arg(controllers.join("; ")));
    const QString xt = time ? tr("elapsed (s)") : tr("step");
    x_axis(mixture_, xt);
    y_axis(mixture_, tr("mixture weight"));
    x_axis(arm_loss_, xt);
    y_axis(arm_loss_, tr("loss (nats)"));
    for (QChartView* c : {mixture_, arm_loss_})
        fit_axes(c);
}

analysis::CsvTable TrainingView::figure_table() const {
    analysis::CsvTable out;
    out.columns = {"run",       "type",         "step",     "elapsed", "loss",   "lr",
                   "grad_norm", "tokens_per_s", "accuracy", "arm",     "weight", "reward"};
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
    for (const TrainingLog& log : logs_) {
        const std::string run = QFileInfo(log.dir).fileName().toStdString();
        for (const auto& s : log.steps)
            out.rows.push_back({run, "step", s.step, s.elapsed, num(s.loss), num(s.lr),
                                num(s.grad_norm), num(s.tokens_per_s), nullptr, nullptr, nullptr,
                                nullptr});
        for (const auto& e : log.evals)
            out.rows.push_back({run, "eval", e.step, e.elapsed, num(e.loss), nullptr, nullptr,
                                nullptr, num(e.accuracy), nullptr, nullptr, nullptr});
        for (const auto& m : log.mixtures)
            for (qsizetype a = 0; a < log.arms.size(); ++a)
                out.rows.push_back(
                    {run, "mixture", m.step, m.elapsed, num(m.losses[std::size_t(a)]), nullptr,
                     nullptr, nullptr, nullptr, log.arms[a].toStdString(),
                     num(m.weights[std::size_t(a)]), num(m.rewards[std::size_t(a)])});
    }
    return out;
}

nlohmann::json TrainingView::result_provenance() const {
    // The log as it is now (a running run's log grows; the figure shows what was read so far).
    nlohmann::json out = nlohmann::json::array();
    for (const TrainingLog& log : logs_) {
        const QString path = QDir(log.dir).filePath("log.jsonl");
        nlohmann::json input = {{"path", path.toStdString()}};
        try {
            const auto fp = analysis::fingerprint_file(path.toStdString());
            input["hash"] = fp.hash;
            input["hash_kind"] = fp.kind;
            input["bytes"] = fp.size;
        } catch (const std::exception& e) {
            input["error"] = e.what();
        }
        out.push_back({{"analysis", "training_log"},
                       {"inputs", nlohmann::json::array({input})},
                       {"steps", log.steps.size()},
                       {"evals", log.evals.size()},
                       {"mixtures", log.mixtures.size()}});
    }
    return out;
}

}  // namespace routescope::views
