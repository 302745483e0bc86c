#include "app/gui/view_settings_history.hpp"

#include <QElapsedTimer>
#include <QPointer>
#include <QUndoCommand>
#include <QUndoStack>

#include "views/analysis_view.hpp"

namespace routescope::gui {
namespace {

// Steps of one continuous edit (AnalysisView::edit_steps) of one setting of one view closer
// together than this are one command: typing a run filter, or holding a spin box's arrow, is one
// change to undo (as an editor merges typing). A choice (a combo box, a click) is always its own.
constexpr qint64 kMergeWithinMs = 800;

// One setter of one view: its settings before and after.
class SettingsCommand : public QUndoCommand {
public:
    SettingsCommand(ViewSettingsHistory* history, views::AnalysisView* view, const QString& what,
                    nlohmann::json before, nlohmann::json after, bool continuous)
        : history_(history),
          view_(view),
          what_(what),
          continuous_(continuous),
          before_(std::move(before)),
          after_(std::move(after)) {
        setText(what.isEmpty() ? QObject::tr("Change %1 settings").arg(view->kind())
                               : QObject::tr("Change %1 (%2)").arg(what, view->kind()));
        made_.start();
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = dynamic_cast<const SettingsCommand*>(other);
        if (!o || !continuous_ || !o->continuous_ || o->view_ != view_ || o->what_ != what_ ||
            made_.elapsed() > kMergeWithinMs)
            return false;
        after_ = o->after_;
        made_.start();
        return true;
    }
    void undo() override {
        if (view_) history_->apply(view_, before_);
    }
    void redo() override {
        // The first redo is the change the person just made: already in the view.
        if (first_) {
            first_ = false;
            return;
        }
        if (view_) history_->apply(view_, after_);
    }

private:
    ViewSettingsHistory* history_;
    QPointer<views::AnalysisView> view_;
    QString what_;
    bool continuous_ = false;
    nlohmann::json before_, after_;
    bool first_ = true;
    QElapsedTimer made_;  ///< since the last edit merged into this one
};

}  // namespace

ViewSettingsHistory::ViewSettingsHistory(QUndoStack* stack, QObject* parent)
    : QObject(parent), stack_(stack) {}

void ViewSettingsHistory::track(views::AnalysisView* view) {
    connect(view, &views::AnalysisView::settingsEdited, this,
            [this, view](const QString& what, const nlohmann::json& before,
                         const nlohmann::json& after, bool continuous) {
                stack_->push(new SettingsCommand(this, view, what, before, after, continuous));
            });
}

void ViewSettingsHistory::apply(views::AnalysisView* view, const nlohmann::json& settings) {
    view->apply_settings(settings);
}

}  // namespace routescope::gui
