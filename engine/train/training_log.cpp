#include "engine/train/training_log.hpp"

#include <filesystem>
#include <sstream>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"

namespace routescope::train {

TrainingLog::TrainingLog(const std::string& path, bool resume, std::int64_t keep_through_step)
    : path_(path) {
    std::vector<std::string> kept;
    if (resume && std::filesystem::exists(path)) {
        std::ifstream in(path);
        std::string line;
        while (std::getline(in, line)) {
            const auto j = parse_json_or_discarded(line);  // depth-checked (json_text.hpp)
            // A torn last line (a crash mid-write) or a step past the checkpoint is dropped.
            if (j.is_discarded() || !j.contains("step") || !j["step"].is_number_integer()) continue;
            if (j["step"].get<std::int64_t>() <= keep_through_step) kept.push_back(line);
        }
    }
    out_.open(path, std::ios::binary | std::ios::trunc);
    if (!out_) throw IoError(path + ": cannot write the training log");
    for (const auto& line : kept)
        out_ << line << '\n';
    out_.flush();
}

void TrainingLog::write(const nlohmann::ordered_json& record) {
    out_ << record.dump() << '\n';
    out_.flush();
    if (!out_) throw IoError(path_ + ": cannot write the training log");
}

}  // namespace routescope::train
