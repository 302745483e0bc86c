#include "app/gui/workspace.hpp"

#include <algorithm>

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QUndoCommand>
#include <QUndoStack>

#include "app/gui/job_list.hpp"
#include "views/chart_panel.hpp"
#include "views/display_name.hpp"

namespace routescope::gui {
namespace {

class RenameCommand : public QUndoCommand {
public:
    RenameCommand(Workspace* w, QString path, QString before, QString after)
        : QUndoCommand(QObject::tr("Rename %1").arg(QFileInfo(path).fileName())),
          w_(w),
          path_(std::move(path)),
          before_(std::move(before)),
          after_(std::move(after)) {}
    void undo() override { w_->set_given_name(path_, before_); }
    void redo() override { w_->set_given_name(path_, after_); }

private:
    Workspace* w_;
    QString path_, before_, after_;
};

class RecolourCommand : public QUndoCommand {
public:
    RecolourCommand(Workspace* w, QString path, int before, int after)
        : QUndoCommand(QObject::tr("Colour of %1").arg(w->name_of(path))),
          w_(w),
          path_(std::move(path)),
          before_(before),
          after_(after) {}
    void undo() override { w_->set_colour_slot(path_, before_); }
    void redo() override { w_->set_colour_slot(path_, after_); }

private:
    Workspace* w_;
    QString path_;
    int before_, after_;
};

// Steps of one continuous edit of one setting of one view closer together than this are one
// command: typing a run filter, or holding a spin box's arrow, is one change to undo (as an editor
// merges typing). A choice (a combo box, a click) is always its own.
constexpr qint64 kMergeWithinMs = 800;

// One setter of one view (LabPlot's model: a setter is a command): its settings before and after.
class ViewSettingsCommand : public QUndoCommand {
public:
    ViewSettingsCommand(Workspace* w, int id, const QString& kind, const QString& what,
                        nlohmann::json before, nlohmann::json after, bool continuous)
        : w_(w),
          id_(id),
          what_(what),
          continuous_(continuous),
          before_(std::move(before)),
          after_(std::move(after)) {
        setText(what.isEmpty() ? QObject::tr("Change %1 settings").arg(kind)
                               : QObject::tr("Change %1 (%2)").arg(what, kind));
        made_.start();
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = dynamic_cast<const ViewSettingsCommand*>(other);
        if (!o || !continuous_ || !o->continuous_ || o->id_ != id_ || o->what_ != what_ ||
            made_.elapsed() > kMergeWithinMs)
            return false;
        after_ = o->after_;
        made_.start();
        return true;
    }
    // A view closed since is no longer in the workspace: its commands change nothing.
    void undo() override { w_->set_view_settings(id_, before_); }
    void redo() override { w_->set_view_settings(id_, after_); }

private:
    Workspace* w_;
    int id_;
    QString what_;
    bool continuous_ = false;
    nlohmann::json before_, after_;
    QElapsedTimer made_;  ///< since the last edit merged into this one
};

}  // namespace

Workspace::Workspace(QObject* parent)
    : QObject(parent), stack_(new QUndoStack(this)), jobs_(new JobList(this)) {}

void Workspace::add_file(const QString& path, const QString& derived_name,
                         const QString& checkpoint) {
    if (!files_.contains(path)) files_ << path;
    derived_.insert(path, derived_name);
    if (!checkpoint.isEmpty()) views::set_model_source(path, checkpoint);
    views::set_display_name(path, name_of(path));
    views::model_colour_slot(path);  // in the order models join the workspace
}

void Workspace::start_check(const QString& path) {
    verdicts_.remove(path);
    if (!checking_.contains(path)) checking_ << path;
}

void Workspace::set_verdict(const QString& path, const Verdict& verdict) {
    Verdict v = verdict;
    // Not there (an unmounted drive, a file moved away): missing, not unreadable; a project
    // keeps it (it may come back), where it drops a file that is there and cannot be read.
    if (v.final && !v.readable && !QFileInfo::exists(path)) v.missing = true;
    verdicts_.insert(path, v);
    if (verdict.final) checking_.removeAll(path);
}

void Workspace::add_run(const QString& dir) {
    if (!runs_.contains(dir)) runs_ << dir;
    if (views::model_key(dir) == QFileInfo(dir).absoluteFilePath())
        views::set_model_source(dir, QDir(dir).filePath("model.ckpt.h5"));
    views::model_colour_slot(dir);
}

QString Workspace::name_of(const QString& path) const {
    const QString given = given_.value(path);
    if (!given.isEmpty()) return given;
    // A dump or run of a model a person has named: that name, and for a dump its file's stem
    // ("My BiGS · induction-test"), so that two dumps of one model stay apart.
    if (const QString model = model_name(path); !model.isEmpty())
        return runs_.contains(path)
                   ? model
                   : model + QStringLiteral(" · ") + QFileInfo(path).fileName().section('.', 0, 0);
    const QString derived = derived_.value(path);
    return derived.isEmpty() ? QFileInfo(path).fileName() : derived;
}

QString Workspace::model_name(const QString& path) const {
    const QString model = views::model_key(path);
    if (model == QFileInfo(path).absoluteFilePath()) return {};  // its own model
    for (auto it = given_.cbegin(); it != given_.cend(); ++it)
        if (it.key() != path && QFileInfo(it.key()).absoluteFilePath() == model) return it.value();
    return {};
}

void Workspace::rename(const QString& path, const QString& name) {
    const QString before = given_.value(path);
    const QString after = name.trimmed().isEmpty() || name.trimmed() == derived_.value(path)
                              ? QString()
                              : name.trimmed();
    if (before == after) {
        emit renamed(path, name_of(path));  // an editor that showed another text shows it again
        return;
    }
    stack_->push(new RenameCommand(this, path, before, after));
}

void Workspace::set_given_name(const QString& path, const QString& name) {
    if (name.trimmed().isEmpty() || name.trimmed() == derived_.value(path))
        given_.remove(path);
    else
        given_.insert(path, name.trimmed());
    views::set_display_name(path, name_of(path));
    emit renamed(path, name_of(path));
    // The dumps and runs of this model take its name (unless they have their own).
    const QString model = QFileInfo(path).absoluteFilePath();
    for (const QStringList* list : {&files_, &runs_})
        for (const QString& other : *list)
            if (other != path && views::model_key(other) == model) {
                views::set_display_name(other, name_of(other));
                emit renamed(other, name_of(other));
            }
}

QString Workspace::model_of(const QString& path) const {
    return views::model_key(path);
}

int Workspace::colour_slot(const QString& path) const {
    return views::model_colour_slot(path);
}

QColor Workspace::colour(const QString& path) const {
    return views::model_colour_of(path);
}

void Workspace::set_colour(const QString& path, int slot) {
    const int before = colour_slot(path);
    if (before == slot || slot < 0) return;
    stack_->push(new RecolourCommand(this, path, before, slot));
}

void Workspace::set_colour_slot(const QString& path, int slot) {
    views::set_model_colour_slot(path, slot);
    emit recoloured(model_of(path));
}

QMap<QString, int> Workspace::colour_slots() const {
    QMap<QString, int> out;
    for (const QStringList* list : {&files_, &runs_})
        for (const QString& path : *list)
            out.insert(model_of(path), colour_slot(path));
    return out;
}

void Workspace::set_project_path(const QString& path) {
    project_path_ = path.isEmpty() ? QString() : QFileInfo(path).absoluteFilePath();
    emit project_path_changed(project_path_);
}

QString Workspace::refusal(const QString& path) const {
    const Verdict v = verdict(path);
    if (!v.final || v.readable) return {};
    // A child stopped at its time limit did not crash: the library did not finish, on corrupt
    // metadata or on a machine too busy for the limit (said as a crash before).
    if (v.crashed && v.timed_out)
        return tr("%1\n\nThe HDF5 library did not finish reading this file in time (corrupt "
                  "metadata, or a machine too busy); it is not opened in the workbench.%2")
            .arg(path, v.error.isEmpty() ? QString() : "\n\n" + v.error);
    if (v.crashed)
        return tr("%1\n\nThe HDF5 library crashed reading this file (corrupt metadata); it is not "
                  "opened in the workbench.%2")
            .arg(path, v.error.isEmpty() ? QString() : "\n\n" + v.error);
    return tr("%1\n\nThis file cannot be read (%2); it is not opened in the workbench.")
        .arg(path, v.error.isEmpty() ? tr("unreadable") : v.error);
}

// Views ------------------------------------------------------------------------------------------

int Workspace::add_view(const QString& kind, const QStringList& inputs, nlohmann::json settings,
                        nlohmann::json charts) {
    View v;
    v.id = next_view_++;
    v.kind = kind;
    v.inputs = inputs;
    v.settings = settings.is_object() ? std::move(settings) : nlohmann::json::object();
    v.charts = charts.is_array() ? std::move(charts) : nlohmann::json::array();
    views_ << v;
    order_ << v.id;
    return v.id;
}

void Workspace::remove_view(int id) {
    views_.removeIf([id](const View& v) { return v.id == id; });
    if (!kept_.count(id)) order_.removeAll(id);
    if (current_view_ == id) current_view_ = -1;
}

int Workspace::keep_view(ProjectView view) {
    const int id = next_view_++;
    view.verbatim = true;
    kept_.emplace(id, std::move(view));
    order_ << id;
    return id;
}

std::vector<ProjectView> Workspace::kept_views() const {
    std::vector<ProjectView> out;
    for (const int id : order_)
        if (const auto it = kept_.find(id); it != kept_.end()) out.push_back(it->second);
    return out;
}

void Workspace::set_view_extra(int id, nlohmann::json extra, nlohmann::json unknown_settings) {
    if (View* v = find_view(id)) {
        v->extra = extra.is_object() ? std::move(extra) : nlohmann::json::object();
        v->unknown_settings =
            unknown_settings.is_object() ? std::move(unknown_settings) : nlohmann::json::object();
    }
}

void Workspace::add_project_extra(const nlohmann::json& extra) {
    if (extra.is_object()) extra_.update(extra);
}

Workspace::View* Workspace::find_view(int id) {
    for (View& v : views_)
        if (v.id == id) return &v;
    return nullptr;
}

const Workspace::View* Workspace::view(int id) const {
    return const_cast<Workspace*>(this)->find_view(id);
}

void Workspace::edit_view_settings(int id, const QString& what, nlohmann::json before,
                                   nlohmann::json after, bool continuous) {
    const View* v = view(id);
    if (!v || before == after) return;
    stack_->push(new ViewSettingsCommand(this, id, v->kind, what, std::move(before),
                                         std::move(after), continuous));
}

void Workspace::set_view_settings(int id, nlohmann::json settings) {
    View* v = find_view(id);
    if (!v) return;
    v->settings = settings.is_object() ? std::move(settings) : nlohmann::json::object();
    const nlohmann::json now = v->settings;  // a slot may add or close views: not a reference
    emit view_settings_changed(id, now);
}

void Workspace::set_view_charts(int id, nlohmann::json charts) {
    if (View* v = find_view(id))
        v->charts = charts.is_array() ? std::move(charts) : nlohmann::json::array();
}

void Workspace::await_views(const Project& project, QStringList awaited) {
    waiting_ = project;
    awaited_ = std::move(awaited);
}

std::optional<Project> Workspace::take_ready_views() {
    if (!waiting_) return std::nullopt;
    for (const QString& f : awaited_)
        if (!verdict(f).final) return std::nullopt;
    std::optional<Project> out = std::move(waiting_);
    waiting_.reset();
    awaited_.clear();
    return out;
}

// The project ------------------------------------------------------------------------------------

Project Workspace::project() const {
    Project p;
    p.extra = extra_;
    for (const auto& [file, name] : given_names().asKeyValueRange())
        p.names.emplace_back(file, name);
    for (const auto& [model, slot] : colour_slots().asKeyValueRange())
        p.colours.emplace_back(model, slot);
    // A file the loader found unreadable (not HDF5, a library crash) stays in the workspace with
    // its error but is not saved: the project would complain about it on every reopen (issue 26).
    // A file that is not there (missing when it was checked, or now) is saved: an unmounted drive
    // or a file moved away may come back, and the views on it with it.
    const auto dropped = [this](const QString& f) {
        if (refusal(f).isEmpty()) return false;
        return !verdict(f).missing && QFileInfo::exists(f);
    };
    const auto refused = [&dropped](const QStringList& files) {
        return std::any_of(files.begin(), files.end(), dropped);
    };
    for (const QString& f : files_)
        if (!dropped(f)) p.files << f;
    p.runs = runs_;  // run directories, not actions
    // The views with a tab and those kept as they were read (keep_view), in the project's order.
    for (const int id : order_) {
        if (const auto kept = kept_.find(id); kept != kept_.end()) {
            if (refused(kept->second.inputs)) continue;
            p.views.push_back(kept->second);
        } else if (const View* v = view(id)) {
            if (refused(v->inputs)) continue;
            nlohmann::json settings = v->settings;
            for (const auto& [key, value] : v->unknown_settings.items())
                if (!settings.contains(key)) settings[key] = value;
            ProjectView pv{v->kind, v->inputs, std::move(settings), v->charts};
            pv.extra = v->extra;
            p.views.push_back(std::move(pv));
        } else {
            continue;
        }
        if (id == current_view_) p.current = static_cast<int>(p.views.size()) - 1;
    }
    // A project being opened is the workspace's already: its files still being read, its runs
    // and its views waiting for those files.
    if (waiting_) {
        for (const QString& f : waiting_->files)
            if (!p.files.contains(f) && !dropped(f)) p.files << f;
        for (const QString& r : waiting_->runs)
            if (!p.runs.contains(r)) p.runs << r;
        for (std::size_t i = 0; i < waiting_->views.size(); ++i) {
            const ProjectView& v = waiting_->views[i];
            if (refused(v.inputs)) continue;
            p.views.push_back(v);
            if (p.current < 0 && static_cast<int>(i) == waiting_->current)
                p.current = static_cast<int>(p.views.size()) - 1;
        }
    }
    return p;
}

nlohmann::json Workspace::snapshot() const {
    nlohmann::json j = project().to_json(QDir("/"));
    j.erase("current");
    return j;
}

bool Workspace::modified() const {
    return snapshot() != saved_;
}

void Workspace::mark_saved() {
    saved_ = snapshot();
    stack_->setClean();
}

}  // namespace routescope::gui
