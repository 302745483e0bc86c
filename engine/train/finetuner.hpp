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
// metric is kept as DIR/best.ckpt.h5, the last as DIR/model.ckpt.h5 (atomic writes);
// best.ckpt.h5 carries its step and score as root attributes (io/checkpoint.hpp, BestMark).
// train.freeze_ssm = true: the *.ssm_forward.* / *.ssm_backward.* parameters get no gradient and
// no update (bit-identical after training; the BiGS "freeze" scripts). When StopSignal fires, the
// current step finishes and DIR/model.ckpt.h5 is written before run() returns.
//
// The step loop (order, train.grad_accum, freezing, logging, checkpoints, divergence, StopSignal,
// `until`, resuming) is TrainingLoop's (training_loop.hpp), shared with pretraining; this class is
// the fine-tuning Objective. An epoch is ceil(n_train / (batch_size · grad_accum)) steps; the
// order is the run's Philox permutation per epoch. resume() continues a run from its
// DIR/model.ckpt.h5 bit for bit; the best metric so far is the better of the "eval" records of
// DIR/log.jsonl up to the checkpoint's step and the score DIR/best.ckpt.h5 carries, which may be
// of a later step: a run that went on and then failed to save model.ckpt.h5 (a full disk,
// kill -9) kept its better best.ckpt.h5 (docs/decisions.md). With DIR/best.ckpt.h5 present, a
// log that is missing or unreadable is refused (its metric would be unknown).
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
#include "engine/train/host_batch.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/training_log.hpp"
#include "engine/train/training_loop.hpp"

namespace routescope::train {

inline constexpr const char* kBestCheckpointName = "best.ckpt.h5";

using FinetuneOptions = RunOptions;

struct FinetuneResult {
    std::int64_t step = 0;
    std::string checkpoint;       ///< DIR/model.ckpt.h5
    std::string best_checkpoint;  ///< DIR/best.ckpt.h5
    double best_metric = -1;
    std::int64_t best_step = -1;
    bool interrupted = false;  ///< StopSignal fired: model.ckpt.h5 saved after the current step
    TrainResult::Status status = TrainResult::Status::finished;
};

/// True for the configurations the Finetuner runs: train.objective = classify, or data.task set
/// with an objective that is not causal (clm, prefix_lm, birdie train on a task in the Trainer).
bool is_finetuning(const RunConfig& config);

class Finetuner : private Objective {
public:
    /// Setup errors: ConfigError (unknown task, missing data.train, a checkpoint whose vocabulary
    /// is not the task's), IoError / FormatError naming the file and line of bad data.
    Finetuner(RunConfig config, FinetuneOptions options);
    /// Continues the fine-tuning run saved in `checkpoint_path` (its configuration plus
    /// `overrides`, e.g. train.epochs=5); the data are read again and must give the stored labels
    /// and vocabulary (ConfigError otherwise). train.init_from is not read again.
    static std::unique_ptr<Finetuner> resume(const std::string& checkpoint_path,
                                             const std::vector<std::string>& overrides,
                                             FinetuneOptions options);
    ~Finetuner() override;

    FinetuneResult run();

    const RunConfig& config() const { return config_; }
    models::Model& model() { return *model_; }
    const LabelledSet& train_set() const { return train_; }
    const LabelledSet& valid_set() const { return valid_; }
    std::int64_t step() const { return loop_->step(); }

private:
    struct ResumeTag {};
    Finetuner(ResumeTag, RunConfig config, FinetuneOptions options);
    void prepare_output();
    void prepare_task();
    void prepare_classification();
    /// Refuses a training file the tokenizer reads as [UNK] alone; measures the [UNK] share.
    void check_coverage();
    /// The model from config_ (merged with train.init_from's when `pretrained`).
    void build_model(bool pretrained);
    std::string best_checkpoint_path() const;
    /// DIR/best.ckpt.h5 (rank 0): the model with best_step_ and best_metric_ as its best_* root
    /// attributes (io/checkpoint.hpp), written atomically. IoError naming it when it cannot be.
    void write_best_checkpoint(TrainingLoop& loop, const std::string& metric);

    // Objective (training_loop.hpp)
    std::int64_t training_examples() const override {
        return static_cast<std::int64_t>(train_.examples.size());
    }
    MicroBatch micro_batch(std::span<const std::int64_t> examples, std::int64_t step,
                           std::int64_t row_base) override;
    void evaluate(TrainingLoop& loop) override;
    bool extra_evaluation_due(std::int64_t step) const override {
        return step % steps_per_epoch_ == 0;  // every epoch
    }
    void describe(nlohmann::ordered_json& start) const override;

    RunConfig config_;
    FinetuneOptions options_;
    std::unique_ptr<data::Tokenizer> tokenizer_;
    LabelledSet train_, valid_;
    bool valid_is_train_ = false;
    std::int64_t no_consensus_ = 0;  ///< gold_label "-" rows left out (the start record says so)
    double unk_fraction_ = 0;        ///< [UNK]s among the training file's tokens (start record)
    std::unique_ptr<models::Model> model_;
    std::unique_ptr<TrainingLoop> loop_;
    std::vector<std::string> fresh_;  ///< parameters not found in train.init_from
    std::int64_t steps_per_epoch_ = 1;
    double best_metric_ = -1;
    std::int64_t best_step_ = -1;
    std::unique_ptr<HostBatch> batch_;  ///< the micro-batch's host arrays
};

}  // namespace routescope::train
