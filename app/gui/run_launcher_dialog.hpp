#pragma once
// File › New Training Run: architecture, size preset, training data, steps, learning rate and the
// run directory, checked before the dialog accepts (the problems are listed in the dialog, the
// run is not started with settings that cannot work).
#include <QDialog>

#include "app/gui/run_settings.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace routescope::gui {

class RunLauncherDialog : public QDialog {
    Q_OBJECT
public:
    explicit RunLauncherDialog(QWidget* parent = nullptr);
    RunSettings settings() const;
    void set_settings(const RunSettings& settings);
    /// The problems shown under the fields (empty when the run can start).
    QString problems_text() const;
    /// CPU, and CUDA (disabled with the reason while the engine cannot train on it).
    QComboBox* device_box() const { return device_; }

public slots:
    /// Accepts only when settings().problems() is empty and the run directory can be made and
    /// written (WorkspaceController::run_directory_problem); otherwise shows the problems.
    void accept() override;

private:
    QComboBox *arch_, *size_, *device_;
    QLineEdit *data_, *out_dir_;
    QSpinBox *steps_, *threads_;
    QDoubleSpinBox* lr_;
    QPlainTextEdit* overrides_;
    QLabel* problems_;
    QCheckBox* causal_;
};

}  // namespace routescope::gui
