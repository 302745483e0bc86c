#pragma once
// The dialog of an engine action (Run › Dump Activations…, Evaluate…, Import Model…, Run
// Experiment…): one form for the four, showing the fields its action uses, the device, and the
// problems under the fields; accept() refuses settings that cannot work (EngineActionSettings).
#include <QDialog>

#include "app/gui/engine_action.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace routescope::gui {

/// The device box every engine dialog shows: CPU, and CUDA disabled with the reason
/// (DeviceProbe), updated when `routescope-cli --version` answers.
QComboBox* make_device_box(QWidget* parent);

/// The check every engine dialog's accept() makes: shows `problems` in `label` and returns false,
/// or clears and hides the label and returns true when there are none.
bool settings_are_usable(QLabel* label, const QStringList& problems);

class EngineActionDialog : public QDialog {
    Q_OBJECT
public:
    /// `settings.action` picks the form; the other fields are its initial values.
    explicit EngineActionDialog(const EngineActionSettings& settings, QWidget* parent = nullptr);
    EngineActionSettings settings() const;
    void set_settings(const EngineActionSettings& settings);
    /// The problems shown under the fields (empty when the action can start).
    QString problems_text() const;
    QComboBox* device_box() const { return device_; }

public slots:
    /// Accepts only when settings().problems() is empty; otherwise shows them.
    void accept() override;

private:
    EngineAction action_;
    QLineEdit *checkpoint_ = nullptr, *task_data_ = nullptr, *layers_ = nullptr,
              *import_source_ = nullptr, *out_ = nullptr;
    QComboBox *source_ = nullptr, *task_ = nullptr, *split_ = nullptr, *dtype_ = nullptr,
              *format_ = nullptr, *experiment_ = nullptr, *device_ = nullptr;
    QCheckBox* gates_ = nullptr;
    QSpinBox *examples_ = nullptr, *steps_ = nullptr, *seed_ = nullptr, *threads_ = nullptr;
    QPlainTextEdit* overrides_ = nullptr;
    QLabel* problems_;
    void update_enabled();
};

}  // namespace routescope::gui
