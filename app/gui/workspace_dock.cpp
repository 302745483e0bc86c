#include "app/gui/workspace_dock.hpp"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QStyle>
#include <QTreeWidget>
#include <nlohmann/json.hpp>

#include "views/display_name.hpp"

namespace routescope::gui {
namespace {
constexpr int kPathRole = Qt::UserRole + 1;
}

WorkspaceDock::WorkspaceDock(QWidget* parent) : QDockWidget(tr("Workspace"), parent) {
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

QString WorkspaceDock::derived_name(const LoadedFile& file) {
    const QFileInfo fi(file.path);
    if (!file.info) return fi.fileName();
    const FileInfo& info = *file.info;
    QStringList parts;
    if (!info.arch.empty()) parts << QString::fromStdString(info.arch);
    QString task;
    try {
        const auto config = nlohmann::json::parse(info.config_json);
        if (config.contains("data") && config["data"].is_object())
            task = QString::fromStdString(config["data"].value("task", std::string()));
    } catch (const std::exception&) {
    }
    parts << (task.isEmpty() ? fi.absoluteDir().dirName() : task);
    if (file.report.kind == FileKind::Checkpoint) {
        if (info.train_step) parts << tr("step %1").arg(*info.train_step);
        if (fi.fileName() != "model.ckpt.h5") parts << fi.completeBaseName().section('.', 0, 0);
    } else {
        parts.prepend(fi.fileName().section('.', 0, 0));
    }
    return parts.join(QStringLiteral(" · "));
}

QString WorkspaceDock::name_of(const QString& path) const {
    const QString given = given_.value(path);
    return given.isEmpty() ? derived_.value(path, QFileInfo(path).fileName()) : given;
}

void WorkspaceDock::rename(const QString& path, const QString& name) {
    if (name.trimmed().isEmpty() || name.trimmed() == derived_.value(path))
        given_.remove(path);
    else
        given_.insert(path, name.trimmed());
    const QString shown = name_of(path);
    views::set_display_name(path, shown);
    if (QTreeWidgetItem* item = item_for(path)) {
        updating_ = true;
        item->setText(0, shown);
        updating_ = false;
    }
    emit renamed(path, shown);
}

QTreeWidgetItem* WorkspaceDock::add_file(const LoadedFile& file) {
    remove_file(file.path);
    const bool checkpoint = file.report.kind == FileKind::Checkpoint;
    derived_.insert(file.path, derived_name(file));
    views::set_display_name(file.path, name_of(file.path));
    updating_ = true;
    auto* item = new QTreeWidgetItem(checkpoint ? models_ : dumps_, {name_of(file.path)});
    item->setFlags(item->flags() | Qt::ItemIsEditable);
    item->setData(0, kPathRole, file.path);
    item->setToolTip(0, file.path);  // the path: MainWindow reads it
    new QTreeWidgetItem(item, {tr("file: %1").arg(QFileInfo(file.path).fileName())});
    updating_ = false;
    QStyle* style = QApplication::style();
    if (!file.report.readable) {
        item->setIcon(0, style->standardIcon(QStyle::SP_MessageBoxCritical));
        new QTreeWidgetItem(item, {tr("cannot read: %1").arg(file.error)});
        item->setExpanded(true);
        return item;
    }
    item->setIcon(0, style->standardIcon(file.report.ok() ? QStyle::SP_DialogApplyButton
                                                          : QStyle::SP_MessageBoxWarning));
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

}  // namespace routescope::gui
