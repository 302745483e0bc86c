#include "app/gui/engine_action_dialog.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "app/gui/form_buddies.hpp"

namespace routescope::gui {

bool settings_are_usable(QLabel* label, const QStringList& problems) {
    if (!problems.isEmpty()) {
        label->setText(problems.join('\n'));
        label->show();
        return false;
    }
    label->clear();
    label->hide();
    return true;
}

QComboBox* make_device_box(QWidget* parent) {
    auto* box = new QComboBox(parent);
    box->setObjectName("device");
    box->addItem(QObject::tr("CPU"), "cpu");
    DeviceProbe* probe = DeviceProbe::instance();
    box->addItem(probe->cuda_label(), "cuda");
    auto disable_cuda = [box, probe] {
        box->setItemText(1, probe->cuda_label());
        if (auto* model = qobject_cast<QStandardItemModel*>(box->model()))
            model->item(1)->setEnabled(probe->cuda_available());
    };
    disable_cuda();
    QObject::connect(probe, &DeviceProbe::changed, box, disable_cuda);
    box->setToolTip(QObject::tr("The engine device the command runs on"));
    return box;
}

namespace {
/// A line edit with a Browse… button; `dir`: choose a directory.
// A button that opens a file dialog (never modal-blocking) and writes the choice into `edit`.
QPushButton* browse_button(QDialog* dialog, QLineEdit* edit, const QString& caption, bool dir,
                           bool save, const QString& label) {
    auto* button = new QPushButton(label, dialog);
    QObject::connect(button, &QPushButton::clicked, dialog, [=] {
        auto* fd = new QFileDialog(dialog, caption, edit->text());
        fd->setAttribute(Qt::WA_DeleteOnClose);
        fd->setFileMode(dir    ? QFileDialog::Directory
                        : save ? QFileDialog::AnyFile
                               : QFileDialog::ExistingFile);
        fd->setAcceptMode(save ? QFileDialog::AcceptSave : QFileDialog::AcceptOpen);
        QObject::connect(fd, &QFileDialog::fileSelected, edit, &QLineEdit::setText);
        fd->open();  // never a nested event loop
    });
    return button;
}

QHBoxLayout* with_browse(QDialog* dialog, QLineEdit* edit, const QString& caption, bool dir,
                         bool save) {
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse_button(dialog, edit, caption, dir, save, QObject::tr("Browse…")));
    return row;
}
}  // namespace

EngineActionDialog::EngineActionDialog(const EngineActionSettings& settings, QWidget* parent)
    : QDialog(parent), action_(settings.action) {
    setWindowTitle(engine_action_title(action_));
    setObjectName(engine_action_command(action_) + "Dialog");
    auto* form = new QFormLayout;
    auto line = [this](const char* name) {
        auto* e = new QLineEdit(this);
        e->setObjectName(name);
        return e;
    };
    auto combo = [this](const char* name, const QStringList& items) {
        auto* c = new QComboBox(this);
        c->setObjectName(name);
        c->addItems(items);
        return c;
    };
    auto spin = [this](const char* name, int lo, int hi, const QString& zero) {
        auto* s = new QSpinBox(this);
        s->setObjectName(name);
        s->setRange(lo, hi);
        if (!zero.isEmpty()) s->setSpecialValueText(zero);
        return s;
    };

    if (action_ == EngineAction::Dump || action_ == EngineAction::Evaluate) {
        checkpoint_ = line("checkpoint");
        form->addRow(tr("&Checkpoint:"),
                     with_browse(this, checkpoint_, tr("Checkpoint"), false, false));
        source_ = new QComboBox(this);
        source_->setObjectName("source");
        source_->addItem(action_ == EngineAction::Dump
                             ? tr("the checkpoint's task or held-out corpus")
                             : tr("the checkpoint's task"),
                         "own");
        source_->addItem(tr("a built-in task"), "task");
        source_->addItem(action_ == EngineAction::Dump
                             ? tr("a data file (TSV, CSV, JSONL) or text corpus")
                             : tr("a data file (TSV, CSV, JSONL)"),
                         "data");
        form->addRow(tr("&Examples from:"), source_);
        task_ = combo("task", builtin_tasks());
        form->addRow(tr("&Task:"), task_);
        task_data_ = line("data");
        form->addRow(tr("&Data file:"), with_browse(this, task_data_, tr("Data"), false, false));
        split_ = combo("split", {"valid", "test", "train"});
        form->addRow(tr("S&plit:"), split_);
        connect(source_, &QComboBox::currentIndexChanged, this, [this] { update_enabled(); });
    }
    if (action_ == EngineAction::Dump) {
        layers_ = line("layers");
        layers_->setToolTip(tr("all, or layer indices 0,4,8 (0 = embeddings)"));
        form->addRow(tr("&Layers:"), layers_);
        gates_ = new QCheckBox(tr("also the blocks' gates"), this);
        gates_->setObjectName("gates");
        form->addRow(tr("&Gates:"), gates_);
        dtype_ = combo("dtype", {"f32", "f16"});
        form->addRow(tr("D&type:"), dtype_);
        examples_ = spin("examples", 0, 100'000'000, tr("default"));
        form->addRow(tr("E&xamples:"), examples_);
    }
    if (action_ == EngineAction::Import) {
        import_source_ = line("importSource");
        import_source_->setToolTip(
            tr("A model directory (config.json + weights + vocab), one weights file or a "
               "sharded checkpoint's index (*.index.json)"));
        // A model directory, or one weights file or sharded checkpoint index.
        auto* source_row = new QHBoxLayout;
        source_row->addWidget(import_source_, 1);
        source_row->addWidget(
            browse_button(this, import_source_, tr("Model directory"), true, false, tr("Folder…")));
        source_row->addWidget(browse_button(this, import_source_, tr("Weights file or shard index"),
                                            false, false, tr("File…")));
        form->addRow(tr("&Source:"), source_row);
        format_ = combo("format", {"auto", "flax", "pytorch", "safetensors"});
        form->addRow(tr("&Format:"), format_);
    }
    if (action_ == EngineAction::Experiment) {
        experiment_ = combo("experiment", experiment_names());
        form->addRow(tr("E&xperiment:"), experiment_);
        steps_ = spin("steps", 0, 10'000'000, tr("the experiment's"));
        form->addRow(tr("S&teps per model:"), steps_);
        seed_ = spin("seed", 0, 1'000'000'000, QString());
        form->addRow(tr("S&eed:"), seed_);
        overrides_ = new QPlainTextEdit(this);
        overrides_->setObjectName("overrides");
        overrides_->setPlaceholderText(tr("key=value, one per line (e.g. model.d_model=32)"));
        overrides_->setMaximumHeight(70);
        overrides_->setTabChangesFocus(true);  // Tab leaves the box, as in every other field
        form->addRow(tr("&Overrides:"), overrides_);
    }
    out_ = line("out");
    const QString out_label = action_ == EngineAction::Dump       ? tr("&Output dump:")
                              : action_ == EngineAction::Evaluate ? tr("&Predictions:")
                              : action_ == EngineAction::Import   ? tr("&Output checkpoint:")
                                                                  : tr("&Output directory:");
    form->addRow(out_label,
                 with_browse(this, out_, tr("Output"), action_ == EngineAction::Experiment, true));
    threads_ = spin("threads", 0, 256, tr("all cores"));
    form->addRow(tr("T&hreads:"), threads_);
    device_ = make_device_box(this);
    form->addRow(tr("De&vice:"), device_);
    set_form_buddies(form);  // rows with a Browse… button: no literal '&' in their labels

    problems_ = new QLabel(this);
    problems_->setObjectName("problems");
    problems_->setWordWrap(true);
    problems_->setStyleSheet("color: #b00020");
    problems_->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Start"));
    connect(buttons, &QDialogButtonBox::accepted, this, &EngineActionDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(problems_);
    layout->addWidget(buttons);
    set_settings(settings);
}

EngineActionSettings EngineActionDialog::settings() const {
    EngineActionSettings s;
    s.action = action_;
    if (checkpoint_) {
        s.checkpoint = checkpoint_->text().trimmed();
        s.source = source_->currentData().toString();
        s.task = task_->currentText();
        s.data = task_data_->text().trimmed();
        s.split = split_->currentText();
    }
    if (layers_) {
        s.layers = layers_->text().trimmed();
        s.gates = gates_->isChecked();
        s.dtype = dtype_->currentText();
        s.examples = examples_->value();
    }
    if (import_source_) {
        s.import_source = import_source_->text().trimmed();
        s.import_format = format_->currentText();
    }
    if (experiment_) {
        s.experiment = experiment_->currentText();
        s.steps = steps_->value();
        s.seed = seed_->value();
        for (const QString& l : overrides_->toPlainText().split('\n', Qt::SkipEmptyParts))
            if (!l.trimmed().isEmpty()) s.overrides << l.trimmed();
    }
    s.out = out_->text().trimmed();
    s.threads = threads_->value();
    s.device = device_->currentData().toString();
    return s;
}

void EngineActionDialog::set_settings(const EngineActionSettings& s) {
    if (checkpoint_) {
        checkpoint_->setText(s.checkpoint);
        source_->setCurrentIndex(std::max(0, source_->findData(s.source)));
        if (!s.task.isEmpty()) task_->setCurrentText(s.task);
        task_data_->setText(s.data);
        split_->setCurrentText(s.split);
    }
    if (layers_) {
        layers_->setText(s.layers);
        gates_->setChecked(s.gates);
        dtype_->setCurrentText(s.dtype);
        examples_->setValue(static_cast<int>(s.examples));
    }
    if (import_source_) {
        import_source_->setText(s.import_source);
        format_->setCurrentText(s.import_format);
    }
    if (experiment_) {
        experiment_->setCurrentText(s.experiment);
        steps_->setValue(static_cast<int>(s.steps));
        seed_->setValue(static_cast<int>(s.seed));
        overrides_->setPlainText(s.overrides.join('\n'));
    }
    out_->setText(s.out);
    threads_->setValue(s.threads);
    device_->setCurrentIndex(std::max(0, device_->findData(s.device)));
    update_enabled();
}

void EngineActionDialog::update_enabled() {
    if (!source_) return;
    const QString source = source_->currentData().toString();
    task_->setEnabled(source == "task");
    task_data_->setEnabled(source == "data");
    split_->setEnabled(source != "data");
}

QString EngineActionDialog::problems_text() const {
    return problems_->text();
}

void EngineActionDialog::accept() {
    if (settings_are_usable(problems_, settings().problems())) QDialog::accept();
}

}  // namespace routescope::gui
