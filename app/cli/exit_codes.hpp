#pragma once
// routescope-cli's one mapping from what went wrong to an exit code (docs/cli.md "Exit codes").
// Commands throw; main() catches whatever a command lets out and ends through
// exit_for_current_exception, which prints the message and looks the code up in kExitTable. The
// only codes a command returns itself are validate's and inspect's verdicts and the input check's
// (app/cli/input_check.hpp; 0 valid, 1 invalid,
// 2 unreadable) and 0 for success.
#include <array>
#include <string>
#include <string_view>

namespace routescope::cli {

/// Exit codes of routescope-cli: 0 success, 1 the input is invalid (validate/inspect's verdict),
/// 2 usage error, bad configuration or unreadable input, 3 runtime failure, 130 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;
inline constexpr int kExitInterrupted = 130;

enum class ErrorKind {
    usage,             ///< CLI11 parse errors; ConfigError (a key, a value, an option)
    bad_input,         ///< FormatError: an input breaks its documented format (JSON too deep too)
    unreadable_input,  ///< IoError or an HDF5 error while the command reads its inputs
    runtime,           ///< IoError or an HDF5 error after the inputs were read; RuntimeFailure;
                       ///< TrainingDiverged and every other routescope::Error; std::bad_alloc
    interrupted,       ///< Interrupted: Ctrl-C / SIGTERM after saving what could be saved
    internal,          ///< any other exception: a bug, reported as such
};

struct ExitRule {
    ErrorKind kind;
    int code;
};

/// THE table. docs/cli.md documents it; tests/cli/test_cli.cpp checks it through the commands.
inline constexpr std::array<ExitRule, 6> kExitTable{{
    {ErrorKind::usage, kExitUsage},
    {ErrorKind::bad_input, kExitUsage},
    {ErrorKind::unreadable_input, kExitUsage},
    {ErrorKind::runtime, kExitFailure},
    {ErrorKind::interrupted, kExitInterrupted},
    {ErrorKind::internal, kExitFailure},
}};

constexpr int exit_code(ErrorKind kind) {
    for (const auto& rule : kExitTable)
        if (rule.kind == kind) return rule.code;
    return kExitFailure;
}

/// Where a command is: still reading its inputs (an IoError or HDF5 error means unreadable input,
/// exit 2) or running (the same errors are a failure at run time, exit 3). A command starts in
/// reading_inputs and calls inputs_read() once its inputs are loaded, before it computes and
/// writes.
enum class Stage { reading_inputs, running };
Stage current_stage();
void inputs_read();
void reset_stage();

/// The kind of the exception being handled (call inside a catch block) and its message.
struct ClassifiedError {
    ErrorKind kind;
    std::string message;
};
ClassifiedError classify_current_exception();

/// Inside a catch block: prints "routescope-cli COMMAND: error: WHAT" (or "interrupted: ...",
/// "internal error: ...") to stderr and returns the table's exit code.
int exit_for_current_exception(std::string_view command);

/// The error this process ends with is printed by another process (rank 0 of an MPI job prints
/// what every rank failed on once, not N times): exit_for_current_exception returns the code
/// without printing.
void quiet_error_message();
void unquiet_error_message();

/// The command this process runs ("train", "tokenizer train"), for a message printed before the
/// error reaches main's handler (rank_agreement.cpp); main sets it.
void set_running_command(std::string command);
const std::string& running_command();

}  // namespace routescope::cli
