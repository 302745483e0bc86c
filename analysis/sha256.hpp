#pragma once
// SHA-256 (FIPS 180-4), for the file hashes that results carry as provenance. Written here rather
// than linking a crypto library: the analysis library needs only this one digest.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace routescope::analysis {

class Sha256 {
public:
    Sha256();
    void update(const void* data, std::size_t size);
    /// The digest as 64 lowercase hex digits; the object must not be updated afterwards.
    std::string hex_digest();

private:
    void compress(const std::uint8_t* block);
    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

}  // namespace routescope::analysis
