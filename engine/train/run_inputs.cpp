#include "engine/train/run_inputs.hpp"

#include "engine/core/error.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::train {

data::TaskData run_task(const RunConfig& config) {
    if (!config.data.task || config.data.task->empty())
        throw ConfigError("data.task: the run has no built-in task");
    return data::generate_task(*config.data.task, task_params(config.data.task_params));
}

std::unique_ptr<data::Tokenizer> task_tokenizer(const data::TaskData& task) {
    return std::make_unique<data::WordPieceTokenizer>(task_vocab_text(task.vocab));
}

std::unique_ptr<data::Tokenizer> checkpoint_tokenizer(const Checkpoint& ck,
                                                      const std::string& checkpoint_path,
                                                      const std::string& tokenizer_file) {
    const bool file = !tokenizer_file.empty();
    const std::string kind = tokenizer_file.size() >= 6 && tokenizer_file.ends_with(".model")
                                 ? "sentencepiece"
                                 : "wordpiece";
    std::unique_ptr<data::Tokenizer> t =
        file ? data::load_tokenizer_file(kind, tokenizer_file)
             : data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
    if (t->vocab_size() + data::objective_extra_ids(ck.config.train.objective) !=
        ck.config.model.vocab_size)
        throw ConfigError("vocabulary mismatch: " + checkpoint_path + " has model.vocab_size = " +
                          std::to_string(ck.config.model.vocab_size) + " but the " + t->kind() +
                          " tokenizer" + (file ? " " + tokenizer_file : " it stores") + " has " +
                          std::to_string(t->vocab_size()) + " ids");
    return t;
}

TaskSplit task_split(const RunConfig& config, const data::Tokenizer& tokenizer,
                     const std::string& name, const std::string& split,
                     const std::string& checkpoint_path, std::uint64_t seed,
                     std::int64_t examples) {
    const int k = split_index(split, "--split");
    data::TaskParams p = task_params(config.data.task_params);
    if (seed > 0) p.seed = seed;
    std::int64_t* sizes[] = {&p.n_train, &p.n_valid, &p.n_test};
    for (int s = 0; s < 3; ++s)
        if (s != k) *sizes[s] = 0;
    if (examples > 0) *sizes[k] = examples;
    TaskSplit r{data::generate_task(name, p), {}};
    if (r.task.vocab != tokenizer.vocabulary())
        throw ConfigError("--task " + name + ": " + checkpoint_path +
                          " was not trained on this task (its vocabulary of " +
                          std::to_string(tokenizer.vocab_size()) + " ids is not the task's " +
                          std::to_string(r.task.vocab.size()) + ")");
    r.set = task_examples(r.task, k);
    return r;
}

LabelledSet classification_file(const RunConfig& config, const data::Tokenizer& tokenizer,
                                const std::string& path, int seq_len,
                                const std::string& checkpoint_path, bool require_classifier) {
    const bool classifier = config.data.labels && config.model.n_labels > 0;
    if (require_classifier && !classifier)
        throw ConfigError(checkpoint_path +
                          " is not a classifier (no data.labels): --data FILE needs a checkpoint "
                          "fine-tuned with train.objective = classify");
    data::ClassificationSet set = data::read_classification(path, /*require_labels=*/false);
    if (classifier) {
        data::assign_label_ids(set, *config.data.labels);
        set.labels = *config.data.labels;
    }
    return classification_examples(set, tokenizer, seq_len);
}

}  // namespace routescope::train
