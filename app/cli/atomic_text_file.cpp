// write_text_atomically (atomic_text_file.hpp).
#include "app/cli/atomic_text_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::cli {

namespace fs = std::filesystem;

void write_text_atomically(const std::string& path, const std::string& text) {
    const fs::path final_path = fs::absolute(path);
    std::string tmp_name = ".";
    tmp_name += final_path.filename().string();
    tmp_name += ".tmp-";
    tmp_name += std::to_string(::getpid());
    const fs::path tmp = final_path.parent_path() / tmp_name;
    std::error_code ec;
    const TemporaryFileGuard guard(tmp.string());  // unlinked if a signal ends the process
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) throw IoError(path + ": cannot write (is its directory writable?)");
        f << text;
        f.flush();
        if (!f) {
            f.close();
            fs::remove(tmp, ec);
            throw IoError(path + ": write error (disk full?)");
        }
    }
    fs::rename(tmp, final_path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw IoError(path + ": cannot rename the finished file into place");
    }
}

}  // namespace routescope::cli
