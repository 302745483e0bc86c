#include "engine/train/training_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "engine/data/objectives/birdie_vocabulary.hpp"
#include "engine/ops/cross_entropy.hpp"
#include "engine/train/builtin_corpus.hpp"
#include "engine/train/stop_signal.hpp"

namespace routescope::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::string number_text(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
    std::ostringstream s;
    s << v;
    return s.str();
}

}  // namespace

void apply_threads(const RunOptions& options, RunConfig& config) {
    if (options.threads > 0) config.train.threads = options.threads;
}

void absolutize_paths(RunConfig& config) {
    for (std::optional<std::string>* path :
         {&config.data.train, &config.data.valid, &config.tokenizer.model, &config.train.init_from})
        if (*path && !(*path)->empty() && !is_builtin_corpus(**path))
            **path = fs::absolute(**path).lexically_normal().string();
}

ResumePoint read_resume_point(const std::string& checkpoint_path,
                              const std::vector<std::string>& overrides) {
    ResumePoint r{read_checkpoint(checkpoint_path), {}};
    if (!r.checkpoint.train)
        throw ConfigError(checkpoint_path + ": has no /train state to resume from");
    r.config = r.checkpoint.config;
    if (!overrides.empty()) r.config = r.config.with_overrides(overrides);  // checked once
    // A resumed run continues the same model: an override that changes its parameters (d_model,
    // n_layers, ...) is named against the checkpoint (it failed in the parameter loader, exit 3,
    // naming neither key nor file).
    const auto shapes = [](const ModelConfig& m) {
        std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
        for (const auto& e : models::Model::parameter_layout(m))
            out.emplace_back(e.name, e.shape);
        return out;
    };
    if (shapes(r.config.model) != shapes(r.checkpoint.config.model)) {
        const nlohmann::json was = r.checkpoint.config.to_json()["model"];
        const nlohmann::json now = r.config.to_json()["model"];
        std::string changed;
        for (const auto& d : nlohmann::json::diff(was, now)) {
            const nlohmann::json::json_pointer at(d["path"].get<std::string>());
            std::string key = "model" + at.to_string();
            std::replace(key.begin(), key.end(), '/', '.');
            changed += (changed.empty() ? "" : ", ") + key + " " +
                       (was.contains(at) ? was[at].dump() : "null") + " → " +
                       (now.contains(at) ? now[at].dump() : "null");
        }
        throw ConfigError(
            checkpoint_path + ": a resumed run continues its model, and " +
            (changed.empty() ? std::string("the overrides change its parameters") : changed) +
            " would change its parameters; to start a new model from these weights, "
            "train a new run with --init");
    }
    // The objective's own specials (Birdie's 42 ids) are part of the model's vocabulary: a change
    // of train.objective that adds or drops them changes the parameters as model.vocab_size would
    // (it was refused later as a "vocabulary mismatch" of a checkpoint that validates).
    const std::string& objective_was = r.checkpoint.config.train.objective;
    const std::string& objective_now = r.config.train.objective;
    if (data::objective_extra_ids(objective_was) != data::objective_extra_ids(objective_now))
        throw ConfigError(
            checkpoint_path + ": a resumed run continues its model, and train.objective \"" +
            objective_was + "\" → \"" + objective_now + "\" would change its vocabulary (" +
            std::to_string(data::objective_extra_ids(objective_was)) + " → " +
            std::to_string(data::objective_extra_ids(objective_now)) +
            " objective specials after the tokenizer's ids) and so its parameters; to train "
            "these weights on another objective, train a new run with --init");
    // The tokenizer is the checkpoint's (it holds it): an override of tokenizer.* changed only
    // the configuration written into the next checkpoint, which then contradicted its /tokenizer.
    for (const auto& o : overrides)
        if (o.starts_with("tokenizer."))
            throw ConfigError(checkpoint_path + ": --set " + o +
                              ": a resumed run keeps the tokenizer its checkpoint holds; to use "
                              "another, train a new run");
    // train.steps below the checkpoint's step: nothing would run, and nothing did (exit 0).
    if (r.config.train.epochs == 0 && r.config.train.steps < r.checkpoint.train->step)
        throw ConfigError("train.steps: " + std::to_string(r.config.train.steps) + ", but " +
                          checkpoint_path + " is at step " +
                          std::to_string(r.checkpoint.train->step) +
                          ": a resumed run trains on to train.steps, so give more steps than that");
    return r;
}

TrainingLoop::TrainingLoop(const RunConfig& config, models::Model& model,
                           const data::Tokenizer& tokenizer, std::int64_t training_examples,
                           LoopOptions options, const TrainState* resume,
                           const std::string& resume_path)
    : config_(config),
      model_(model),
      tokenizer_(tokenizer),
      options_(std::move(options)),
      comm_(options_.comm ? options_.comm : &dist::world()),
      order_(training_examples, static_cast<std::uint64_t>(config.train.seed)) {
    if (training_examples < 1) throw ConfigError("data.train: no training example");
    ParamStore& params = model_.params();
    examples_.resize(static_cast<std::size_t>(config_.train.batch_size));
    optimizer_ = std::make_unique<AdamW>(config_.train, params);
    if (resume) {
        // A resumed run trains on from its checkpoint's step. A schedule that ends before it
        // would train nothing (read_resume_point and Finetuner::resume refuse train.steps and
        // train.epochs by name first; this holds for every caller); an --until before it trained
        // one more step and saved it.
        if (config_.train.steps < resume->step)
            throw ConfigError(
                std::string(config_.train.epochs > 0 ? "train.epochs" : "train.steps") +
                ": the run ends at step " + std::to_string(config_.train.steps) + ", but " +
                resume_path + " is at step " + std::to_string(resume->step) +
                ": a resumed run trains on from there");
        if (options_.until > 0 && options_.until < resume->step)
            throw ConfigError("--until " + std::to_string(options_.until) + ": " + resume_path +
                              " is already at step " + std::to_string(resume->step) +
                              ": --until stops a resumed run after a later step");
        if (resume->adam_m.size() != params.size() || resume->adam_v.size() != params.size())
            throw FormatError(resume_path +
                              ": /train/adam_m, /train/adam_v: missing or not the "
                              "size of the parameters");
        optimizer_->set_moments(resume->adam_m, resume->adam_v);  // uploaded once
        optimizer_->set_step(resume->step);
        step_ = resume->step;
        tokens_seen_ = resume->tokens_seen;
        data_position_ = resume->data_position;
        last_checkpoint_step_ = resume->step;
        resumed_ = true;
    }
    if (config_.train.freeze_ssm)
        for (const auto& e : params.entries())
            if (e.group == ParamGroup::ssm) frozen_.push_back(e);
    if (comm_->rank() == 0)  // rank 0 alone writes the log and the checkpoints
        log_ = std::make_unique<TrainingLog>((fs::path(options_.out_dir) / kLogName).string(),
                                             resumed_, step_);
}

std::string TrainingLoop::checkpoint_path() const {
    return (fs::path(options_.out_dir) / kCheckpointName).string();
}

void TrainingLoop::log_record(const nlohmann::ordered_json& record) {
    if (!log_) return;
    log_->write(record);
    if (options_.on_record) options_.on_record(record);
}

bool TrainingLoop::train_step(Objective& objective, double& loss, double& grad_norm, double& lr) {
    const int accum = config_.train.grad_accum;
    const int ranks = comm_->size();
    const std::int64_t B = config_.train.batch_size;
    ParamStore& params = model_.params();
    params.zero_grad();
    loss = 0;
    for (int micro = 0; micro < accum; ++micro) {
        // This rank's B rows of the micro-batch's N·B (file comment), chosen here from the run's
        // order and handed to the objective.
        const std::int64_t tokens_before = tokens_seen_;
        for (std::int64_t b = 0; b < B; ++b)
            examples_[static_cast<std::size_t>(b)] =
                order_.at(data_position_ + comm_->rank() * B + b);
        data_position_ += ranks * B;
        const Objective::MicroBatch mb = objective.micro_batch(examples_, step_, row_base(micro));
        models::Batch batch = mb.batch;
        tokens_seen_ += mb.tokens;
        batch.first_row = comm_->rank() * B;  // this rank's dropout rows of the global batch
        double l = model_.forward(batch, /*training=*/true,
                                  static_cast<std::uint32_t>(step_ * accum + micro));
        double weight = 1.0;
        if (ranks > 1) {
            // The micro-batch's loss is one mean over every rank's targets: rank r's mean counts
            // n_r / n of it, and so does its gradient (the loss's backward seed).
            struct Share {
                double loss;
                std::int64_t targets, tokens;
            };
            const auto rows = static_cast<std::int64_t>(model_.batch_size());
            const Share mine{l,
                             batch.labels
                                 ? ops::cross_entropy_count(batch.labels, rows * model_.length())
                                 : ops::cross_entropy_count(batch.class_labels, rows),
                             mb.tokens};
            const std::vector<Share> all = dist::gather_all(*comm_, mine);
            std::int64_t n = 0;
            tokens_seen_ = tokens_before;
            for (const Share& s : all) {
                n += s.targets;
                tokens_seen_ += s.tokens;
            }
            l = 0;
            for (const Share& s : all)  // in rank order: the same bits on every rank
                if (s.targets > 0) l += s.loss * (static_cast<double>(s.targets) / n);
            weight = n > 0 ? static_cast<double>(mine.targets) / n : 0.0;
        }
        if (!std::isfinite(l)) {
            loss = l;
            return false;
        }
        model_.backward(weight);
        loss += l / accum;
    }
    // One sum of the flat gradient buffer over the ranks, in rank order (communicator.hpp).
    // On the CPU backend the buffer is host memory and MPI sums it in place; on a device (no NCCL
    // yet) it is staged through host memory, one download and one upload a step.
    if (ranks > 1) {
        if (model_.device() == Device::cpu) {
            comm_->sum_in_rank_order(params.grad_data(), params.size());
        } else {
            grad_staging_.resize(params.size());
            model_.backend().copy(grad_staging_.data(), params.grad_data(),
                                  params.size() * sizeof(float), Backend::CopyKind::device_to_host);
            comm_->sum_in_rank_order(grad_staging_.data(), params.size());
            model_.backend().copy(params.grad_data(), grad_staging_.data(),
                                  params.size() * sizeof(float), Backend::CopyKind::host_to_device);
        }
    }
    // The rest of the step runs on the backend's flat-buffer operations (engine/backend).
    Backend& backend = model_.backend();
    if (accum > 1)  // the mean of the micro-batch losses, like one batch of B·accum rows
        backend.scale(params.grad_data(), 1.0f / static_cast<float>(accum), params.size());
    for (const auto& e : frozen_)
        backend.zero(params.grad_data() + e.offset, e.size * sizeof(float));
    grad_norm = optimizer_->clip(params);
    if (!std::isfinite(grad_norm)) return false;
    lr = optimizer_->update(params);
    // Frozen means untouched, whatever AdamW's weight decay does with a zero gradient: the values
    // saved on the device at the start of the run are put back (device to device).
    for (std::size_t k = 0, at = 0; k < frozen_.size(); at += frozen_[k].size, ++k)
        backend.copy(params.data() + frozen_[k].offset, frozen_values_.data() + at,
                     frozen_[k].size * sizeof(float), Backend::CopyKind::device_to_device);
    ++step_;
    return true;
}

void TrainingLoop::write_checkpoint_file(const std::string& path, bool with_state,
                                         const Objective& objective, const BestMark* best) {
    if (comm_->rank() != 0) return;
    TrainState st;
    if (with_state) {
        st.step = step_;
        st.tokens_seen = tokens_seen_;
        st.data_position = data_position_;
        st.rng_state = {static_cast<std::uint64_t>(config_.train.seed),
                        static_cast<std::uint64_t>(step_)};
        st.adam_m = optimizer_->m();
        st.adam_v = optimizer_->v();
        objective.save_state(st);
    }
    try {
        // The writer stages the parameters to the host itself (one download).
        write_checkpoint(path, config_, model_.params(),
                         {tokenizer_.kind(), tokenizer_.serialize()}, with_state ? &st : nullptr,
                         device_name(model_.device()), best);
    } catch (const FormatError& e) {
        // The writer refuses non-finite parameters: the update diverged though the loss was
        // finite. Said as a divergence (a "diverged" record in the log, as for a loss), naming
        // the parameter but not the writer's temporary file, which is gone.
        std::string where = e.what();
        if (const auto at = where.find(": /"); at != std::string::npos)
            where = where.substr(at + 2);
        stop_diverged(step_, "parameters are no longer finite after the update (" + where + ")",
                      "though the loss was finite");
    }
}

void TrainingLoop::save_checkpoint(const Objective& objective) {
    write_checkpoint_file(checkpoint_path(), /*with_state=*/true, objective);
    last_checkpoint_step_ = step_;
    nlohmann::ordered_json r;
    r["type"] = "checkpoint";
    r["step"] = step_;
    r["path"] = checkpoint_path();
    if (config_.train.keep_checkpoints) {
        // The history: this step's weights, kept beside the resumable model.ckpt.h5.
        const std::string kept = kept_checkpoint_path(step_);
        write_checkpoint_file(kept, /*with_state=*/false, objective);
        r["kept"] = kept;
    }
    log_record(r);
}

std::string TrainingLoop::kept_checkpoint_path(std::int64_t step) const {
    return (fs::path(options_.out_dir) / ("step-" + std::to_string(step) + ".ckpt.h5")).string();
}

void TrainingLoop::diverged(double loss, double grad_norm) {
    stop_diverged(step_ + 1,
                  !std::isfinite(loss) ? "loss is " + number_text(loss)
                                       : "gradient norm is " + number_text(grad_norm),
                  {});
}

void TrainingLoop::stop_diverged(std::int64_t bad, const std::string& what,
                                 const std::string& cause) {
    nlohmann::ordered_json r;
    r["type"] = "diverged";
    r["step"] = bad;
    r["message"] = what;
    log_record(r);
    throw TrainingDiverged("step " + std::to_string(bad) + ": the " + what + " (" +
                           (cause.empty() ? std::string() : cause + ", ") +
                           "train.lr = " + number_text(config_.train.lr) + "); training stopped. " +
                           (last_checkpoint_step_ >= 0
                                ? "The last good checkpoint, " + checkpoint_path() + " (step " +
                                      std::to_string(last_checkpoint_step_) + "), is intact."
                                : std::string("No checkpoint had been written yet.")));
}

TrainResult TrainingLoop::run(Objective& objective) {
    const TrainConfig& tc = config_.train;
    ParamStore& params = model_.params();
    std::size_t frozen_size = 0;
    for (const auto& e : frozen_)
        frozen_size += e.size;
    frozen_values_ = DeviceArray<float>(model_.backend(), frozen_size);
    for (std::size_t k = 0, at = 0; k < frozen_.size(); at += frozen_[k].size, ++k)
        model_.backend().copy(frozen_values_.data() + at, params.data() + frozen_[k].offset,
                              frozen_[k].size * sizeof(float), Backend::CopyKind::device_to_device);

    TrainResult result;
    result.checkpoint = checkpoint_path();
    {
        nlohmann::ordered_json start;
        start["type"] = "start";
        start["step"] = step_;
        start["steps"] = tc.steps;
        start["resumed"] = resumed_;
        start["objective"] = tc.objective;
        start["parameters"] = params.size();
        start["vocab_size"] = config_.model.vocab_size;
        // Numbers, as "parameters" counts them (it was the number of frozen tensors).
        std::size_t frozen_numbers = 0;
        for (const auto& e : frozen_)
            frozen_numbers += e.size;
        start["frozen_parameters"] = frozen_numbers;
        start["threads"] = model_.pool().size();
        start["device"] = device_name(model_.device());
        start["precision"] = precision_name(model_.backend().precision());
        if (comm_->size() > 1) {
            start["ranks"] = comm_->size();
            start["global_batch"] = static_cast<std::int64_t>(comm_->size()) * tc.batch_size;
        }
        objective.describe(start);
        log_record(start);
    }

    if (step_ >= tc.steps || (options_.until > 0 && step_ >= options_.until)) {
        // Nothing to train (train.steps = 0, or a resumed run already there, or at --until):
        // the model as it is, evaluated and saved, unless this step's checkpoint exists
        // (docs/decisions.md). --until at the checkpoint's step trained one more step.
        if (last_checkpoint_step_ != step_) {
            objective.evaluate(*this);
            save_checkpoint(objective);
        }
        result.step = step_;
        if (step_ < tc.steps) result.status = TrainResult::Status::until;
        return result;
    }

    objective.before_first_step(*this);

    const auto t0 = Clock::now();
    const std::int64_t first = step_;
    const std::int64_t tokens_per_step = static_cast<std::int64_t>(tc.batch_size) * tc.grad_accum *
                                         config_.data.seq_len * comm_->size();
    while (step_ < tc.steps) {
        double loss = 0, grad_norm = 0, lr = 0;
        if (!train_step(objective, loss, grad_norm, lr)) diverged(loss, grad_norm);
        const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        const auto done = static_cast<double>(step_ - first);
        nlohmann::ordered_json r;
        r["type"] = "step";
        r["step"] = step_;
        r["loss"] = loss;
        r["lr"] = lr;
        r["grad_norm"] = grad_norm;
        r["tokens_per_s"] =
            elapsed > 0 ? done * static_cast<double>(tokens_per_step) / elapsed : 0.0;
        r["elapsed"] = elapsed;
        r["eta"] = elapsed / done * static_cast<double>(tc.steps - step_);
        log_record(r);
        result.last_loss = loss;

        const bool last = step_ == tc.steps;
        const bool until = options_.until > 0 && step_ >= options_.until;
        objective.after_step(*this);
        // A signal reaches the ranks at different times: every rank stops after the same step.
        const bool interrupted = comm_->size() > 1
                                     ? dist::first_rank_with(*comm_, StopSignal::requested()) >= 0
                                     : StopSignal::requested();
        if ((tc.eval_every > 0 && step_ % tc.eval_every == 0) || last ||
            objective.extra_evaluation_due(step_))
            objective.evaluate(*this);
        if ((tc.checkpoint_every > 0 && step_ % tc.checkpoint_every == 0) || last || until ||
            interrupted)
            save_checkpoint(objective);
        if (interrupted && !last) {
            result.status = TrainResult::Status::interrupted;
            break;
        }
        if (until && !last) {
            result.status = TrainResult::Status::until;
            break;
        }
    }
    result.step = step_;
    return result;
}

std::int64_t steps_per_epoch(const TrainConfig& t, std::int64_t examples, int ranks) {
    const std::int64_t rows_per_step = std::int64_t(t.batch_size) * t.grad_accum * ranks;
    return std::max<std::int64_t>(1, (examples + rows_per_step - 1) / rows_per_step);
}

void apply_epochs(TrainConfig& t, std::int64_t per_epoch) {
    if (t.epochs <= 0) return;
    if (t.epochs > std::numeric_limits<std::int64_t>::max() / per_epoch)
        throw ConfigError("train.epochs: " + std::to_string(t.epochs) + " epochs of " +
                          std::to_string(per_epoch) +
                          " steps each are more steps than a run can count (2^63 − 1)");
    t.steps = t.epochs * per_epoch;
}

}  // namespace routescope::train
