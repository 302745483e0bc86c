#pragma once
// routescope-cli's subcommands register themselves: each command file defines a static
// CommandRegistration, so adding a command is adding a file under app/cli/.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"

namespace routescope::cli {

/// A command's setup adds its CLI::App subcommand and returns the function that runs it (returning
/// the exit code: 0, or validate's and inspect's verdict). The function is only called when that
/// subcommand was given. It reports a failure by throwing; main() maps what it throws to the exit
/// code through exit_codes.hpp's table.
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
