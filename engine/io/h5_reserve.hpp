#pragma once
// Disk space for an HDF5 file, reserved before anything is written. HDF5 1.10 cannot close a file
// whose metadata flush failed ("slist already enabled?"), and closing it again crashed: a dump or
// a checkpoint that filled the disk (or passed `ulimit -f`) in its last kB died with SIGSEGV. The
// writers reserve their size up front (fallocate), so a full disk is an error before anything is
// written, and give back what HDF5 did not use once the file is closed.
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace routescope::h5 {

/// Creates (or empties) the file at `path` and reserves `bytes` in it, then empties it again, so
/// that a full disk is found before HDF5 creates the file: HDF5 writes the superblock as it creates
/// a file, and when that write failed it left a half-made file open, said so in a trace of several
/// hundred bytes, left the file behind and looped at exit ("HDF5: infinite loop closing library").
/// 0 when the file can be written (it is left empty), else the errno, with the file removed.
int probe_create(const std::string& path, std::uint64_t bytes) noexcept;

/// fallocate(2)s `bytes` from offset 0 of the open HDF5 file `file` (sec2 driver). 0 when reserved
/// or when the file system cannot reserve (EOPNOTSUPP, ENOSYS: the file stays unreserved), else
/// the errno (ENOSPC, EFBIG, EDQUOT, ...).
int reserve_file_space(hid_t file, std::uint64_t bytes) noexcept;

/// Points the open HDF5 file's descriptor at /dev/null, so that the library's closing writes of an
/// abandoned file cannot fail (and crash) again. The file itself is the caller's to remove.
void divert_file_to_null(hid_t file) noexcept;

/// As divert_file_to_null, onto an anonymous file in memory (memfd) instead: for a file abandoned
/// right after it was created, whose close still writes its superblock and may cut the file to its
/// end of allocation, which /dev/null refuses (ftruncate: EINVAL), so that close failed and HDF5
/// crashed at exit closing it again. Falls back to /dev/null where memfd is missing.
void divert_file_to_memory(hid_t file) noexcept;

/// Cuts the closed HDF5 file at `path` to its end-of-allocation address (what HDF5 wrote): the
/// zeros a reservation added beyond it go back to the file system. Tidying: errors are ignored.
void give_back_reserve(const std::string& path) noexcept;

/// "cannot reserve the N MiB <what> needs: <strerror(error)> (M MiB free on its file system)".
std::string reserve_failure(const std::string& path, std::uint64_t bytes, int error,
                            const std::string& what);

}  // namespace routescope::h5
