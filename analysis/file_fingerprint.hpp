#pragma once
// The hash a result records for each input file (provenance, and the key of the result cache).
#include <cstdint>
#include <string>

namespace routescope::analysis {

struct FileFingerprint {
    std::string hash;  ///< 64 hex digits: the SHA-256 of the whole file, what `sha256sum` prints
    /// Always "sha256" (before issue 18, files over 256 MiB got a sampled "sha256-sampled" hash).
    std::string kind;
    std::uint64_t size = 0;
};

/// The SHA-256 of the file's whole content (sha256_file), remembered for the life of the process by
/// path, device, inode, size, mtime and ctime (in ns): a dump opened again (every GUI analysis and
/// every gate timeline opens its dump) is not read again, while a file rewritten or replaced is. A
/// file changed in the 2 s before it was hashed is not remembered (file times are coarse: a file
/// rewritten to the same size within one clock tick keeps them). Thread-safe; hashing runs outside
/// the lock. Throws IoError when the file cannot be read.
FileFingerprint fingerprint_file(const std::string& path);

}  // namespace routescope::analysis
