#include "app/gui/workspace.hpp"

#include <QDir>
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
    verdicts_.insert(path, verdict);
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

void Workspace::mark_saved(nlohmann::json snapshot) {
    saved_ = std::move(snapshot);
    stack_->setClean();
}

}  // namespace routescope::gui
