#include "app/gui/run_launcher_dialog.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

#include "app/gui/engine_action_dialog.hpp"
#include "app/gui/form_buddies.hpp"
#include "app/gui/workspace_controller.hpp"

namespace routescope::gui {

RunLauncherDialog::RunLauncherDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("New Training Run"));
    setObjectName("runLauncherDialog");
    arch_ = new QComboBox(this);
    arch_->setObjectName("arch");
    arch_->addItems(run_architectures());
    size_ = new QComboBox(this);
    size_->setObjectName("size");
    size_->addItem(tr("tiny (d 128, L 128)"), "tiny");
    size_->addItem(tr("small (d 256, L 512)"), "small");
    size_->setToolTip(
        tr("The presets of resources/configs/<architecture>-tiny.json and "
           "-small.json (layers: 2/4 for most, S-LSTM 3/7 steps, gMLP 2/6)"));
    data_ = new QLineEdit(this);
    data_->setObjectName("data");
    data_->setToolTip(
        tr("A text corpus (one document per line) or builtin:grammar, a generated "
           "English-like corpus"));
    auto* browse_data = new QPushButton(tr("Browse…"), this);
    connect(browse_data, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Training corpus"));
        if (!f.isEmpty()) data_->setText(f);
    });
    auto* data_row = new QHBoxLayout;
    data_row->addWidget(data_, 1);
    data_row->addWidget(browse_data);
    steps_ = new QSpinBox(this);
    steps_->setObjectName("steps");
    steps_->setRange(1, 10'000'000);
    lr_ = new QDoubleSpinBox(this);
    lr_->setObjectName("lr");
    lr_->setDecimals(6);
    lr_->setRange(0.0, 1.0);
    lr_->setSingleStep(1e-4);
    threads_ = new QSpinBox(this);
    threads_->setObjectName("threads");
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("default"));
    device_ = make_device_box(this);  // the engine dialogs' box: CPU, CUDA when usable
    causal_ = new QCheckBox(tr("&Causal: left to right, next-token loss"), this);
    causal_->setObjectName("causal");
    causal_->setToolTip(
        tr("A causal language model: every position reads only the ones before it (BiGS and "
           "the SSM stack keep their forward SSM, the attention models get a causal mask, Birdie "
           "scans left to right, gMLP's spatial weight is lower-triangular), trained to predict "
           "the next token. S-LSTM has no causal variant."));
    connect(arch_, &QComboBox::currentTextChanged, this,
            [this](const QString& a) { causal_->setEnabled(a != "slstm"); });
    out_dir_ = new QLineEdit(this);
    out_dir_->setObjectName("outDir");
    auto* browse_out = new QPushButton(tr("Browse…"), this);
    connect(browse_out, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Run directory"));
        if (!d.isEmpty()) out_dir_->setText(d);
    });
    auto* out_row = new QHBoxLayout;
    out_row->addWidget(out_dir_, 1);
    out_row->addWidget(browse_out);
    overrides_ = new QPlainTextEdit(this);
    overrides_->setObjectName("overrides");
    overrides_->setPlaceholderText(tr("key=value, one per line (e.g. train.batch_size=4)"));
    overrides_->setMaximumHeight(70);
    overrides_->setTabChangesFocus(true);  // Tab leaves the box, as in every other field
    problems_ = new QLabel(this);
    problems_->setObjectName("problems");
    problems_->setWordWrap(true);
    problems_->setStyleSheet("color: #b00020");
    problems_->hide();

    auto* form = new QFormLayout;
    form->addRow(tr("&Architecture:"), arch_);
    form->addRow(tr("&Size:"), size_);
    form->addRow(QString(), causal_);
    form->addRow(tr("Training &data:"), data_row);
    form->addRow(tr("S&teps:"), steps_);
    form->addRow(tr("&Learning rate:"), lr_);
    form->addRow(tr("T&hreads:"), threads_);
    form->addRow(tr("De&vice:"), device_);
    form->addRow(tr("Run &directory:"), out_row);
    form->addRow(tr("&Overrides:"), overrides_);
    set_form_buddies(form);  // rows with a Browse… button: no literal '&' in their labels
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Start Run"));
    connect(buttons, &QDialogButtonBox::accepted, this, &RunLauncherDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(problems_);
    layout->addWidget(buttons);

    RunSettings defaults;
    const QString base =
        QSettings()
            .value("runsDir", QDir(QStandardPaths::writableLocation(QStandardPaths::HomeLocation))
                                  .filePath("routescope-runs"))
            .toString();
    defaults.out_dir =
        QDir(base).filePath(QDateTime::currentDateTime().toString("'run-'yyyyMMdd-HHmmss"));
    set_settings(defaults);
}

RunSettings RunLauncherDialog::settings() const {
    RunSettings s;
    s.arch = arch_->currentText();
    s.size = size_->currentData().toString();
    s.data = data_->text().trimmed();
    s.steps = steps_->value();
    s.lr = lr_->value();
    s.threads = threads_->value();
    s.device = device_->currentData().toString();
    s.causal = causal_->isChecked() && causal_->isEnabled();
    s.out_dir = out_dir_->text().trimmed();
    for (const QString& line : overrides_->toPlainText().split('\n', Qt::SkipEmptyParts))
        if (!line.trimmed().isEmpty()) s.overrides << line.trimmed();
    return s;
}

void RunLauncherDialog::set_settings(const RunSettings& s) {
    arch_->setCurrentText(s.arch);
    size_->setCurrentIndex(std::max(0, size_->findData(s.size)));
    data_->setText(s.data);
    steps_->setValue(static_cast<int>(s.steps));
    lr_->setValue(s.lr);
    threads_->setValue(s.threads);
    device_->setCurrentIndex(std::max(0, device_->findData(s.device)));
    causal_->setChecked(s.causal);
    out_dir_->setText(s.out_dir);
    overrides_->setPlainText(s.overrides.join('\n'));
}

QString RunLauncherDialog::problems_text() const {
    return problems_->isVisible() || !problems_->text().isEmpty() ? problems_->text() : QString();
}

void RunLauncherDialog::accept() {
    QStringList problems = settings().problems();
    // A folder that cannot be made or written in (under a file, read-only), with the reason:
    // refused here, before the run joins the workspace.
    if (const QString dir = settings().out_dir; !dir.isEmpty())
        if (const QString p = WorkspaceController::run_directory_problem(dir); !p.isEmpty())
            problems << p;
    if (!settings_are_usable(problems_, problems)) return;
    QSettings().setValue("runsDir", QFileInfo(settings().out_dir).absolutePath());
    QDialog::accept();
}

}  // namespace routescope::gui
