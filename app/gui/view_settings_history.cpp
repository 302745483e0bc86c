#include "app/gui/view_settings_history.hpp"

#include <QPointer>
#include <QUndoCommand>
#include <QUndoStack>

#include "views/analysis_view.hpp"

namespace routescope::gui {
namespace {

// One setter of one view: its settings before and after.
class SettingsCommand : public QUndoCommand {
public:
    SettingsCommand(ViewSettingsHistory* history, views::AnalysisView* view, const QString& what,
                    nlohmann::json before, nlohmann::json after)
        : history_(history), view_(view), before_(std::move(before)), after_(std::move(after)) {
        setText(what.isEmpty() ? QObject::tr("Change %1 settings").arg(view->kind())
                               : QObject::tr("Change %1 (%2)").arg(what, view->kind()));
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
    nlohmann::json before_, after_;
    bool first_ = true;
};

}  // namespace

ViewSettingsHistory::ViewSettingsHistory(QUndoStack* stack, QObject* parent)
    : QObject(parent), stack_(stack) {}

void ViewSettingsHistory::track(views::AnalysisView* view) {
    connect(view, &views::AnalysisView::settingsEdited, this,
            [this, view](const QString& what, const nlohmann::json& before,
                         const nlohmann::json& after) {
                stack_->push(new SettingsCommand(this, view, what, before, after));
            });
}

void ViewSettingsHistory::apply(views::AnalysisView* view, const nlohmann::json& settings) {
    view->apply_settings(settings);
}

}  // namespace routescope::gui
