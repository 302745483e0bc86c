#pragma once
// A disk that refuses the bytes, for a test: `write` runs in a child process under a file-size
// limit (RLIMIT_FSIZE, with SIGXFSZ ignored, so write() fails with EFBIG as a full disk's fails
// with ENOSPC). Returns what the child threw (its what()), "(no error)" when it reported success,
// or "(the child crashed)".
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <functional>
#include <string>

namespace routescope::test_support {

inline std::string error_under_file_size_limit(rlim_t bytes, const std::function<void()>& write) {
    int fds[2];
    if (::pipe(fds) != 0) return "(no pipe)";
    const pid_t child = ::fork();
    if (child < 0) return "(no fork)";
    if (child == 0) {
        ::close(fds[0]);
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        std::string said = "(no error)";
        try {
            write();
        } catch (const std::exception& e) {
            said = e.what();
        } catch (...) {
            said = "(not a std::exception)";
        }
        for (std::size_t done = 0; done < said.size();) {
            const ssize_t n = ::write(fds[1], said.data() + done, said.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string said;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
        said.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? said : "(the child crashed)";
}

}  // namespace routescope::test_support
