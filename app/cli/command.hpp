#pragma once
// routescope-cli's subcommands register themselves: each command file defines a static
// CommandRegistration, so adding a command is adding a file under app/cli/.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli/exit_codes.hpp"

namespace routescope::cli {

/// Integer options of at least 1 (kPositive) or 0 (kNonNegative). CLI11's PositiveNumber and
/// NonNegativeNumber said "Value 0 not in range 0.000000 to 1797…" (DBL_MAX in full) for a 0.
inline CLI::Validator integer_at_least(long long least) {
    return CLI::Validator(
        [least](std::string& text) -> std::string {
            try {
                std::size_t used = 0;
                if (std::stoll(text, &used) >= least && used == text.size()) return {};
            } catch (const std::exception&) {
            }
            return "must be an integer of " + std::to_string(least) + " or more, got " + text;
        },
        ">= " + std::to_string(least));
}
inline const CLI::Validator kPositive = integer_at_least(1);
inline const CLI::Validator kNonNegative = integer_at_least(0);

/// A seed: a whole number from 0 to 2^63 − 1 (a JSON integer of the config). Read as an unsigned
/// 64-bit integer, "-1" and 10^23 both became 2^64 − 1: seeds the user told apart drew the same
/// sample under a seed never typed.
inline const CLI::Validator kSeed = CLI::Validator(
    [](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto r = std::from_chars(text.data(), end, v);
        return r.ec == std::errc() && r.ptr == end && v >= 0
                   ? std::string()
                   : "a whole number from 0 to 9223372036854775807";
    },
    "0 … 2^63 − 1");

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
