#pragma once
// HDF5 1.10 itself crashes on some corrupt metadata (vlen strings and the global heap, scatter/
// gather reads; issue 17, class 2). Routescope cannot fix libhdf5, so it contains it: the check
// runs in a forked child, and a child ended by a signal becomes a verdict naming what was being
// read ("corrupt HDF5 metadata while reading /model attr name: the HDF5 library crashed").
#include <string>

#include "engine/io/validation.hpp"

namespace routescope {

/// validate_file in a child process (POSIX fork). The report is the child's; when the child dies
/// by a signal the report is invalid (exit code 1) with one violation naming the object it was
/// reading. Falls back to validating in this process when fork fails.
ValidationReport validate_file_contained(const std::string& path,
                                         const ValidateOptions& options = {});

namespace h5 {
/// The object being read, for the verdict above: set by the attribute readers and the format
/// checker; a no-op cost (a bounded copy into a fixed buffer) outside a contained validation.
void breadcrumb(const std::string& what);
}  // namespace h5

}  // namespace routescope
