// posix_spawn with stdout redirected to a file, in its own process group; waitpid that survives
// the StopSignal handler's EINTR and forwards the stop request (child_process.hpp).
#include "app/cli/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/train/stop_signal.hpp"

extern char** environ;

namespace routescope::cli {

std::string self_executable() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) throw IoError("/proc/self/exe: cannot find the running executable: " + ec.message());
    return path.string();
}

namespace {

int create_output(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError(path + ": cannot create (" + std::string(std::strerror(errno)) + ")");
    return fd;
}

}  // namespace

void die_with_parent() {
    const char* value = std::getenv(kParentPidVariable);
    if (!value) return;
    char* end = nullptr;
    const long parent = std::strtol(value, &end, 10);
    // Read once and removed: a program this one starts (python, a shell) must not take it for
    // its own parent's.
    const bool direct = end != value && parent > 0 && ::getppid() == static_cast<pid_t>(parent);
    ::unsetenv(kParentPidVariable);
    if (direct) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        // Ended between the check and the prctl: the kernel was asked too late.
        if (::getppid() != static_cast<pid_t>(parent)) ::raise(SIGTERM);
    } else if (end != value && parent > 0 && ::kill(static_cast<pid_t>(parent), 0) != 0 &&
               errno == ESRCH) {
        ::raise(SIGTERM);  // that routescope-cli ended before this process got here
    }
}

int run_child(const std::string& program, const std::vector<std::string>& args,
              const std::string& stdout_path, const std::string& stderr_path) {
    std::vector<std::string> storage;
    storage.reserve(args.size() + 1);
    storage.push_back(program);
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : storage)
        argv.push_back(s.data());
    argv.push_back(nullptr);

    // Opened here (not as spawn file actions) so a bad path is reported with its name.
    const int out = create_output(stdout_path);
    int err = -1;
    try {
        err = create_output(stderr_path);
    } catch (...) {
        ::close(out);
        throw;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
    // Its own process group: a Ctrl-C at the terminal reaches this process only, which passes it
    // on once (a second signal would make the child's StopSignal give up saving).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    // The child ends with this process (child_process.hpp): it reads its parent's pid here and
    // asks the kernel for SIGTERM when that parent goes (die_with_parent, in main).
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, kParentPidVariable, std::strlen(kParentPidVariable)) != 0 ||
            (*e)[std::strlen(kParentPidVariable)] != '=')
            env_storage.emplace_back(*e);
    env_storage.push_back(std::string(kParentPidVariable) + "=" + std::to_string(::getpid()));
    std::vector<char*> envp;
    for (auto& e : env_storage)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out);
    ::close(err);
    if (rc != 0) throw IoError(program + ": cannot start (" + std::string(std::strerror(rc)) + ")");

    // Polled, not a blocking waitpid: the signal may be delivered to another thread (the seed
    // grid waits in several), which left this waitpid asleep and the child running to its end.
    bool forwarded = false;
    int status = 0;
    for (;;) {
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) throw IoError(program + ": waitpid failed");
        if (!forwarded && train::StopSignal::requested()) {
            ::kill(pid, SIGTERM);
            forwarded = true;
        }
        if (w == 0) ::usleep(20000);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

}  // namespace routescope::cli
