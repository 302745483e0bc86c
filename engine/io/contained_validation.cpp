#include "engine/io/contained_validation.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <H5Cpp.h>

#include "engine/io/file_info.hpp"

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
ValidationReport decode(const std::string& text) {
    ValidationReport report;
    const auto records = split(text, '\x1e');
    const auto fields = records.empty() ? std::vector<std::string>{} : split(records[0], '\x1f');
    report.readable = !fields.empty() && fields[0] == "1";
    report.kind =
        fields.size() > 1 ? static_cast<FileKind>(std::atoi(fields[1].c_str())) : FileKind::Unknown;
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto f = split(records[i], '\x1f');
        if (f.size() == 3) report.violations.push_back({f[0], f[1], f[2]});
    }
    return report;
}

// A message on the pipe: a tag ('M' a message, 'X' the exception that ended the work), 16 hex
// digits of length, the bytes.
std::string frame(char tag, const std::string& payload) {
    char length[17];
    std::snprintf(length, sizeof length, "%016zx", payload.size());
    return std::string(1, tag) + length + payload;
}

// The report of a file whose check did not end normally: one violation naming what was read.
ValidationReport not_finished_report(const std::string& path, const ContainedRun& run) {
    ValidationReport report;
    report.file = path;
    report.kind = path.ends_with(".ckpt.h5") ? FileKind::Checkpoint : FileKind::Dump;
    report.crashed = true;
    report.timed_out = run.end == ContainedRun::End::timed_out;
    const std::string where = run.reading.empty() ? "/" : run.reading;
    report.violations.push_back(
        {where,
         run.end == ContainedRun::End::timed_out ? "a read that ends" : "well-formed HDF5 metadata",
         run.verdict()});
    return report;
}

// A child that ended normally without a report (its pipe failed): unreadable, not read here.
ValidationReport no_report(const std::string& path) {
    ValidationReport report;
    report.file = path;
    report.readable = false;
    report.crashed = true;
    report.violations.push_back(
        {"/", "a report from the check's child process", "the check ended without a report"});
    return report;
}

std::string exception_text() {
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (const H5::Exception& e) {
        return e.getFuncName() + ": " + e.getDetailMsg();
    } catch (...) {
        return "an unknown exception";
    }
}

}  // namespace

void h5::breadcrumb(const std::string& what) {
    const std::size_t n = std::min(what.size(), kCrumb - 1);
    std::memcpy(g_crumb, what.data(), n);
    g_crumb[n] = '\0';
    // Fault injection for the tests (tests/io/test_hostile_files.cpp, tests/cli/
    // test_contained_inputs.cpp): libhdf5's real crashes need corrupt files that a later HDF5
    // release may stop crashing on. "WHAT#N" crashes on the N-th read of WHAT in this process.
    if (const char* crash_at = std::getenv("ROUTESCOPE_FAULT_CRASH_AT")) {
        const std::string target = crash_at;
        const std::size_t hash = target.rfind('#');
        if (hash == std::string::npos) {
            if (what == target) std::raise(SIGSEGV);
        } else if (what == target.substr(0, hash)) {
            static int reads = 0;
            if (++reads == std::atoi(target.c_str() + hash + 1)) std::raise(SIGSEGV);
        }
    }
    const char* hang_at = std::getenv("ROUTESCOPE_FAULT_HANG_AT");  // a library that never returns
    if (hang_at && what == hang_at)
        for (;;)
            ::pause();
}

std::string ContainedRun::verdict() const {
    const std::string what = reading.empty() ? "the file" : reading;
    switch (end) {
        case End::finished:
            return {};
        case End::threw:
            return "error while reading " + what + ": " + error;
        case End::timed_out: {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
            return "the HDF5 library did not finish reading " + what + " within " + seconds +
                   " s (stopped; corrupt metadata?)";
        }
        case End::crashed:
            break;
    }
    return "corrupt HDF5 metadata while reading " + what + ": the HDF5 library crashed" +
           (signal ? " (" + std::string(strsignal(signal)) + ")" : std::string());
}

ContainedRun run_contained(const ContainedWork& work, std::mutex* fork_lock, double timeout_s) {
    ContainedRun run;
    run.timeout_s = timeout_s;
    const auto in_this_process = [&] {
        try {
            work([&](const std::string& m) { run.messages.push_back(m); });
        } catch (...) {
            run.end = ContainedRun::End::threw;
            run.error = exception_text();
        }
        return run;
    };
    void* shared =
        ::mmap(nullptr, kCrumb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int fds[2];
    if (shared == MAP_FAILED || ::pipe(fds) != 0) {
        if (shared != MAP_FAILED) ::munmap(shared, kCrumb);
        return in_this_process();
    }
    static_cast<char*>(shared)[0] = '\0';
    std::unique_lock<std::mutex> held;
    if (fork_lock) held = std::unique_lock<std::mutex>(*fork_lock);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid != 0 && held.owns_lock()) held.unlock();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        ::munmap(shared, kCrumb);
        return in_this_process();
    }
    if (pid == 0) {
        // The check ends with the process that asked for it (the forking thread waits for it
        // to the end): `routescope --export --timeout` leaves with _Exit while a value scan of a
        // large dump may still run, and nothing else would stop it.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent ended before the prctl
        ::close(fds[0]);
        g_crumb = static_cast<char*>(shared);
        std::signal(SIGINT, SIG_DFL);  // the parent handles Ctrl-C
        // A crash ends the child at once: no crash handler of the parent's (a test framework's
        // stack-trace printer, a crash reporter) runs in it.
        for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
            std::signal(sig, SIG_DFL);
        try {
            work([&](const std::string& m) { write_all(fds[1], frame('M', m)); });
        } catch (...) {
            write_all(fds[1], frame('X', exception_text()));
        }
        ::_exit(0);  // no atexit handlers, no flush of the parent's stdio buffers
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
    if (timeout_s > 0 && !timed_out) {
        // The pipe closed, but a child may close it and still not end (found by the issue-25
        // entry-point campaign: the inspect target's process waited on such a child until the
        // campaign was killed): the deadline holds for its exit too.
        for (;;) {
            const pid_t done = ::waitpid(pid, &status, WNOHANG);
            if (done == pid || (done < 0 && errno != EINTR)) break;
            if (Clock::now() >= deadline) {
                ::kill(pid, SIGKILL);
                timed_out = true;
                break;
            }
            ::usleep(2000);
        }
    }
    if (timed_out || timeout_s <= 0)
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    run.reading = static_cast<const char*>(shared);
    ::munmap(shared, kCrumb);

    // Complete frames only: a child that died mid-write leaves a partial one, dropped.
    std::size_t at = 0;
    while (text.size() - at >= 17) {
        const std::size_t length = std::strtoull(text.substr(at + 1, 16).c_str(), nullptr, 16);
        if (text.size() - at - 17 < length) break;
        std::string payload = text.substr(at + 17, length);
        if (text[at] == 'X') {
            run.end = ContainedRun::End::threw;
            run.error = std::move(payload);
        } else {
            run.messages.push_back(std::move(payload));
        }
        at += 17 + length;
    }
    if (timed_out) {
        run.end = ContainedRun::End::timed_out;
    } else if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        run.end = ContainedRun::End::crashed;
        run.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    return run;
}

ValidationReport validate_file_contained(const std::string& path, const ValidateOptions& options,
                                         std::mutex* fork_lock, double timeout_s) {
    const ContainedRun run =
        run_contained([&](const auto& send) { send(encode(validate_file(path, options))); },
                      fork_lock, timeout_s);
    if (!run.ok()) return not_finished_report(path, run);
    if (run.messages.empty()) return no_report(path);  // the child said nothing: never open it here
    ValidationReport report = decode(run.messages.front());
    report.file = path;
    return report;
}

ContainedInspection inspect_file_contained(const std::string& path, const ValidateOptions& options,
                                           std::mutex* fork_lock, double timeout_s) {
    const ContainedRun run = run_contained(
        [&](const auto& send) {
            const ValidationReport report = validate_file(path, options);
            send(encode(report));
            if (!report.readable) return;
            std::string summary;
            try {
                // The tag is inserted, not "S" + …: GCC 12 warns a false -Wrestrict on that.
                summary = encode_file_info(read_file_info(path));
                summary.insert(summary.begin(), 'S');
            } catch (...) {
                summary = exception_text();
                summary.insert(summary.begin(), 'E');
            }
            send(summary);
        },
        fork_lock, timeout_s);
    ContainedInspection out;
    if (run.messages.empty()) {
        out.report = run.ok() ? no_report(path) : not_finished_report(path, run);
        out.summary_error = out.report.crashed ? run.verdict() : "";
        return out;
    }
    out.report = decode(run.messages.front());
    out.report.file = path;
    if (run.messages.size() > 1) {
        const std::string& m = run.messages[1];
        if (!m.empty() && m[0] == 'S') {
            out.info = decode_file_info(m.substr(1));
            if (out.info)
                out.summary = summary_text(*out.info);
            else
                out.summary_error = "the summary read in the child process could not be decoded";
        } else
            out.summary_error = m.substr(std::min<std::size_t>(1, m.size()));
    } else if (!run.ok()) {
        out.report.crashed = true;  // the library crashed on this file: never open it here
        out.report.timed_out = run.end == ContainedRun::End::timed_out;
        out.summary_error = run.verdict();
    }
    return out;
}

}  // namespace routescope
