#include "analysis/hdf5_lock.hpp"

namespace routescope::analysis {

std::mutex& hdf5_mutex() {
    static std::mutex mutex;
    return mutex;
}

}  // namespace routescope::analysis
