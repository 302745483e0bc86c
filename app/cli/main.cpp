// routescope-cli: the engine and analysis without a display (ARCHITECTURE.md). Every subcommand
// lives in its own file and registers itself (command.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "app/cli/exit_codes.hpp"
#include "engine/core/build_info.hpp"
#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "engine/dist/communicator.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/io/standard_descriptors.hpp"

namespace routescope::cli {
std::vector<CommandEntry>& command_registry() {
    static std::vector<CommandEntry> registry;
    return registry;
}
}  // namespace routescope::cli

namespace {
extern "C" void on_terminating_signal(int sig) {
    // A set of outputs being renamed into place (eval's predictions and summary, analyze's
    // --out and --csv) finishes first: exiting between two renames left half a new set.
    if (routescope::hold_signal_while_renaming(sig)) return;
    routescope::unlink_registered_temporaries();
    static const char text[] = "routescope-cli: interrupted\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, text, sizeof text - 1);
    ::_exit(routescope::cli::kExitInterrupted);
}
// Only train and dump share their work across the ranks of mpirun / srun (docs/scaling.md). Any
// other command launched as N ranks would run N times over, each copy writing the same --out
// (eval's predictions, an experiment's directory): refused on every rank before any work.
void refuse_ranks_of_a_single_process_command(const std::string& command) {
    if (command == "train" || command == "dump") return;
    const int ranks = routescope::dist::launcher_size();
    if (ranks <= 1) return;
    throw routescope::ConfigError(
        "launched as " + std::to_string(ranks) + " ranks (mpirun / srun), but `" + command +
        "` runs in one process: each rank would run it again and write the same output. Only "
        "train and dump run across ranks (docs/scaling.md); run `" +
        command + "` without mpirun");
}
// A message on stderr in one write(2): the ranks of an mpirun job share the terminal, and a line
// written in pieces (program, command, "error: ", the reason, each its own write) was mangled by
// another rank's ("routescope-cli routescope-cli dump: error: ..."). Lines of one write (up to
// PIPE_BUF on a pipe) never interleave.
void say_on_stderr(const std::string& text) {
    std::cerr.flush();  // anything said before comes first
    for (std::size_t at = 0; at < text.size();) {
        const ssize_t n = ::write(STDERR_FILENO, text.data() + at, text.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // stderr closed or gone: nothing more can be said
        at += static_cast<std::size_t>(n);
    }
}
// " tokenizer train": every subcommand given, nested ones included, each with a leading space
// (a usage error of `tokenizer train` named `tokenizer` and pointed to its --help, which lists
// none of train's options).
std::string command_path(CLI::App& app) {
    std::string path;
    for (CLI::App* at = &app;;) {
        const auto given = at->get_subcommands([](CLI::App* s) { return s->count() > 0; });
        if (given.empty()) return path;
        at = given.back();
        path += " " + at->get_name();
    }
}

// docs/cli.md, "Exit codes": a value given as "" (an unset shell variable) to any option or
// argument of the command is exit 2 naming it, never the option left out or a path read as the
// folder it runs in (`eval --checkpoint ""` checked "/" as its file, exit 1; `bench ops --op ""`
// timed every op). Flags take no value (CLI11 stores "true" for them) and are not looked at; an
// option with a validator of its own has already answered with that validator's message.
void refuse_empty_values(CLI::App& app) {
    for (CLI::App* at = &app;;) {
        for (const CLI::Option* o : at->get_options()) {
            if (o->count() == 0 || o->get_expected_min() == 0) continue;
            for (const std::string& value : o->results())
                if (value.empty()) {
                    const bool optional = !o->get_required() && !o->get_positional();
                    throw routescope::ConfigError(
                        o->get_name() + ": the value is empty: give one" +
                        (optional ? ", or leave " + o->get_name() + " out" : std::string()));
                }
        }
        const auto given = at->get_subcommands([](CLI::App* s) { return s->count() > 0; });
        if (given.empty()) return;
        at = given.back();
    }
}
}  // namespace

int main(int argc, char** argv) {
    using namespace routescope::cli;
    routescope::occupy_closed_standard_descriptors();  // first: nothing may open a file before it
    // A file-size limit (ulimit -f) must be a write error (EFBIG: IoError, temporaries removed,
    // exit 3), not SIGXFSZ killing the process with its temporaries left (issue 17, class 6).
    std::signal(SIGXFSZ, SIG_IGN);
    // A reader of stdout that goes away (`| head -c 10`) must not kill a run mid-step with no word
    // and a torn log line: writes to the pipe fail instead (EPIPE), the files are written as
    // usual, and what could not be printed is said on stderr at the end (exit 3).
    std::signal(SIGPIPE, SIG_IGN);
    die_with_parent();
    // SIGINT / SIGTERM / SIGHUP / SIGUSR1 in a command that does not stop cooperatively (train,
    // dump and experiment install their own, engine/train/stop_signal.hpp): unlink the temporaries
    // being written and exit 130 — nothing under a final name, nothing stray. Installed even when
    // the shell started us with SIGINT ignored (a background job), as the issue asks.
    struct sigaction sa {};
    sa.sa_handler = on_terminating_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1})
        sigaction(sig, &sa, nullptr);
    CLI::App app{
        "routescope-cli — train, evaluate, dump and analyse attention-free language models.\n"
        "Files: checkpoints (*.ckpt.h5) and activation dumps (*.dump.h5), see docs/formats.md."};
    app.name("routescope-cli");
    app.require_subcommand(0, 1);
    bool show_version = false;
    app.add_flag("-V,--version", show_version,
                 "Print the version and the libraries built in, then exit");

    auto& registry = command_registry();
    std::sort(registry.begin(), registry.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    std::map<CLI::App*, CommandRunner> runners;
    for (const auto& entry : registry) {
        const auto all = [](CLI::App*) { return true; };
        const std::size_t before = app.get_subcommands(all).size();
        CommandRunner run = entry.setup(app);
        auto after = app.get_subcommands(all);
        // The subcommand the setup just added is the last one.
        if (after.size() > before) runners[after.back()] = std::move(run);
    }

    // As every other error: "routescope-cli COMMAND: error: WHAT" (docs/cli.md), with the
    // command whose options were being read.
    const auto usage_error = [&app](const CLI::ParseError& e) {
        const std::string command = command_path(app);
        say_on_stderr("routescope-cli" + command +
                      ": error: " + routescope::data::printable_text(e.what(), true) + "\n" +
                      "Run `routescope-cli" + command + " --help` for its options.\n");
        return exit_code(ErrorKind::usage);
    };
    // CLI11 answers --help before it rejects an argument it did not expect: `routescope-cli
    // compare --help` printed the top-level help, exit 0, where `routescope-cli compare` is an
    // unknown command (exit 2). The unexpected argument is the error, with --help or without.
    const auto help_or_usage_error = [&](const CLI::ParseError& e) {
        if (const auto extra = app.remaining(true); !extra.empty())
            return usage_error(CLI::ExtrasError(extra));
        return app.exit(e);
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return help_or_usage_error(e);
    } catch (const CLI::CallForAllHelp& e) {
        return help_or_usage_error(e);
    } catch (const CLI::ParseError& e) {
        return usage_error(e);
    }

    if (show_version) {
        std::cout << routescope::build_info_text();
        std::cout.flush();  // as every command's printed result: lost is exit 3, not success
        if (!std::cout || std::fflush(stdout) != 0) {
            std::cerr << "routescope-cli: error: cannot write to standard output (closed, or its "
                         "reader exited)\n";
            return kExitFailure;
        }
        return kExitOk;
    }
    for (auto& [sub, run] : runners) {
        if (!sub->parsed()) continue;
        // The one handler of every command: whatever a command throws (routescope errors, HDF5
        // exceptions, std::bad_alloc, anything) ends here and exits through exit_codes.hpp's table.
        int code = 0;
        try {
            reset_stage();
            set_running_command(command_path(app).substr(1));
            refuse_ranks_of_a_single_process_command(sub->get_name());
            refuse_empty_values(app);
            code = run();
        } catch (...) {
            return exit_for_current_exception(command_path(app).substr(1));
        }
        // Standard output closed or a reader gone: the command's printed result (eval's numbers,
        // inspect's summary) was lost, and a success would hide it.
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0) {
            say_on_stderr("routescope-cli" + command_path(app) +
                          ": error: cannot write to standard output (closed, or its reader "
                          "exited); the command's files were written\n");
            return code == kExitOk ? kExitFailure : code;
        }
        return code;
    }
    std::cout << app.help();
    return kExitUsage;
}
