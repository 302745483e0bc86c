#include "app/gui/workspace_dock.hpp"

#include <QApplication>
#include <QFileInfo>
#include <QStyle>
#include <QTreeWidget>

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

QTreeWidgetItem* WorkspaceDock::add_file(const LoadedFile& file) {
    remove_file(file.path);
    const bool checkpoint = file.report.kind == FileKind::Checkpoint;
    auto* item =
        new QTreeWidgetItem(checkpoint ? models_ : dumps_, {QFileInfo(file.path).fileName()});
    item->setData(0, kPathRole, file.path);
    item->setToolTip(0, file.path);
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
