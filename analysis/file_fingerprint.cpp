#include "analysis/file_fingerprint.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

#include "engine/core/error.hpp"
#include "engine/io/sha256.hpp"

namespace routescope::analysis {
namespace {

struct FileIdentity {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
};

FileIdentity identity_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw IoError(path + ": cannot stat the file: " + std::strerror(errno));
    auto ns = [](const timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
    };
    return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
            static_cast<std::uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim)};
}

std::int64_t now_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// File times tick with the kernel's coarse clock (milliseconds): a file rewritten in place, to the
// same size, within one tick keeps its times. As git does for its index, a file changed less than
// this long before it was hashed is not remembered (it is hashed again the next time).
constexpr std::int64_t kRacyWindowNs = 2'000'000'000;

struct CachedHash {
    FileIdentity identity;
    std::string hash;
};

std::mutex& cache_mutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, CachedHash>& cache() {
    static std::map<std::string, CachedHash> c;
    return c;
}

}  // namespace

FileFingerprint fingerprint_file(const std::string& path) {
    FileIdentity before = identity_of(path);
    {
        std::lock_guard lock(cache_mutex());
        const auto it = cache().find(path);
        if (it != cache().end() && it->second.identity == before)
            return {it->second.hash, "sha256", before.size};
    }
    // A file that changes while it is read (a training log being appended to) is hashed again, a
    // few times at most; the last hash is returned but not remembered.
    for (int attempt = 0;; ++attempt) {
        const std::int64_t started = now_ns();
        std::string hash = sha256_file(path);
        const FileIdentity after = identity_of(path);
        if (after == before) {
            std::lock_guard lock(cache_mutex());
            if (started - std::max(before.mtime_ns, before.ctime_ns) > kRacyWindowNs)
                cache()[path] = {before, hash};
            else
                cache().erase(path);
            return {std::move(hash), "sha256", before.size};
        }
        if (attempt == 2) return {std::move(hash), "sha256", after.size};
        before = after;
    }
}

}  // namespace routescope::analysis
