#include "engine/data/file_text.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"

namespace routescope::data {

void require_regular_file(const std::string& path, const std::string& what) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) return;
    throw FormatError(
        path + (std::filesystem::is_directory(status)
                    ? ": a directory, not a " + what + " file"
                    : ": not a regular file (a named pipe or a device), not a " + what + " file"));
}

std::string read_file_text(const std::string& path, const std::string& what) {
    require_regular_file(path, what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot open " + what);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw IoError(path + ": read error in " + what);
    return text.str();
}

}  // namespace routescope::data
