#pragma once
// The one step loop of pretraining (trainer.hpp) and fine-tuning (finetuner.hpp). What differs
// between them is an Objective: how a micro-batch is made from the next training examples, how
// the model is evaluated, and what else a step does (Birdie's mixture update) or a checkpoint
// holds (its controller). Everything else is here, once:
//
//   order: the run's k-th training example is SequenceOrder(n, train.seed).at(k) (Philox, a fresh
//          permutation per epoch; packed_sequences.hpp), k = the data position, saved and restored
//   step:  zero the gradients; train.grad_accum micro-batches of forward / backward (dropout
//          stream step·accum + micro); gradients × 1/accum; frozen gradients zeroed
//          (train.freeze_ssm: *.ssm_forward.* / *.ssm_backward.*); global-norm clip; AdamW; frozen
//          values put back bit for bit
//   log:   DIR/log.jsonl (training_log.hpp): start, step, eval (by the objective), checkpoint,
//          diverged records with the same fields for every objective
//   eval:  every train.eval_every steps, when the objective asks (fine-tuning: every epoch), and
//          at the end
//   save:  DIR/model.ckpt.h5 atomically (temporary file, then rename; io/checkpoint.hpp) every
//          train.checkpoint_every steps, at the end, at `until`, and after the step in which
//          StopSignal fired (the caller exits 130)
//   stop:  a non-finite loss or gradient norm logs a "diverged" record and throws TrainingDiverged
//          naming the step; no checkpoint is written then, so the last good one stays as it was
//   resume: parameters, Adam moments and update count, step, tokens seen and data position from
//          /train; masks, dropout and order are pure functions of (seed, step, index), so a resumed
//          run repeats an uninterrupted one bit for bit (same thread count).
//   ranks: with a communicator of N > 1 ranks (engine/dist/communicator.hpp; docs/scaling.md) the
//          step is data-parallel. Micro-batch m of a step is N·B rows of the run's order; rank r
//          fills rows r·B … r·B + B − 1 of it (the objective numbers them row_base(m) + b, so
//          masks are those of a single process with batch N·B), and the data position counts
//          every rank's rows. A rank weighs its mean loss by n_r / n (its targets over all ranks'
//          targets of the micro-batch: one small gather), so the step's loss is the single
//          process's one mean over every target; the gradient buffer is summed over ranks once
//          per step in rank order (deterministic), then clipped and applied identically on every
//          rank. Rank 0 alone writes the log and the checkpoints; a stop signal on any rank stops
//          all after the same step. Dropout masks are drawn with each row's number in the
//          global micro-batch, as the MLM masks are, so with model.dropout > 0 too the N-rank run
//          is the single-process one (docs/scaling.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/data/tokenizer.hpp"
#include "engine/dist/communicator.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/models/model.hpp"
#include "engine/train/adamw.hpp"
#include "engine/train/packed_sequences.hpp"
#include "engine/train/training_log.hpp"

namespace routescope::train {

/// The loss or the gradient norm stopped being finite. The message names the step.
class TrainingDiverged : public Error {
public:
    using Error::Error;
};

inline constexpr const char* kCheckpointName = "model.ckpt.h5";
inline constexpr const char* kLogName = "log.jsonl";

/// What the caller of a pretraining or fine-tuning run decides besides the configuration (one
/// struct for Trainer and Finetuner; LoopOptions is what reaches the loop).
struct RunOptions {
    std::string out_dir;
    /// > 0: overrides train.threads (and is recorded in the checkpoint's config).
    int threads = 0;
    /// Called with every record written to log.jsonl (progress display).
    std::function<void(const nlohmann::ordered_json&)> on_record;
    /// > 0: stop after this step with a checkpoint (the schedule still runs to train.steps).
    std::int64_t until = 0;
    /// The backend the model runs on (--device); recorded in the log's start record and the
    /// checkpoint's /provenance.
    Device device = Device::cpu;
};

struct LoopOptions;

/// The setup a pretraining and a fine-tuning run share (Trainer, Finetuner), written once.
/// --threads into the configuration (train.threads, recorded in the checkpoint).
void apply_threads(const RunOptions& options, RunConfig& config);
/// The paths of a configuration made absolute (data.train, data.valid, tokenizer.model,
/// train.init_from; built-in corpora stay as they are), so `--resume` works from any directory.
void absolutize_paths(RunConfig& config);
/// A run to resume: its checkpoint (which must hold /train: ConfigError naming it otherwise) and
/// its configuration with `overrides` applied.
struct ResumePoint {
    Checkpoint checkpoint;
    RunConfig config;
};
ResumePoint read_resume_point(const std::string& checkpoint_path,
                              const std::vector<std::string>& overrides);

/// What the caller of a run decides besides the configuration.
struct LoopOptions {
    std::string out_dir;
    /// > 0: stop after this step with a checkpoint (the schedule still runs to train.steps).
    std::int64_t until = 0;
    /// Called with every record written to log.jsonl (progress display).
    std::function<void(const nlohmann::ordered_json&)> on_record;
    /// The ranks of a data-parallel run (file comment); nullptr: dist::world().
    dist::Communicator* comm = nullptr;

    LoopOptions() = default;
    /// The loop's part of a run's options.
    explicit LoopOptions(const RunOptions& run)
        : out_dir(run.out_dir), until(run.until), on_record(run.on_record) {}
};

struct TrainResult {
    enum class Status { finished, until, interrupted };
    Status status = Status::finished;
    std::int64_t step = 0;
    std::string checkpoint;
    double last_loss = 0;
};

class TrainingLoop;

/// What pretraining and fine-tuning do differently (file comment).
class Objective {
public:
    virtual ~Objective() = default;
    /// The number of training examples the order permutes.
    virtual std::int64_t training_examples() const = 0;
    /// What micro_batch hands back: the batch (host memory in the objective's buffers, valid
    /// until the next call) and the tokens of its examples, counted as seen.
    struct MicroBatch {
        models::Batch batch;
        std::int64_t tokens = 0;
    };
    /// A micro-batch of the update that makes step `step + 1` from the training examples
    /// `examples` (this rank's rows, in order, chosen by the loop from the run's order). Row b is
    /// row `row_base + b` of the step (TrainingLoop::row_base), which the objective's per-row
    /// draws use. The objective never reaches back into the loop for its data.
    virtual MicroBatch micro_batch(std::span<const std::int64_t> examples, std::int64_t step,
                                   std::int64_t row_base) = 0;
    /// Evaluates the model after step loop.step() and logs (loop.log_record) an "eval" record
    /// (and whatever else it keeps, e.g. a best checkpoint).
    virtual void evaluate(TrainingLoop& loop) = 0;
    /// An evaluation after `step` besides every train.eval_every steps and the last step.
    virtual bool extra_evaluation_due(std::int64_t /*step*/) const { return false; }
    /// Before the first update of a run (fresh or resumed), and after every update, before the
    /// evaluation (Birdie's mixture controller).
    virtual void before_first_step(TrainingLoop& /*loop*/) {}
    virtual void after_step(TrainingLoop& /*loop*/) {}
    /// Objective state saved in /train (Birdie's mixture controller).
    virtual void save_state(TrainState& /*state*/) const {}
    /// The objective's own fields of the "start" record.
    virtual void describe(nlohmann::ordered_json& /*start*/) const {}
};

class TrainingLoop {
public:
    /// A loop over `model` (initialised or loaded) with `config.train`. `resume`: the /train state
    /// of the checkpoint the run continues (moments checked against the model's size: FormatError
    /// naming `resume_path`), nullptr for a fresh run. Opens DIR/log.jsonl (cut back to the resumed
    /// step).
    TrainingLoop(const RunConfig& config, models::Model& model, const data::Tokenizer& tokenizer,
                 std::int64_t training_examples, LoopOptions options,
                 const TrainState* resume = nullptr, const std::string& resume_path = {});

    /// Runs to train.steps (or `until`, or StopSignal), then evaluates and saves.
    TrainResult run(Objective& objective);

    // For the objective.
    std::int64_t step() const { return step_; }
    std::int64_t tokens_seen() const { return tokens_seen_; }
    std::int64_t data_position() const { return data_position_; }
    /// The number, within the step, of micro-batch `micro`'s first row on this rank (single
    /// process: micro · B); the objective's per-row draws use row_base(micro) + b.
    std::int64_t row_base(int micro) const {
        return (static_cast<std::int64_t>(micro) * comm_->size() + comm_->rank()) *
               config_.train.batch_size;
    }
    dist::Communicator& comm() { return *comm_; }
    void log_record(const nlohmann::ordered_json& record);
    /// Writes `path` atomically: parameters, configuration, tokenizer, and with `with_state` the
    /// state to resume. Non-finite parameters: TrainingDiverged naming the step. Only rank 0
    /// writes; on the other ranks it does nothing. `best`: the best_* root attributes
    /// (checkpoint.hpp) of a fine-tuning run's best.ckpt.h5.
    void write_checkpoint_file(const std::string& path, bool with_state, const Objective& objective,
                               const BestMark* best = nullptr);

    const RunConfig& config() const { return config_; }
    models::Model& model() { return model_; }
    AdamW& optimizer() { return *optimizer_; }
    bool resumed() const { return resumed_; }
    std::string checkpoint_path() const;
    /// The frozen parameters (train.freeze_ssm).
    const std::vector<ParamEntry>& frozen() const { return frozen_; }

private:
    /// train.keep_checkpoints: DIR/step-<step>.ckpt.h5, the weights of that step.
    std::string kept_checkpoint_path(std::int64_t step) const;
    /// One update; false (loss or grad_norm non-finite) leaves the step count where it was.
    bool train_step(Objective& objective, double& loss, double& grad_norm, double& lr);
    void save_checkpoint(const Objective& objective);
    [[noreturn]] void diverged(double loss, double grad_norm);
    /// Logs the "diverged" record of step `step` (what went wrong: `what`) and throws
    /// TrainingDiverged naming the last good checkpoint, or saying there is none.
    [[noreturn]] void stop_diverged(std::int64_t step, const std::string& what,
                                    const std::string& cause);

    const RunConfig& config_;
    models::Model& model_;
    const data::Tokenizer& tokenizer_;
    LoopOptions options_;
    dist::Communicator* comm_;
    std::unique_ptr<AdamW> optimizer_;
    std::unique_ptr<TrainingLog> log_;
    SequenceOrder order_;
    std::vector<ParamEntry> frozen_;
    DeviceArray<float> frozen_values_;  ///< the frozen spans, back to back, on the device
    std::vector<float> grad_staging_;   ///< the gradient sum of a device run over MPI
    std::int64_t step_ = 0;
    std::int64_t tokens_seen_ = 0;
    std::int64_t data_position_ = 0;
    std::int64_t last_checkpoint_step_ = -1;
    std::vector<std::int64_t> examples_;  ///< a micro-batch's example indices (sized once)
    bool resumed_ = false;
};

/// Steps of one epoch over `examples` training sequences, counted in global batches: under
/// `ranks` ranks a step sees ranks × batch_size × grad_accum sequences, as one process with that
/// batch does. At least 1.
std::int64_t steps_per_epoch(const TrainConfig& t, std::int64_t examples, int ranks);

/// train.epochs > 0 (fine-tuning and pretraining alike): t.steps = epochs × per_epoch, refused
/// (ConfigError) past 2^63 − 1 (2^63 − 1 epochs wrapped to a negative count that trained nothing).
void apply_epochs(TrainConfig& t, std::int64_t per_epoch);

}  // namespace routescope::train
