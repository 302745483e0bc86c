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
    /// Opens DIR/log.jsonl: truncates it for a fresh run; for a resumed run keeps the lines up to
    /// `keep_through_step` (inclusive). IoError when it cannot be written.
    TrainingLog(const std::string& path, bool resume, std::int64_t keep_through_step);

    /// Appends one record and flushes.
    void write(const nlohmann::ordered_json& record);
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::ofstream out_;
};

}  // namespace routescope::train
