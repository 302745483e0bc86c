#include "engine/io/stale_temporaries.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/core/error.hpp"

namespace routescope {

std::string temporary_stem(const std::string& filename) {
    if (filename.size() <= kTemporaryStemMax) return filename;
    // FNV-1a of the whole name tells two long names with the same first bytes apart.
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : filename)
        h = (h ^ c) * 1099511628211ull;
    std::size_t cut = kTemporaryStemMax - 17;
    while (cut > 0 && (static_cast<unsigned char>(filename[cut]) & 0xC0) == 0x80)
        --cut;  // not inside a UTF-8 character
    char hex[18];
    std::snprintf(hex, sizeof hex, "~%016llx", static_cast<unsigned long long>(h));
    return filename.substr(0, cut) + hex;
}

std::string temporary_path_for(const std::string& final_path, const std::string& suffix) {
    const std::filesystem::path p(final_path);
    std::string name = ".";  // built piecewise: GCC 12 warns (-Wrestrict) on "." + string
    name += temporary_stem(p.filename().string());
    name += ".tmp-";
    name += std::to_string(::getpid());
    name += suffix;
    return (p.parent_path() / name).string();
}

std::filesystem::path follow_output_links(std::filesystem::path p, const std::string& shown) {
    namespace fs = std::filesystem;
    std::error_code ec;
    p = p.lexically_normal();
    if (!p.has_filename()) p = p.parent_path();  // "out/" names out
    for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
        if (hops == 40) throw ConfigError(shown + ": too many levels of symbolic links");
        const fs::path to = fs::read_symlink(p, ec);
        if (ec) throw ConfigError(shown + ": cannot read the symbolic link (" + ec.message() + ")");
        // A relative link is read from the directory that holds it, the real one: "../x" in
        // a folder reached through another link is not the lexical parent's.
        p = (to.is_absolute() ? to : fs::weakly_canonical(p.parent_path(), ec) / to)
                .lexically_normal();
        if (!p.has_filename()) p = p.parent_path();
    }
    return p;
}

const char* file_kind(const std::filesystem::file_status& st) {
    namespace fs = std::filesystem;
    return fs::is_regular_file(st)     ? "a regular file"
           : fs::is_directory(st)      ? "a directory"
           : fs::is_character_file(st) ? "a character device"
           : fs::is_block_file(st)     ? "a block device"
           : fs::is_fifo(st)           ? "a FIFO (named pipe)"
           : fs::is_socket(st)         ? "a socket"
                                       : "not a regular file";
}

std::filesystem::path output_real_path(const std::string& path) {
    namespace fs = std::filesystem;
    if (path.empty()) return {};
    try {
        std::error_code ec;
        fs::path real = fs::weakly_canonical(follow_output_links(fs::absolute(path), path), ec);
        return ec ? fs::path() : real;
    } catch (const std::exception&) {  // a link that cannot be read: the writer says so
        return {};
    }
}

bool same_output_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    const fs::path ra = output_real_path(a), rb = output_real_path(b);
    if (!ra.empty() && ra == rb) return true;
    std::error_code e;
    return !a.empty() && !b.empty() && fs::exists(a, e) && fs::exists(b, e) &&
           fs::equivalent(a, b, e) && !e;
}

std::string atomic_write_target(const std::string& final_path) {
    namespace fs = std::filesystem;
    if (final_path.empty())  // fs::absolute("") throws, which read as an internal error
        throw ConfigError("the output's path is empty: give a file name");
    const fs::path p = follow_output_links(fs::absolute(final_path), final_path);
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    bool through_magic_link = false;
    if (ec || !fs::exists(st)) {
        // A /proc "magic" link (/dev/stdout → /proc/self/fd/1 → "pipe:[N]", "socket:[N]") holds
        // text that names no path, which read as one ("/proc/PID/fd/pipe:[N]") is a file not
        // there; the kernel follows such a link to the open object itself, so the given name's
        // own stat() says what the output is (`--out /dev/stdout | cat`: a FIFO).
        std::error_code direct_ec;
        const fs::file_status direct = fs::status(final_path, direct_ec);
        if (direct_ec || !fs::exists(direct) || fs::is_regular_file(direct)) return p.string();
        st = direct;
        through_magic_link = true;
    }
    if (fs::is_regular_file(st)) return p.string();
    // An unnamed pipe is a FIFO without a name: "named pipe" would misstate it.
    const char* kind =
        through_magic_link && fs::is_fifo(st) ? "a FIFO (an unnamed pipe)" : file_kind(st);
    throw ConfigError(final_path +
                      (!through_magic_link && p.string() != fs::absolute(final_path).string()
                           ? " (a link to " + p.string() + ")"
                           : std::string()) +
                      ": is " + kind +
                      (fs::is_directory(st)
                           ? std::string("; an output is a file: give its name (a file in the "
                                         "directory, say)")
                           : std::string("; an output is written whole beside its name and "
                                         "renamed into place, which would replace it: give a "
                                         "file name")));
}

void remove_stale_temporaries(const std::string& final_path, const std::string& infix) {
    namespace fs = std::filesystem;
    const fs::path target = fs::absolute(final_path);
    std::string prefix = ".";  // built piecewise: GCC 12 warns (-Wrestrict) on "." + string
    prefix += temporary_stem(target.filename().string());
    prefix += infix;
    // A temporary of a temporary (import writes its checkpoint through the checkpoint writer,
    // whose own temporary of ".x.ckpt.h5.tmp-<pid>-import.ckpt.h5" starts with "..x.ckpt.h5"):
    // the outer writer's pid decides.
    const std::string nested = "." + prefix;
    std::error_code ec;
    fs::directory_iterator it(target.parent_path(), ec);
    if (ec) return;
    for (const auto& entry : it) {
        const std::string name = entry.path().filename().string();
        std::size_t at = 0;
        if (name.rfind(prefix, 0) == 0)
            at = prefix.size();
        else if (name.rfind(nested, 0) == 0)
            at = nested.size();
        else
            continue;
        const char* digits = name.c_str() + at;
        char* end = nullptr;
        const long pid = std::strtol(digits, &end, 10);
        if (end == digits || pid <= 0 || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still alive
        std::error_code rm;
        fs::remove_all(entry.path(), rm);  // a staging directory (export) as well as a file
    }
}

namespace {
constexpr int kSlots = 16;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
// 0 free, 1 being written, 2 a registered file, 3 a registered staging directory
std::atomic<int> g_state[kSlots];
constexpr int kFile = 2, kDirectory = 3;

int register_temporary(const std::string& path, int kind) {
    if (path.size() >= kPathMax) return -1;
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;
        if (!g_state[i].compare_exchange_strong(expected, 1)) continue;
        std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
        g_state[i].store(kind);
        return i;
    }
    return -1;
}

// Unlinks the entries of directory `path` (files: a staging directory holds no subdirectory) and
// removes it. Only system calls on a buffer of the stack: safe in a signal handler (opendir and
// readdir allocate).
void remove_staging_directory(const char* path) {
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        // A few passes: entries removed while the directory is read may move the others.
        for (int pass = 0; pass < 4; ++pass) {
            alignas(8) char buffer[4096];
            bool removed = false;
            for (;;) {
                const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
                if (n <= 0) break;
                for (long at = 0; at < n;) {
                    // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1),
                    // d_name
                    unsigned short reclen = 0;
                    std::memcpy(&reclen, buffer + at + 16, sizeof reclen);
                    const char* name = buffer + at + 19;
                    if (reclen == 0) break;
                    if (!(name[0] == '.' &&
                          (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))))
                        removed |= ::unlinkat(fd, name, 0) == 0;
                    at += reclen;
                }
            }
            if (!removed || ::lseek(fd, 0, SEEK_SET) != 0) break;
        }
        ::close(fd);
    }
    ::rmdir(path);
}
}  // namespace

TemporaryFileGuard::TemporaryFileGuard(const std::string& path, bool directory)
    : slot_(register_temporary(path, directory ? kDirectory : kFile)) {}

TemporaryFileGuard::~TemporaryFileGuard() {
    if (slot_ >= 0) g_state[slot_].store(0);
}

void unlink_registered_temporaries() {
    for (int i = 0; i < kSlots; ++i)
        if (g_state[i].load() == kFile) ::unlink(g_paths[i]);
    for (int i = 0; i < kSlots; ++i)
        if (g_state[i].load() == kDirectory) remove_staging_directory(g_paths[i]);
}

}  // namespace routescope
