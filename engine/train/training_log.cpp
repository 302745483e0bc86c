#include "engine/train/training_log.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"
#include "engine/io/stale_temporaries.hpp"

namespace routescope::train {

TrainingLog::TrainingLog(const std::string& path, bool resume, std::int64_t keep_through_step)
    : path_(path), resume_(resume), keep_through_step_(keep_through_step) {
    // Checked while the run is set up (exit 2), before anything is written: a named pipe at
    // DIR/log.jsonl blocked the run for ever in open(), and a log that could not be read was
    // cut back to nothing (its history lost) as if it held no line.
    data::require_regular_file(path_, "training log");
    check_readable();
}

void TrainingLog::check_readable() const {
    std::error_code ec;
    if (!resume_ || !std::filesystem::exists(path_, ec)) return;
    std::ifstream in(path_);
    if (!in)
        throw IoError(path_ +
                      ": cannot read the training log to continue it: " + std::strerror(errno));
}

void TrainingLog::open() {
    const std::string& path = path_;
    const bool resume = resume_;
    const std::int64_t keep_through_step = keep_through_step_;
    std::vector<std::string> kept;
    data::require_regular_file(path, "training log");  // it may have been replaced since
    check_readable();
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
    // A resumed log is cut back through a temporary renamed over it: rewritten in place (opened
    // with O_TRUNC), a run killed during the rewrite lost its whole history (a 13 MB log of
    // 72,868 steps left at 0 bytes). Then the log is appended to.
    if (resume && std::filesystem::exists(path)) {
        remove_stale_temporaries(path);  // a rewrite killed before its rename
        const std::string temporary = temporary_path_for(path);
        {
            std::ofstream cut(temporary, std::ios::binary | std::ios::trunc);
            for (const auto& line : kept)
                cut << line << '\n';
            cut.flush();
            if (!cut) {
                const std::string why = std::strerror(errno);
                std::error_code ec;
                std::filesystem::remove(temporary, ec);
                throw RuntimeFailure(path + ": cannot write the training log: " + why);
            }
        }
        std::error_code ec;
        std::filesystem::rename(temporary, path, ec);
        if (ec) {
            const std::string why = ec.message();  // remove() below clears ec
            std::filesystem::remove(temporary, ec);
            throw RuntimeFailure(path + ": cannot write the training log: " + why);
        }
        out_.open(path, std::ios::binary | std::ios::app);
    } else {
        out_.open(path, std::ios::binary | std::ios::trunc);
    }
    if (!out_)
        throw RuntimeFailure(path + ": cannot write the training log: " + std::strerror(errno));
}

void TrainingLog::write(const nlohmann::ordered_json& record) {
    if (!out_.is_open()) open();
    out_ << record.dump() << '\n';
    out_.flush();
    if (!out_)
        throw RuntimeFailure(path_ + ": cannot write the training log: " + std::strerror(errno));
}

}  // namespace routescope::train
