#pragma once
// The workspace dock (ARCHITECTURE.md): models (checkpoints), dumps and runs, one item per opened
// file with its structure and its validation result.
#include <QDockWidget>
#include <QMap>

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

    /// The name shown for `path` (given by a person, or derived: derived_name).
    QString name_of(const QString& path) const;
    /// Renames the item of `path` (the name views and legends show; empty: the derived one).
    void rename(const QString& path, const QString& name);
    /// The names a person gave, by path (what a project stores).
    QMap<QString, QString> given_names() const { return given_; }
    /// "bigs · induction · step 300": architecture, task (else the run directory) and training
    /// step from the file's configuration.
    static QString derived_name(const LoadedFile& file);

signals:
    void activated(const QString& path);
    void renamed(const QString& path, const QString& name);

private:
    QTreeWidget* tree_;
    QTreeWidgetItem *models_, *dumps_, *runs_;
    QMap<QString, QString> given_, derived_;
    bool updating_ = false;
};

}  // namespace routescope::gui
