#pragma once
// Pretraining end to end (issue 3; TASKS.md "Objectives"; docs/config.md). train.objective picks
// the targets: mlm (below), clm / prefix_lm (objective_rows.hpp: next-token targets, the prefix
// split from (seed, step, example)), birdie (the arms of birdie_arms.hpp, each row's arm drawn
// from the mixture of mixture_controller.hpp, which is updated every train.birdie.update_every
// steps from per-arm losses on fixed validation batches and logged as "mixture" records). The
// causal objectives need a model that cannot read its targets (causal_capability.hpp).
//
//   corpus ──► tokenizer (bytes | SentencePiece loaded or trained on the corpus | WordPiece)
//          ──► packed sequences, train / held-out split (packed_sequences.hpp)
//          ──► MLM masks, 15% of non-special tokens, 80/10/10, from (seed, step, example)
//          ──► forward / backward × train.grad_accum ──► global-norm clip ──► AdamW, per-group
//              rates (train.ssm_lr) on the warmup + decay schedule
//          ──► every eval_every steps: loss and accuracy on the held-out split
//          ──► DIR/log.jsonl (training_log.hpp); DIR/model.ckpt.h5 every checkpoint_every steps
//              and at the end, atomic, with the tokenizer and the state to resume.
//
// data.task with a causal objective (clm, prefix_lm, birdie): the task's train split, completed
// (task_corpus.hpp), is the corpus, one example per sequence; the task's vocabulary the tokenizer;
// data.seq_len the longest example (+ 1 for birdie); evaluations add the answers' exact match on
// the validation split (answer_scoring.hpp). data.task with mlm or classify is fine-tuning
// (finetuner.hpp).
//
// The step loop — order, gradient accumulation, clipping, freezing, logging, evaluation times,
// checkpoints, divergence, StopSignal, `until` and resuming — is TrainingLoop's
// (training_loop.hpp), shared with fine-tuning; this class is the pretraining Objective. Resuming
// also restores Birdie's mixture controller; masks and causal rows are pure functions of
// (seed, step, example), so a resumed run repeats an uninterrupted one bit for bit.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/data/mlm_masking.hpp"
#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/data/task.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/models/model.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/birdie_arms.hpp"
#include "engine/train/host_batch.hpp"
#include "engine/train/labelled_set.hpp"
#include "engine/train/mixture_controller.hpp"
#include "engine/train/packed_sequences.hpp"
#include "engine/train/training_log.hpp"
#include "engine/train/training_loop.hpp"

namespace routescope::train {

using TrainerOptions = RunOptions;

/// Pretraining: the data, the model and the pretraining objective (masks or causal rows,
/// evaluation, Birdie's mixture) of one run, trained by the shared TrainingLoop
/// (training_loop.hpp).
class Trainer : private Objective {
public:
    /// A fresh run of `config`. Setup errors: ConfigError (bad or missing key, data.seq_len >
    /// model.max_len), IoError / FormatError for the corpus or tokenizer file (naming it).
    Trainer(RunConfig config, TrainerOptions options);
    /// Continues the run saved in `checkpoint_path` with its configuration plus `overrides`
    /// (`--set key=value`, e.g. a larger train.steps). ConfigError when the checkpoint's
    /// vocabulary and its tokenizer disagree.
    static std::unique_ptr<Trainer> resume(const std::string& checkpoint_path,
                                           const std::vector<std::string>& overrides,
                                           TrainerOptions options);
    ~Trainer() override;

    TrainResult run();

    const RunConfig& config() const { return config_; }
    const data::Tokenizer& tokenizer() const { return *tokenizer_; }
    models::Model& model() { return *model_; }
    const PackedCorpus& corpus() const { return corpus_; }
    std::int64_t step() const { return loop_->step(); }
    std::string checkpoint_path() const;

private:
    /// Loads train.init_from's weights into the freshly initialised model (checked first).
    void start_from(const std::string& path);
    struct ResumeTag {};
    Trainer(ResumeTag, RunConfig config, TrainerOptions options);
    void prepare_data();
    void build_model();

    // Objective (training_loop.hpp)
    std::int64_t training_examples() const override { return corpus_.train.size(); }
    MicroBatch micro_batch(std::span<const std::int64_t> examples, std::int64_t step,
                           std::int64_t row_base) override;
    void evaluate(TrainingLoop& loop) override;
    void before_first_step(TrainingLoop& loop) override;
    void after_step(TrainingLoop& loop) override;
    void save_state(TrainState& state) const override;
    void describe(nlohmann::ordered_json& start) const override;

    /// Turns ids_ and the batch's lengths of update `step` into its inputs, labels (and reset
    /// mask, lengths); row b
    /// is the step's row `row_base + b` (TrainingLoop::row_base) for its per-row draws.
    void make_targets(std::int64_t step, std::int64_t row_base);
    /// The row of objective clm / prefix_lm / birdie from held-out sequence i (evaluation).
    std::int32_t eval_row(std::int64_t i, RowView row, int arm) const;
    /// Birdie: each arm's loss on its fixed validation batch; the controller update; the log.
    void update_mixture();

    RunConfig config_;
    TrainerOptions options_;
    std::unique_ptr<data::Tokenizer> tokenizer_;
    PackedCorpus corpus_;
    std::unique_ptr<models::Model> model_;
    std::unique_ptr<data::MlmMasker> masker_;
    std::unique_ptr<TrainingLoop> loop_;
    std::vector<std::int32_t> ids_;     ///< the packed corpus rows of a micro-batch
    std::unique_ptr<HostBatch> batch_;  ///< what the objective makes of them
    std::int32_t pad_ = 0;
    data::BirdieVocabulary birdie_vocab_;
    std::vector<BirdieArm> arms_;
    std::unique_ptr<MixtureController> controller_;
    bool controller_started_ = false;
    std::unique_ptr<data::TaskData> task_;  ///< data.task, until prepare_data has used it
    LabelledSet task_valid_;                ///< data.task: the validation examples, as generated
};

/// Checks the parts of a configuration that `train` relies on before any work: objective mlm, clm,
/// prefix_lm or birdie (the last three on a model that cannot see its targets), data.train set
/// (or data.task with a causal objective), 2 ≤ data.seq_len ≤ model.max_len (birdie: 16 ≤),
/// batch size and accumulation ≥ 1.
void check_training_config(const RunConfig& config);

}  // namespace routescope::train
