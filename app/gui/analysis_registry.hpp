#pragma once
// The one list of analysis views (issue 26): each kind with its menu entry, which files it
// accepts, and how its view is made. The Analysis menu, the workspace's context menu,
// MainWindow::open_analysis and (through open_analysis) project files and headless export all
// read it; a new view is one entry here.
#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

class QWidget;

namespace routescope::views {
class AnalysisView;
}

namespace routescope::gui {

/// What kind of file a workspace path is, for deciding which analyses apply.
enum class FileKind { dump, checkpoint, predictions, run, other };
FileKind file_kind(const QString& path);

struct AnalysisKind {
    QString kind;       ///< "kernels", "gates", ... (project files, export file stems)
    const char* menu;   ///< Analysis menu text, with its mnemonic (QT_TR_NOOP)
    const char* label;  ///< context-menu text (no mnemonic)
    const char* shortcut;
    const char* tip;
    std::vector<FileKind> accepts;     ///< empty: the analysis reads no file (efficiency)
    int min_files = 1, max_files = 1;  ///< max −1: any number (overlaid or compared)
    bool in_menu = true;  ///< training curves open from a run, not from the Analysis menu
    std::function<views::AnalysisView*(const QStringList& paths, QWidget* parent)> make;

    /// Whether the analysis applies to exactly these paths (their kinds and their number).
    bool applies_to(const QStringList& paths) const;
};

/// What `entry` reads, in words: "2 dumps", "1 to any number of dumps or checkpoints", "a run".
QString accepted_files_text(const AnalysisKind& entry);

/// Every analysis view, in menu order.
const std::vector<AnalysisKind>& analysis_kinds();
/// The entry of `kind`, or nullptr.
const AnalysisKind* find_analysis(const QString& kind);

}  // namespace routescope::gui
