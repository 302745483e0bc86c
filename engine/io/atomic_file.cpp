// write_text_atomically, write_texts_atomically (atomic_file.hpp).
#include "engine/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope {

namespace fs = std::filesystem;

namespace {
// Writes `text` to `tmp`, fsync'ed; RuntimeFailure naming `path` (the final name the user asked
// for) with the OS's own reason ("No space left on device", "Read-only file system"), not a guess.
// POSIX calls, each checked: a full disk may only show at write, fsync or close.
void write_temporary(const fs::path& tmp, const std::string& path, const std::string& text) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw RuntimeFailure(path + ": cannot write: " + std::strerror(errno));
    const auto fail = [&](const char* what) {
        const int e = errno;
        ::close(fd);
        throw RuntimeFailure(path + ": " + what + ": " + std::strerror(e));
    };
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            fail("write error");
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) fail("write error");
    if (::close(fd) != 0) throw RuntimeFailure(path + ": write error: " + std::strerror(errno));
}
}  // namespace

void write_texts_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
    struct Pending {
        std::string path;
        fs::path final_path, tmp;
        std::unique_ptr<TemporaryFileGuard> guard;  // unlinked if a signal ends the process
    };
    std::vector<Pending> pending;
    pending.reserve(files.size());
    const auto remove_temporaries = [&] {
        std::error_code ignored;  // its own: the caller's error is still to be reported
        for (const auto& p : pending)
            fs::remove(p.tmp, ignored);
    };
    for (std::size_t i = 0; i < files.size(); ++i)  // one temporary each, one final name each
        for (std::size_t j = 0; j < i; ++j)
            if (fs::absolute(files[i].first).lexically_normal() ==
                fs::absolute(files[j].first).lexically_normal())
                throw ConfigError(files[i].first + ": named for two outputs");
    try {
        for (const auto& [path, text] : files) {
            Pending p;
            p.path = path;
            p.final_path = atomic_write_target(path);
            remove_stale_temporaries(p.final_path.string());  // of a killed earlier writer
            p.tmp = temporary_path_for(p.final_path.string());
            p.guard = std::make_unique<TemporaryFileGuard>(p.tmp.string());
            pending.push_back(std::move(p));
            write_temporary(pending.back().tmp, path, text);
        }
    } catch (...) {
        remove_temporaries();
        throw;
    }
    // Every file is complete: only now does any of them take its final name.
    for (const auto& p : pending) {
        std::error_code ec;
        fs::rename(p.tmp, p.final_path, ec);
        if (ec) {
            const std::string why = ec.message();
            remove_temporaries();
            throw RuntimeFailure(p.path + ": cannot rename the finished file into place: " + why);
        }
    }
}

void write_text_atomically(const std::string& path, const std::string& text) {
    write_texts_atomically({{path, text}});
}

}  // namespace routescope
