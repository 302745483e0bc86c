#pragma once
// What every `experiment` (experiment_command.cpp, phone_book_experiment.cpp,
// representation_experiment.cpp) does the same way: run one stage (train, eval, dump, analyze) as
// a child process, read the JSON files the stages wrote, and end with an error message.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routescope::cli {

/// One stage as a child process of `program` with `args`, its output in DIR/<stage>.stdout and
/// DIR/<stage>.stderr. Returns 0, or the exit code to end with (130 interrupted, 3 failed) after
/// repeating the child's stderr, naming the stage and the run `label`.
int run_experiment_stage(const std::string& program, const std::string& stage,
                         const std::string& label, const std::filesystem::path& dir,
                         const std::vector<std::string>& args);

/// The lines of a JSON-lines file (blank lines skipped). IoError when unreadable, FormatError
/// naming the file and line for a line that is not JSON.
std::vector<nlohmann::ordered_json> read_json_lines(const std::string& path);

/// A whole JSON file. IoError when unreadable, FormatError naming the file when not JSON.
nlohmann::ordered_json read_json_file(const std::string& path);

/// Creates the output directory and probes that a file can be written there, before hours of
/// training depend on it. Returns 0, or the exit code (3) after an error naming `dir`.
int prepare_output_directory(const std::string& dir);

/// Prints "routescope-cli experiment: error: <what>" to stderr and returns `code`.
int experiment_failure(int code, const std::string& what);

}  // namespace routescope::cli
