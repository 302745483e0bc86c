#include "engine/data/file_text.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"

namespace routescope::data {

std::string read_file_text(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw FormatError(path + ": a directory, not a " + what + " file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot open " + what);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw IoError(path + ": read error in " + what);
    return text.str();
}

}  // namespace routescope::data
