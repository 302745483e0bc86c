#pragma once
// Undo/redo of view settings (QUndoStack). Every analysis view keeps its settings as JSON
// (AnalysisView::settings); the history remembers each view's last settings and, whenever one of
// the view's controls reports a change, records the step from the old JSON to the new one. Undo
// and redo restore_settings() the recorded JSON. This works for every view without the views
// knowing about undo.
#include <QHash>
#include <QObject>
#include <QPointer>
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
    QUndoStack* stack() const { return stack_; }
    /// Starts recording the settings changes of `view` (its current settings are the baseline).
    void track(views::AnalysisView* view);
    /// Records a change of `view`'s settings since the last one seen (no-op when unchanged).
    void check(views::AnalysisView* view);
    /// Restores `settings` into `view` without recording it (what undo and redo do).
    void apply(views::AnalysisView* view, const nlohmann::json& settings);

private:
    QUndoStack* stack_;
    QHash<views::AnalysisView*, nlohmann::json> known_;
    bool applying_ = false;
    void connect_controls(views::AnalysisView* view);
};

}  // namespace routescope::gui
