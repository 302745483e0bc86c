#include "app/gui/analysis_registry.hpp"

#include <QDir>
#include <QFileInfo>

#include "views/anisotropy_view.hpp"
#include "views/array_browser_view.hpp"
#include "views/attention_view.hpp"
#include "views/efficiency_view.hpp"
#include "views/gates_view.hpp"
#include "views/kernel_view.hpp"
#include "views/length_accuracy_view.hpp"
#include "views/pca_view.hpp"
#include "views/similarity_view.hpp"
#include "views/training_view.hpp"
#include "views/transitions_view.hpp"

namespace routescope::gui {

FileKind file_kind(const QString& path) {
    if (path.endsWith(".dump.h5", Qt::CaseInsensitive)) return FileKind::dump;
    if (path.endsWith(".ckpt.h5", Qt::CaseInsensitive)) return FileKind::checkpoint;
    if (path.endsWith(".jsonl", Qt::CaseInsensitive)) return FileKind::predictions;
    const QFileInfo info(path);
    if (info.isDir() && QFileInfo::exists(QDir(path).filePath("log.jsonl"))) return FileKind::run;
    // Sharded dumps and dumps named otherwise are still dumps to the readers; the workspace
    // lists them by their summary, so an .h5 that is not a checkpoint counts as a dump here.
    if (path.endsWith(".h5", Qt::CaseInsensitive)) return FileKind::dump;
    return FileKind::other;
}

bool AnalysisKind::applies_to(const QStringList& paths) const {
    if (accepts.empty()) return true;
    const int n = static_cast<int>(paths.size());
    if (n < min_files || (max_files >= 0 && n > max_files)) return false;
    for (const QString& p : paths)
        if (std::find(accepts.begin(), accepts.end(), file_kind(p)) == accepts.end()) return false;
    return true;
}

QString accepted_files_text(const AnalysisKind& entry) {
    QStringList kinds;
    for (FileKind k : entry.accepts)
        kinds << (k == FileKind::dump          ? QStringLiteral("dumps (*.dump.h5)")
                  : k == FileKind::checkpoint  ? QStringLiteral("checkpoints (*.ckpt.h5)")
                  : k == FileKind::predictions ? QStringLiteral("predictions (*.jsonl)")
                  : k == FileKind::run         ? QStringLiteral("run directories (with log.jsonl)")
                                               : QStringLiteral("files"));
    const QString count =
        entry.max_files == entry.min_files ? QString::number(entry.min_files)
        : entry.max_files < 0
            ? QStringLiteral("%1 or more").arg(entry.min_files)
            : QStringLiteral("%1 to %2").arg(entry.min_files).arg(entry.max_files);
    return count + " of: " + kinds.join(", ");
}

const std::vector<AnalysisKind>& analysis_kinds() {
    using FK = FileKind;
    static const std::vector<AnalysisKind> kinds = {
        {"kernels",
         QT_TR_NOOP("&Kernels"),
         QT_TR_NOOP("Kernels"),
         "Ctrl+Shift+K",
         QT_TR_NOOP("SSM kernels by layer and relative position (two files: A | B | A − B)"),
         {FK::dump, FK::checkpoint},
         1,
         2,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::KernelViewSettings s;
             s.a = views::KernelSource::from_path(p.value(0));
             if (p.size() > 1) s.b = views::KernelSource::from_path(p[1]);
             return new views::KernelView(s, parent);
         }},
        {"gates",
         QT_TR_NOOP("&Gates"),
         QT_TR_NOOP("Gates"),
         "Ctrl+Shift+G",
         QT_TR_NOOP("Gate statistics, histograms and a token-aligned timeline"),
         {FK::dump},
         1,
         2,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::GatesViewSettings s;
             s.dump = p.value(0);
             s.dump_b = p.value(1);  // compare mode with a second selected dump
             return new views::GatesView(s, parent);
         }},
        {"anisotropy",
         QT_TR_NOOP("&Anisotropy"),
         QT_TR_NOOP("Anisotropy"),
         "Ctrl+Shift+A",
         QT_TR_NOOP(
             "Cosine similarity of token and sentence vectors per layer (several dumps overlaid)"),
         {FK::dump},
         1,
         -1,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::AnisotropyViewSettings s;
             s.dumps = p;
             return new views::AnisotropyView(s, parent);
         }},
        {"pca",
         QT_TR_NOOP("&PCA Redundancy"),
         QT_TR_NOOP("PCA Redundancy"),
         "Ctrl+Shift+P",
         QT_TR_NOOP("Principal components k(p) per sentence and layer"),
         {FK::dump},
         1,
         -1,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::PcaViewSettings s;
             s.dumps = p;  // several: compare mode
             return new views::PcaView(s, parent);
         }},
        {"transitions",
         QT_TR_NOOP("Layer &Transitions"),
         QT_TR_NOOP("Layer Transitions"),
         "Ctrl+Shift+T",
         QT_TR_NOOP("How far each layer moves token and sentence vectors, per model"),
         {FK::dump},
         1,
         -1,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::TransitionsViewSettings s;
             s.dumps = p;
             return new views::TransitionsView(s, parent);
         }},
        {"similarity",
         QT_TR_NOOP("Representation &Similarity"),
         QT_TR_NOOP("Representation Similarity"),
         "Ctrl+Shift+M",
         QT_TR_NOOP("CKA, SVCCA, PWCCA and Procrustes of every layer pair of two dumps of the same "
                    "examples"),
         {FK::dump},
         2,
         2,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::SimilarityViewSettings s;
             s.dump_a = p.value(0);
             s.dump_b = p.value(1);
             return new views::SimilarityView(s, parent);
         }},
        {"implicit_attention",
         QT_TR_NOOP("&Implicit Attention"),
         QT_TR_NOOP("Implicit Attention"),
         "Ctrl+Shift+J",
         QT_TR_NOOP("The token-to-token matrix of an SSM layer's convolutions, or a BERT "
                    "layer's attention (dump --attention), for one example (two dumps: "
                    "A | B | A − B)"),
         {FK::dump},
         1,
         2,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::AttentionViewSettings s;
             s.dump = p.value(0);
             s.dump_b = p.value(1);
             return new views::AttentionView(s, parent);
         }},
        {"array_browser",
         QT_TR_NOOP("A&rray Browser"),
         QT_TR_NOOP("Array Browser"),
         "Ctrl+Shift+B",
         QT_TR_NOOP("Any dataset of a dump or checkpoint as a colour grid: choose the axes, step "
                    "through the others; NaN, ±Inf and outliers marked"),
         {FK::dump, FK::checkpoint},
         1,
         1,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::ArrayBrowserSettings s;
             s.file = p.value(0);
             return new views::ArrayBrowserView(s, parent);
         }},
        {"length_accuracy",
         QT_TR_NOOP("Accuracy by &Length"),
         QT_TR_NOOP("Accuracy by Length"),
         "Ctrl+Shift+L",
         QT_TR_NOOP("Accuracy per length bin with Wilson intervals (two dumps: the difference)"),
         {FK::dump, FK::predictions},
         1,
         2,
         true,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             return new views::LengthAccuracyView({p.value(0), p.value(1), "quantile", 5, 0},
                                                  parent);
         }},
        {"efficiency",
         QT_TR_NOOP("&Efficiency"),
         QT_TR_NOOP("Efficiency"),
         "Ctrl+Shift+F",
         QT_TR_NOOP("FLOPs against sequence length per architecture"),
         {},
         0,
         0,
         true,
         [](const QStringList&, QWidget* parent) -> views::AnalysisView* {
             return new views::EfficiencyView({}, parent);
         }},
        {"training",
         QT_TR_NOOP("&Training Curves"),
         QT_TR_NOOP("Training Curves"),
         "",
         QT_TR_NOOP("Loss, learning rate and throughput of training runs"),
         {FK::run},
         1,
         -1,
         false,
         [](const QStringList& p, QWidget* parent) -> views::AnalysisView* {
             views::TrainingViewSettings s;
             s.runs = p;
             return new views::TrainingView(s, parent);
         }},
    };
    return kinds;
}

const AnalysisKind* find_analysis(const QString& kind) {
    for (const auto& k : analysis_kinds())
        if (k.kind == kind) return &k;
    return nullptr;
}

}  // namespace routescope::gui
