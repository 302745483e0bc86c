#pragma once
// The workspace document (issue 26; ARCHITECTURE.md "The GUI"): what a researcher's workspace is,
// apart from any window — the files and run directories in it, each model's name (given by a
// person, else derived from its configuration) and colour, which checkpoint a dump or run belongs
// to (one model: one name and one colour in every view), the project file it was last saved to or
// opened from, whether it differs from that, and the child processes (training runs and engine
// actions) started in it. Every change a person makes to it is a
// QUndoCommand on its undo stack (Edit › Undo; LabPlot's model: a setter is a command), and the
// views' setting changes go on the same stack. The window and the workspace dock show it and ask
// it for changes; it holds no widget.
#include <QColor>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>

class QUndoStack;

namespace routescope::gui {

class JobList;

class Workspace : public QObject {
    Q_OBJECT
public:
    explicit Workspace(QObject* parent = nullptr);
    QUndoStack* undo_stack() const { return stack_; }
    /// The training runs and engine actions started in this workspace (job_list.hpp).
    JobList* jobs() const { return jobs_; }

    // Files and runs -------------------------------------------------------------------------
    /// Adds (or refreshes) a dump or checkpoint: its derived name and, for a dump made from a
    /// checkpoint (its /model `checkpoint` attribute), that checkpoint (the dump joins its model).
    /// A model new to the workspace takes the first colour no other model holds.
    void add_file(const QString& path, const QString& derived_name, const QString& checkpoint = {});
    QStringList files() const { return files_; }
    /// Adds a run directory: the model of the checkpoint it writes (DIR/model.ckpt.h5).
    void add_run(const QString& dir);
    QStringList runs() const { return runs_; }

    /// What the loader's child process found reading a file (issue 25): a view reads a dump or
    /// checkpoint in this process only once its final verdict says readable.
    struct Verdict {
        bool final = false;  ///< both passes done (or the first found the file unreadable)
        bool readable = false;
        bool crashed = false;  ///< the HDF5 library crashed on it (in the child)
        QString error;
    };
    /// `path` is being read by the loader (again): no verdict until it answers.
    void start_check(const QString& path);
    /// The loader's answer on `path`; a final one ends its check.
    void set_verdict(const QString& path, const Verdict& verdict);
    /// The verdict on `path` (default: none yet, not final).
    Verdict verdict(const QString& path) const { return verdicts_.value(path); }
    /// Whether the loader is reading `path` (no final verdict yet).
    bool checking(const QString& path) const { return checking_.contains(path); }

    // Names ------------------------------------------------------------------------------------
    /// The name shown for `path`: given by a person; else, for a dump or run of a model that a
    /// person named, that name (a dump's with its file's stem: "My BiGS · induction-test");
    /// else derived (else the file name). Renaming a model renames its dumps and runs with it.
    QString name_of(const QString& path) const;
    QString derived_name(const QString& path) const { return derived_.value(path); }
    /// The names a person gave, by path (what a project stores).
    QMap<QString, QString> given_names() const { return given_; }
    /// Renames `path` (empty, or its derived name: back to the derived one) as an undoable
    /// command; no command when nothing changes.
    void rename(const QString& path, const QString& name);
    /// Sets the given name without a command (what the command and a project do).
    void set_given_name(const QString& path, const QString& name);

    // Models and colours -----------------------------------------------------------------------
    /// The model `path` belongs to (views/display_name.hpp, model_key).
    QString model_of(const QString& path) const;
    /// The colour slot of `path`'s model and its colour (the palette of views::model_colour).
    int colour_slot(const QString& path) const;
    QColor colour(const QString& path) const;
    /// Gives `path`'s model the colour slot `slot` as an undoable command.
    void set_colour(const QString& path, int slot);
    /// Sets the colour slot without a command (what the command and a project do).
    void set_colour_slot(const QString& path, int slot);
    /// The colour slot of every model in the workspace, by model key (what a project stores).
    QMap<QString, int> colour_slots() const;

    // The project ------------------------------------------------------------------------------
    QString project_path() const { return project_path_; }
    void set_project_path(const QString& path);
    /// Records `snapshot` (the project as saved or opened, without the current tab) as the
    /// state modified() compares with, and marks the undo stack clean.
    void mark_saved(nlohmann::json snapshot);
    /// Whether `snapshot` differs from the one last marked saved.
    bool modified(const nlohmann::json& snapshot) const { return snapshot != saved_; }

signals:
    void renamed(const QString& path, const QString& name);
    /// The colour of `model` (a model key) changed.
    void recoloured(const QString& model);
    void project_path_changed(const QString& path);

private:
    /// The name a person gave the model `path` belongs to, when that is another file.
    QString model_name(const QString& path) const;
    QUndoStack* stack_;
    JobList* jobs_;
    QStringList files_, runs_;
    QMap<QString, Verdict> verdicts_;
    QStringList checking_;
    QMap<QString, QString> given_, derived_;
    QString project_path_;
    nlohmann::json saved_;
};

}  // namespace routescope::gui
