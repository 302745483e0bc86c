#pragma once
// The built-in tasks of TASKS.md ("Built-in tasks"): generated from a seed, no download. CLI
// names: induction, phone-book, copying, selective-copying, gap-matching, attractors.
//
// Every task has its own small vocabulary, starting with the Routescope specials ([PAD]=0 [UNK]=1
// [CLS]=2 [SEP]=3 [MASK]=4), as strings so a dump's /vocab can be written. An example is
// [CLS] … [SEP] and carries its difficulty attributes (name → value). Targets are either a class
// label (gap-matching) or token ids at target positions that the input shows as [MASK]: the
// encoder predicts them in place through the MLM head (induction, attractors: accuracy; phone-book,
// copying, selective-copying: exact match of all target positions).
//
// Example i of split s (0 train, 1 validation, 2 test) is a pure function of (seed, s, i): it is
// drawn from RandomStream(seed ⊕ kTaskSalt, s, i), so sizes can change without changing the
// examples, and splits never share a draw.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace routescope::data {

enum class TaskMetric { Accuracy, ExactMatch };

struct TaskExample {
    std::vector<std::int32_t> input;
    /// Same size as input: the target id at target positions (which input holds as [MASK]),
    /// −100 elsewhere. Empty for class-label tasks.
    std::vector<std::int32_t> targets;
    std::int32_t label = -1;  ///< class label (gap-matching), else −1
    std::map<std::string, double> attributes;
};

/// Sizes and lengths. A 0 means the task's default (in parentheses).
struct TaskParams {
    std::uint64_t seed = 1;
    std::int64_t n_train = 1000;
    std::int64_t n_valid = 200;
    std::int64_t n_test = 200;
    int min_len = 0;    ///< content length: induction (64), copying (8), selective copying (32)
    int max_len = 0;    ///< … induction (64), copying (32), selective copying (64)
    int n_symbols = 0;  ///< v: induction, copying, selective copying (16); gap-matching words (32)
    int min_entries = 0;     ///< phone-book entries (4) / gap-matching sentences (4)
    int max_entries = 0;     ///< … (16) / (8)
    int n_queries = 0;       ///< selective copying: spans to recall (2)
    int span_len = 0;        ///< selective copying: tokens per span (3)
    int question_len = 0;    ///< gap-matching: q content tokens (3)
    int sentence_len = 0;    ///< gap-matching: words per sentence (6)
    int max_attractors = 0;  ///< attractors: k drawn from 0..max (4)
};

struct TaskData {
    std::string name;
    TaskMetric metric = TaskMetric::Accuracy;
    int n_classes = 0;  ///< > 0 for class-label tasks
    std::vector<std::string> vocab;
    std::vector<TaskExample> train, valid, test;
};

/// The CLI names, in TASKS.md's order.
const std::vector<std::string>& task_names();

/// Generates a task by CLI name. ConfigError for an unknown name ("data.task: …") or a
/// parameter the task cannot honour (naming it).
TaskData generate_task(const std::string& name, const TaskParams& params);

TaskData generate_induction(const TaskParams& params);
TaskData generate_phone_book(const TaskParams& params);
TaskData generate_copying(const TaskParams& params);
TaskData generate_selective_copying(const TaskParams& params);
TaskData generate_gap_matching(const TaskParams& params);
TaskData generate_attractors(const TaskParams& params);

}  // namespace routescope::data
