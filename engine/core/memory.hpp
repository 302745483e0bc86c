#pragma once
// The memory this process may use, for refusing sizes that cannot fit before allocating them (an
// allocation beyond it is a bare std::bad_alloc naming nothing, or the kernel's OOM killer). Not
// physical memory alone: a process under `ulimit -v` (RLIMIT_AS), `ulimit -d` (RLIMIT_DATA) or in
// a cgroup with a memory limit (a container, a batch job's slot) fails far below it, and a check
// against the machine's 23 GB let `analyze kernels` run 19 s into a bad_alloc under a 4 GB limit.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

namespace routescope {

/// A size in bytes as messages write it: "7.64 TiB" (three significant digits, binary units).
inline std::string bytes_text(double bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024 && u < 6) {
        bytes /= 1024;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
    return buf;
}

/// The tightest of the limits on this process's memory, and which limit that is.
struct MemoryLimit {
    double bytes = 0;  ///< 0: unknown (no limit found, not even the physical memory)
    /// For messages: "this machine's memory", "the process's memory limit (ulimit -v)", "the
    /// process's data limit (ulimit -d)" or "the cgroup's memory limit (memory.max)" (v1:
    /// memory.limit_in_bytes).
    std::string what;
    /// "the process's memory limit (ulimit -v) of 3.81 GiB" (binary units, three digits).
    std::string text() const { return what + " of " + bytes_text(bytes); }
};

namespace memory_detail {

/// A cgroup limit file's number of bytes; 0 for "max", a missing file or anything else.
inline double cgroup_number(const std::string& path) {
    std::ifstream in(path);
    std::string word;
    if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos)
        return 0;
    return std::stod(word);
}

/// The lowest memory limit of this process's cgroup and its ancestors (a parent's limit binds
/// its children): v2 memory.max, v1 memory.limit_in_bytes (whose "no limit" is a huge number,
/// which physical memory then undercuts); 0 when there is none. `name`: the file that set it.
inline double cgroup_limit_bytes(std::string& name) {
    double best = 0;
    const auto consider = [&](double v, const std::string& file) {
        if (v > 0 && (best == 0 || v < best)) {
            best = v;
            name = file.substr(1);
        }
    };
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        // "0::/path" (v2) or "N:controllers:/path" (v1, the memory controller's line).
        const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1);
        std::string path = line.substr(b + 1);
        std::string root, file;
        if (controllers.empty()) {
            root = "/sys/fs/cgroup";
            file = "/memory.max";
        } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
            root = "/sys/fs/cgroup/memory";
            file = "/memory.limit_in_bytes";
        } else {
            continue;
        }
        // The cgroup and every ancestor up to the root (inside a container the path is "/" and
        // the namespace's root is the container's own cgroup).
        while (true) {
            consider(cgroup_number(root + (path == "/" ? "" : path) + file), file);
            if (path.empty() || path == "/") break;
            const auto slash = path.rfind('/');
            path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
        }
    }
    return best;
}

}  // namespace memory_detail

/// The memory available to this process: the least of physical memory (sysconf), the soft
/// RLIMIT_AS and RLIMIT_DATA when not infinite, and the cgroup's memory limit when it is a
/// number. The rlimits are read afresh at each call (a limit may change while the process runs);
/// the cgroup's, which takes a dozen file reads, once per process (reads check every row against
/// it).
inline MemoryLimit memory_limit() {
    MemoryLimit m;
    const auto consider = [&](double bytes, const std::string& what) {
        if (bytes > 0 && (m.bytes == 0 || bytes < m.bytes)) {
            m.bytes = bytes;
            m.what = what;
        }
    };
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0)
        consider(static_cast<double>(pages) * static_cast<double>(page), "this machine's memory");
    struct rlimit r {};
    if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        consider(static_cast<double>(r.rlim_cur), "the process's memory limit (ulimit -v)");
    if (::getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        consider(static_cast<double>(r.rlim_cur), "the process's data limit (ulimit -d)");
    static const std::pair<double, std::string> cgroup = [] {
        std::string file;
        const double bytes = memory_detail::cgroup_limit_bytes(file);
        return std::pair{bytes, "the cgroup's memory limit (" + file + ")"};
    }();
    consider(cgroup.first, cgroup.second);
    return m;
}

/// Bytes of memory available to this process (memory_limit()), or 0 when unknown. Every memory
/// pre-check compares against this, not the machine's physical memory alone.
inline double physical_memory_bytes() {
    return memory_limit().bytes;
}

}  // namespace routescope
