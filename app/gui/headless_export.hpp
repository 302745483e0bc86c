#pragma once
// `routescope --export project.rsproj --out DIR`: opens the project in a window that is never
// shown on a display (the offscreen platform), waits for every view's analysis, and writes every
// view's figures (PNG, SVG, PDF, CSV, each with its provenance JSON) into DIR, as Export All does.
#include <QString>
#include <QStringList>
#include <iosfwd>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "views/figure_export.hpp"

namespace routescope::gui {

/// Returns the process exit code: 0 every view exported, 2 the project cannot be read, 3 a view's
/// analysis failed or did not finish within `timeout_s`, or a figure could not be written (the
/// other views are still exported), a view's too when one of its files (figure, CSV, provenance)
/// is, or links to, a file the project opens (files_opened_by): none of that view's files is
/// written, and the error names both. Lists the files written on `out`, problems on `err`, each
/// view's with its own outcome: its analysis's error, or, past the timeout, whether it was
/// running (and how far), queued behind other analyses, or waiting for the check of its files.
/// `options`: the PNG DPI and the print width and font size (`--width`, `--font-pt`).
/// `check_layout` (`--check-layout`): also lists, on `err`, every text of a figure that a reader
/// would not read in full (elided, clipped, off the page, on another text or on a plot) and every
/// colour bar with fewer than two labelled values (views/figure_layout.hpp), and returns 4 when
/// there is one and nothing worse happened (3 takes precedence; the problems are still listed).
/// `timeout_s` (`--timeout`): how long to wait for the analyses; 0, the default: until every
/// view has finished, however long (session 28: a fixed 600 s gave up on a published-size
/// similarity and on every view queued behind it); above 1e9 s (31 years), no limit either.
/// While waiting, a line on `err` every minute names the views not finished. A view whose
/// analysis failed or did not finish is not written, even when it shows an earlier result: that
/// result is not of the settings it holds now.
/// `text` as it may be printed on a terminal or a log: each byte that is not valid UTF-8 and each
/// control character (NUL, BEL, ESC, a newline; DEL and the C1 controls U+0080–U+009F) written as
/// "\xNN" (data::printable_utf8). A project's view kind or path with ESC ] 0; ... BEL changed a
/// terminal's title and colours when a headless run named it.
std::string printable_text(std::string_view text);
std::string printable_text(const QString& text);
inline std::string printable_text(const char* text) {
    return printable_text(std::string_view(text));
}

/// Every file opening `path` reads, absolute: the file itself; for a project (*.rsproj) also its
/// files, its runs and its views' inputs and the files their settings name (predictions, a
/// timings file); for a run directory its log, checkpoints and dumps. Only files that exist (a
/// missing one cannot be destroyed); a project that cannot be read gives itself alone (opening
/// it says why). What `--screenshot` and `--export` never write over.
QStringList files_opened_by(const QString& path);
/// The absolute paths among a view's settings' strings, at any depth (what its path settings
/// name once a project is read; a choice such as a measure's name is not absolute).
QStringList absolute_paths_in(const nlohmann::json& settings);

int export_project(const QString& project, const QString& out_dir,
                   const views::FigureExportOptions& options, std::ostream& out, std::ostream& err,
                   bool check_layout = false, double timeout_s = 0);

}  // namespace routescope::gui
