#pragma once
// routescope-cli's subcommands register themselves: each command file defines a static
// CommandRegistration, so adding a command is adding a file under app/cli/.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace routescope::cli {

/// Exit codes of routescope-cli (docs/cli.md): 0 success, 1 the input is invalid / the check
/// failed, 2 usage error or unreadable input, 3 runtime failure, 130 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;
inline constexpr int kExitInterrupted = 130;

/// A command's setup adds its CLI::App subcommand and returns the function that runs it (returning
/// the exit code). The function is only called when that subcommand was given.
using CommandRunner = std::function<int()>;
using CommandSetup = std::function<CommandRunner(CLI::App& parent)>;

struct CommandEntry {
    std::string name;
    CommandSetup setup;
};

std::vector<CommandEntry>& command_registry();

struct CommandRegistration {
    CommandRegistration(std::string name, CommandSetup setup) {
        command_registry().push_back({std::move(name), std::move(setup)});
    }
};

}  // namespace routescope::cli
