#pragma once
// Running routescope-cli's own subcommands as child processes (the `experiment` command reuses
// train, eval and dump exactly as a user runs them). POSIX only, like the rest of the CLI.
#include <string>
#include <vector>

namespace routescope::cli {

/// The path of the running executable (/proc/self/exe). IoError when it cannot be read.
std::string self_executable();

/// Runs `program` with `args` (argv[1..]) and waits for it: its stdout goes to `stdout_path` and
/// its stderr to `stderr_path` (each created or truncated); it runs in its own process group.
/// Returns its exit status, or 128 + the signal number when a signal ended it. While waiting, a
/// Ctrl-C / SIGTERM that reached this process (engine/train/stop_signal.hpp, installed by the
/// caller) is passed on to the child as SIGTERM once, so the child can save and exit 130. IoError
/// when the child cannot be started or an output file cannot be created.
/// The child also gets ROUTESCOPE_PARENT_PID (this process's pid) in its environment, from which
/// its die_with_parent() arranges to end with this process.
int run_child(const std::string& program, const std::vector<std::string>& args,
              const std::string& stdout_path, const std::string& stderr_path);

/// The environment variable run_child sets in its child.
inline constexpr const char* kParentPidVariable = "ROUTESCOPE_PARENT_PID";

/// Called first in main: in a process started by run_child, asks the kernel to send SIGTERM when
/// the parent ends (Linux PR_SET_PDEATHSIG), so a grid or experiment killed outright (SIGKILL)
/// does not leave its seed or stage running on, writing into a directory that the next run
/// clears and reuses. The child's StopSignal then saves and exits as on a Ctrl-C. Nothing
/// otherwise; the variable is removed from the environment either way.
void die_with_parent();

}  // namespace routescope::cli
