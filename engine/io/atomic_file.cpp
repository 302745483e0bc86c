// write_text_atomically, write_texts_atomically (atomic_file.hpp).
#include "engine/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope {

namespace fs = std::filesystem;

namespace {
// The sets being renamed now (write_texts_atomically, in any thread) in the low byte, and the
// number of a stop signal held meanwhile in the bits above it. One word, so the handler and the
// writer cannot miss each other: a handler that finds a set being renamed records its signal
// with compare-and-swap before the last writer takes the word back, or finds none after it and
// acts at once.
constexpr int kSetMask = 0xff, kSignalShift = 8;
std::atomic<int> renaming_state{0};
static_assert(std::atomic<int>::is_always_lock_free, "read by a signal handler");

// Marks the renames of one set for hold_signal_while_renaming; when the last such set ends, a
// signal held meanwhile is raised again in this thread, where the handler now acts on it.
class RenamingSet {
public:
    RenamingSet() { renaming_state.fetch_add(1); }
    ~RenamingSet() {
        int state = renaming_state.load();
        for (;;) {
            const bool last = (state & kSetMask) == 1;
            if (renaming_state.compare_exchange_weak(state, last ? 0 : state - 1)) break;
        }
        const int held = state >> kSignalShift;
        if ((state & kSetMask) == 1 && held != 0) std::raise(held);
    }
    RenamingSet(const RenamingSet&) = delete;
    RenamingSet& operator=(const RenamingSet&) = delete;
};
}  // namespace

bool hold_signal_while_renaming(int signal) {
    int state = renaming_state.load();
    while ((state & kSetMask) != 0) {
        if (state >> kSignalShift != 0) return true;  // one is held already: it ends the process
        if (renaming_state.compare_exchange_weak(state, state | (signal << kSignalShift)))
            return true;
    }
    return false;
}

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
        fs::path final_path, tmp, previous;  // previous: a hard link to the file replaced, if any
        bool existed = false;                // a file was there before (kept as `previous` or not)
        std::unique_ptr<TemporaryFileGuard> guard, previous_guard;  // unlinked if a signal ends it
    };
    std::vector<Pending> pending;
    pending.reserve(files.size());
    const auto remove_temporaries = [&] {
        std::error_code ignored;  // its own: the caller's error is still to be reported
        for (const auto& p : pending) {
            fs::remove(p.tmp, ignored);
            if (!p.previous.empty()) fs::remove(p.previous, ignored);
        }
    };
    // One temporary each, one final file each: two names of one file (a symbolic link to the other
    // output, a linked folder, a hard link) would share a temporary, and the second output replaced
    // the first (analyze --out r.json --csv r.csv with r.csv → r.json left the CSV in r.json).
    try {
        for (const auto& [path, text] : files) {
            Pending p;
            p.path = path;
            p.final_path = atomic_write_target(path);
            for (const auto& q : pending)
                if (same_output_file(q.final_path.string(), p.final_path.string()))
                    throw ConfigError(path + ": names the same file as " + q.path +
                                      ", and each output needs its own");
            pending.push_back(std::move(p));
        }
        for (std::size_t i = 0; i < pending.size(); ++i) {
            Pending& p = pending[i];
            remove_stale_temporaries(p.final_path.string());  // of a killed earlier writer
            p.tmp = temporary_path_for(p.final_path.string());
            p.guard = std::make_unique<TemporaryFileGuard>(p.tmp.string());
            write_temporary(p.tmp, p.path, files[i].second);
        }
    } catch (...) {
        remove_temporaries();
        throw;
    }
    // Every file is complete: only now does any of them take its final name. A rename that fails
    // after others succeeded (a name another user owns in a sticky folder) puts back what those
    // replaced — kept under a second name (a hard link) until all are in place — and removes what
    // they created, so a failure leaves the old files, not half of a new set.
    if (pending.size() > 1)
        for (auto& p : pending) {
            std::error_code ec;
            if (!fs::exists(p.final_path, ec)) continue;
            p.existed = true;
            p.previous = temporary_path_for(p.final_path.string(), ".previous");
            p.previous_guard = std::make_unique<TemporaryFileGuard>(p.previous.string());
            if (::link(p.final_path.c_str(), p.previous.c_str()) != 0) p.previous.clear();
        }
    // A stop signal arriving between two renames is held until the set is complete (or put back
    // after a failed rename): routescope-cli's handler exited at once, leaving the new
    // predictions beside the old summary.
    const RenamingSet renaming;
    for (std::size_t i = 0; i < pending.size(); ++i) {
        std::error_code ec;
        fs::rename(pending[i].tmp, pending[i].final_path, ec);
        if (ec) {
            const std::string why = ec.message();
            // Put back what can be: a replaced file kept under its second name, a new file
            // removed. A replaced file that could not be kept (no hard links on this file system)
            // stays replaced by the new one, which is better than nothing: said so.
            std::string kept;
            for (std::size_t j = 0; j < i; ++j) {
                std::error_code e;
                if (!pending[j].previous.empty())
                    fs::rename(pending[j].previous, pending[j].final_path, e);
                else if (!pending[j].existed)
                    fs::remove(pending[j].final_path, e);
                if (e || (pending[j].existed && pending[j].previous.empty()))
                    kept += (kept.empty() ? "" : ", ") + pending[j].path;
            }
            remove_temporaries();
            std::string after;
            if (i > 0)
                after = kept.empty()
                            ? " (the outputs already renamed were put back as they were)"
                            : " (" + kept + " could not be put back and holds this run's output)";
            throw RuntimeFailure(pending[i].path +
                                 ": cannot rename the finished file into place: " + why + after);
        }
    }
    std::error_code ignored;
    for (const auto& p : pending)
        if (!p.previous.empty()) fs::remove(p.previous, ignored);
}

void write_text_atomically(const std::string& path, const std::string& text) {
    write_texts_atomically({{path, text}});
}

}  // namespace routescope
