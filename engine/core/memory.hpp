#pragma once
// This machine's physical memory, for refusing sizes that cannot fit before allocating them (an
// allocation beyond it is a bare std::bad_alloc naming nothing, or the kernel's OOM killer).
#include <unistd.h>

namespace routescope {

/// Bytes of physical memory (sysconf), or 0 when unknown.
inline double physical_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace routescope
