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

void TrainingLog::open(const std::string& first) {
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
            // The "start" record of an earlier resume from this same step that saved nothing
            // (it failed, or was killed, before its next checkpoint) is superseded by this
            // resume's: kept, the log held two starts at one step.
            // (Compared as JSON: a hand-edited "resumed": "yes" is not true, and no type_error.)
            if (j.contains("type") && j["type"] == "start" &&
                j["step"].get<std::int64_t>() == keep_through_step && j.contains("resumed") &&
                j["resumed"] == true)
                continue;
            if (j["step"].get<std::int64_t>() <= keep_through_step) kept.push_back(line);
        }
    }
    // The log is written under a temporary name and renamed over DIR/log.jsonl, a fresh run's
    // (empty) as a resumed run's (cut back), and then appended to through the stream opened on
    // the temporary. Rewritten in place (opened with O_TRUNC), a run killed during a resume's
    // rewrite lost its whole history (a 13 MB log of 72,868 steps left at 0 bytes), and a fresh
    // `--overwrite` run whose log.jsonl was a symbolic link to its own data.train truncated the
    // corpus and wrote the log into it. The log is the run directory's own file: a link there is
    // replaced, as --overwrite removes the replaced run's checkpoints (links included) rather
    // than writing through them, and the file it named is left as it was.
    remove_stale_temporaries(path);  // a rewrite killed before its rename
    const std::string temporary = temporary_path_for(path);
    const auto fail = [&](const std::string& why) {
        out_.close();
        std::error_code ignored;
        std::filesystem::remove(temporary, ignored);
        throw RuntimeFailure(path + ": cannot write the training log: " + why);
    };
    out_.open(temporary, std::ios::binary | std::ios::trunc);
    if (!out_) fail(std::strerror(errno));
    for (const auto& line : kept)
        out_ << line << '\n';
    // The first record goes into the temporary too: renamed only once it is written, a run
    // whose first write fails (a full disk) leaves DIR/log.jsonl as it was, not empty.
    out_ << first << '\n';
    out_.flush();
    if (!out_) fail(std::strerror(errno));
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) fail(ec.message());
}

void TrainingLog::write(const nlohmann::ordered_json& record) {
    if (!out_.is_open()) return open(record.dump());
    out_ << record.dump() << '\n';
    out_.flush();
    if (!out_)
        throw RuntimeFailure(path_ + ": cannot write the training log: " + std::strerror(errno));
}

}  // namespace routescope::train
