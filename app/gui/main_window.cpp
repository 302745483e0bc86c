#include "app/gui/main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>

#include "app/gui/workspace_dock.hpp"
#include "engine/core/build_info.hpp"
#include "routescope/version.hpp"
#include "views/file_summary_view.hpp"

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

    tabs_ = new QTabWidget(this);
    tabs_->setTabsClosable(true);
    tabs_->setDocumentMode(true);
    tabs_->setObjectName("viewTabs");
    connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int i) { delete tabs_->widget(i); });
    setCentralWidget(tabs_);

    workspace_ = new WorkspaceDock(this);
    addDockWidget(Qt::LeftDockWidgetArea, workspace_);
    connect(workspace_, &WorkspaceDock::activated, this, [this](const QString& path) {
        if (auto* view = summary_for(path)) tabs_->setCurrentWidget(view);
    });

    loader_ = new FileLoader(this);
    connect(loader_, &FileLoader::started, this, [this](const QString& path) {
        statusBar()->showMessage(tr("Opening %1…").arg(QFileInfo(path).fileName()));
    });
    connect(loader_, &FileLoader::loaded, this, &MainWindow::on_loaded);

    create_actions();
    statusBar()->showMessage(tr("Open a dump (*.dump.h5) or checkpoint (*.ckpt.h5): File › Open, or drop it here."));

    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
}

void MainWindow::create_actions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QToolBar* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName("mainToolbar");

    auto* open = new QAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), this);
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

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* toggle = workspace_->toggleViewAction();
    toggle->setShortcut(QKeySequence(tr("Ctrl+1")));
    toggle->setStatusTip(tr("Show or hide the workspace"));
    view->addAction(toggle);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    auto* about = new QAction(tr("&About Routescope"), this);
    about->setStatusTip(tr("Version and the libraries built in"));
    connect(about, &QAction::triggered, this, &MainWindow::show_about);
    help->addAction(about);
}

void MainWindow::open_dialog() {
    const QString dir = QSettings().value("lastDir").toString();
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open dump or checkpoint"), dir,
        tr("Routescope files (*.h5 *.hdf5);;Activation dumps (*.dump.h5);;Checkpoints (*.ckpt.h5);;All files (*)"));
    for (const auto& f : files) open_file(f);
    if (!files.isEmpty()) QSettings().setValue("lastDir", QFileInfo(files.first()).absolutePath());
}

void MainWindow::open_file(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    workspace_->add_pending(abs);
    loader_->open(abs);
}

void MainWindow::on_loaded(const LoadedFile& file) {
    workspace_->add_file(file);
    show_summary(file);
    if (!file.report.readable) {
        statusBar()->showMessage(tr("Cannot read %1").arg(QFileInfo(file.path).fileName()), 10000);
        show_error(tr("Cannot open file"), tr("%1\n\n%2").arg(file.path, file.error));
        return;
    }
    add_recent(file.path);
    if (file.report.ok())
        statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(file.path).fileName()), 5000);
    else
        statusBar()->showMessage(tr("Opened %1 with %n format violation(s)", nullptr,
                                    static_cast<int>(file.report.violations.size()))
                                     .arg(QFileInfo(file.path).fileName()),
                                 10000);
}

views::FileSummaryView* MainWindow::summary_for(const QString& path) const {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->widget(i)->property("routescopePath").toString() == path)
            return qobject_cast<views::FileSummaryView*>(tabs_->widget(i));
    return nullptr;
}

void MainWindow::show_summary(const LoadedFile& file) {
    auto* view = summary_for(file.path);
    if (!view) {
        view = new views::FileSummaryView(tabs_);
        view->setProperty("routescopePath", file.path);
        tabs_->addTab(view, QFileInfo(file.path).fileName());
    }
    view->show_file(file.path, file.report, file.info, file.error);
    tabs_->setCurrentWidget(view);
}

void MainWindow::show_error(const QString& title, const QString& text) {
    // Non-modal: the event loop (and any running work) goes on while the message is up.
    if (last_error_) last_error_->close();
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName("errorDialog");
    box->open();
    last_error_ = box;
}

void MainWindow::close_current() {
    if (QWidget* w = tabs_->currentWidget()) delete w;
}

QStringList MainWindow::recent_files() const { return QSettings().value(kRecentKey).toStringList(); }

void MainWindow::add_recent(const QString& path) {
    QStringList files = recent_files();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecent) files.removeLast();
    QSettings().setValue(kRecentKey, files);
    rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
    recent_menu_->clear();
    const QStringList files = recent_files();
    for (int i = 0; i < files.size(); ++i) {
        auto* a = recent_menu_->addAction(tr("&%1 %2").arg(i + 1).arg(QFileInfo(files[i]).fileName()));
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
    QMessageBox::about(this, tr("About Routescope"),
                       tr("<h3>Routescope %1</h3>"
                          "<p>A workbench for attention-free pretrained language models: BiGS, Birdie, "
                          "S-LSTM, gMLP and their attention baselines.</p>"
                          "<p>License: GPL-3.0-or-later.</p><pre>%2Qt %3</pre>")
                           .arg(QString::fromUtf8(kVersion), QString::fromStdString(build_info_text()).toHtmlEscaped(),
                                QString::fromUtf8(qVersion())));
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
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    QMainWindow::closeEvent(event);
}

}  // namespace routescope::gui
