#pragma once
// HDF5 1.10 itself crashes on some corrupt metadata (vlen strings and the global heap, scatter/
// gather reads; issue 17, class 2). Routescope cannot fix libhdf5, so it contains it: the check
// runs in a forked child, and a child ended by a signal becomes a verdict naming what was being
// read ("corrupt HDF5 metadata while reading /model attr name: the HDF5 library crashed").
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/file_info.hpp"
#include "engine/io/validation.hpp"

namespace routescope {

/// validate_file in a child process (POSIX fork). The report is the child's; when the child dies
/// by a signal the report is invalid (exit code 1) with one violation naming the object it was
/// reading. Falls back to validating in this process when fork fails.
///
/// In a multi-threaded process (the GUI) pass `fork_lock`, the mutex every other HDF5 call of the
/// process holds (analysis::hdf5_mutex()): it is held across fork() only, so that no other thread
/// is inside libhdf5 (whose thread-safe build keeps a global lock a child would inherit locked).
///
/// With `timeout_s` > 0 a child that has not answered by then is killed and the report is the
/// same kind of verdict ("the HDF5 library did not finish reading … within N s"; `crashed` set):
/// the GUI's loader, which must never wait forever on a file, passes one.
ValidationReport validate_file_contained(const std::string& path,
                                         const ValidateOptions& options = {},
                                         std::mutex* fork_lock = nullptr, double timeout_s = 0);

/// How a contained run ended (run_contained).
struct ContainedRun {
    enum class End {
        finished,   ///< the work returned (or ran in this process: fork failed)
        threw,      ///< the work let an exception out; `error` is its message
        crashed,    ///< the child died by a signal (`signal`) or exited abnormally
        timed_out,  ///< the child had not finished after timeout_s and was killed
    };
    End end = End::finished;
    std::vector<std::string> messages;  ///< what the work sent, in order (complete ones only)
    std::string reading;                ///< the breadcrumb when it ended (what was being read)
    std::string error;                  ///< End::threw: the exception's message
    int signal = 0;
    double timeout_s = 0;
    bool ok() const { return end == End::finished; }
    /// For crashed / timed_out / threw: "corrupt HDF5 metadata while reading /model attr name:
    /// the HDF5 library crashed (Segmentation fault)", "the HDF5 library did not finish reading …
    /// within N s (stopped; corrupt metadata?)", "error while reading …: <message>".
    std::string verdict() const;
};

/// Runs `work` in a forked child (the generic part of validate_file_contained): `work` hands its
/// results to `send`, each call one message that reaches the parent as soon as it is sent, so a
/// crash after some messages keeps them. Breadcrumbs (h5::breadcrumb) set in the child name what
/// was being read when it ended. `fork_lock` and `timeout_s` as for validate_file_contained. When
/// fork fails the work runs in this process (its exceptions become End::threw).
using ContainedWork = std::function<void(const std::function<void(const std::string&)>& send)>;
ContainedRun run_contained(const ContainedWork& work, std::mutex* fork_lock = nullptr,
                           double timeout_s = 0);

/// `routescope-cli inspect` and the workbench's loader (issue 25): the structural check and, when
/// the file is readable, its metadata (read_file_info(path)) in one child process, the report sent
/// first, then the FileInfo (encode_file_info); this process only formats it (summary_text). A
/// crash while summarising keeps the report and leaves `info`/`summary` empty with `summary_error`
/// the verdict (and report.crashed set); a crash while validating is the report's verdict (as
/// validate_file_contained's).
struct ContainedInspection {
    ValidationReport report;
    std::optional<FileInfo> info;        ///< what the child read (read_file_info)
    std::optional<std::string> summary;  ///< summary_text(*info)
    std::string summary_error;  ///< why there is no summary (empty when the file is unreadable)
};
ContainedInspection inspect_file_contained(const std::string& path,
                                           const ValidateOptions& options = {},
                                           std::mutex* fork_lock = nullptr, double timeout_s = 0);

namespace h5 {
/// The object being read, for the verdict above: set by the attribute readers and the format
/// checker; a no-op cost (a bounded copy into a fixed buffer) outside a contained validation.
/// Test hook: ROUTESCOPE_FAULT_CRASH_AT=WHAT raises SIGSEGV when WHAT is read (WHAT#N: the N-th
/// time this process reads it), ROUTESCOPE_FAULT_HANG_AT=WHAT never returns.
void breadcrumb(const std::string& what);
}  // namespace h5

}  // namespace routescope
