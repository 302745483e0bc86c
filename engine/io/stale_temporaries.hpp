#pragma once
// Writers of Routescope's files write ".<name>.tmp-<pid>" beside the final name and rename it when
// complete. A process killed mid-write (kill -9, power loss) leaves its temporary behind; the next
// writer of the same name removes the temporaries of processes that no longer exist.
#include <cstddef>
#include <filesystem>
#include <string>

namespace routescope {

/// The longest file name a temporary keeps whole: a file system allows 255 bytes per name, and a
/// temporary adds a dot, ".tmp-<pid>" and a writer's suffix (up to 64 bytes in all).
inline constexpr std::size_t kTemporaryStemMax = 190;

/// The part of an output's file name its temporaries carry: the name itself, or, when it is longer
/// than kTemporaryStemMax bytes, its first bytes (whole UTF-8 characters) and "~" with 16 hex
/// digits of a hash of the whole name, so that an output named with up to 255 bytes can be written.
std::string temporary_stem(const std::string& filename);

/// The temporary a writer of `final_path` uses: ".<stem>.tmp-<this pid><suffix>" in the same
/// directory (a rename within one filesystem stays atomic), the name remove_stale_temporaries
/// recognises; <stem> is temporary_stem(filename).
std::string temporary_path_for(const std::string& final_path, const std::string& suffix = "");

/// `p` (absolute) with every symbolic link it ends in followed, link by link, as the kernel reads
/// them (a relative link from the real folder that holds it); a trailing "/" names the folder.
/// ConfigError naming `shown` for a link that cannot be read or a chain of more than 40.
std::filesystem::path follow_output_links(std::filesystem::path p, const std::string& shown);

/// What a file system object is, for messages: "a directory", "a character device", "a FIFO
/// (named pipe)", "a socket", ...
const char* file_kind(const std::filesystem::file_status& st);

/// Where an output named `path` lands, comparable with another's: its links followed as
/// atomic_write_target follows them (even to a file not there yet), then its folders' links
/// (weakly_canonical). Empty for an empty path or one whose links cannot be read.
std::filesystem::path output_real_path(const std::string& path);

/// Whether two output names land in one file: the same output_real_path, or, both existing, one
/// file under two names (a hard link). Empty names are no file.
bool same_output_file(const std::string& a, const std::string& b);

/// Where an atomic writer of `final_path` puts the finished file (absolute): final_path itself, or,
/// when it is a symbolic link, the file the link points to (resolved link by link), so the link
/// stays a link and its target gets the content, as a shell redirection writes. ConfigError when
/// that path exists and is not a regular file: a device such as /dev/full, a FIFO, a socket
/// (renaming the temporary over it replaced the node with a file, as root /dev/full itself, and
/// reported success), or a directory (the rename failed with "Is a directory" after all the work).
std::string atomic_write_target(const std::string& final_path);

/// Removes ".<temporary_stem(filename of final_path)><infix><pid>*" in final_path's directory
/// (files, or staging directories such as export's ".<dir>.export-<pid>"), and the temporaries of
/// such temporaries
/// ("..<filename>.tmp-<pid>..."), for every <pid> that is not a running process (never this
/// process's own). Errors are ignored: this is tidying.
void remove_stale_temporaries(const std::string& final_path, const std::string& infix = ".tmp-");

/// Registers a temporary file for the lifetime of the object, so that a process ended by a signal
/// it does not handle cooperatively (routescope-cli's SIGINT/SIGTERM/SIGHUP handler) can unlink it
/// before exiting: `unlink_registered_temporaries` is async-signal-safe. At most 16 at a time; more
/// are simply not registered.
class TemporaryFileGuard {
public:
    explicit TemporaryFileGuard(const std::string& path) : TemporaryFileGuard(path, false) {}
    ~TemporaryFileGuard();
    TemporaryFileGuard(const TemporaryFileGuard&) = delete;
    TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

protected:
    TemporaryFileGuard(const std::string& path, bool directory);

private:
    int slot_ = -1;
};

/// As TemporaryFileGuard, for a staging directory that holds only files (export's
/// ".<dir>.export-<pid>", whose weights file libzip writes through a temporary of its own name):
/// `unlink_registered_temporaries` unlinks every file in it, then removes the directory. It shares
/// TemporaryFileGuard's 16 places.
class TemporaryDirectoryGuard : public TemporaryFileGuard {
public:
    explicit TemporaryDirectoryGuard(const std::string& path) : TemporaryFileGuard(path, true) {}
};

/// Unlinks every registered temporary, then empties and removes every registered staging directory
/// (async-signal-safe: only open(2), getdents64(2), unlinkat(2), rmdir(2) and close(2) on fixed
/// buffers).
void unlink_registered_temporaries();

}  // namespace routescope
