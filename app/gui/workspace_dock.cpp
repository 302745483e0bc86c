#include "app/gui/workspace_dock.hpp"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QStyle>
#include <QTreeWidget>

#include <QPainter>

#include "app/gui/cli_job.hpp"
#include "app/gui/workspace.hpp"
#include "views/display_name.hpp"

namespace routescope::gui {
namespace {
constexpr int kPathRole = Qt::UserRole + 1;
}

WorkspaceDock::WorkspaceDock(Workspace* document, QWidget* parent)
    : QDockWidget(tr("Workspace"), parent), document_(document) {
    setObjectName("workspaceDock");
    tree_ = new QTreeWidget(this);
    tree_->setHeaderHidden(true);
    tree_->setObjectName("workspaceTree");
    models_ = new QTreeWidgetItem(tree_, {tr("Models")});
    dumps_ = new QTreeWidgetItem(tree_, {tr("Dumps")});
    runs_ = new QTreeWidgetItem(tree_, {tr("Runs")});
    for (auto* top : {models_, dumps_, runs_}) {
        top->setExpanded(true);
        QFont f = top->font(0);
        f.setBold(true);
        top->setFont(0, f);
        top->setFlags(Qt::ItemIsEnabled);
    }
    setWidget(tree_);
    tree_->setEditTriggers(QAbstractItemView::EditKeyPressed | QAbstractItemView::SelectedClicked);
    connect(tree_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem* item) {
        if (updating_) return;
        const QString path = item->data(0, kPathRole).toString();
        if (path.isEmpty() || !(item->flags() & Qt::ItemIsEditable)) return;
        rename(path, item->text(0));
    });
    connect(document_, &Workspace::renamed, this, [this](const QString& path, const QString& name) {
        if (QTreeWidgetItem* item = item_for(path)) {
            updating_ = true;
            item->setText(0, name);
            updating_ = false;
        }
        emit renamed(path, name);
    });
    connect(document_, &Workspace::recoloured, this, [this] { refresh_colours(); });
    connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        for (auto* i = item; i; i = i->parent()) {
            const QString path = i->data(0, kPathRole).toString();
            if (!path.isEmpty()) {
                emit activated(path);
                return;
            }
        }
    });
}

QTreeWidgetItem* WorkspaceDock::item_for(const QString& path) const {
    for (auto* top : {models_, dumps_, runs_})
        for (int i = 0; i < top->childCount(); ++i)
            if (top->child(i)->data(0, kPathRole).toString() == path) return top->child(i);
    return nullptr;
}

QStringList WorkspaceDock::paths() const {
    QStringList out;
    for (auto* top : {models_, dumps_, runs_})
        for (int i = 0; i < top->childCount(); ++i)
            out << top->child(i)->data(0, kPathRole).toString();
    return out;
}

void WorkspaceDock::remove_file(const QString& path) {
    delete item_for(path);
}

void WorkspaceDock::add_pending(const QString& path) {
    remove_file(path);
    auto* item = new QTreeWidgetItem(dumps_, {tr("%1 (opening…)").arg(QFileInfo(path).fileName())});
    item->setData(0, kPathRole, path);
    item->setToolTip(0, path);
}

QString WorkspaceDock::name_of(const QString& path) const {
    return document_->name_of(path);
}

void WorkspaceDock::rename(const QString& path, const QString& name) {
    document_->rename(path, name);
}

QMap<QString, QString> WorkspaceDock::given_names() const {
    return document_->given_names();
}

// The item's icon: its validation state, then a swatch of its model's colour (the colour its
// curves have in every view).
void WorkspaceDock::set_icon(QTreeWidgetItem* item, const QString& path) {
    const int side = 16;
    QPixmap pixmap(2 * side + 2, side);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    const QIcon status = status_icons_.value(path);
    if (!status.isNull()) status.paint(&painter, QRect(0, 0, side, side));
    painter.setPen(QPen(QColor(60, 60, 60), 1));
    painter.setBrush(document_->colour(path));
    painter.drawRect(QRectF(side + 4.5, 2.5, side - 5, side - 5));
    painter.end();
    item->setIcon(0, QIcon(pixmap));
    item->setData(0, Qt::UserRole + 2, document_->colour(path));  // the swatch's colour (tests)
}

void WorkspaceDock::refresh_colours() {
    for (auto* top : {models_, dumps_, runs_})
        for (int i = 0; i < top->childCount(); ++i) {
            const QString path = top->child(i)->data(0, kPathRole).toString();
            if (!path.isEmpty() && status_icons_.contains(path)) set_icon(top->child(i), path);
        }
}

QTreeWidgetItem* WorkspaceDock::add_file(const LoadedFile& file) {
    remove_file(file.path);
    const bool checkpoint = file.report.kind == FileKind::Checkpoint;
    updating_ = true;
    auto* item = new QTreeWidgetItem(checkpoint ? models_ : dumps_, {name_of(file.path)});
    item->setFlags(item->flags() | Qt::ItemIsEditable);
    item->setData(0, kPathRole, file.path);
    item->setToolTip(0, file.path);  // the path: MainWindow reads it
    new QTreeWidgetItem(item, {tr("file: %1").arg(QFileInfo(file.path).fileName())});
    updating_ = false;
    QStyle* style = QApplication::style();
    if (!file.report.readable) {
        status_icons_.insert(file.path, style->standardIcon(QStyle::SP_MessageBoxCritical));
        set_icon(item, file.path);
        new QTreeWidgetItem(item, {tr("cannot read: %1").arg(file.error)});
        item->setExpanded(true);
        return item;
    }
    status_icons_.insert(file.path,
                         style->standardIcon(file.report.ok() ? QStyle::SP_DialogApplyButton
                                                              : QStyle::SP_MessageBoxWarning));
    set_icon(item, file.path);
    if (!file.report.ok()) {
        auto* v = new QTreeWidgetItem(item, {tr("%n violation(s)", nullptr,
                                                static_cast<int>(file.report.violations.size()))});
        for (const auto& violation : file.report.violations)
            new QTreeWidgetItem(v, {QString::fromStdString(violation.text())});
        v->setExpanded(true);
    }
    if (file.info) {
        const FileInfo& info = *file.info;
        new QTreeWidgetItem(
            item, {tr("model: %1 (%2, %3 layers, d %4)")
                       .arg(QString::fromStdString(info.name.empty() ? "unnamed" : info.name),
                            QString::fromStdString(info.arch))
                       .arg(info.n_layers)
                       .arg(info.d_model)});
        if (checkpoint) {
            new QTreeWidgetItem(item, {tr("%1 parameters in %2 tensors")
                                           .arg(info.parameter_count)
                                           .arg(info.params.size())});
        } else {
            new QTreeWidgetItem(item,
                                {tr("examples: %1 × L %2").arg(info.examples).arg(info.length)});
            // One model with the checkpoint it was dumped from (its colour, in every view).
            if (!info.checkpoint.empty()) {
                const QString from = QString::fromStdString(info.checkpoint);
                auto* made = new QTreeWidgetItem(
                    item,
                    {tr("model: %1")
                         .arg(item_for(from) ? name_of(from)
                                             : QFileInfo(from).dir().dirName() + " (" +
                                                   QFileInfo(from).fileName() + ", not open)")});
                made->setToolTip(0, from);
                made->setData(0, Qt::UserRole + 3, from);  // the model's checkpoint (tests)
            }
            QStringList layers, gates;
            for (const auto& l : info.layers) {
                layers << QString::number(l.index);
                for (const auto& g : l.gates) {
                    const QString name =
                        QString::fromStdString(g.path.substr(g.path.rfind('/') + 1));
                    if (!gates.contains(name)) gates << name;
                }
            }
            new QTreeWidgetItem(item, {tr("layers: %1").arg(layers.join(", "))});
            if (!gates.isEmpty())
                new QTreeWidgetItem(item, {tr("gates: %1").arg(gates.join(", "))});
            if (!info.kernels.empty())
                new QTreeWidgetItem(item, {tr("kernels: %1 layers").arg(info.kernels.size())});
            if (!info.mixing.empty())
                new QTreeWidgetItem(item, {tr("spatial matrices: %1").arg(info.mixing.size())});
        }
    }
    item->setExpanded(true);
    return item;
}

QTreeWidgetItem* WorkspaceDock::add_run(const QString& dir) {
    auto* item = new QTreeWidgetItem(runs_, {QFileInfo(dir).fileName()});
    item->setToolTip(0, dir);
    item->setData(0, kPathRole, dir);  // activation, paths()
    return item;
}

QTreeWidgetItem* WorkspaceDock::add_job(CliJob* job, const QString& key, const QString& title) {
    const CliJobSpec& spec = job->spec();
    // A training run's item is its run directory's (projects keep it); an action's item names
    // no file, so that its output joining the workspace does not replace it.
    QTreeWidgetItem* item = nullptr;
    if (spec.command == "train") {
        item = add_run(key);
    } else {
        item = new QTreeWidgetItem(runs_);
        item->setToolTip(0, key);
    }
    item->setText(0, title);
    item->setIcon(0, style()->standardIcon(QStyle::SP_MediaPlay));
    auto* state = new QTreeWidgetItem(item, {tr("starting…")});  // child 0: the state
    new QTreeWidgetItem(item,
                        {tr("device: %1").arg(spec.device == "cpu" ? tr("CPU") : spec.device)});
    auto* command = new QTreeWidgetItem(
        item, {QStringLiteral("routescope-cli %1").arg(spec.arguments.join(' '))});
    command->setToolTip(0, command->text(0));
    item->setExpanded(true);
    job_items_.insert(job, item);

    const QString unit = spec.command == "train"        ? tr("step")
                         : spec.command == "experiment" ? tr("model")
                         : spec.command == "dump"       ? tr("example")
                                                        : QString();
    connect(job, &CliJob::progressChanged, this,
            [state, unit](qint64 done, qint64 total, double eta) {
                if (total > 0) {
                    QString text = QStringLiteral("%1 %2/%3").arg(unit).arg(done).arg(total);
                    if (eta >= 0) text += tr(", ETA %1").arg(duration_text(eta));
                    state->setText(0, text.trimmed());
                } else {
                    state->setText(0, tr("running…"));
                }
            });
    connect(job, &CliJob::ended, this, [this, item, state](CliJob::State end) {
        if (end == CliJob::State::Finished) {
            state->setText(0, tr("done"));
            item->setIcon(0, style()->standardIcon(QStyle::SP_DialogApplyButton));
        } else if (end == CliJob::State::Cancelled) {
            state->setText(0, tr("stopped"));
            item->setIcon(0, style()->standardIcon(QStyle::SP_MediaStop));
        } else {
            state->setText(0, tr("failed"));
            item->setIcon(0, style()->standardIcon(QStyle::SP_MessageBoxCritical));
        }
    });
    return item;
}

const CliJob* WorkspaceDock::job_at(QTreeWidgetItem* item) const {
    for (auto it = job_items_.cbegin(); it != job_items_.cend(); ++it)
        for (auto* i = item; i; i = i->parent())
            if (i == it.value()) return it.key();
    return nullptr;
}

void WorkspaceDock::remove_job(CliJob* job) {
    disconnect(job, nullptr, this, nullptr);
    delete job_items_.take(job);
}

}  // namespace routescope::gui
