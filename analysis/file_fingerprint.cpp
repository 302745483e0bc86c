#include "analysis/file_fingerprint.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <vector>

#include "analysis/sha256.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

FileFingerprint fingerprint_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw IoError(path + ": cannot stat the file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot open the file for hashing");
    FileFingerprint fp;
    fp.size = static_cast<std::uint64_t>(st.st_size);
    Sha256 sha;
    std::vector<char> buffer(1 << 20);
    auto hash_range = [&](std::uint64_t offset, std::uint64_t count) {
        in.seekg(static_cast<std::streamoff>(offset));
        while (count > 0) {
            const std::uint64_t take = std::min<std::uint64_t>(count, buffer.size());
            in.read(buffer.data(), static_cast<std::streamsize>(take));
            if (in.gcount() != static_cast<std::streamsize>(take))
                throw IoError(path + ": short read while hashing");
            sha.update(buffer.data(), take);
            count -= take;
        }
    };
    if (fp.size <= kFullHashLimit) {
        fp.kind = "sha256";
        hash_range(0, fp.size);
    } else {
        fp.kind = "sha256-sampled";
        const std::uint64_t mtime_ns =
            static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull + st.st_mtim.tv_nsec;
        sha.update(&fp.size, sizeof fp.size);
        sha.update(&mtime_ns, sizeof mtime_ns);
        const std::uint64_t mib = 1ull << 20;
        hash_range(0, mib);
        hash_range(fp.size - mib, mib);
    }
    fp.hash = sha.hex_digest();
    return fp;
}

}  // namespace routescope::analysis
