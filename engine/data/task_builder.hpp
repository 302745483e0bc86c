#pragma once
// What every task generator shares: the vocabulary under construction and the split driver.
#include <functional>
#include <string>

#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/data/special_tokens.hpp"
#include "engine/data/task.hpp"

namespace routescope::data {

/// A task vocabulary: the five specials, then pieces in the order added.
class TaskVocab {
public:
    TaskVocab() : pieces_(kSpecialPieces.begin(), kSpecialPieces.end()) {}
    std::int32_t add(std::string piece) {
        pieces_.push_back(std::move(piece));
        return static_cast<std::int32_t>(pieces_.size()) - 1;
    }
    std::vector<std::string> pieces() const { return pieces_; }

private:
    std::vector<std::string> pieces_;
};

/// The most examples a split may hold, and the longest example a task generates (tokens).
inline constexpr std::int64_t kMaxTaskSplit = 100'000'000;
inline constexpr int kMaxTaskLength = 1 << 20;
inline constexpr const char* kSplitNames[] = {"n_train", "n_valid", "n_test"};

/// Fills the three splits with make(rng), one RandomStream per example (task.hpp).
inline void generate_splits(TaskData& data, const TaskParams& p,
                            const std::function<TaskExample(RandomStream&)>& make) {
    std::vector<TaskExample>* splits[] = {&data.train, &data.valid, &data.test};
    const std::int64_t sizes[] = {p.n_train, p.n_valid, p.n_test};
    for (std::uint32_t s = 0; s < 3; ++s) {
        if (sizes[s] < 0) throw ConfigError("task " + data.name + ": negative split size");
        // Generated in memory: 2^40 examples would be an out-of-memory error naming nothing.
        if (sizes[s] > kMaxTaskSplit)
            throw ConfigError("task " + data.name + ": data.task_params." + kSplitNames[s] + " = " +
                              std::to_string(sizes[s]) + " examples, more than " +
                              std::to_string(kMaxTaskSplit) + " (the splits are held in memory)");
        // And within this machine's memory, judged from the first example's own footprint
        // (its record, its token vectors and attributes): n_train = 10^8 was a bad_alloc naming
        // nothing.
        for (std::int64_t i = 0; i < sizes[s]; ++i) {
            RandomStream rng(p.seed ^ kTaskSalt, s, static_cast<std::uint32_t>(i));
            TaskExample example = make(rng);
            if (i == 0) {
                const double each = sizeof(TaskExample) + 32.0 +
                                    4.0 * static_cast<double>(example.input.capacity() +
                                                              example.targets.capacity()) +
                                    96.0 * static_cast<double>(example.attributes.size());
                if (const MemoryLimit limit = memory_limit();
                    limit.bytes > 0 && static_cast<double>(sizes[s]) * each > limit.bytes)
                    throw ConfigError(
                        "data.task_params." + std::string(kSplitNames[s]) + ": task " + data.name +
                        "'s " + std::to_string(sizes[s]) + " examples need about " +
                        std::to_string(static_cast<long long>(static_cast<double>(sizes[s]) * each /
                                                              (1 << 20))) +
                        " MiB, more than " + limit.text() + " (the splits are held in memory)");
                splits[s]->reserve(static_cast<std::size_t>(sizes[s]));
            }
            splits[s]->push_back(std::move(example));
        }
    }
}

inline TaskData make_task_data(std::string name, TaskMetric metric, int n_classes = 0) {
    TaskData data;
    data.name = std::move(name);
    data.metric = metric;
    data.n_classes = n_classes;
    return data;
}

/// "s0", "s1", … (built by appending: GCC 12 warns falsely on "s" + std::to_string(i)).
inline std::string numbered_piece(const char* prefix, int i) {
    std::string piece(prefix);
    piece += std::to_string(i);
    return piece;
}

inline int or_default(int value, int fallback) {
    return value > 0 ? value : fallback;
}

/// ConfigError naming the task and the parameter (as the configuration key
/// data.task_params.PARAM, which `--set` and `eval --task-set` take) unless lo ≤ value ≤ hi.
inline void require_range(const std::string& task, const char* param, int value, int lo, int hi) {
    if (value < lo || value > hi) {
        throw ConfigError("task " + task + ": data.task_params." + param + " = " +
                          std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
    }
}

}  // namespace routescope::data
