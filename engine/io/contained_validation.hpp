#pragma once
// HDF5 1.10 itself crashes on some corrupt metadata (vlen strings and the global heap, scatter/
// gather reads; issue 17, class 2). Routescope cannot fix libhdf5, so it contains it: the check
// runs in a forked child, and a child ended by a signal becomes a verdict naming what was being
// read ("corrupt HDF5 metadata while reading /model attr name: the HDF5 library crashed").
#include <mutex>
#include <string>

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

namespace h5 {
/// The object being read, for the verdict above: set by the attribute readers and the format
/// checker; a no-op cost (a bounded copy into a fixed buffer) outside a contained validation.
void breadcrumb(const std::string& what);
}  // namespace h5

}  // namespace routescope
