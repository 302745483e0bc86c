#pragma once
// Fine-tuning (issue 4; TASKS.md "Text data", "Built-in tasks"; docs/config.md):
//
//   train.objective = "classify", data.train / data.valid a classification file (TSV with a
//   header or JSON Lines, sentences or pairs): the label set is read from the training file
//   (model.n_labels and data.labels set from it, so eval maps ids back to names); the
//   classification head on the pooled sequence (MODELS.md "Heads").
//   data.task = <name>: a built-in task, generated from data.task_params; the task's vocabulary
//   is the tokenizer (a WordPiece vocab.txt of the task's pieces; docs/decisions.md); class-label
//   tasks (gap-matching) through the classification head, target tasks through the MLM head at
//   their [MASK] positions.
//
// Start: train.init_from = a pretrained checkpoint (its model and tokenizer; parameters copied by
// name, the heads it lacks initialised fresh) or from scratch (MODELS.md init). Length: one
// epoch is ceil(n_train / batch_size) steps; train.epochs > 0 sets train.steps to whole epochs.
// Validation (accuracy, or exact match for sequence tasks; macro-F1 for classes) after every
// epoch, every train.eval_every steps and at the end, logged to DIR/log.jsonl; the best by that
// metric is kept as DIR/best.ckpt.h5, the last as DIR/model.ckpt.h5 (atomic writes).
// train.freeze_ssm = true: the *.ssm_forward.* / *.ssm_backward.* parameters get no gradient and
// no update (bit-identical after training; the BiGS "freeze" scripts). When StopSignal fires, the
// current step finishes and DIR/model.ckpt.h5 is written before run() returns.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/config.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/models/model.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/training_log.hpp"

namespace routescope::train {

inline constexpr const char* kBestCheckpointName = "best.ckpt.h5";

struct FinetuneOptions {
    std::string out_dir;
    int threads = 0;  ///< > 0 overrides train.threads
    std::function<void(const nlohmann::ordered_json&)> on_record;
};

struct FinetuneResult {
    std::int64_t step = 0;
    std::string checkpoint;       ///< DIR/model.ckpt.h5
    std::string best_checkpoint;  ///< DIR/best.ckpt.h5
    double best_metric = -1;
    std::int64_t best_step = -1;
    bool interrupted = false;  ///< StopSignal fired: model.ckpt.h5 saved after the current step
};

/// True for the configurations the Finetuner runs: train.objective = classify, or data.task set
/// with an objective that is not causal (clm, prefix_lm, birdie train on a task in the Trainer).
bool is_finetuning(const RunConfig& config);

class Finetuner {
public:
    /// Setup errors: ConfigError (unknown task, missing data.train, a checkpoint whose vocabulary
    /// is not the task's), IoError / FormatError naming the file and line of bad data.
    Finetuner(RunConfig config, FinetuneOptions options);
    ~Finetuner();

    FinetuneResult run();

    const RunConfig& config() const { return config_; }
    models::Model& model() { return *model_; }
    const LabelledSet& train_set() const { return train_; }
    const LabelledSet& valid_set() const { return valid_; }

private:
    void prepare_task();
    void prepare_classification();
    void build_model();
    void evaluate(FinetuneResult& result);
    void save(const std::string& path, bool with_state);
    void log_record(const nlohmann::ordered_json& record);

    RunConfig config_;
    FinetuneOptions options_;
    std::unique_ptr<data::Tokenizer> tokenizer_;
    LabelledSet train_, valid_;
    bool valid_is_train_ = false;
    std::unique_ptr<models::Model> model_;
    std::unique_ptr<AdamW> optimizer_;
    std::unique_ptr<TrainingLog> log_;
    std::vector<std::string> fresh_;  ///< parameters not found in train.init_from
    std::vector<ParamEntry> frozen_;
    std::int64_t step_ = 0;
    std::int64_t steps_per_epoch_ = 1;
};

}  // namespace routescope::train
