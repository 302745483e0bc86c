#pragma once
// The HDF5 library in Debian is built without thread safety, so every HDF5 call in the process goes
// through this one mutex (the GUI runs analyses in worker threads while others read files).
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
