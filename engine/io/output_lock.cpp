#include "engine/io/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope {
namespace {

// Whether flock's failure says "another process holds it" (EWOULDBLOCK) rather than "this file
// system cannot lock" (ENOLCK, EINVAL, EOPNOTSUPP; EBADF where NFS emulates flock by fcntl locks,
// which need a descriptor open for writing).
bool held_elsewhere(int error) {
    return error == EWOULDBLOCK;
}

}  // namespace

bool lock_directory_for_this_process(const std::string& dir) {
    static std::mutex mutex;
    static std::set<std::string> held;  // flock on a second descriptor would refuse this process
    std::error_code ec;
    const std::string key = std::filesystem::weakly_canonical(dir, ec).string();
    const std::lock_guard<std::mutex> guard(mutex);
    if (held.count(key)) return true;
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw IoError(dir + ": cannot open the directory (" + std::strerror(errno) + ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        return !held_elsewhere(error);
    }
    held.insert(key);  // the descriptor stays open until the process ends
    return true;
}

std::string OutputFileLock::path_for(const std::string& final_path) {
    const std::filesystem::path p(final_path);
    std::string name = ".";
    name += temporary_stem(p.filename().string());  // fits NAME_MAX for a name of 255 bytes
    name += ".lock";
    return (p.parent_path() / name).string();
}

std::unique_ptr<OutputFileLock> OutputFileLock::try_take(const std::string& final_path) {
    const std::string path = path_for(final_path);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        throw IoError(path + ": cannot create the output's lock file (" + std::strerror(errno) +
                      ")");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        if (held_elsewhere(error)) return nullptr;
        return std::unique_ptr<OutputFileLock>(new OutputFileLock(path, -1));  // cannot lock here:
        // the file is removed all the same when the output is done
    }
    return std::unique_ptr<OutputFileLock>(new OutputFileLock(path, fd));
}

OutputFileLock::~OutputFileLock() {
    ::unlink(path_.c_str());  // while still held: another writer then finds no file, or ours held
    if (fd_ >= 0) ::close(fd_);
}

}  // namespace routescope
