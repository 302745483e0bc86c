#pragma once
// The project file (*.rsproj, JSON; ARCHITECTURE.md "The GUI"): the open files and runs and every
// analysis view with its inputs and settings, so that a project reopens as it was and
// `routescope --export` can redraw its figures. Paths are stored relative to the project file's
// directory, so a project moves with its data.
#include <QDir>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <vector>

namespace routescope::gui {

struct ProjectView {
    QString kind;             ///< the analysis view ("kernels", "gates", ..., "training")
    QStringList inputs;       ///< the dumps, checkpoints or run directories it was opened on
    nlohmann::json settings;  ///< the view's settings() (paths inside made relative on disk)
    /// The view's charts' own options (AnalysisView::chart_options: legend position), in the
    /// view's chart order; empty when every chart has the defaults.
    nlohmann::json charts = nlohmann::json::array();
    /// The view's keys this version does not know (a newer version's), as read: written back.
    nlohmann::json extra = nlohmann::json::object();
    /// The view's JSON exactly as read from a project file (null: not read from one), and the
    /// directory its relative paths were relative to.
    nlohmann::json as_read = nullptr;
    QString read_dir = {};
    /// Written as read (as_read, when the project is saved into read_dir): a view the project had
    /// that could not be restored (Workspace::keep_view). Otherwise from the fields above.
    bool verbatim = false;
};

struct Project {
    static constexpr int kVersion = 1;
    QStringList files;               ///< dumps and checkpoints (absolute in memory)
    QStringList runs;                ///< run directories
    std::vector<ProjectView> views;  ///< in tab order
    int current = -1;                ///< the current view's index, -1 none
    /// Names given to files in the workspace, by absolute path ("names" in the file; optional,
    /// so that older projects load).
    std::vector<std::pair<QString, QString>> names;
    /// Each model's colour slot (0–7, the palette of views::model_colour), by its model key: the
    /// checkpoint a model's files belong to ("colours" in the file; optional).
    std::vector<std::pair<QString, int>> colours;
    /// The top-level keys this version does not know (a newer version's), as read: written back.
    nlohmann::json extra = nlohmann::json::object();

    /// The JSON written to a project file in `base` (paths relative to it).
    nlohmann::json to_json(const QDir& base) const;
    /// Reads a document written by to_json; paths become absolute against `base`. Throws
    /// FormatError naming the key when the document is not a Routescope project, and naming the
    /// entry when `files` lists a project (*.rsproj): it holds dumps and checkpoints only (a
    /// project that listed itself opened itself until the stack overflowed).
    static Project from_json(const nlohmann::json& j, const QDir& base);
    /// Reads `path`; throws IoError (unreadable) or FormatError (not JSON, not a project).
    static Project load(const QString& path);
    /// Writes `path` atomically; throws IoError.
    void save(const QString& path) const;
};

}  // namespace routescope::gui
