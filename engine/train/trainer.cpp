#include "engine/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/dist/communicator.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/answer_scoring.hpp"
#include "engine/train/causal_capability.hpp"
#include "engine/train/mlm_evaluation.hpp"
#include "engine/train/row_evaluation.hpp"
#include "engine/train/run_inputs.hpp"
#include "engine/train/stop_signal.hpp"
#include "engine/train/task_corpus.hpp"

namespace routescope::train {

namespace fs = std::filesystem;

namespace {

// Seeds of the causal objectives' draws, apart from every other use of train.seed.
constexpr std::uint64_t kPrefixSalt = 0x7072656669786C6DULL;     // "prefixlm"
constexpr std::uint64_t kBirdieRowSalt = 0x6269726469657231ULL;  // "birdier1"
constexpr std::uint64_t kEvalRowSalt = 0x6576616C726F7731ULL;    // "evalrow1"

}  // namespace

void check_training_config(const RunConfig& c) {
    const std::string& objective = c.train.objective;
    if (objective != "mlm" && !is_causal_objective(objective))
        throw ConfigError("train.objective: '" + objective +
                          "' is not a pretraining objective (mlm, clm, prefix_lm, birdie; "
                          "classify fine-tunes)");
    if (is_causal_objective(objective)) check_causal_objective(c);
    // Said before the run starts (it failed at the first batch, after the start record).
    if (!c.model.mlm_head)
        throw ConfigError(
            "model.mlm_head: false leaves the model no MLM head, which train.objective "
            "= " +
            objective +
            " trains (an encoder without heads fine-tunes with train.objective = "
            "classify, or on a task)");
    if (objective == "birdie") {
        if (c.data.seq_len < 16)
            throw ConfigError("data.seq_len: " + std::to_string(c.data.seq_len) +
                              " is too short for train.objective = birdie (at least 16: a "
                              "paradigm token, an input, [start] and a target)");
        (void)birdie_arms(c.train.birdie.arms);  // names checked before any work
    }
    const bool task = c.data.task && !c.data.task->empty();
    if (task && !is_causal_objective(objective))
        throw ConfigError(
            "data.task: the trainer takes a built-in task with the causal objectives "
            "(clm, prefix_lm, birdie); '" +
            objective + "' on a task is fine-tuning");
    if (task && c.data.train)
        throw ConfigError("data.train: give either a corpus or data.task = " + *c.data.task +
                          ", not both");
    if (!task && (!c.data.train || c.data.train->empty()))
        throw ConfigError(
            "data.train: no corpus given (--set data.train=FILE_OR_DIR, or builtin:grammar)");
    if (c.data.seq_len > c.model.max_len)
        throw ConfigError("data.seq_len: " + std::to_string(c.data.seq_len) +
                          (task ? " (the longest row of task " + *c.data.task + ")" : "") +
                          " is longer than model.max_len = " + std::to_string(c.model.max_len) +
                          " (the position table has no row past it)");
    if (c.data.seq_len < 2)
        throw ConfigError("data.seq_len: must be at least 2 ([CLS] and one token)");
    if (c.train.batch_size < 1) throw ConfigError("train.batch_size: must be at least 1");
    if (c.train.grad_accum < 1) throw ConfigError("train.grad_accum: must be at least 1");
    if (c.train.steps < 0) throw ConfigError("train.steps: must be at least 0");
}

Trainer::Trainer(RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
    apply_threads(options_, config_);
    if (config_.data.task && !config_.data.task->empty() &&
        is_causal_objective(config_.train.objective)) {
        // The task sets the length and the tokenizer (task_corpus.hpp).
        task_ = std::make_unique<data::TaskData>(run_task(config_));
        config_.data.seq_len = task_sequence_length(*task_, config_.train.objective);
        config_.tokenizer.kind = "wordpiece";
        config_.tokenizer.model.reset();
    }
    check_training_config(config_);
    absolutize_paths(config_);
    prepare_data();
    build_model();
    model_->init(static_cast<std::uint64_t>(config_.train.seed));
    if (config_.train.init_from) start_from(*config_.train.init_from);
    loop_ = std::make_unique<TrainingLoop>(config_, *model_, *tokenizer_, corpus_.train.size(),
                                           LoopOptions(options_));
}

void Trainer::start_from(const std::string& path) {
    // train.init_from: this run's model with the weights of a checkpoint of the same architecture
    // and vocabulary (a task fine-tune of a causal model, continued pretraining); the optimiser,
    // the schedule and the step start afresh (docs/config.md).
    const Checkpoint ck = read_checkpoint(path);
    const ModelConfig& m = config_.model;
    const ModelConfig& c = ck.config.model;
    if (c.arch != m.arch || c.d_model != m.d_model || c.n_layers != m.n_layers ||
        c.vocab_size != m.vocab_size)
        throw ConfigError("train.init_from: " + path + " is a " + c.arch + " of " +
                          std::to_string(c.n_layers) + " layers, d = " + std::to_string(c.d_model) +
                          ", vocabulary " + std::to_string(c.vocab_size) +
                          "; this run's model is a " + m.arch + " of " +
                          std::to_string(m.n_layers) + " layers, d = " + std::to_string(m.d_model) +
                          ", vocabulary " + std::to_string(m.vocab_size));
    const auto vocab = checkpoint_tokenizer(ck, path, {}, nullptr);
    if (vocab->vocabulary() != tokenizer_->vocabulary())
        throw ConfigError("train.init_from: " + path + " has another vocabulary than this run's " +
                          tokenizer_->kind() + " tokenizer (" +
                          std::to_string(tokenizer_->vocab_size()) + " ids)");
    try {
        load_params(ck, model_->params());
    } catch (const Error& e) {
        throw ConfigError("train.init_from: " + path + ": " + e.what() +
                          " (the two models differ: compare their model.* settings)");
    }
}

Trainer::Trainer(ResumeTag, RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
    apply_threads(options_, config_);
}

std::unique_ptr<Trainer> Trainer::resume(const std::string& checkpoint_path,
                                         const std::vector<std::string>& overrides,
                                         TrainerOptions options) {
    ResumePoint point = read_resume_point(checkpoint_path, overrides);
    const Checkpoint& ck = point.checkpoint;
    RunConfig& config = point.config;
    if (config.model.vocab_size != ck.config.model.vocab_size)
        throw ConfigError("model.vocab_size: a resumed run keeps its vocabulary (" +
                          std::to_string(ck.config.model.vocab_size) + ")");
    std::unique_ptr<Trainer> t(new Trainer(ResumeTag{}, std::move(config), std::move(options)));
    check_training_config(t->config_);
    t->tokenizer_ = checkpoint_tokenizer(ck, checkpoint_path, {}, &t->config_);
    t->prepare_data();
    t->build_model();
    load_params(ck, t->model_->params());
    const TrainState& st = *ck.train;
    if (t->controller_ && st.mixture_controller) {
        // The mixture continues where it was (docs/decisions.md, "Birdie mixture: the controller
        // state is saved"); a checkpoint without it (older) restarts from the uniform mixture.
        const MixtureControllerState& mc = *st.mixture_controller;
        std::vector<std::string> names;
        for (const auto& a : t->arms_)
            names.push_back(a.name);
        if (mc.arms != names)
            throw ConfigError("train.birdie.arms: a resumed run keeps the arms of " +
                              checkpoint_path + " (its /train/mixture_controller)");
        t->controller_->restore(mc.updates, mc.mixture, mc.rewards, mc.predicted, mc.losses);
        t->controller_started_ = true;
    }
    t->loop_ = std::make_unique<TrainingLoop>(t->config_, *t->model_, *t->tokenizer_,
                                              t->corpus_.train.size(), LoopOptions(t->options_),
                                              &st, checkpoint_path);
    return t;
}

Trainer::~Trainer() = default;

std::string Trainer::checkpoint_path() const {
    return (fs::path(options_.out_dir) / kCheckpointName).string();
}

void Trainer::prepare_data() {
    std::error_code ec;
    fs::create_directories(options_.out_dir, ec);
    if (ec || !fs::is_directory(options_.out_dir))
        throw IoError(options_.out_dir + ": cannot create the output directory (" + ec.message() +
                      ")");
    // The corpus and the tokenizer (run_inputs.hpp); a resumed run keeps its checkpoint's.
    const bool fresh = !tokenizer_;
    PretrainingInputs in = pretraining_inputs(config_, options_.out_dir, dist::world().rank(),
                                              std::move(tokenizer_), task_.get());
    task_.reset();
    tokenizer_ = std::move(in.tokenizer);
    corpus_ = std::move(in.corpus);
    task_valid_ = std::move(in.task_valid);
    // train.epochs: whole passes over the training sequences (a corpus's windows, a task's
    // n_train), as the fine-tuner counts them; pretraining ignored it and trained train.steps.
    apply_epochs(config_.train,
                 steps_per_epoch(config_.train, static_cast<std::int64_t>(corpus_.train.size()),
                                 dist::world().size()));
    // The model's vocabulary is the tokenizer's (docs/decisions.md), plus the Birdie specials
    // after it for objective birdie (birdie_vocabulary.hpp).
    if (fresh)
        config_.model.vocab_size =
            tokenizer_->vocab_size() + data::objective_extra_ids(config_.train.objective);
    pad_ = std::max(0, tokenizer_->specials().pad);
    birdie_vocab_ = data::BirdieVocabulary{tokenizer_->vocab_size()};
    if (config_.train.objective == "mlm")
        masker_ = std::make_unique<data::MlmMasker>(
            *tokenizer_, data::MlmRates{config_.train.mask_prob, 0.8, 0.1});
    if (config_.train.objective == "birdie") {
        arms_ = birdie_arms(config_.train.birdie.arms);
        controller_ = std::make_unique<MixtureController>(
            static_cast<int>(arms_.size()), static_cast<std::uint64_t>(config_.train.seed),
            config_.train.steps);
    }
}

void Trainer::build_model() {
    const int B = config_.train.batch_size, L = config_.data.seq_len;
    model_ = std::make_unique<models::Model>(config_, B, L, config_.train.threads, options_.device);
    // train.precision: refused (ConfigError) by a backend without it, before any step.
    model_->backend().set_precision(parse_precision(config_.train.precision));
    const auto n = static_cast<std::size_t>(B) * L;
    ids_.resize(n);
    batch_ = std::make_unique<HostBatch>(B, L, pad_);
}

Objective::MicroBatch Trainer::micro_batch(std::span<const std::int64_t> examples,
                                           std::int64_t step, std::int64_t row_base) {
    const int B = config_.train.batch_size, L = config_.data.seq_len;
    std::int64_t tokens = 0;
    for (int b = 0; b < B; ++b) {
        const std::int64_t i = examples[static_cast<std::size_t>(b)];
        std::copy_n(corpus_.train.ids(i), L, ids_.data() + static_cast<std::size_t>(b) * L);
        batch_->length(b) = corpus_.train.length(i);
        tokens += corpus_.train.length(i);
    }
    make_targets(step, row_base);
    return {batch_->view(HostBatch::Head::mlm, false,
                         /*reset=*/config_.train.objective != "mlm"),
            tokens};
}

void Trainer::make_targets(std::int64_t step, std::int64_t row_base) {
    const int B = config_.train.batch_size, L = config_.data.seq_len;
    const auto seed = static_cast<std::uint64_t>(config_.train.seed);
    const std::string& objective = config_.train.objective;
    if (objective == "mlm") {
        masker_->apply_batch(ids_.data(), batch_->lengths(), B, L, batch_->tokens(0),
                             batch_->labels(0), seed, static_cast<std::uint32_t>(step),
                             static_cast<std::uint32_t>(row_base));
        return;
    }
    for (int b = 0; b < B; ++b) {
        const auto off = static_cast<std::size_t>(b) * L;
        const RowView row = batch_->row(b);
        const std::int32_t* ids = ids_.data() + off;
        std::int32_t& length = batch_->length(b);
        const auto example = static_cast<std::uint32_t>(row_base + b);
        if (objective == "clm") {
            length = clm_row(ids, length, pad_, row);
        } else if (objective == "prefix_lm") {
            data::RandomStream rng(seed ^ kPrefixSalt, static_cast<std::uint32_t>(step), example);
            const std::int32_t p = data::prefix_split(length, config_.train.prefix_fraction, rng);
            length = prefix_lm_row(ids, length, p, pad_, row);
        } else {  // birdie
            data::RandomStream rng(seed ^ kBirdieRowSalt, static_cast<std::uint32_t>(step),
                                   example);
            const int arm = controller_->choose(rng.uniform());
            length = birdie_arm_row(arms_[static_cast<std::size_t>(arm)], ids, length,
                                    birdie_vocab_, config_.train.prefix_fraction, pad_, rng, row);
        }
    }
}

std::int32_t Trainer::eval_row(std::int64_t i, RowView row, int arm) const {
    const SequenceSet& set = corpus_.valid;
    const std::int32_t* ids = set.ids(i);
    const std::int32_t length = set.length(i);
    data::RandomStream rng(static_cast<std::uint64_t>(config_.train.seed) ^ kEvalRowSalt, 0,
                           static_cast<std::uint32_t>(i));
    const std::string& objective = config_.train.objective;
    if (objective == "clm") return clm_row(ids, length, pad_, row);
    if (objective == "prefix_lm")
        return prefix_lm_row(
            ids, length, data::prefix_split(length, config_.train.prefix_fraction, rng), pad_, row);
    // birdie: the given arm, or (arm < 0) every arm in turn
    const auto a = static_cast<std::size_t>(arm >= 0 ? arm : i % std::int64_t(arms_.size()));
    return birdie_arm_row(arms_[a], ids, length, birdie_vocab_, config_.train.prefix_fraction, pad_,
                          rng, row);
}

void Trainer::before_first_step(TrainingLoop&) {
    // Birdie: the controller's first measurement (L_old of every arm) before the first step. A
    // resumed run continues the saved controller (its last update was at or before the saved
    // step); one from a checkpoint without it starts a fresh controller here (docs/decisions.md).
    if (controller_ && !controller_started_) update_mixture();
}

void Trainer::after_step(TrainingLoop& loop) {
    if (controller_ && loop.step() % config_.train.birdie.update_every == 0) update_mixture();
}

void Trainer::update_mixture() {
    const std::int64_t step = loop_->step();
    // Each arm's loss on its fixed validation batch: the first batch of held-out sequences, turned
    // into that arm's rows with the evaluation seed (the same rows at every update).
    std::vector<double> losses(arms_.size());
    for (std::size_t a = 0; a < arms_.size(); ++a)
        losses[a] =
            evaluate_rows(
                *model_, corpus_.valid.size(),
                [&](std::int64_t i, RowView row) { return eval_row(i, row, static_cast<int>(a)); },
                1, &loop_->comm(), /*loss_only=*/true)
                .loss;
    const bool first = !controller_started_;
    if (first) {
        controller_->start(losses);
        controller_started_ = true;
    } else {
        controller_->update(step, losses);
    }
    nlohmann::ordered_json r;
    r["type"] = "mixture";
    r["step"] = step;
    r["controller"] = kMixtureControllerName;
    r["exploration"] = controller_->exploration(step);
    nlohmann::ordered_json mixture, arm_losses, rewards;
    for (std::size_t a = 0; a < arms_.size(); ++a) {
        mixture[arms_[a].name] = controller_->mixture()[a];
        arm_losses[arms_[a].name] = losses[a];
        // null: no reward (the first measurement, or an arm whose rows held no target now or
        // before, whose loss is then null too).
        rewards[arms_[a].name] = first || !controller_->measured(static_cast<int>(a))
                                     ? nlohmann::ordered_json()
                                     : nlohmann::ordered_json(controller_->rewards()[a]);
    }
    r["mixture"] = mixture;
    r["losses"] = arm_losses;
    r["rewards"] = rewards;
    loop_->log_record(r);
}

void Trainer::evaluate(TrainingLoop& loop) {
    const std::uint64_t seed = static_cast<std::uint64_t>(config_.train.seed);
    const MlmScore s = config_.train.objective == "mlm"
                           ? evaluate_mlm(*model_, corpus_.valid, *masker_, seed,
                                          config_.train.eval_batches, &loop.comm())
                           : evaluate_rows(
                                 *model_, corpus_.valid.size(),
                                 [&](std::int64_t i, RowView row) { return eval_row(i, row, -1); },
                                 config_.train.eval_batches, &loop.comm());
    nlohmann::ordered_json r;
    r["type"] = "eval";
    r["step"] = loop.step();
    r["loss"] = s.loss;
    r["accuracy"] = s.accuracy;
    r["targets"] = s.targets;
    r["held_out"] = corpus_.valid_is_train ? "train" : "valid";
    r["objective"] = config_.train.objective;
    if (!task_valid_.examples.empty()) {
        // A task run: the answers' exact match on the validation examples (answer_scoring.hpp).
        const SetScore t = score_set(
            task_valid_,
            predict_answers(*model_, task_valid_, config_.train.objective, birdie_vocab_));
        r["exact_match"] = t.accuracy;
        r["answer_loss"] = t.loss;
        r["examples"] = t.scored;
    }
    loop.log_record(r);
}

void Trainer::save_state(TrainState& st) const {
    if (controller_ && controller_started_) {
        MixtureControllerState mc;
        for (const auto& a : arms_)
            mc.arms.push_back(a.name);
        mc.updates = controller_->updates();
        mc.mixture = controller_->mixture();
        mc.rewards = controller_->rewards();
        mc.predicted = controller_->predicted();
        mc.losses = controller_->losses();
        st.mixture_controller = std::move(mc);
    }
}

void Trainer::describe(nlohmann::ordered_json& start) const {
    start["train_sequences"] = corpus_.train.size();
    start["valid_sequences"] = corpus_.valid.size();
}

TrainResult Trainer::run() {
    return loop_->run(*this);
}

}  // namespace routescope::train
