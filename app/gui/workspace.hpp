#pragma once
// The workspace document (issue 26; ARCHITECTURE.md "The GUI"): what a researcher's workspace is,
// apart from any window — the files and run directories in it, each model's name (given by a
// person, else derived from its configuration) and colour, which checkpoint a dump or run belongs
// to (one model: one name and one colour in every view), the project file it was last saved to or
// opened from, whether it differs from that, the analysis views open on it (each one's kind,
// inputs, settings and chart options; the window draws a tab per view), and the child processes
// (training runs and engine actions) started in it. Every change a person makes to it is a
// QUndoCommand on its undo stack (Edit › Undo; LabPlot's model: a setter is a command), and the
// views' setting changes go on the same stack. The window and the workspace dock show it and ask
// it for changes; it holds no widget.
#include <QColor>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "app/gui/project_file.hpp"

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
        /// The file did not exist when its verdict came (set_verdict sets it): missing, not
        /// unreadable — a drive not mounted, a file moved away that may come back.
        bool missing = false;
        bool timed_out = false;  ///< with crashed: stopped at the time limit, not a crash
    };
    /// `path` is being read by the loader (again): no verdict until it answers.
    void start_check(const QString& path);
    /// The loader's answer on `path`; a final one ends its check. A final verdict of unreadable
    /// on a file that does not exist is recorded as missing.
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

    /// Why `path` must not be read in the workbench (the loader found it unreadable, the HDF5
    /// library crashed on it), naming it; empty while its verdict allows it or is not in.
    QString refusal(const QString& path) const;

    // Analysis views ---------------------------------------------------------------------------
    /// An analysis view of the workspace: what a project stores of it. The window shows each as
    /// a tab; the view's widget follows its settings here (view_settings_changed).
    struct View {
        int id = 0;
        QString kind;
        QStringList inputs;
        nlohmann::json settings = nlohmann::json::object();
        nlohmann::json charts = nlohmann::json::array();  ///< AnalysisView::chart_options()
        /// The keys of the project's view this version does not know, written back on save.
        nlohmann::json extra = nlohmann::json::object();
        /// The project's settings keys the view does not have (a newer version's), merged back
        /// into its settings on save.
        nlohmann::json unknown_settings = nlohmann::json::object();
    };
    /// Adds a view (a new tab); returns its id (never reused).
    int add_view(const QString& kind, const QStringList& inputs,
                 nlohmann::json settings = nlohmann::json::object(),
                 nlohmann::json charts = nlohmann::json::array());
    /// Removes a view (its tab closed).
    void remove_view(int id);
    /// A project's view that could not be restored (a file that is missing now, a kind this
    /// version does not know, settings it could not apply, inputs that do not fit the analysis):
    /// no tab, but saved with the project as it was read, at its place among the views. Returns
    /// its id (an id of views' kind: set_current_view takes it). A view on a file that exists and
    /// is refused is not saved (see project()).
    int keep_view(ProjectView view);
    /// The kept views (keep_view), in order.
    std::vector<ProjectView> kept_views() const;
    /// The keys a project's view holds that this version does not know, and its settings keys
    /// the view's widget does not have: written back with the view on save.
    void set_view_extra(int id, nlohmann::json extra, nlohmann::json unknown_settings);
    /// The top-level keys of the projects opened that this version does not know (merged):
    /// written back on save.
    void add_project_extra(const nlohmann::json& extra);
    /// The view `id`, or nullptr; valid until a view is added or removed.
    const View* view(int id) const;
    /// Every view, in the order they were opened (the tabs' order).
    const QList<View>& views() const { return views_; }
    /// A change a person made to a view's settings (a control, a click on a plot; the view
    /// shows it already): one undoable command, `after` now and `before` on undo. Steps of a
    /// continuous change (typing, a spin box's arrows) of one setting closer together than 0.8 s
    /// merge into one command, as an editor merges typing.
    void edit_view_settings(int id, const QString& what, nlohmann::json before,
                            nlohmann::json after, bool continuous);
    /// Sets a view's settings without a command (what a command and a project do); emits
    /// view_settings_changed, which the window follows.
    void set_view_settings(int id, nlohmann::json settings);
    /// Sets a view's chart options (a zoom, a legend moved, a log axis: not commands).
    void set_view_charts(int id, nlohmann::json charts);
    /// The view in front (-1: none; a kept view's id: the project's current view was not
    /// restored); not a change of the workspace (modified() ignores it).
    void set_current_view(int id) { current_view_ = id; }
    int current_view() const { return current_view_; }
    /// A project's views that wait for the loader's final verdict on `awaited` before they open
    /// (their files are being read); saved with the project meanwhile. Replaces any earlier ones.
    void await_views(const Project& project, QStringList awaited);
    /// Whether views are waiting (await_views) for files.
    bool views_waiting() const { return waiting_.has_value(); }
    /// The project whose views wait (await_views), or nullptr: what a headless export that stops
    /// waiting names as not opened.
    const Project* waiting_views() const { return waiting_ ? &*waiting_ : nullptr; }
    /// The waiting views, taken, once every awaited file has its final verdict; else nothing.
    std::optional<Project> take_ready_views();

    // The project ------------------------------------------------------------------------------
    /// The workspace as a project: its files, runs, names, colours and views, the views kept as
    /// they were read (keep_view) at their places, and the keys this version does not know. A
    /// file that exists and that the loader refused (not HDF5, a library crash) is left out, and
    /// so is every view that reads one: they would complain on every reopen (issue 26). A file
    /// that is missing (Verdict::missing, or not there now) is kept, with its views: it may come
    /// back. `current` is the view in front by its place in this list.
    Project project() const;
    QString project_path() const { return project_path_; }
    void set_project_path(const QString& path);
    /// Records the project as it is now (saved or opened) as what modified() compares with,
    /// and marks the undo stack clean.
    void mark_saved();
    /// Whether the workspace differs from the project last saved or opened (files, names,
    /// colours, views and their settings; not which view is in front).
    bool modified() const;

signals:
    void renamed(const QString& path, const QString& name);
    /// The colour of `model` (a model key) changed.
    void recoloured(const QString& model);
    void project_path_changed(const QString& path);
    /// The settings of view `id` changed here (an undo, a redo, a project): the view's widget
    /// takes them unless it shows them already.
    void view_settings_changed(int id, const nlohmann::json& settings);

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
    QList<View> views_;
    std::map<int, ProjectView> kept_;  ///< by id
    QList<int> order_;                 ///< the ids of views_ and kept_, in the project's order
    nlohmann::json extra_ = nlohmann::json::object();
    int next_view_ = 1;
    int current_view_ = -1;
    std::optional<Project> waiting_;
    QStringList awaited_;
    View* find_view(int id);
    /// The project as modified() compares it: without the view in front.
    nlohmann::json snapshot() const;
};

}  // namespace routescope::gui
