#pragma once
// Advisory locks (flock(2)) that keep two Routescope processes from writing one output at once: two
// trainings into one run directory tore each other's log and left one run's checkpoint under the
// other's log; two sharded dumps of one name mapped one job's master onto the other's shards. Each
// is refused instead, naming the output.
//
// A lock is a safety net, not a condition: on a file system without flock (some NFS mounts) the
// lock is skipped and the command runs as before. Locks are released by the kernel when the
// process ends, however it ends (kill -9 included), and are not inherited by child processes.
#include <memory>
#include <string>

namespace routescope {

/// Takes an exclusive lock on the directory `dir` itself (no file is created in it) for the rest of
/// this process's life. False when another process holds it; true when taken, already held by this
/// process, or when the file system cannot lock. IoError when `dir` cannot be opened.
bool lock_directory_for_this_process(const std::string& dir);

/// An exclusive lock on ".<temporary_stem(file name)>.lock" beside `final_path` for the object's
/// lifetime; the holder removes the file when it lets go (a process killed holding it leaves the
/// file, which the next writer takes over: the lock is the kernel's, not the file's existence).
class OutputFileLock {
public:
    /// The lock, or nullptr when another process holds it. IoError when the lock file cannot be
    /// created (the directory is missing or read-only: the output could not be written either).
    static std::unique_ptr<OutputFileLock> try_take(const std::string& final_path);
    ~OutputFileLock();
    OutputFileLock(const OutputFileLock&) = delete;
    OutputFileLock& operator=(const OutputFileLock&) = delete;

    /// The lock file's path (for messages).
    static std::string path_for(const std::string& final_path);

private:
    OutputFileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::string path_;
    int fd_ = -1;
};

}  // namespace routescope
