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

private:
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace routescope::importers
