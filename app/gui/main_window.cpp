#include "app/gui/main_window.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <utility>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeWidget>
#include <QUndoCommand>
#include <QUndoStack>
#include <QVBoxLayout>

#include "app/gui/analysis_registry.hpp"
#include "app/gui/colour_theme.hpp"
#include "app/gui/engine_action_dialog.hpp"
#include "app/gui/headless_export.hpp"
#include "app/gui/job_list.hpp"
#include "app/gui/run_launcher_dialog.hpp"
#include "app/gui/workspace.hpp"
#include "app/gui/workspace_controller.hpp"
#include "app/gui/workspace_dock.hpp"
#include "engine/core/build_info.hpp"
#include "engine/core/error.hpp"
#include "routescope/version.hpp"
#include "views/anisotropy_view.hpp"
#include "views/chart_panel.hpp"
#include "views/display_name.hpp"
#include "views/efficiency_view.hpp"
#include "views/file_summary_view.hpp"
#include "views/gates_view.hpp"
#include "views/kernel_view.hpp"
#include "views/length_accuracy_view.hpp"
#include "views/pca_view.hpp"
#include "views/similarity_view.hpp"
#include "views/training_view.hpp"
#include "views/transitions_view.hpp"

namespace routescope::gui {

namespace {
constexpr int kMaxRecent = 10;
constexpr const char* kRecentKey = "recentFiles";
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Routescope"));
    setWindowIcon(QIcon(":/icons/routescope.svg"));
    setObjectName("mainWindow");
    setAcceptDrops(true);
    resize(1200, 760);
    qApp->installEventFilter(this);

    tabs_ = new QTabWidget(this);
    tabs_->setTabsClosable(true);
    tabs_->setDocumentMode(true);
    tabs_->setObjectName("viewTabs");
    connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int i) {
        delete tabs_->widget(i);  // its view leaves the document (open_analysis)
        update_analysis_progress();
    });
    setCentralWidget(tabs_);

    document_ = new Workspace(this);
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) {
        const QVariant id = i < 0 ? QVariant() : tabs_->widget(i)->property(kViewId);
        document_->set_current_view(id.isValid() ? id.toInt() : -1);
    });
    // An undo, a redo or a project changed a view's settings in the document: its widget takes
    // them (a change the person made in the widget is there already).
    connect(document_, &Workspace::view_settings_changed, this,
            [this](int id, const nlohmann::json& settings) {
                views::AnalysisView* view = view_widget(id);
                if (view && view->settings() != settings) view->apply_settings(settings);
            });
    views::forget_model_identities();  // a new window starts a new workspace (names, colours)
    workspace_ = new WorkspaceDock(document_, this);
    addDockWidget(Qt::LeftDockWidgetArea, workspace_);
    // The inspector: the summary of the file chosen in the workspace, in one panel (not a tab per
    // file: a project of twenty files would bring back twenty tabs).
    inspector_ = new QDockWidget(tr("Inspector"), this);
    inspector_->setObjectName("inspectorDock");
    inspector_stack_ = new QStackedWidget(inspector_);
    inspector_stack_->setObjectName("inspector");
    auto* none =
        new QLabel(tr("Choose a file in the workspace to see what it holds."), inspector_stack_);
    none->setWordWrap(true);
    none->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    none->setMargin(8);
    inspector_stack_->addWidget(none);
    inspector_->setWidget(inspector_stack_);
    addDockWidget(Qt::LeftDockWidgetArea, inspector_);
    splitDockWidget(workspace_, inspector_, Qt::Vertical);
    connect(workspace_, &WorkspaceDock::activated, this,
            [this](const QString& path) { inspect(path); });
    connect(workspace_->tree(), &QTreeWidget::currentItemChanged, this,
            [this](QTreeWidgetItem* item, QTreeWidgetItem*) {
                for (auto* i = item; i; i = i->parent())
                    if (const QString path = i->data(0, Qt::UserRole + 1).toString();
                        !path.isEmpty() && summary_for(path)) {
                        inspect(path);
                        return;
                    }
            });

    // The controller does the work on the document; the window draws what it reports.
    controller_ = new WorkspaceController(document_, this);
    connect(controller_, &WorkspaceController::message, this,
            [this](const QString& text, int ms) { statusBar()->showMessage(text, ms); });
    connect(controller_, &WorkspaceController::failed, this, &MainWindow::show_error);
    connect(controller_, &WorkspaceController::fileOpening, workspace_,
            &WorkspaceDock::add_pending);
    connect(controller_, &WorkspaceController::fileRead, this,
            [this](const LoadedFile& file, bool behind) {
                workspace_->add_file(file);
                show_summary(file, behind);
                if (file.report.readable) add_recent(file.path);
            });
    connect(controller_, &WorkspaceController::fileScanned, this, [this](const LoadedFile& file) {
        // The second pass: the complete report replaces the structural one, in place, without
        // taking the person away from the tab they are on.
        workspace_->add_file(file);
        if (auto* view = summary_for(file.path))
            view->show_file(file.path, file.report, file.info, file.error);
    });
    connect(controller_, &WorkspaceController::verdictsChanged, this,
            &MainWindow::release_held_views);
    connect(controller_, &WorkspaceController::viewsReady, this,
            &MainWindow::restore_project_views);
    connect(controller_, &WorkspaceController::runAdded, this, [this](const QString& dir) {
        QTreeWidgetItem* item = workspace_->add_run(dir);
        item->setIcon(0, style()->standardIcon(QStyle::SP_DirIcon));
        // The device the run trained on, from its log's start record.
        new QTreeWidgetItem(
            item,
            {tr("device: %1")
                 .arg(views::TrainingLog::device_text(views::TrainingLog::recorded_device(dir)))});
    });
    connect(controller_, &WorkspaceController::analysisRequested, this,
            [this](const QString& kind, const QStringList& paths) { open_analysis(kind, paths); });
    connect(controller_, &WorkspaceController::jobAdded, this, &MainWindow::show_job);
    connect(controller_, &WorkspaceController::jobDiscarded, workspace_,
            &WorkspaceDock::remove_job);

    progress_ = new QProgressBar(this);
    progress_->setObjectName("analysisProgress");
    progress_->setMaximumWidth(220);
    progress_->setTextVisible(true);
    progress_->hide();
    cancel_button_ = new QToolButton(this);
    cancel_button_->setText(tr("Cancel"));
    cancel_button_->setToolTip(tr("Cancel the running analyses"));
    cancel_button_->hide();
    connect(cancel_button_, &QToolButton::clicked, this, [this] {
        for (auto* v : analysis_views())
            v->cancel();
    });
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_button_);

    create_actions();
    create_analysis_actions();
    create_run_actions();
    create_project_actions();
    statusBar()->showMessage(
        tr("Open a dump (*.dump.h5) or checkpoint (*.ckpt.h5): File › Open, or drop it here."));

    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());

    // A rename or a new colour is a command of the workspace document (Edit › Undo), shown at
    // once in every view that reads a file of that model, and saved with the project.
    connect(document_, &Workspace::renamed, this,
            [this](const QString& path, const QString&) { redraw_views_of(path); });
    connect(document_, &Workspace::recoloured, this,
            [this](const QString& model) { redraw_views_of(model); });
    connect(document_, &Workspace::project_path_changed, this, [this](const QString& path) {
        setWindowTitle(path.isEmpty() ? tr("Routescope")
                                      : tr("Routescope — %1").arg(QFileInfo(path).fileName()));
    });
    document_->mark_saved();  // an empty workspace has nothing to save
}

FileLoader* MainWindow::loader() const {
    return controller_->loader();
}

void MainWindow::redraw_views_of(const QString& path) {
    const QString model = views::model_key(path);
    for (views::AnalysisView* v : analysis_views()) {
        QStringList inputs = v->input_files();
        if (const Workspace::View* record = document_->view(v->property(kViewId).toInt()))
            inputs << record->inputs;
        if (std::none_of(inputs.begin(), inputs.end(), [&](const QString& f) {
                return f == path || views::model_key(f) == model;
            }))
            continue;
        v->restyle();  // titles, legends, tables and colours take the new name or colour
        if (const int i = tabs_->indexOf(v); i >= 0) tabs_->setTabText(i, v->title());
    }
}

void MainWindow::create_actions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QToolBar* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName("mainToolbar");

    auto* open =
        new QAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), this);
    open->setShortcut(QKeySequence::Open);
    open->setStatusTip(tr("Open an activation dump or a checkpoint"));
    connect(open, &QAction::triggered, this, &MainWindow::open_dialog);
    file->addAction(open);
    toolbar->addAction(open);

    recent_menu_ = file->addMenu(tr("Open &Recent"));
    rebuild_recent_menu();

    auto* close = new QAction(tr("&Close View"), this);
    close->setShortcut(QKeySequence::Close);
    close->setStatusTip(tr("Close the current view tab"));
    connect(close, &QAction::triggered, this, &MainWindow::close_current);
    file->addAction(close);
    file->addSeparator();

    auto* quit = new QAction(tr("&Quit"), this);
    quit->setShortcut(QKeySequence::Quit);
    quit->setStatusTip(tr("Quit Routescope"));
    connect(quit, &QAction::triggered, this, &QWidget::close);
    file->addAction(quit);

    auto* export_action = new QAction(tr("&Export…"), this);
    export_action->setObjectName("exportAction");
    export_action->setShortcut(QKeySequence(tr("Ctrl+E")));
    export_action->setStatusTip(
        tr("Export the current view as PNG, SVG, PDF or its data as CSV, with a provenance JSON"));
    connect(export_action, &QAction::triggered, this, &MainWindow::export_dialog);
    file->insertAction(quit, export_action);
    auto* export_all_action = new QAction(tr("Export &All…"), this);
    export_all_action->setObjectName("exportAllAction");
    export_all_action->setShortcut(QKeySequence(tr("Ctrl+Alt+E")));
    export_all_action->setStatusTip(
        tr("Export every open view (PNG, SVG, PDF, CSV and provenance) into a directory"));
    connect(export_all_action, &QAction::triggered, this, &MainWindow::export_all_dialog);
    file->insertAction(quit, export_all_action);
    file->insertSeparator(quit);
    toolbar->addAction(export_action);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* toggle = workspace_->toggleViewAction();
    toggle->setShortcut(QKeySequence(tr("Ctrl+1")));
    toggle->setStatusTip(tr("Show or hide the workspace"));
    view->addAction(toggle);

    // Theme: the platform's (default) or an override, kept across sessions.
    QMenu* theme_menu = view->addMenu(tr("&Theme"));
    auto* themes = new QActionGroup(this);
    const struct {
        ColourTheme theme;
        const char* text;
        const char* tip;
    } theme_entries[] = {
        {ColourTheme::System, QT_TR_NOOP("&System"), QT_TR_NOOP("Follow the platform's colours")},
        {ColourTheme::Light, QT_TR_NOOP("&Light"),
         QT_TR_NOOP("Light colours, whatever the platform")},
        {ColourTheme::Dark, QT_TR_NOOP("&Dark"), QT_TR_NOOP("Dark colours, whatever the platform")},
    };
    const ColourTheme current_theme = saved_colour_theme();
    for (const auto& e : theme_entries) {
        auto* a = theme_menu->addAction(tr(e.text));
        a->setObjectName("theme_" + colour_theme_name(e.theme));
        a->setStatusTip(tr(e.tip));
        a->setCheckable(true);
        a->setChecked(e.theme == current_theme);
        themes->addAction(a);
        connect(a, &QAction::triggered, this, [theme = e.theme] {
            save_colour_theme(theme);
            apply_colour_theme(theme);
        });
    }
    apply_colour_theme(current_theme);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    auto* guide = new QAction(tr("&User Guide"), this);
    guide->setObjectName("helpUserGuide");
    guide->setShortcut(QKeySequence::HelpContents);
    guide->setStatusTip(tr("The analyses, the views and how to read them"));
    connect(guide, &QAction::triggered, this, &MainWindow::show_user_guide);
    help->addAction(guide);
    auto* keys = new QAction(tr("&Keyboard Shortcuts"), this);
    keys->setObjectName("helpShortcuts");
    keys->setStatusTip(tr("Every menu shortcut and the keys of charts and heatmaps"));
    connect(keys, &QAction::triggered, this, &MainWindow::show_shortcuts);
    help->addAction(keys);
    help->addSeparator();
    auto* about = new QAction(tr("&About Routescope"), this);
    about->setObjectName("helpAbout");
    about->setStatusTip(tr("Version and the libraries built in"));
    connect(about, &QAction::triggered, this, &MainWindow::show_about);
    help->addAction(about);
}

void MainWindow::open_dialog() {
    const QString dir = QSettings().value("lastDir").toString();
    const QStringList files =
        QFileDialog::getOpenFileNames(this, tr("Open dump or checkpoint"), dir,
                                      tr("Routescope files (*.h5 *.hdf5 *.jsonl);;Activation "
                                         "dumps (*.dump.h5);;Checkpoints (*.ckpt.h5);;Evaluation "
                                         "predictions (*.jsonl);;All files (*)"));
    for (const auto& f : files)
        open_file(f);
    if (!files.isEmpty()) QSettings().setValue("lastDir", QFileInfo(files.first()).absolutePath());
}

void MainWindow::open_file(const QString& path) {
    if (path.endsWith(".rsproj", Qt::CaseInsensitive)) {  // its errors in one dialog
        try {
            open_project(QFileInfo(path).absoluteFilePath());
        } catch (const std::exception& e) {
            show_error(tr("Cannot open project"), QString::fromUtf8(e.what()));
        }
        return;
    }
    controller_->open_file(path);
}

views::FileSummaryView* MainWindow::summary_for(const QString& path) const {
    for (int i = 0; i < inspector_stack_->count(); ++i)
        if (inspector_stack_->widget(i)->property("routescopePath").toString() == path)
            return qobject_cast<views::FileSummaryView*>(inspector_stack_->widget(i));
    return nullptr;
}

void MainWindow::show_summary(const LoadedFile& file, bool behind) {
    auto* view = summary_for(file.path);
    if (!view) {
        view = new views::FileSummaryView(inspector_stack_);
        view->setProperty("routescopePath", file.path);
        inspector_stack_->addWidget(view);
    }
    view->show_file(file.path, file.report, file.info, file.error);
    // A file opened by hand is inspected; a project's files load without taking the panel.
    if (!behind) inspect(file.path);
}

void MainWindow::inspect(const QString& path) {
    if (auto* view = summary_for(path)) {
        inspector_stack_->setCurrentWidget(view);
        inspector_->setWindowTitle(tr("Inspector — %1").arg(QFileInfo(path).fileName()));
        inspector_->show();
    }
}

void MainWindow::show_error(const QString& title, const QString& text) {
    // Non-modal: the event loop (and any running work) goes on while the message is up.
    errors_shown_ << title + ": " + QString(text).replace("\n\n", " ").replace('\n', ' ');
    if (gathering_errors_) {
        gathered_errors_ << title + ": " + text;
        return;
    }
    if (last_error_) last_error_->close();
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName("errorDialog");
    box->open();
    last_error_ = box;
}

void MainWindow::close_current() {
    if (QWidget* w = tabs_->currentWidget()) delete w;
    update_analysis_progress();
}

QStringList MainWindow::recent_files() const {
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::add_recent(const QString& path) {
    if (!records_recent_) return;
    QStringList files = recent_files();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecent)
        files.removeLast();
    QSettings().setValue(kRecentKey, files);
    rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
    recent_menu_->clear();
    const QStringList files = recent_files();
    for (int i = 0; i < files.size(); ++i) {
        auto* a =
            recent_menu_->addAction(tr("&%1 %2").arg(i + 1).arg(QFileInfo(files[i]).fileName()));
        a->setStatusTip(files[i]);
        const QString path = files[i];
        connect(a, &QAction::triggered, this, [this, path] { open_file(path); });
    }
    recent_menu_->setEnabled(!files.isEmpty());
    if (!files.isEmpty()) {
        recent_menu_->addSeparator();
        auto* clear = recent_menu_->addAction(tr("Clear List"));
        connect(clear, &QAction::triggered, this, [this] {
            QSettings().remove(kRecentKey);
            rebuild_recent_menu();
        });
    }
}

void MainWindow::show_about() {
    QMessageBox::about(
        this, tr("About Routescope"),
        tr("<h3>Routescope %1</h3>"
           "<p>A workbench for attention-free pretrained language models: BiGS, Birdie, "
           "S-LSTM, gMLP and their attention baselines.</p>"
           "<p>License: GPL-3.0-or-later.</p><pre>%2Qt %3</pre>")
            .arg(QString::fromUtf8(kVersion),
                 QString::fromStdString(build_info_text()).toHtmlEscaped(),
                 QString::fromUtf8(qVersion())));
}

QString MainWindow::user_guide_path() {
    // Installed: <prefix>/share/doc/routescope; in a build tree: docs/ of a folder above the
    // executable (the build folder inside the source tree).
    const QDir exe(QCoreApplication::applicationDirPath());
    const QString installed = exe.absoluteFilePath("../share/doc/routescope/user-guide.md");
    if (QFileInfo::exists(installed)) return QFileInfo(installed).canonicalFilePath();
    for (QDir d = exe; !d.isRoot(); d.cdUp())
        if (QFileInfo::exists(d.filePath("docs/user-guide.md")))
            return QFileInfo(d.filePath("docs/user-guide.md")).canonicalFilePath();
    return {};
}

void MainWindow::show_user_guide() {
    const QString path = user_guide_path();
    if (path.isEmpty()) {
        show_error(tr("User guide not found"),
                   tr("The user guide (user-guide.md) is neither installed beside Routescope "
                      "(share/doc/routescope) nor in a docs/ folder above it."));
        return;
    }
    auto* dialog = new QDialog(this);
    dialog->setObjectName("userGuideDialog");
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Routescope User Guide"));
    auto* browser = new QTextBrowser(dialog);
    browser->setObjectName("userGuide");
    browser->setOpenExternalLinks(true);
    browser->setSearchPaths({QFileInfo(path).absolutePath()});
    QFile file(path);
    if (file.open(QIODevice::ReadOnly)) browser->setMarkdown(QString::fromUtf8(file.readAll()));
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(browser);
    dialog->resize(900, 700);
    dialog->show();
}

void MainWindow::show_shortcuts() {
    auto* dialog = new QDialog(this);
    dialog->setObjectName("shortcutDialog");
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Keyboard Shortcuts"));
    auto* table = new QTableWidget(dialog);
    table->setObjectName("shortcutTable");
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({tr("Keys"), tr("Action")});
    QList<QPair<QString, QString>> rows;
    for (QAction* a : findChildren<QAction*>())
        if (!a->shortcut().isEmpty())
            rows.append({a->shortcut().toString(QKeySequence::NativeText),
                         a->text().remove(QRegularExpression("&(?!&)"))});
    std::sort(rows.begin(), rows.end(),
              [](const auto& x, const auto& y) { return x.second < y.second; });
    // Keys of the charts and heatmaps (chart_interaction.hpp) and of the tabs.
    rows.append({tr("Ctrl+Tab, Ctrl+PgDown"), tr("Next tab")});
    rows.append({tr("Ctrl+Shift+Tab, Ctrl+PgUp"), tr("Previous tab")});
    rows.append({tr("Wheel, + / −"), tr("Zoom a chart or heatmap")});
    rows.append({tr("Drag, arrow keys"), tr("Pan a zoomed chart or heatmap")});
    rows.append({tr("R, Home"), tr("Reset a chart's or heatmap's zoom")});
    table->setRowCount(static_cast<int>(rows.size()));
    for (int i = 0; i < rows.size(); ++i) {
        table->setItem(i, 0, new QTableWidgetItem(rows[i].first));
        table->setItem(i, 1, new QTableWidgetItem(rows[i].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(table);
    dialog->resize(560, 600);
    dialog->show();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress && event->type() != QEvent::ShortcutOverride)
        return QMainWindow::eventFilter(watched, event);
    auto* key = static_cast<QKeyEvent*>(event);
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != this || !(key->modifiers() & Qt::ControlModifier) ||
        (key->modifiers() & (Qt::AltModifier | Qt::MetaModifier)))
        return QMainWindow::eventFilter(watched, event);
    int step = 0;
    if (key->key() == Qt::Key_PageDown || (key->key() == Qt::Key_Tab)) step = 1;
    if (key->key() == Qt::Key_PageUp || key->key() == Qt::Key_Backtab) step = -1;
    if (step == 0 || tabs_->count() < 2) return QMainWindow::eventFilter(watched, event);
    if (event->type() == QEvent::ShortcutOverride) {
        event->accept();  // a key press follows, which this filter takes
        return true;
    }
    tabs_->setCurrentIndex((tabs_->currentIndex() + step + tabs_->count()) % tabs_->count());
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

int MainWindow::open_dropped(const QMimeData* mime) {
    int n = 0;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) {
            open_file(url.toLocalFile());
            ++n;
        }
    return n;
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (open_dropped(event->mimeData()) > 0) event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    // The child processes that quitting would stop: training runs (they save a checkpoint when
    // stopped) and engine actions (a stopped one leaves no partial file: its work is lost).
    int runs = 0, others = 0;
    for (const CliJob* job : document_->jobs()->jobs())
        if (job->running()) ++(qobject_cast<const RunProcess*>(job) ? runs : others);
    const int active = runs + others;
    if (quit_ == Quit::Stopping && active > 0) {  // quit asked for; still saving checkpoints
        event->ignore();
        return;
    }
    if (quit_ == Quit::No && (modified() || active > 0)) {
        // One question for what quitting loses: the running jobs (stopped as Stop Run stops
        // them) and the changes not saved (Save, Discard); Cancel or Esc stays.
        QStringList text;
        if (active > 0) {
            if (runs > 0 && others > 0)
                text << tr("%n training run(s) and %1 other command(s) are in progress.", nullptr,
                           runs)
                            .arg(others);
            else if (runs > 0)
                text << tr("%n training run(s) in progress.", nullptr, runs);
            else
                text << tr("%n command(s) in progress (dump, evaluation, import or experiment).",
                           nullptr, others);
            text << tr(
                "Quitting stops them as Stop Run does: a training run ends its step and "
                "saves its checkpoint (resume it with routescope-cli train --resume); "
                "another command leaves no partial file.");
        }
        if (modified())
            text << (document_->project_path().isEmpty()
                         ? tr("The workspace has views, files or names that are not saved in "
                              "a project. Save them before quitting?")
                         : tr("%1 has changes that are not saved. Save them before quitting?")
                               .arg(QFileInfo(document_->project_path()).fileName()));
        QMessageBox ask(QMessageBox::Question,
                        modified() ? tr("Unsaved changes") : tr("Runs in progress"),
                        text.join("\n\n"), QMessageBox::Cancel, this);
        ask.setObjectName(modified() ? "unsavedPrompt" : "quitPrompt");
        const QString stop = others == 0 ? tr("Stop %n Run(s)", nullptr, runs)
                             : runs == 0 ? tr("Stop %n Command(s)", nullptr, others)
                                         : tr("Stop %n Job(s)", nullptr, active);
        if (modified()) {
            ask.addButton(QMessageBox::Save);
            ask.addButton(QMessageBox::Discard);
            if (active > 0) {
                ask.button(QMessageBox::Save)->setText(tr("&Save, %1 and Quit").arg(stop));
                ask.button(QMessageBox::Discard)->setText(tr("&Discard, %1 and Quit").arg(stop));
            }
        } else {
            ask.addButton(QMessageBox::Yes)->setText(tr("&%1 and Quit").arg(stop));
        }
        // Enter saves as before; with runs going, Enter stays (stopping them is asked for).
        ask.setDefaultButton(active > 0 ? QMessageBox::Cancel : QMessageBox::Save);
        ask.setEscapeButton(QMessageBox::Cancel);
        const int answer = ask.exec();
        if (answer == QMessageBox::Cancel) {
            event->ignore();
            return;
        }
        if (answer == QMessageBox::Save) {
            save_project_dialog(false);
            if (modified()) {  // the save was cancelled or failed: stay
                event->ignore();
                return;
            }
        }
        if (active > 0) {
            // Stopped as Stop Run does (SIGTERM: a run saves its checkpoint, exit 130); the window
            // closes once every job has ended, or after kQuitWaitMs whatever is left (the jobs'
            // destructors then stop them as before).
            quit_ = Quit::Stopping;
            connect(document_->jobs(), &JobList::changed, this, [this] {
                if (quit_ == Quit::Stopping && document_->jobs()->totals().active == 0)
                    QTimer::singleShot(0, this, &QWidget::close);
            });
            QTimer::singleShot(kQuitWaitMs, this, [this] {
                if (quit_ != Quit::Stopping) return;
                quit_ = Quit::Now;
                close();
            });
            document_->jobs()->cancel_all();
            statusBar()->showMessage(
                tr("Stopping %n job(s) before quitting (a training run saves its checkpoint)…",
                   nullptr, active));
            event->ignore();
            return;
        }
    }
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::create_analysis_actions() {
    analysis_menu_ = new QMenu(tr("&Analysis"), this);
    menuBar()->insertMenu(menuBar()->actions().value(2), analysis_menu_);
    for (const AnalysisKind& k : analysis_kinds()) {
        if (!k.in_menu) continue;
        auto* a = new QAction(tr(k.menu), this);
        a->setObjectName(QString("analysis_%1").arg(k.kind));
        a->setShortcut(QKeySequence(QString::fromLatin1(k.shortcut)));
        a->setStatusTip(tr(k.tip));
        const QString kind = k.kind;
        const bool needs_files = !k.accepts.empty();
        connect(a, &QAction::triggered, this, [this, kind, needs_files] {
            const QStringList paths = selected_paths();
            if (paths.isEmpty() && needs_files) {
                show_error(
                    tr("No dump selected"),
                    tr("Select a dump (or checkpoint, for kernels) in the workspace, or open "
                       "one with File › Open, then choose the analysis again."));
                return;
            }
            open_analysis(kind, paths);
        });
        analysis_menu_->addAction(a);
    }
    // The workspace's one context menu is set up with the status bar (create_status_bar).
    workspace_->tree()->setSelectionMode(QAbstractItemView::ExtendedSelection);
}

QStringList MainWindow::selected_paths() const {
    QStringList out;
    const QStringList known = workspace_->paths();
    for (QTreeWidgetItem* item : workspace_->tree()->selectedItems())
        for (auto* i = item; i; i = i->parent())
            if (known.contains(i->toolTip(0))) {
                if (!out.contains(i->toolTip(0))) out << i->toolTip(0);
                break;
            }
    if (out.isEmpty() && tabs_->currentWidget()) {
        const QString path = tabs_->currentWidget()->property("routescopePath").toString();
        if (!path.isEmpty()) out << path;
    }
    return out;
}

void MainWindow::release_held_views() {
    for (views::AnalysisView* v : analysis_views())
        v->recheck_inputs();  // a view that waits for a verdict starts or fails now
}

views::AnalysisView* MainWindow::open_analysis(const QString& kind, const QStringList& paths) {
    // An analysis reads its files in this process (issue 25): only files the loader's child has
    // read through. One it found unreadable (the HDF5 library crashed on it, ...) is refused; one
    // it has not read yet is read by it first, the view waiting for the verdict.
    if (const QString refused = controller_->refusal(kind, paths); !refused.isEmpty()) {
        show_error(tr("Cannot analyse"), refused);
        return nullptr;
    }
    const AnalysisKind* entry = find_analysis(kind);
    if (!entry) {
        show_error(tr("Unknown analysis"), tr("There is no analysis view named '%1'.").arg(kind));
        return nullptr;
    }
    views::AnalysisView* view = entry->make(paths, tabs_);
    // The view joins the document (kind, inputs, settings, charts); the tab shows it. A change a
    // person makes in it is the document's command; its charts' zoom, legend and scales are
    // recorded as they change. Closing the tab (deleting the widget) takes it out.
    const int id =
        document_->add_view(view->kind(), paths, view->settings(), view->chart_options());
    view->setProperty(kViewId, id);
    connect(view, &QObject::destroyed, document_, [doc = document_, id] { doc->remove_view(id); });
    connect(view, &views::AnalysisView::settingsEdited, document_,
            [doc = document_, id](const QString& what, const nlohmann::json& before,
                                  const nlohmann::json& after, bool continuous) {
                doc->edit_view_settings(id, what, before, after, continuous);
            });
    connect(view, &views::AnalysisView::chartOptionsChanged, document_,
            [doc = document_, view, id] { doc->set_view_charts(id, view->chart_options()); });
    watch(view);
    tabs_->addTab(view, view->title());
    tabs_->setTabToolTip(tabs_->indexOf(view), paths.join("\n"));
    tabs_->setCurrentWidget(view);
    // Every analysis the view starts (now, after a settings change, an undo, a project's
    // settings naming other files) asks the loader's verdicts on the files it will read first.
    view->set_input_gate([controller = controller_, kind](const QStringList& files) {
        const WorkspaceController::InputCheck c = controller->check_inputs(kind, files);
        using State = views::AnalysisView::InputCheck::State;
        return views::AnalysisView::InputCheck{
            c.state == WorkspaceController::InputCheck::State::refuse ? State::refuse
            : c.state == WorkspaceController::InputCheck::State::wait ? State::wait
                                                                      : State::go,
            c.text};
    });
    view->start();
    return view;
}

void MainWindow::update_analysis_progress() {
    running_.removeAll(nullptr);
    if (running_.isEmpty()) {
        progress_->hide();
        cancel_button_->hide();
    }
}

void MainWindow::watch(views::AnalysisView* view) {
    // The views at work, not a count: a view may start a follow-up job from its result (Gates
    // reads the example's timeline) without finishing the first, and a tab may close while its
    // analysis runs (its pointer becomes null).
    auto finished = [this, view] {
        running_.removeAll(view);
        update_analysis_progress();
    };
    connect(view, &views::AnalysisView::analysisStarted, this, [this, view](const QString& what) {
        if (!running_.contains(view)) running_ << view;
        progress_->setRange(0, 0);  // busy until the first step reports
        progress_->show();
        cancel_button_->show();
        statusBar()->showMessage(what + tr("…"));
    });
    connect(view, &views::AnalysisView::progressChanged, this, [this](int value, int maximum) {
        progress_->setRange(0, std::max(1, maximum));
        progress_->setValue(value);
    });
    // The status bar tells the truth: "done" names the view that finished and says what is
    // still computing; a failure replaces "Computing…" (issue 26).
    auto still_running = [this] {
        running_.removeAll(nullptr);
        return running_.isEmpty() ? QString()
                                  : tr("; %n other analysis(es) still computing", nullptr,
                                       static_cast<int>(running_.size()));
    };
    connect(
        view, &views::AnalysisView::analysisFinished, this, [this, finished, view, still_running] {
            finished();
            statusBar()->showMessage(tr("%1: done%2").arg(view->title(), still_running()), 5000);
        });
    connect(view, &views::AnalysisView::analysisCancelled, this, [this, finished] {
        finished();
        statusBar()->showMessage(tr("Analysis cancelled"), 5000);
    });
    connect(
        view, &views::AnalysisView::analysisFailed, this,
        [this, finished, view, still_running](const QString& message) {
            finished();
            statusBar()->showMessage(tr("%1: failed%2").arg(view->title(), still_running()), 10000);
            show_error(tr("Analysis failed"),
                       tr("%1\n\n%2\n\nCheck that the file holds what this analysis reads (select "
                          "it in the workspace: the Inspector shows its structure) or change "
                          "the view's settings.")
                           .arg(view->title(), message));
        });
}

QList<views::AnalysisView*> MainWindow::analysis_views() const {
    QList<views::AnalysisView*> out;
    for (int i = 0; i < tabs_->count(); ++i)
        if (auto* v = qobject_cast<views::AnalysisView*>(tabs_->widget(i))) out << v;
    return out;
}

views::AnalysisView* MainWindow::view_widget(int id) const {
    for (views::AnalysisView* v : analysis_views())
        if (v->property(kViewId).toInt() == id) return v;
    return nullptr;
}

views::AnalysisView* MainWindow::current_analysis() const {
    return qobject_cast<views::AnalysisView*>(tabs_->currentWidget());
}

QStringList MainWindow::export_current(const QString& path, int dpi) {
    views::FigureExportOptions options;
    options.dpi = dpi;
    return export_current(path, options);
}

QStringList MainWindow::export_current(const QString& path,
                                       const views::FigureExportOptions& options) {
    auto* view = current_analysis();
    if (!view)
        throw ConfigError(
            "the current tab is not an analysis view: open one from the Analysis menu first");
    if (!view->has_result())
        throw ConfigError("the view has no result yet (its analysis is running or failed)");
    return view->export_to(path, options);
}

void MainWindow::show_view(QWidget* view) {
    // Charts lay out only when shown: bring the view up before drawing it.
    tabs_->setCurrentWidget(view);
    QApplication::processEvents();
}

QStringList MainWindow::export_all(const QString& dir, int dpi) {
    views::FigureExportOptions options;
    options.dpi = dpi;
    return export_all(dir, options);
}

QStringList MainWindow::export_all(const QString& dir, const views::FigureExportOptions& options,
                                   QStringList* failures,
                                   const QSet<const views::AnalysisView*>& leave_out) {
    QStringList out;
    // No figure, CSV or provenance is written over (or through a link onto) a file the
    // workspace reads: its files and runs, the views' inputs and the files their settings name,
    // the project file (as --export refuses them; views/figure_export.hpp).
    QStringList reads = document_->files() + document_->runs();
    for (const Workspace::View& v : document_->views())
        reads += v.inputs + absolute_paths_in(v.settings);
    if (!document_->project_path().isEmpty()) reads << document_->project_path();
    QStringList protected_files;
    for (const QString& r : reads)
        protected_files += files_opened_by(r);
    const views::ExportInputs inputs(protected_files);
    QWidget* was = tabs_->currentWidget();
    // One set of files per view: two views of the same kind and inputs (another layer, other
    // settings), or inputs whose names reduce to the same stem, each get their own (the second
    // silently replaced the first): -2, -3, ... after the name.
    QSet<QString> used;
    QStringList failed;
    for (auto* view : analysis_views()) {
        if (!view->has_result() || leave_out.contains(view)) continue;
        show_view(view);
        const QString name = view->figure_name();
        QString stem = name;
        for (int k = 2; used.contains(stem.toLower()); ++k)
            stem = name + "-" + QString::number(k);
        used.insert(stem.toLower());
        // One view that cannot be written (a full disk, a name the file system refuses) does not
        // stop the others; what failed is reported together at the end.
        QStringList written;  // also the formats written before one failed
        try {
            views::export_all_formats(*view, dir, options, stem, &written);
        } catch (const std::exception& e) {
            failed << QString::fromUtf8(e.what());
        }
        out += written;
    }
    if (was) tabs_->setCurrentWidget(was);
    if (failures) {
        failed.removeDuplicates();
        *failures = failed;
        return out;
    }
    // A folder that cannot be made fails every view alike: its reason is said once.
    failed.removeDuplicates();
    if (!failed.isEmpty())
        throw IoError(failed.join(QStringLiteral("; ")).toStdString() + " (" +
                      std::to_string(out.size()) + " other files written)");
    return out;
}

namespace {
/// The export dialog's size, font and resolution (issue 18): a journal column width or a custom
/// width in mm (the height follows the figure's aspect), a print font size, the PNG's DPI. The
/// choices are remembered between exports.
/// `panels`: the view's panels by title, offered for exporting one alone (none: the whole figure).
bool ask_export_options(QWidget* parent, bool png, views::FigureExportOptions& options,
                        const QStringList& panels = {}) {
    QDialog dialog(parent);
    dialog.setWindowTitle(QObject::tr("Figure size"));
    auto* form = new QFormLayout(&dialog);
    auto* panel = new QComboBox(&dialog);
    panel->setObjectName("exportPanel");
    panel->addItem(QObject::tr("The whole figure"), -1);
    for (int i = 0; i < panels.size(); ++i)
        panel->addItem(QObject::tr("Panel %1: %2")
                           .arg(i + 1)
                           .arg(panels[i].isEmpty() ? QObject::tr("(untitled)") : panels[i]),
                       i);
    if (panels.size() > 1)
        form->addRow(QObject::tr("Export:"), panel);
    else
        panel->hide();
    auto* width = new QComboBox(&dialog);
    width->addItem(QObject::tr("On-screen size"), 0.0);
    width->addItem(QObject::tr("Single column (89 mm)"), views::kSingleColumnMm);
    width->addItem(QObject::tr("Double column (183 mm)"), views::kDoubleColumnMm);
    width->addItem(QObject::tr("Custom width"), -1.0);
    auto* custom = new QDoubleSpinBox(&dialog);
    custom->setRange(20, 1000);
    custom->setSuffix(QObject::tr(" mm"));
    custom->setDecimals(1);
    auto* font = new QComboBox(&dialog);
    font->addItem(QObject::tr("On-screen fonts"), 0.0);
    for (double pt : views::kFontPresetsPt)
        font->addItem(QObject::tr("%1 pt").arg(pt), pt);
    auto* dpi = new QSpinBox(&dialog);
    dpi->setRange(72, 1200);
    QSettings settings;
    width->setCurrentIndex(std::clamp(settings.value("export/widthChoice", 0).toInt(), 0, 3));
    custom->setValue(settings.value("export/customMm", 120.0).toDouble());
    font->setCurrentIndex(
        std::clamp(settings.value("export/fontChoice", 0).toInt(), 0, font->count() - 1));
    dpi->setValue(settings.value("export/dpi", 300).toInt());
    custom->setEnabled(width->currentData().toDouble() < 0);
    QObject::connect(width, &QComboBox::currentIndexChanged, custom,
                     [width, custom] { custom->setEnabled(width->currentData().toDouble() < 0); });
    form->addRow(QObject::tr("Width:"), width);
    form->addRow(QObject::tr("Custom width:"), custom);
    form->addRow(QObject::tr("Text size in print:"), font);
    form->addRow(QObject::tr("PNG resolution (dpi):"), dpi);
    dpi->setEnabled(png);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return false;
    const double w = width->currentData().toDouble();
    options.width_mm = w < 0 ? custom->value() : w;
    options.font_pt = font->currentData().toDouble();
    options.dpi = dpi->value();
    options.panel = panel->currentData().toInt();
    settings.setValue("export/widthChoice", width->currentIndex());
    settings.setValue("export/customMm", custom->value());
    settings.setValue("export/fontChoice", font->currentIndex());
    settings.setValue("export/dpi", dpi->value());
    return true;
}
}  // namespace

void MainWindow::export_dialog() {
    auto* view = current_analysis();
    if (!view) {
        show_error(tr("Nothing to export"),
                   tr("Open an analysis view (Analysis menu) and export it from its tab."));
        return;
    }
    QString filter;
    const QString dir = QSettings().value("exportDir").toString();
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export figure"), QDir(dir).filePath(view->figure_name() + ".png"),
        tr("PNG image (*.png);;SVG vector image (*.svg);;PDF document (*.pdf);;CSV data (*.csv)"),
        &filter);
    if (path.isEmpty()) return;
    views::FigureExportOptions options;
    if (!path.endsWith(".csv", Qt::CaseInsensitive) &&
        !ask_export_options(this, path.endsWith(".png", Qt::CaseInsensitive), options,
                            view->panel_titles()))
        return;
    try {
        const QStringList files = export_current(path, options);
        QSettings().setValue("exportDir", QFileInfo(path).absolutePath());
        statusBar()->showMessage(tr("Wrote %1").arg(files.join(", ")), 8000);
    } catch (const std::exception& e) {
        show_error(tr("Export failed"), QString::fromUtf8(e.what()));
    }
}

void MainWindow::export_all_dialog() {
    if (analysis_views().isEmpty()) {
        show_error(tr("Nothing to export"),
                   tr("Open analysis views from the Analysis menu first."));
        return;
    }
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Export all views into"), QSettings().value("exportDir").toString());
    if (dir.isEmpty()) return;
    views::FigureExportOptions options;
    if (!ask_export_options(this, true, options)) return;
    try {
        const QStringList files = export_all(dir, options);
        QSettings().setValue("exportDir", dir);
        statusBar()->showMessage(
            tr("Wrote %n file(s) into %1", nullptr, static_cast<int>(files.size())).arg(dir), 8000);
    } catch (const std::exception& e) {
        show_error(tr("Export failed"), QString::fromUtf8(e.what()));
    }
}

// ---- Training runs and the other engine actions -------------------------------------------

void MainWindow::create_run_actions() {
    QMenu* run = new QMenu(tr("&Run"), this);
    menuBar()->insertMenu(menuBar()->actions().value(3), run);
    auto* launch = new QAction(tr("&New Training Run…"), this);
    launch->setObjectName("newRunAction");
    launch->setShortcut(QKeySequence(tr("Ctrl+R")));
    launch->setStatusTip(
        tr("Configure and start a small pretraining run (routescope-cli train) "
           "and watch its curves"));
    connect(launch, &QAction::triggered, this, &MainWindow::new_run_dialog);
    run->addAction(launch);
    struct ActionEntry {
        EngineAction action;
        const char *name, *shortcut, *tip;
    };
    const ActionEntry entries[] = {
        {EngineAction::Dump, "dumpAction", "Ctrl+Shift+D",
         QT_TR_NOOP("Write a checkpoint's activation dump (routescope-cli dump)")},
        {EngineAction::Evaluate, "evalAction", "Ctrl+Shift+V",
         QT_TR_NOOP("Per-example predictions of a checkpoint (routescope-cli eval), shown by "
                    "length")},
        {EngineAction::Import, "importAction", "Ctrl+Shift+I",
         QT_TR_NOOP("Import a published model as a checkpoint (routescope-cli import)")},
        {EngineAction::Experiment, "experimentAction", "Ctrl+Shift+X",
         QT_TR_NOOP("Train, evaluate and dump a seed experiment's models "
                    "(routescope-cli experiment)")},
    };
    for (const auto& e : entries) {
        auto* a = new QAction(engine_action_title(e.action) + QStringLiteral("…"), this);
        a->setObjectName(e.name);
        a->setShortcut(QKeySequence(tr(e.shortcut)));
        a->setStatusTip(tr(e.tip));
        connect(a, &QAction::triggered, this, [this, action = e.action] {
            const QStringList sel = selected_paths();
            action_dialog(action, sel.value(0));
        });
        run->addAction(a);
    }
    run->addSeparator();
    auto* cancel = new QAction(tr("&Cancel Runs"), this);
    cancel->setObjectName("cancelRunsAction");
    cancel->setShortcut(QKeySequence(tr("Ctrl+Shift+R")));
    cancel->setStatusTip(
        tr("Stop every running command (a training run saves a checkpoint; the others leave "
           "no partial file)"));
    connect(cancel, &QAction::triggered, document_->jobs(), &JobList::cancel_all);
    run->addAction(cancel);

    run_status_ = new QLabel(this);
    run_status_->setObjectName("runStatus");
    run_status_->hide();
    run_progress_ = new QProgressBar(this);
    run_progress_->setObjectName("runProgress");
    run_progress_->setMaximumWidth(220);
    run_progress_->setTextVisible(true);
    run_progress_->hide();
    run_cancel_ = new QToolButton(this);
    run_cancel_->setText(tr("Stop Run"));
    run_cancel_->setToolTip(tr("Stop the running commands (a training run saves a checkpoint)"));
    run_cancel_->hide();
    connect(run_cancel_, &QToolButton::clicked, cancel, &QAction::trigger);
    connect(document_->jobs(), &JobList::changed, this, &MainWindow::update_run_status);
    statusBar()->addPermanentWidget(run_status_);
    statusBar()->addPermanentWidget(run_progress_);
    statusBar()->addPermanentWidget(run_cancel_);

    // The workspace's context menu: the actions that apply to the item under the pointer.
    QTreeWidget* tree = workspace_->tree();
    tree->setContextMenuPolicy(Qt::CustomContextMenu);
    // One handler: several selected files get the analyses that take them together (compare
    // modes, similarity), one file its engine actions and analyses.
    connect(tree, &QWidget::customContextMenuRequested, this, [this, tree](const QPoint& pos) {
        QTreeWidgetItem* item = tree->itemAt(pos);
        QString path;
        for (auto* i = item; i && path.isEmpty(); i = i->parent())
            path = i->data(0, Qt::UserRole + 1).toString();
        QStringList selected = selected_paths();
        // A running run's item: stop that run alone.
        if (const QList<QAction*> run_actions = run_item_actions(item);
            path.isEmpty() && !run_actions.isEmpty()) {
            auto* menu = new QMenu(this);
            menu->setObjectName("workspaceMenu");
            menu->setAttribute(Qt::WA_DeleteOnClose);
            for (QAction* a : run_actions) {
                a->setParent(menu);
                menu->addAction(a);
            }
            menu->popup(tree->viewport()->mapToGlobal(pos));
            return;
        }
        if (path.isEmpty() && selected.isEmpty()) return;
        if (!path.isEmpty() && !selected.contains(path)) selected = {path};
        auto* menu = new QMenu(this);
        menu->setObjectName("workspaceMenu");
        menu->setAttribute(Qt::WA_DeleteOnClose);
        const QList<QAction*> actions = selected.size() > 1 ? workspace_actions(selected)
                                                            : workspace_actions(selected.value(0));
        for (QAction* a : actions)
            a->setParent(menu);
        menu->addActions(actions);
        menu->popup(tree->viewport()->mapToGlobal(pos));
    });
}

QList<CliJob*> MainWindow::jobs() const {
    return document_->jobs()->jobs();
}

QList<RunProcess*> MainWindow::training_runs() const {
    return document_->jobs()->training_runs();
}

QTreeWidgetItem* MainWindow::job_item(const CliJob* job) const {
    return workspace_->job_item(job);
}

QList<QAction*> MainWindow::run_item_actions(QTreeWidgetItem* item) {
    const CliJob* found = workspace_->job_at(item);
    if (!found || !found->running()) return {};
    auto* job = const_cast<CliJob*>(found);
    auto* stop = new QAction(tr("Stop This Run"), this);
    stop->setObjectName("stopRunAction");
    stop->setStatusTip(tr("Stop %1 alone (a training run saves a checkpoint first)")
                           .arg(workspace_->job_item(job)->text(0)));
    // The job is the connection's context: a job that is gone takes the connection with it.
    connect(stop, &QAction::triggered, job, [job] {
        if (job->running()) job->cancel();
    });
    return {stop};
}

QList<QAction*> MainWindow::workspace_actions(const QString& path) {
    QList<QAction*> out;
    auto add = [&](const QString& text, const QString& name, std::function<void()> f) {
        auto* a = new QAction(text, this);
        a->setObjectName(name);
        connect(a, &QAction::triggered, this, std::move(f));
        out << a;
    };
    const bool checkpoint = path.endsWith(".ckpt.h5");
    if (checkpoint) {
        add(tr("Dump Activations…"), "dumpAction",
            [this, path] { action_dialog(EngineAction::Dump, path); });
        add(tr("Evaluate…"), "evalAction",
            [this, path] { action_dialog(EngineAction::Evaluate, path); });
    }
    out << workspace_actions(QStringList{path});
    // The model's colour in every view (an undoable command of the workspace document).
    auto* colour = new QAction(tr("Model Colour"), this);
    colour->setObjectName("modelColourAction");
    auto* menu = new QMenu(this);
    static const char* const kNames[] = {"blue",           "orange",   "bluish green", "vermillion",
                                         "reddish purple", "sky blue", "yellow",       "black"};
    for (int slot = 0; slot < 8; ++slot) {
        QPixmap swatch(12, 12);
        swatch.fill(views::model_colour(static_cast<std::size_t>(slot)));
        QAction* a = menu->addAction(QIcon(swatch), tr(kNames[slot]));
        a->setObjectName(QStringLiteral("modelColour%1").arg(slot));
        a->setCheckable(true);
        a->setChecked(document_->colour_slot(path) == slot);
        connect(a, &QAction::triggered, this,
                [this, path, slot] { document_->set_colour(path, slot); });
    }
    colour->setMenu(menu);
    connect(colour, &QObject::destroyed, menu, &QObject::deleteLater);
    out << colour;
    return out;
}

QList<QAction*> MainWindow::workspace_actions(const QStringList& paths) {
    QList<QAction*> out;
    for (const AnalysisKind& k : analysis_kinds()) {
        if (k.accepts.empty() || !k.applies_to(paths)) continue;
        auto* a = new QAction(tr(k.label), this);
        a->setObjectName(k.kind);
        a->setStatusTip(tr(k.tip));
        connect(a, &QAction::triggered, this,
                [this, paths, kind = k.kind] { open_analysis(kind, paths); });
        out << a;
    }
    return out;
}

EngineActionDialog* MainWindow::action_dialog(EngineAction action, const QString& input) {
    const QString runs_dir =
        QSettings()
            .value("runsDir", QDir(QStandardPaths::writableLocation(QStandardPaths::HomeLocation))
                                  .filePath("routescope-runs"))
            .toString();
    const EngineActionSettings s =
        proposed_action(action, input, runs_dir, QDateTime::currentDateTime());
    auto* dialog = new EngineActionDialog(s, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { launch_action(dialog->settings()); });
    dialog->open();  // window-modal, never a nested event loop
    return dialog;
}

void MainWindow::new_run_dialog() {
    auto* dialog = new RunLauncherDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { launch_run(dialog->settings()); });
    dialog->open();  // window-modal, never a nested event loop
}

views::TrainingView* MainWindow::training_view_for(const QString& dir) const {
    for (auto* v : analysis_views())
        if (auto* t = qobject_cast<views::TrainingView*>(v))
            if (t->settings().value("runs", nlohmann::json::array()).size() > 0 &&
                QString::fromStdString(t->settings()["runs"][0].get<std::string>()) == dir)
                return t;
    return nullptr;
}

void MainWindow::show_job(CliJob* job, const QString& key, const QString& title) {
    QTreeWidgetItem* item = workspace_->add_job(job, key, title);
    auto* run = qobject_cast<RunProcess*>(job);
    if (!run) return;
    const RunSettings& s = run->settings();
    item->child(2)->setText(0, tr("%1, %2, %3 steps, lr %4, data %5")
                                   .arg(s.arch, s.size)
                                   .arg(s.steps)
                                   .arg(s.lr)
                                   .arg(s.data));
    QTreeWidgetItem* state = item->child(0);
    // The run's live curves.
    QPointer<views::TrainingView> live =
        qobject_cast<views::TrainingView*>(open_analysis("training", {s.out_dir}));
    connect(run, &CliJob::recordRead, this, [live, dir = s.out_dir](const QJsonObject& r) {
        if (live) live->append_record(dir, r);
    });
    // A run that could not start takes its live view with it (no dead tab, nothing saved).
    connect(controller_, &WorkspaceController::jobDiscarded, this, [this, live, job](CliJob* gone) {
        if (gone != job || !live) return;
        delete live.data();  // its view leaves the document (open_analysis)
        update_analysis_progress();
    });
    connect(run, &CliJob::ended, this, [run, state](CliJob::State end) {
        const bool saved = QFileInfo::exists(run->checkpoint_path());
        if (end == CliJob::State::Finished)
            state->setText(0, tr("done: %1 steps").arg(run->step()));
        else if (end == CliJob::State::Cancelled)
            state->setText(0, saved ? tr("stopped at step %1 (checkpoint saved)").arg(run->step())
                                    : tr("stopped before its first checkpoint"));
    });
}

RunProcess* MainWindow::launch_run(const RunSettings& settings) {
    return controller_->launch_run(settings);
}

CliJob* MainWindow::launch_action(const EngineActionSettings& settings) {
    return controller_->launch_action(settings);
}

void MainWindow::update_run_status() {
    const auto [active, done, total, eta, all_train] = document_->jobs()->totals();
    run_progress_->setVisible(active > 0);
    run_status_->setVisible(active > 0);
    run_cancel_->setVisible(active > 0);
    if (active == 0) return;
    if (total <= 0) {
        run_progress_->setRange(0, 0);  // busy: no count yet
    } else {
        run_progress_->setRange(0, static_cast<int>(std::min<qint64>(total, INT_MAX)));
        run_progress_->setValue(static_cast<int>(std::min<qint64>(done, INT_MAX)));
    }
    run_progress_->setFormat(all_train ? tr("%v/%m steps") : tr("%p%"));
    run_status_->setText(tr("%n run(s), ETA %1", nullptr, active).arg(duration_text(eta)));
}

// ---- Project files and undo ---------------------------------------------------------------

void MainWindow::create_project_actions() {
    QMenu* file = nullptr;
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&File")) file = a->menu();
    QAction* before = file->actions().value(1);  // after Open…
    auto* open = new QAction(tr("Open &Project…"), this);
    open->setObjectName("openProjectAction");
    open->setShortcut(QKeySequence(tr("Ctrl+Shift+O")));
    open->setStatusTip(tr("Open a project: its files, runs and views with their settings"));
    connect(open, &QAction::triggered, this, &MainWindow::open_project_dialog);
    auto* save = new QAction(tr("&Save Project"), this);
    save->setObjectName("saveProjectAction");
    save->setShortcut(QKeySequence::Save);
    save->setStatusTip(tr("Save the open files, runs and views as a project (*.rsproj)"));
    connect(save, &QAction::triggered, this, [this] { save_project_dialog(false); });
    auto* save_as = new QAction(tr("Save Project &As…"), this);
    save_as->setObjectName("saveProjectAsAction");
    save_as->setShortcut(QKeySequence::SaveAs);
    save_as->setStatusTip(tr("Save the project under a new name"));
    connect(save_as, &QAction::triggered, this, [this] { save_project_dialog(true); });
    file->insertActions(before, {open, save, save_as});
    file->insertSeparator(before);

    QMenu* edit = new QMenu(tr("&Edit"), this);
    menuBar()->insertMenu(menuBar()->actions().value(1), edit);
    QAction* undo = document_->undo_stack()->createUndoAction(this, tr("&Undo"));
    undo->setObjectName("undoAction");
    undo->setShortcut(QKeySequence::Undo);
    undo->setStatusTip(tr("Undo the last change of a view's settings"));
    QAction* redo = document_->undo_stack()->createRedoAction(this, tr("&Redo"));
    redo->setObjectName("redoAction");
    redo->setShortcut(QKeySequence::Redo);
    redo->setStatusTip(tr("Redo the last undone change of a view's settings"));
    edit->addAction(undo);
    edit->addAction(redo);
}

QUndoStack* MainWindow::undo_stack() const {
    return document_->undo_stack();
}

bool MainWindow::idle() const {
    if (controller_->loading()) return false;
    for (auto* v : analysis_views())
        if (v->busy()) return false;
    return true;
}

Project MainWindow::project() const {
    return document_->project();
}

bool MainWindow::modified() const {
    return document_->modified();
}

void MainWindow::save_project(const QString& path) {
    controller_->save_project(path);
}

void MainWindow::open_project(const QString& path) {
    // A project opened while another's views still wait: the first's errors are shown now.
    if (std::exchange(gathering_until_views_, false)) end_gathering_errors();
    begin_gathering_errors(path);
    try {
        controller_->open_project(path);
    } catch (...) {
        end_gathering_errors();
        throw;
    }
    // Its files' verdicts arrive from the loader while its views wait: their errors are gathered
    // until the views open (restore_project_views ends the gathering then).
    if (document_->views_waiting())
        gathering_until_views_ = true;
    else
        end_gathering_errors();
}

void MainWindow::begin_gathering_errors(const QString& project) {
    if (gathering_errors_++ == 0) {
        gathered_errors_.clear();
        gathering_for_ = project;
    }
}

void MainWindow::end_gathering_errors() {
    if (--gathering_errors_ > 0 || gathered_errors_.isEmpty()) return;
    const QStringList gathered = std::exchange(gathered_errors_, {});
    const QStringList shown = errors_shown_;  // each was recorded on its own already
    if (gathered.size() == 1) {
        const auto colon = gathered.front().indexOf(": ");
        show_error(gathered.front().left(colon), gathered.front().mid(colon + 2));
    } else {
        // One dialog: how many, and the first few of them.
        constexpr int kListed = 10;
        QString text = tr("%1 problems while opening %2:").arg(gathered.size()).arg(gathering_for_);
        for (int i = 0; i < gathered.size() && i < kListed; ++i)
            text += "\n\n" + gathered[i];
        if (gathered.size() > kListed)
            text += "\n\n" + tr("… and %1 more.").arg(gathered.size() - kListed);
        show_error(tr("Problems opening the project"), text);
    }
    errors_shown_ = shown;
}

void MainWindow::restore_project_views(const Project& p) {
    begin_gathering_errors(document_->project_path());
    struct End {
        MainWindow* w;
        ~End() {
            w->end_gathering_errors();
            if (std::exchange(w->gathering_until_views_, false)) w->end_gathering_errors();
        }
    } end{this};
    // The project's current view by its place in the project's list: a view before it that
    // cannot open (its file refused) must not shift which tab comes to the front.
    views::AnalysisView* current = nullptr;
    int kept_current = 0;
    for (int i = 0; i < static_cast<int>(p.views.size()); ++i) {
        const ProjectView& v = p.views[static_cast<std::size_t>(i)];
        // A view this version cannot restore stays in the project as it was read, at its place
        // (Workspace::keep_view): a file missing now may come back, a newer version's view kind
        // opens there again. One on a file that is there and unreadable is not saved (issue 26).
        const auto keep = [&] {
            const int id = document_->keep_view(v);
            if (i == p.current) kept_current = id;
        };
        const AnalysisKind* entry = find_analysis(v.kind);
        if (!entry) {
            show_error(tr("Unknown analysis"),
                       tr("%1: views[%2]: there is no analysis view named '%3' (one of a newer "
                          "Routescope?); the project keeps it as it is.")
                           .arg(document_->project_path())
                           .arg(i)
                           .arg(v.kind));
            keep();
            continue;
        }
        // A project file is not a menu: its view may name files the analysis cannot read (one
        // checkpoint for a similarity of two dumps, a run directory that no longer exists).
        if (!entry->applies_to(v.inputs)) {
            show_error(
                tr("Cannot restore a view"),
                tr("The project's %1 view cannot read %2: it needs %3 (views[%4]; the project "
                   "keeps it as it is).")
                    .arg(tr(entry->label), v.inputs.isEmpty() ? tr("no file") : v.inputs.join(", "),
                         accepted_files_text(*entry))
                    .arg(i));
            keep();
            continue;
        }
        views::AnalysisView* view = open_analysis(v.kind, v.inputs);
        if (!view) {  // a file of it refused (missing, unreadable): said by open_analysis
            keep();
            continue;
        }
        if (i == p.current) current = view;
        view->apply_chart_options(v.charts);
        const int id = view->property(kViewId).toInt();
        document_->set_view_charts(id, view->chart_options());
        // The view's keys and settings this version does not know (a newer version's): the
        // widget ignores them; the project keeps them.
        nlohmann::json unknown = nlohmann::json::object();
        if (v.settings.is_object()) {
            const nlohmann::json own = view->settings();
            for (const auto& [key, value] : v.settings.items())
                if (!own.is_object() || !own.contains(key)) unknown[key] = value;
        }
        document_->set_view_extra(id, v.extra, unknown);
        if (!v.settings.is_object() || v.settings.empty()) continue;
        try {
            // Keys the project leaves out keep the view's own values (those its inputs gave it):
            // settings of {"bins": 10} must not turn a gates view's dump into "".
            nlohmann::json settings = view->settings();
            if (!settings.is_object()) settings = nlohmann::json::object();
            // Each setting the view has must be of its kind (a number where it holds a number):
            // named here, by its place in the project (the JSON library's own message named no
            // key).
            for (const auto& [key, value] : v.settings.items()) {
                if (!settings.contains(key) || settings[key].is_null() || value.is_null()) continue;
                const auto kind = [](const nlohmann::json& j) {
                    return j.is_number()    ? "a number"
                           : j.is_boolean() ? "true or false"
                           : j.is_string()  ? "a string"
                           : j.is_array()   ? "a list"
                                            : "an object";
                };
                if (std::string(kind(settings[key])) != kind(value))
                    throw ConfigError("views[" + std::to_string(i) + "].settings." + key +
                                      ": expected " + kind(settings[key]) + ", found " +
                                      kind(value));
                // A whole number where the view holds one: 1e23 or 2.5 for a sample size was cast
                // to an integer ("got -9223372036854775808").
                if (settings[key].is_number_integer() && value.is_number_float()) {
                    const double d = value.get<double>();
                    if (!(std::trunc(d) == d && std::abs(d) < 9.0e15))
                        throw ConfigError("views[" + std::to_string(i) + "].settings." + key +
                                          ": expected a whole number, found " + value.dump());
                }
            }
            settings.update(v.settings);
            // A setting below the top level of the wrong type (a list's entry, an object's key)
            // that the view's own reading did not name: the JSON library's exception, named here
            // by the view's place (not "[json.exception.type_error.302] type must be string").
            // The view's own messages ("settings.measure: ...") get the place too.
            const std::string place = "views[" + std::to_string(i) + "]";
            try {
                view->apply_settings(settings);
            } catch (const nlohmann::json::exception& e) {
                std::string text = e.what();
                if (text.starts_with("[json.exception.") && text.find("] ") != std::string::npos)
                    text = text.substr(text.find("] ") + 2);
                throw ConfigError(place + ".settings: " + text);
            } catch (const Error& e) {
                const std::string_view text = e.what();
                if (!text.starts_with("settings.") && !text.starts_with("settings:")) throw;
                throw ConfigError(place + "." + e.what());
            }
            document_->set_view_settings(id, view->settings());
            view->start();  // the settings may change what the analysis reads: run it with them
        } catch (const std::exception& e) {
            // Left out, not shown (and exported) with settings other than the project's; the
            // project keeps it as it was read.
            show_error(tr("Cannot restore a view"),
                       tr("%1: %2 (the view is left out; the project keeps it as it is)")
                           .arg(view->title(), QString::fromUtf8(e.what())));
            if (current == view) current = nullptr;
            delete view;
            update_analysis_progress();
            keep();
        }
    }
    if (current)
        tabs_->setCurrentWidget(current);
    else if (kept_current)
        document_->set_current_view(kept_current);  // saved as the project's current again
    // The controller then clears the undo history and records the project as opened.
}

void MainWindow::open_project_dialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open project"), QSettings().value("projectDir").toString(),
        tr("Routescope projects (*.rsproj);;All files (*)"));
    if (path.isEmpty()) return;
    QSettings().setValue("projectDir", QFileInfo(path).absolutePath());
    open_file(path);
}

void MainWindow::save_project_dialog(bool choose_path) {
    QString path = document_->project_path();
    if (choose_path || path.isEmpty()) {
        path = QFileDialog::getSaveFileName(
            this, tr("Save project"),
            QDir(QSettings().value("projectDir").toString()).filePath("project.rsproj"),
            tr("Routescope projects (*.rsproj)"));
        if (path.isEmpty()) return;
        if (QFileInfo(path).suffix().isEmpty()) path += ".rsproj";
    }
    try {
        save_project(path);
        QSettings().setValue("projectDir", QFileInfo(path).absolutePath());
        statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
    } catch (const std::exception& e) {
        show_error(tr("Cannot save project"), QString::fromUtf8(e.what()));
    }
}

}  // namespace routescope::gui
