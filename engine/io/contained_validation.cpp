#include "engine/io/contained_validation.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace routescope {

namespace {
constexpr std::size_t kCrumb = 1024;
char g_local_crumb[kCrumb];
char* g_crumb = g_local_crumb;  // a shared mapping while a contained validation runs

void write_all(int fd, const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

// Fields separated by \x1f, violations by \x1e: "readable kind" then path, expected, found.
std::string encode(const ValidationReport& r) {
    std::string s = std::string(r.readable ? "1" : "0") + "\x1f" +
                    std::to_string(static_cast<int>(r.kind)) + "\x1e";
    for (const auto& v : r.violations)
        s += v.path + "\x1f" + v.expected + "\x1f" + v.found + "\x1e";
    return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < s.size()) {
        const std::size_t end = s.find(sep, at);
        out.push_back(s.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return out;
}
}  // namespace

void h5::breadcrumb(const std::string& what) {
    const std::size_t n = std::min(what.size(), kCrumb - 1);
    std::memcpy(g_crumb, what.data(), n);
    g_crumb[n] = '\0';
    // Fault injection for the tests (tests/io/test_hostile_files.cpp): libhdf5's real crashes
    // need corrupt files that a later HDF5 release may stop crashing on.
    const char* crash_at = std::getenv("ROUTESCOPE_FAULT_CRASH_AT");
    if (crash_at && what == crash_at) std::raise(SIGSEGV);
    const char* hang_at = std::getenv("ROUTESCOPE_FAULT_HANG_AT");  // a library that never returns
    if (hang_at && what == hang_at)
        for (;;)
            ::pause();
}

ValidationReport validate_file_contained(const std::string& path, const ValidateOptions& options,
                                         std::mutex* fork_lock, double timeout_s) {
    void* shared =
        ::mmap(nullptr, kCrumb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int fds[2];
    if (shared == MAP_FAILED || ::pipe(fds) != 0) {
        if (shared != MAP_FAILED) ::munmap(shared, kCrumb);
        return validate_file(path, options);
    }
    static_cast<char*>(shared)[0] = '\0';
    std::unique_lock<std::mutex> held;
    if (fork_lock) held = std::unique_lock<std::mutex>(*fork_lock);
    const pid_t pid = ::fork();
    if (pid != 0 && held.owns_lock()) held.unlock();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        ::munmap(shared, kCrumb);
        return validate_file(path, options);
    }
    if (pid == 0) {
        ::close(fds[0]);
        g_crumb = static_cast<char*>(shared);
        std::signal(SIGINT, SIG_DFL);  // the parent handles Ctrl-C
        // A crash ends the child at once: no crash handler of the parent's (a test framework's
        // stack-trace printer, a crash reporter) runs in it.
        for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
            std::signal(sig, SIG_DFL);
        write_all(fds[1], encode(validate_file(path, options)));
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    char buf[65536];
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_s));
    bool timed_out = false;
    for (;;) {
        if (timeout_s > 0) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())
                    .count();
            pollfd p{fds[0], POLLIN, 0};
            const int ready =
                left > 0 ? ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000LL * 3600)))
                         : 0;
            if (ready < 0 && errno == EINTR) continue;
            if (ready == 0 && Clock::now() >= deadline) {
                ::kill(pid, SIGKILL);  // the library never returned: stop it
                timed_out = true;
                break;
            }
            if (ready == 0) continue;
        }
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string crumb(static_cast<const char*>(shared));
    ::munmap(shared, kCrumb);

    ValidationReport report;
    report.file = path;
    report.kind = path.ends_with(".ckpt.h5") ? FileKind::Checkpoint : FileKind::Dump;
    if (timed_out) {
        report.crashed = true;
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
        report.violations.push_back({crumb.empty() ? "/" : crumb, "a read that ends",
                                     "the HDF5 library did not finish reading " +
                                         (crumb.empty() ? "the file" : crumb) + " within " +
                                         seconds + " s (stopped; corrupt metadata?)"});
        return report;
    }
    if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        report.crashed = true;
        report.violations.push_back(
            {crumb.empty() ? "/" : crumb, "well-formed HDF5 metadata",
             "corrupt HDF5 metadata while reading " + (crumb.empty() ? "the file" : crumb) +
                 ": the HDF5 library crashed" +
                 (sig ? " (" + std::string(strsignal(sig)) + ")" : std::string())});
        return report;
    }
    const auto records = split(text, '\x1e');
    if (records.empty()) return validate_file(path, options);  // cannot happen: retry in-process
    const auto head = split(records[0], '\x1f');
    report.readable = !head.empty() && head[0] == "1";
    report.kind =
        head.size() > 1 ? static_cast<FileKind>(std::atoi(head[1].c_str())) : FileKind::Unknown;
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto f = split(records[i], '\x1f');
        if (f.size() == 3) report.violations.push_back({f[0], f[1], f[2]});
    }
    return report;
}

}  // namespace routescope
