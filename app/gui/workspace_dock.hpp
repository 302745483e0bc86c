#pragma once
// The workspace dock (ARCHITECTURE.md): models (checkpoints), dumps and runs, one item per opened
// file with its structure, its validation result and its model's colour, and one item per child
// process (training run or engine action) with its state, device and command line. A view of the
// workspace document (workspace.hpp), which owns the names, colours and jobs: renaming an item
// asks it.
#include <QDockWidget>
#include <QMap>

#include "app/gui/file_loader.hpp"

class QTreeWidget;
class QTreeWidgetItem;

namespace routescope::gui {

class Workspace;
class CliJob;

class WorkspaceDock : public QDockWidget {
    Q_OBJECT
public:
    explicit WorkspaceDock(Workspace* document, QWidget* parent = nullptr);
    Workspace* document() const { return document_; }
    /// Adds (or refreshes) the item of `file` (a file of the document: WorkspaceController adds
    /// it there first); returns it.
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

    /// Adds the item of a run directory of the document under Runs; returns the item.
    QTreeWidgetItem* add_run(const QString& dir);
    /// The item of `job` (a job of the document's JobList) under Runs: for a training run its
    /// run directory's (`key`), for an action a new one titled `title`. Its children are the
    /// state (kept up to date from the job's progress and end), the device and the command line.
    QTreeWidgetItem* add_job(CliJob* job, const QString& key, const QString& title);
    QTreeWidgetItem* job_item(const CliJob* job) const { return job_items_.value(job); }
    /// The job whose item is `item` or one of its ancestors (nullptr: none).
    const CliJob* job_at(QTreeWidgetItem* item) const;
    /// Forgets `job`'s item (deleting it): a job that could not start.
    void remove_job(CliJob* job);

    /// The name shown for `path` (the document's: given by a person, or derived).
    QString name_of(const QString& path) const;
    /// Renames `path` (the name views and legends show; empty: the derived one): an undoable
    /// command of the document.
    void rename(const QString& path, const QString& name);
    /// The names a person gave, by path (the document's).
    QMap<QString, QString> given_names() const;
    /// Redraws the colour swatches (a model's colour changed).
    void refresh_colours();

signals:
    void activated(const QString& path);
    void renamed(const QString& path, const QString& name);

private:
    Workspace* document_;
    QTreeWidget* tree_;
    QTreeWidgetItem *models_, *dumps_, *runs_;
    QMap<const CliJob*, QTreeWidgetItem*> job_items_;
    QMap<QString, QIcon> status_icons_;  ///< each file's validation icon, beside its swatch
    bool updating_ = false;
    void set_icon(QTreeWidgetItem* item, const QString& path);
};

}  // namespace routescope::gui
