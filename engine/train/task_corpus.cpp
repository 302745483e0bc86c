#include "engine/train/task_corpus.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"

namespace routescope::train {

std::vector<std::int32_t> completed_sequence(const std::vector<std::int32_t>& input,
                                             const std::vector<std::int32_t>& targets) {
    std::vector<std::int32_t> out = input;
    for (std::size_t t = 0; t < out.size() && t < targets.size(); ++t)
        if (targets[t] != data::kIgnoreLabel) out[t] = targets[t];
    return out;
}

std::pair<std::int32_t, std::int32_t> answer_span(const std::vector<std::int32_t>& targets) {
    std::int32_t first = -1, last = -1;
    for (std::size_t t = 0; t < targets.size(); ++t) {
        if (targets[t] == data::kIgnoreLabel) continue;
        if (first < 0) first = static_cast<std::int32_t>(t);
        last = static_cast<std::int32_t>(t);
    }
    return {first, last};
}

int task_row_extra(const std::string& objective) {
    return objective == "birdie" ? 1 : 0;
}

int task_sequence_length(const data::TaskData& task, const std::string& objective) {
    std::size_t longest = 0;
    for (const auto* split : {&task.train, &task.valid, &task.test})
        for (const auto& e : *split)
            longest = std::max(longest, e.input.size());
    return static_cast<int>(longest) + task_row_extra(objective);
}

PackedCorpus task_corpus(const data::TaskData& task, int seq_len) {
    if (task.n_classes > 0)
        throw ConfigError("data.task: " + task.name +
                          " is a classification task (a class label per example); the causal "
                          "objectives need a task whose answer is a sequence of tokens");
    if (task.train.empty())
        throw ConfigError("data.task_params.n_train: task " + task.name +
                          " has no training examples");
    PackedCorpus out;
    out.train = SequenceSet(seq_len, data::kPadId);
    out.valid = SequenceSet(seq_len, data::kPadId);
    for (const auto& e : task.train)
        out.train.add(completed_sequence(e.input, e.targets));
    for (const auto& e : task.valid)
        out.valid.add(completed_sequence(e.input, e.targets));
    out.train_documents = out.train.size();
    out.valid_documents = out.valid.size();
    if (task.valid.empty()) {
        out.valid = out.train;
        out.valid_documents = out.train_documents;
        out.valid_is_train = true;
    }
    return out;
}

std::string task_vocab_text(const std::vector<std::string>& pieces) {
    std::string text;
    for (const auto& p : pieces)
        text += p + "\n";
    return text;
}

}  // namespace routescope::train
