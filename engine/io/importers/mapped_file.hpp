#pragma once
// A read-only memory map of a whole file (POSIX mmap), for the weight-file readers: large files are
// paged in as tensors are converted instead of being copied into memory first.
#include <cstddef>
#include <string>

namespace routescope::importers {

class MappedFile {
public:
    /// IoError naming the file when it cannot be opened or mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const unsigned char* data() const { return data_; }
    std::size_t size() const { return size_; }
    /// Drops the resident pages wholly inside [p, p + n) (madvise MADV_DONTNEED): the mapping
    /// stays valid and reads them from the file again when touched.
    void release(const unsigned char* p, std::size_t n) const;

private:
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace routescope::importers
