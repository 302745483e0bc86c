#pragma once
// What the analysis tests share: the dumps written by make_analysis_dumps.py, running
// routescope-cli and the numpy reference, and comparing a result with the reference key by key.
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <string>

namespace analysis_test {

/// Directory of the generated dumps (written once per test run).
QString dump_dir();
std::string dump(const char* name);  ///< full path of one generated dump
/// Runs the fixture generator; returns an error text or empty.
QString make_dumps();

struct ProcessResult {
    int exit_code = -1;
    QString output;  ///< stdout + stderr
};
ProcessResult run(const QString& program, const QStringList& args, int timeout_ms = 120000);
ProcessResult run_cli(const QStringList& args);

nlohmann::json read_json(const QString& path);

/// Every key of `reference` must be in `actual` with an equal value: integers exactly, floats to
/// 1e-5 relative (plus 1e-9 absolute, for values that are exactly 0). Returns the first mismatch
/// ("results/0/histogram/counts/7: 12 vs 13") or empty.
std::string compare_with_reference(const nlohmann::json& reference, const nlohmann::json& actual,
                                   const std::string& path = "");

/// Runs `routescope-cli analyze` with args, then the numpy reference on the same dump(s), and
/// compares; returns the mismatch or the failure, empty on agreement.
QString cli_matches_reference(const QString& kind, const QStringList& dumps,
                              const QStringList& options, const QString& input_flag = "--dump");

}  // namespace analysis_test
