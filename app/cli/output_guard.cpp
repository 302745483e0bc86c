#include "app/cli/output_guard.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::cli {

namespace fs = std::filesystem;

void refuse_unnamable_output(const std::string& option, const std::string& path) {
    if (path.empty()) return;
    const fs::path p(path);
    const std::string name = p.filename().string();
    const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
    const long limit = ::pathconf(parent.c_str(), _PC_NAME_MAX);
    const std::size_t max = limit > 0 ? static_cast<std::size_t>(limit) : 255;
    if (name.size() > max)
        throw ConfigError(option + " " + path + ": the file name is " +
                          std::to_string(name.size()) + " bytes long, and the file system allows " +
                          std::to_string(max) + " per name: choose a shorter " + option);
}

void refuse_directory_output(const std::string& option, const std::string& path) {
    std::error_code ec;
    if (path.empty() || !fs::is_directory(path, ec)) return;  // follows links, as the writer does
    throw ConfigError(option + " " + path + ": is a directory; " + option +
                      " names a file: give its name (a file in the directory, say)");
}

void refuse_overwriting_inputs(const std::pair<std::string, std::string>& out,
                               const std::vector<std::pair<std::string, std::string>>& inputs) {
    const auto& [out_option, out_path] = out;
    refuse_unnamable_output(out_option, out_path);
    if (out_path.empty()) return;
    std::error_code ec;
    // An input that is a folder (a corpus directory) is read file by file: an output inside it
    // would replace one of its files (dump --data DIR --out DIR/b.txt overwrote b.txt) or be read
    // as part of it by the next run. Compared by real paths (links followed).
    const fs::path out_real = output_real_path(out_path);  // empty: the writer says what is wrong
    for (const auto& [option, path] : inputs) {
        std::error_code e;
        // Only a corpus folder is read whole; a model folder (import's SRC) is read by the names
        // of its files, and a checkpoint written beside them is what a user expects.
        if (!option.starts_with("--data") && !option.starts_with("--corpus")) continue;
        if (path.empty() || out_real.empty() || !fs::is_directory(path, e)) continue;
        const fs::path dir = fs::canonical(path, e);
        if (e) continue;
        const auto [d, o] = std::mismatch(dir.begin(), dir.end(), out_real.begin(), out_real.end());
        if (d == dir.end() && o != out_real.end())
            throw ConfigError(out_option + " " + out_path + " lies inside the folder " + option +
                              " reads (" + path + "), whose files are its input: choose another " +
                              out_option);
    }
    if (!fs::exists(out_path, ec)) return;
    refuse_directory_output(out_option, out_path);
    for (const auto& [option, path] : inputs) {
        if (path.empty()) continue;
        std::error_code e;
        if (fs::exists(path, e) && fs::equivalent(out_path, path, e) && !e)
            throw ConfigError(out_option + " " + out_path + " is the file " + option + " reads (" +
                              path + "): writing it would destroy it; choose another " +
                              out_option);
    }
}

}  // namespace routescope::cli
