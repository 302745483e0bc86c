#pragma once
// Undo/redo of view settings (QUndoStack). A view reports each setter a person triggers — a
// control, a click on a plot — with its settings before and after (AnalysisView::settingsEdited,
// from AnalysisView::edit); the history makes that an undoable command on the workspace
// document's stack (LabPlot's model: a setter is a command). Undo and redo apply the recorded
// settings (AnalysisView::apply_settings), which the view does not report again.
#include <QObject>
#include <nlohmann/json.hpp>

class QUndoStack;

namespace routescope::views {
class AnalysisView;
}

namespace routescope::gui {

class ViewSettingsHistory : public QObject {
    Q_OBJECT
public:
    /// Records on `stack` (the workspace document's: one Edit › Undo for every change).
    explicit ViewSettingsHistory(QUndoStack* stack, QObject* parent = nullptr);
    /// Records the setting edits of `view` from now on.
    void track(views::AnalysisView* view);
    /// Applies `settings` to `view` without recording it (what undo and redo do).
    void apply(views::AnalysisView* view, const nlohmann::json& settings);

private:
    QUndoStack* stack_;
};

}  // namespace routescope::gui
