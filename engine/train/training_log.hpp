#pragma once
// DIR/log.jsonl of a run: one JSON object per line, written and flushed as it happens so a crash
// loses nothing already logged and the GUI can follow the file.
//
//   {"type":"step","step":12,"loss":4.81,"lr":0.0005,"grad_norm":1.9,"tokens_per_s":5321.0,
//    "elapsed":3.2,"eta":41.0}
//   {"type":"eval","step":100,"loss":3.9,"accuracy":0.31,"targets":1523}
//   {"type":"checkpoint","step":100,"path":"DIR/model.ckpt.h5"}
//
// `step` counts optimizer updates done; a step line's loss is the loss of that update's batch (the
// mean over its micro-batches). Losses are written with 17 significant digits (a double
// round-trips), so two runs can be compared bit for bit from their logs. On resume the log is cut
// back to the lines of steps ≤ the checkpoint's step (what a killed run logged after its last
// checkpoint is redone) and appended to.
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace routescope::train {

class TrainingLog {
public:
    /// DIR/log.jsonl, made at the first write(): empty for a fresh run; for a resumed run the
    /// lines up to `keep_through_step` (inclusive) kept. Either is written under a temporary
    /// name and renamed over DIR/log.jsonl, so a symbolic link there is replaced by the run's log
    /// and the file it named is never written (a link to the run's own corpus was truncated).
    /// Nothing is touched before then, so a run whose setup fails after the log was made (another
    /// rank's input, a lock) leaves the directory as it was (an empty log.jsonl was left, or the
    /// replaced run's log emptied). FormatError when `path` exists and is not a regular file (a
    /// named pipe would block); IoError when a resumed run's log exists but cannot be read.
    TrainingLog(const std::string& path, bool resume, std::int64_t keep_through_step);

    /// Appends one record and flushes. RuntimeFailure when the log cannot be written.
    void write(const nlohmann::ordered_json& record);
    const std::string& path() const { return path_; }

private:
    /// Makes the log (kept lines, then `first`) under a temporary name and renames it into place.
    void open(const std::string& first);
    void check_readable() const;  ///< a resumed run's existing log opens for reading
    std::string path_;
    bool resume_ = false;
    std::int64_t keep_through_step_ = 0;
    std::ofstream out_;
};

}  // namespace routescope::train
