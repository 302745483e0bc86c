#include "analysis/blas_threads.hpp"

#include <dlfcn.h>

#include <mutex>

namespace routescope::analysis {

void use_one_blas_thread() {
    static std::once_flag once;
    std::call_once(once, [] {
        using SetThreads = void (*)(int);
        if (auto set =
                reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
            set(1);
    });
}

}  // namespace routescope::analysis
