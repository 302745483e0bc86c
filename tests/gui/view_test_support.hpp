#pragma once
// Fixtures of the view tests: small dumps written by the project's own `routescope-cli sample-dump`
// and SSM checkpoints written by the numpy/h5py script of the analysis tests, each in a directory
// of its own test so that tests running in parallel never share a file being written.
#include <QString>
#include <QStringList>

class QWidget;

namespace routescope::views {
class AnalysisView;
}

namespace view_test {

/// ROUTESCOPE_TEST_DATA/<test>/ (created).
QString data_dir(const QString& test);
/// A synthetic dump: `routescope-cli sample-dump --out dir/name --examples 60 --length 32
/// --d-model 16 [extra]`; written once per directory.
QString sample_dump(const QString& dir, const QString& name, const QStringList& extra = {});
/// before.ckpt.h5 and after.ckpt.h5 with two BiGS SSM layers (tests/reference/analysis/
/// make_analysis_dumps.py) in `dir`; returns the path of `name`.
QString ssm_checkpoint(const QString& dir, const QString& name);
/// The dumps of tests/reference/analysis/make_similarity_dumps.py (a, same, rotated, noise, ...)
/// in `dir`, written once; returns the path of `name`.
QString similarity_dump(const QString& dir, const QString& name);
/// Runs `routescope-cli args` to the end (3 minutes at most); false, with its stderr as a
/// warning, when it fails.
bool run_cli(const QStringList& args);
/// A dump with gates of a tiny freshly initialised model of `model_json` (the config's "model"
/// object) on the built-in grammar corpus, the same 6 examples for every model; written once per
/// directory. Returns its path, or an empty string on failure. `dump_extra`: more arguments of
/// `dump` (`--attention`).
QString arch_dump(const QString& dir, const QString& name, const QString& model_json,
                  bool gates = true, const QStringList& dump_extra = {});
/// Waits (event loop running) until the view's analysis ends; false on timeout.
bool wait_for(routescope::views::AnalysisView* view, int timeout_ms = 30000);
/// Saves a picture of `widget` as ROUTESCOPE_TEST_OUTPUT/<name>.png; false when it fails.
bool screenshot(QWidget* widget, const QString& name);
/// SHA-256 of a file's bytes, as `sha256sum` prints it.
QString sha256_of(const QString& path);
/// Every text of `view`'s figure laid out at a journal's single and double column (89, 183 mm) at
/// 7, 8 and 10 pt that is elided, clipped, off the page or on another text or a plot
/// (views/figure_layout.hpp), each prefixed with its size; empty when the figure reads.
QStringList journal_layout_problems(const routescope::views::AnalysisView& view);

}  // namespace view_test
