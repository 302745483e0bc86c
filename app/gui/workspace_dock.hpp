#pragma once
// The workspace dock (ARCHITECTURE.md): models (checkpoints), dumps and runs, one item per opened
// file with its structure and its validation result.
#include <QDockWidget>

#include "app/gui/file_loader.hpp"

class QTreeWidget;
class QTreeWidgetItem;

namespace routescope::gui {

class WorkspaceDock : public QDockWidget {
    Q_OBJECT
public:
    explicit WorkspaceDock(QWidget* parent = nullptr);
    /// Adds (or refreshes) the item of `file`; returns it.
    QTreeWidgetItem* add_file(const LoadedFile& file);
    /// Marks `path` as being opened (a placeholder item with a busy label).
    void add_pending(const QString& path);
    void remove_file(const QString& path);
    QTreeWidgetItem* item_for(const QString& path) const;
    QTreeWidget* tree() const { return tree_; }
    QStringList paths() const;
    QTreeWidgetItem* models() const { return models_; }
    QTreeWidgetItem* dumps() const { return dumps_; }
    QTreeWidgetItem* runs() const { return runs_; }

signals:
    void activated(const QString& path);

private:
    QTreeWidget* tree_;
    QTreeWidgetItem *models_, *dumps_, *runs_;
};

}  // namespace routescope::gui
