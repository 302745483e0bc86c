#pragma once
// SHA-256 through OpenSSL's libcrypto (EVP API): the one digest implementation in Routescope, in
// the engine so that the engine's own records (the checkpoint hash `dump` records, the weights hash
// `import` prints) and the analysis library's provenance hashes (analysis/file_fingerprint) share
// it.
#include <cstddef>
#include <memory>
#include <string>

namespace routescope {

/// Incremental SHA-256 (FIPS 180-4).
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(const void* data, std::size_t size);
    /// The digest as 64 lowercase hex digits; the object must not be updated afterwards.
    std::string hex_digest();

private:
    struct Context;
    std::unique_ptr<Context> context_;
};

/// SHA-256 of a whole file's content, streamed in 1 MiB chunks (never the whole file in memory):
/// exactly what `sha256sum` prints. Throws IoError when the file cannot be opened or read.
std::string sha256_file(const std::string& path);

}  // namespace routescope
