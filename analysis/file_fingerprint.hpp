#pragma once
// The hash a result records for each input file (provenance, and the key of the result cache).
#include <string>

namespace routescope::analysis {

struct FileFingerprint {
    std::string hash;  ///< 64 hex digits
    /// "sha256" (the whole file) or "sha256-sampled" (see fingerprint_file).
    std::string kind;
    std::uint64_t size = 0;
};

/// Files up to kFullHashLimit bytes get the SHA-256 of their content (what `sha256sum` prints).
/// Larger ones get the SHA-256 of (size, mtime in ns, first MiB, last MiB): hashing a 4 GB dump
/// would take longer than the analysis itself (about 20 s at 200 MB/s), and the sampled hash still
/// changes when a dump is rewritten. Throws IoError when the file cannot be read.
FileFingerprint fingerprint_file(const std::string& path);

inline constexpr std::uint64_t kFullHashLimit = 256ull << 20;

}  // namespace routescope::analysis
