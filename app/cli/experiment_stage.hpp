#pragma once
// What every `experiment` (experiment_command.cpp, phone_book_experiment.cpp,
// representation_experiment.cpp) does the same way: run one stage (train, eval, dump, analyze) as
// a child process, read the JSON files the stages wrote, and end with an error message.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routescope::cli {

/// The --device of the experiment: every stage that runs a model (train, eval, dump) is started
/// with `--device <device>` (set once by `experiment`, before its first stage; default cpu).
void set_experiment_device(const std::string& device);
/// That device, for the experiment's results.json ("device": a seed grid reuses a finished seed
/// only for the same one).
const std::string& experiment_device_name();

/// One stage as a child process of `program` with `args`, its output in DIR/<stage>.stdout and
/// DIR/<stage>.stderr. Throws Interrupted (exit 130) or RuntimeFailure (exit 3) with the child's
/// stderr, naming the stage and the run `label`, when the child did not succeed.
void run_experiment_stage(const std::string& program, const std::string& stage,
                          const std::string& label, const std::filesystem::path& dir,
                          const std::vector<std::string>& args);

/// The lines of a JSON-lines file (blank lines skipped). IoError when unreadable, FormatError
/// naming the file and line for a line that is not JSON.
std::vector<nlohmann::ordered_json> read_json_lines(const std::string& path);

/// A whole JSON file. IoError when unreadable, FormatError naming the file when not JSON.
nlohmann::ordered_json read_json_file(const std::string& path);

/// A JSON number with `digits` decimals, "–" for anything else (null, missing): tables' cells.
std::string fixed(const nlohmann::ordered_json& value, int digits);

/// Creates the output directory and probes that a file can be written there, before hours of
/// training depend on it. RuntimeFailure (exit 3) naming `dir` when it cannot.
void prepare_output_directory(const std::string& dir);
/// ConfigError (exit 2) before anything is written when DIR holds results this run must not
/// replace: a results.json that is not an experiment's (unreadable, not a JSON object, naming no
/// experiment), another experiment's, a seed grid's when this is a single run (or seed folders an
/// experiment made, DIR/seed-S), or a single run's when this is a grid (`grid`): a grid runs into
/// DIR/seed-S and would leave the single run's models without their table. A previous result of
/// the same kind and experiment is replaced, as documented.
void check_previous_results(const std::string& dir, const std::string& name, bool grid);
/// A previous run's results.json and results.md in DIR, removed when this run starts to replace
/// its runs (after every refusal): an interrupted rerun left them beside checkpoints they no
/// longer describe.
void discard_previous_results(const std::string& dir);

/// Inside a catch block of an experiment's run: Interrupted, RuntimeFailure and ConfigError go on
/// unchanged; any other routescope::Error (reading what a stage wrote, writing the results) is the
/// experiment failing at run time: RuntimeFailure with `prefix` + its message (exit 3).
[[noreturn]] void rethrow_as_runtime_failure(const std::string& prefix = "");

}  // namespace routescope::cli
