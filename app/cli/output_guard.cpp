#include "app/cli/output_guard.hpp"

#include <filesystem>

#include "engine/core/error.hpp"

namespace routescope::cli {

namespace fs = std::filesystem;

void refuse_overwriting_inputs(const std::pair<std::string, std::string>& out,
                               const std::vector<std::pair<std::string, std::string>>& inputs) {
    const auto& [out_option, out_path] = out;
    std::error_code ec;
    if (out_path.empty() || !fs::exists(out_path, ec)) return;
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
