#pragma once
// One mutex around the analyses' HDF5 reads (the GUI runs analyses in worker threads while others
// read files). Debian's libhdf5 1.10 is built thread-safe (H5_HAVE_THREADSAFE: one global lock
// inside the library, error stacks per thread), so single calls from several threads are safe;
// the mutex keeps a reader's sequence of calls (open, select, read) together and would keep a
// build without thread safety correct. A dump's writer thread (engine/io/write_queue.hpp) relies
// on the library's own lock.
#include <mutex>

namespace routescope::analysis {

std::mutex& hdf5_mutex();

/// Holds the HDF5 mutex for a scope.
class Hdf5Lock {
public:
    Hdf5Lock() : lock_(hdf5_mutex()) {}

private:
    std::lock_guard<std::mutex> lock_;
};

}  // namespace routescope::analysis
