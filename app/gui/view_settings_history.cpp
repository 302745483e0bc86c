#include "app/gui/view_settings_history.hpp"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QTimer>
#include <QUndoCommand>
#include <QUndoStack>

#include "views/analysis_view.hpp"

namespace routescope::gui {
namespace {

class SettingsCommand : public QUndoCommand {
public:
    SettingsCommand(ViewSettingsHistory* history, views::AnalysisView* view, nlohmann::json before,
                    nlohmann::json after)
        : history_(history), view_(view), before_(std::move(before)), after_(std::move(after)) {
        setText(QObject::tr("Change %1 settings").arg(view->kind()));
    }
    void undo() override {
        if (view_) history_->apply(view_, before_);
    }
    void redo() override {
        // The first redo is the change the user just made: already in the view.
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

constexpr const char* kConnected = "routescopeUndoConnected";
}  // namespace

ViewSettingsHistory::ViewSettingsHistory(QUndoStack* stack, QObject* parent)
    : QObject(parent), stack_(stack) {}

void ViewSettingsHistory::track(views::AnalysisView* view) {
    known_[view] = view->settings();
    connect(view, &QObject::destroyed, this, [this, view] { known_.remove(view); });
    // Views may build controls once a result is in (layer pickers): connect those then, and take
    // settings the view chose for itself (a default gate) as the new baseline, not as an edit.
    connect(view, &views::AnalysisView::analysisFinished, this, [this, view] {
        connect_controls(view);
        if (!applying_) known_[view] = view->settings();
    });
    connect_controls(view);
}

void ViewSettingsHistory::connect_controls(views::AnalysisView* view) {
    // Queued: the view's own handler (connected first, when the control was made) updates its
    // settings before the comparison.
    auto later = [this, view] {
        QPointer<views::AnalysisView> v = view;
        QTimer::singleShot(0, this, [this, v] {
            if (v) check(v);
        });
    };
    for (QWidget* w : view->findChildren<QWidget*>()) {
        if (w->property(kConnected).toBool()) continue;
        bool connected = true;
        if (auto* c = qobject_cast<QComboBox*>(w))
            connect(c, &QComboBox::currentIndexChanged, this, later);
        else if (auto* s = qobject_cast<QSpinBox*>(w))
            connect(s, &QSpinBox::valueChanged, this, later);
        else if (auto* d = qobject_cast<QDoubleSpinBox*>(w))
            connect(d, &QDoubleSpinBox::valueChanged, this, later);
        else if (auto* b = qobject_cast<QAbstractButton*>(w))
            connect(b, &QAbstractButton::clicked, this, later);
        else if (auto* l = qobject_cast<QLineEdit*>(w))
            connect(l, &QLineEdit::editingFinished, this, later);
        else if (auto* sl = qobject_cast<QAbstractSlider*>(w))
            connect(sl, &QAbstractSlider::sliderReleased, this, later);
        else
            connected = false;
        if (connected) w->setProperty(kConnected, true);
    }
}

void ViewSettingsHistory::check(views::AnalysisView* view) {
    if (applying_ || !known_.contains(view)) return;
    nlohmann::json now = view->settings();
    if (now == known_[view]) return;
    nlohmann::json before = std::exchange(known_[view], now);
    stack_->push(new SettingsCommand(this, view, std::move(before), std::move(now)));
}

void ViewSettingsHistory::apply(views::AnalysisView* view, const nlohmann::json& settings) {
    applying_ = true;
    view->restore_settings(settings);
    known_[view] = view->settings();
    applying_ = false;
}

}  // namespace routescope::gui
