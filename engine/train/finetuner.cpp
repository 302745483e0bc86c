#include "engine/train/finetuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>

#include "engine/core/error.hpp"
#include "engine/data/byte_tokenizer.hpp"
#include "engine/data/classification_set.hpp"
#include "engine/data/task.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/train/causal_capability.hpp"
#include "engine/train/set_evaluation.hpp"
#include "engine/train/stop_signal.hpp"
#include "engine/train/trainer.hpp"

namespace routescope::train {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

bool is_ssm_param(const std::string& name) {
    return name.find(".ssm_forward.") != std::string::npos ||
           name.find(".ssm_backward.") != std::string::npos;
}

void absolutize(std::optional<std::string>& path) {
    if (path && !path->empty()) *path = fs::absolute(*path).lexically_normal().string();
}

// The task's pieces as a WordPiece vocab.txt: one piece per line, id = line (docs/decisions.md).
std::string vocab_text(const std::vector<std::string>& pieces) {
    std::string text;
    for (const auto& p : pieces)
        text += p + "\n";
    return text;
}

}  // namespace

bool is_finetuning(const RunConfig& c) {
    // A task with a causal objective is pretraining on the task's examples (trainer.hpp).
    return c.train.objective == "classify" ||
           (c.data.task && !c.data.task->empty() && !is_causal_objective(c.train.objective));
}

Finetuner::Finetuner(RunConfig config, FinetuneOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
    if (options_.threads > 0) config_.train.threads = options_.threads;
    if (config_.train.batch_size < 1) throw ConfigError("train.batch_size: must be at least 1");
    absolutize(config_.data.train);
    absolutize(config_.data.valid);
    absolutize(config_.train.init_from);
    std::error_code ec;
    fs::create_directories(options_.out_dir, ec);
    if (ec || !fs::is_directory(options_.out_dir))
        throw IoError(options_.out_dir + ": cannot create the output directory (" + ec.message() +
                      ")");
    if (config_.data.task && !config_.data.task->empty())
        prepare_task();
    else
        prepare_classification();
    build_model();
    log_ =
        std::make_unique<TrainingLog>((fs::path(options_.out_dir) / kLogName).string(), false, 0);
}

Finetuner::~Finetuner() = default;

void Finetuner::prepare_task() {
    const data::TaskData task =
        data::generate_task(*config_.data.task, task_params(config_.data.task_params));
    tokenizer_ = std::make_unique<data::WordPieceTokenizer>(vocab_text(task.vocab));
    train_ = task_examples(task, 0);
    valid_ = task_examples(task, 1);
    if (train_.examples.empty())
        throw ConfigError("data.task_params.n_train: task " + task.name +
                          " has no training examples");
    if (valid_.examples.empty()) {
        valid_ = train_;
        valid_is_train_ = true;
    }
    config_.tokenizer.kind = "wordpiece";
    config_.tokenizer.model.reset();
    config_.model.vocab_size = tokenizer_->vocab_size();
    config_.train.objective = task.n_classes > 0 ? "classify" : "mlm";
    config_.model.n_labels = task.n_classes;
    if (task.n_classes > 0)
        config_.data.labels = train_.labels;
    else
        config_.data.labels.reset();
    // The sequence length is the longest example of any split, so eval sees the same shapes.
    const int longest =
        std::max({train_.max_length(), valid_.max_length(), task_examples(task, 2).max_length()});
    if (longest > config_.model.max_len)
        throw ConfigError(
            "model.max_len: task " + task.name + " has examples of " + std::to_string(longest) +
            " tokens, longer than model.max_len = " + std::to_string(config_.model.max_len));
    config_.data.seq_len = longest;
}

void Finetuner::prepare_classification() {
    if (!config_.data.train || config_.data.train->empty())
        throw ConfigError(
            "data.train: no classification file given (TSV with a header or JSON "
            "Lines; --set data.train=FILE), nor a built-in data.task");
    data::ClassificationSet train = data::read_classification(*config_.data.train);
    if (train.labels.size() < 2)
        throw FormatError(train.path + ": a classifier needs at least 2 distinct labels, found " +
                          std::to_string(train.labels.size()));
    if (!config_.train.init_from) {
        if (config_.tokenizer.kind == "bytes")
            tokenizer_ = std::make_unique<data::ByteTokenizer>();
        else if (config_.tokenizer.model)
            tokenizer_ =
                data::load_tokenizer_file(config_.tokenizer.kind, *config_.tokenizer.model);
        else
            throw ConfigError(
                "tokenizer.model: fine-tuning from scratch needs tokenizer.kind = "
                "bytes or a tokenizer file (or train.init_from a checkpoint)");
        config_.model.vocab_size = tokenizer_->vocab_size();
    }
    // With init_from the tokenizer is the checkpoint's, loaded in build_model() first.
    if (config_.train.init_from) {
        const Checkpoint ck = read_checkpoint(*config_.train.init_from);
        tokenizer_ = data::load_tokenizer(ck.tokenizer.kind, ck.tokenizer.model);
    }
    config_.model.n_labels = static_cast<int>(train.labels.size());
    config_.data.labels = train.labels;
    train_ = classification_examples(train, *tokenizer_, config_.data.seq_len);
    if (config_.data.valid && !config_.data.valid->empty()) {
        data::ClassificationSet valid = data::read_classification(*config_.data.valid);
        if (valid.pairs != train.pairs)
            throw FormatError(valid.path + ": " + (valid.pairs ? "pairs" : "single sentences") +
                              " but the training file " + train.path + " has " +
                              (train.pairs ? "pairs" : "single sentences"));
        data::assign_label_ids(valid, train.labels);
        valid.labels = train.labels;
        valid_ = classification_examples(valid, *tokenizer_, config_.data.seq_len);
    } else {
        valid_ = train_;
        valid_is_train_ = true;
    }
    config_.train.objective = "classify";
}

void Finetuner::build_model() {
    std::optional<Checkpoint> ck;
    if (config_.train.init_from) {
        ck = read_checkpoint(*config_.train.init_from);
        // The pretrained model's architecture and tokenizer; the head and pooling are this run's.
        ModelConfig m = ck->config.model;
        m.n_labels = config_.model.n_labels;
        m.pool = config_.model.pool;
        m.dropout = config_.model.dropout;
        const auto ck_vocab = data::load_tokenizer(ck->tokenizer.kind, ck->tokenizer.model);
        if (ck_vocab->vocabulary() != tokenizer_->vocabulary())
            throw ConfigError("train.init_from: " + *config_.train.init_from +
                              " has a different vocabulary (" +
                              std::to_string(ck_vocab->vocab_size()) + " ids) than this run's " +
                              tokenizer_->kind() + " tokenizer (" +
                              std::to_string(tokenizer_->vocab_size()) + " ids)");
        config_.model = m;
        config_.tokenizer = ck->config.tokenizer;
        if (config_.data.seq_len > m.max_len)
            throw ConfigError(
                "data.seq_len: " + std::to_string(config_.data.seq_len) +
                " is longer than the checkpoint's model.max_len = " + std::to_string(m.max_len));
    }
    const int B = config_.train.batch_size;
    steps_per_epoch_ = (static_cast<std::int64_t>(train_.examples.size()) + B - 1) / B;
    if (config_.train.epochs > 0) config_.train.steps = config_.train.epochs * steps_per_epoch_;
    model_ =
        std::make_unique<models::Model>(config_, B, config_.data.seq_len, config_.train.threads);
    model_->init(static_cast<std::uint64_t>(config_.train.seed));
    ParamStore& store = model_->params();
    if (ck) {
        for (const auto& e : store.entries()) {
            const auto it = std::find_if(ck->layout.begin(), ck->layout.end(),
                                         [&](const ParamEntry& c) { return c.name == e.name; });
            if (it == ck->layout.end()) {
                fresh_.push_back(e.name);
                continue;
            }
            if (it->shape != e.shape) {
                // A head trained for another label set starts afresh; the encoder must match.
                if (e.name.starts_with("classifier.")) {
                    fresh_.push_back(e.name);
                    continue;
                }
                throw ConfigError("train.init_from: " + *config_.train.init_from + ": /params/" +
                                  e.name + " has another shape than this model's");
            }
            std::copy_n(ck->params.data() + it->offset, e.size, store.data() + e.offset);
        }
    }
    if (config_.train.freeze_ssm)
        for (const auto& e : store.entries())
            if (is_ssm_param(e.name)) frozen_.push_back(e);
    optimizer_ = std::make_unique<AdamW>(config_.train, store);
}

void Finetuner::log_record(const nlohmann::ordered_json& record) {
    log_->write(record);
    if (options_.on_record) options_.on_record(record);
}

void Finetuner::save(const std::string& path, bool with_state) {
    TrainState st;
    st.step = step_;
    st.data_position = step_ * config_.train.batch_size;
    st.rng_state = {static_cast<std::uint64_t>(config_.train.seed),
                    static_cast<std::uint64_t>(step_)};
    st.adam_m = optimizer_->m();
    st.adam_v = optimizer_->v();
    try {
        write_checkpoint(path, config_, model_->params(),
                         {tokenizer_->kind(), tokenizer_->serialize()}, with_state ? &st : nullptr);
    } catch (const FormatError& e) {
        throw TrainingDiverged("step " + std::to_string(step_) +
                               ": the parameters are no longer finite (" + e.what() +
                               "); training stopped, the last good checkpoint is untouched");
    }
}

void Finetuner::evaluate(FinetuneResult& result) {
    const auto predictions = predict_set(*model_, valid_);
    const SetScore s = score_set(valid_, predictions);
    nlohmann::ordered_json r;
    r["type"] = "eval";
    r["step"] = step_;
    r["epoch"] = static_cast<double>(step_) / static_cast<double>(steps_per_epoch_);
    r["loss"] = s.loss;
    r["accuracy"] = s.accuracy;
    r["metric"] = s.metric;
    if (s.macro_f1 >= 0) r["macro_f1"] = s.macro_f1;
    r["examples"] = s.scored;
    r["held_out"] = valid_is_train_ ? "train" : "valid";
    log_record(r);
    if (s.accuracy > result.best_metric) {
        result.best_metric = s.accuracy;
        result.best_step = step_;
        save(result.best_checkpoint, /*with_state=*/false);
        nlohmann::ordered_json b;
        b["type"] = "best";
        b["step"] = step_;
        b[s.metric] = s.accuracy;
        b["path"] = result.best_checkpoint;
        log_record(b);
    }
}

FinetuneResult Finetuner::run() {
    const TrainConfig& tc = config_.train;
    FinetuneResult result;
    result.checkpoint = (fs::path(options_.out_dir) / kCheckpointName).string();
    result.best_checkpoint = (fs::path(options_.out_dir) / kBestCheckpointName).string();
    {
        nlohmann::ordered_json start;
        start["type"] = "start";
        start["step"] = step_;
        start["steps"] = tc.steps;
        start["objective"] = tc.objective;
        if (config_.data.task) start["task"] = *config_.data.task;
        start["parameters"] = model_->params().size();
        start["vocab_size"] = config_.model.vocab_size;
        start["n_labels"] = config_.model.n_labels;
        start["train_sequences"] = train_.examples.size();
        start["valid_sequences"] = valid_.examples.size();
        start["steps_per_epoch"] = steps_per_epoch_;
        start["init_from"] = tc.init_from ? nlohmann::ordered_json(*tc.init_from) : nullptr;
        start["initialised_fresh"] = fresh_;
        start["frozen_parameters"] = frozen_.size();
        start["threads"] = model_->pool().size();
        log_record(start);
    }
    const int B = tc.batch_size, L = config_.data.seq_len;
    const bool types = config_.model.type_embeddings;
    const auto n = static_cast<std::int64_t>(train_.examples.size());
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(B) * L), segs(tokens.size()),
        labels(tokens.size()), lengths(static_cast<std::size_t>(B)),
        classes(static_cast<std::size_t>(B));
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::int64_t order_epoch = -1;
    std::vector<std::vector<float>> frozen_values;
    for (const auto& e : frozen_)
        frozen_values.emplace_back(model_->params().data() + e.offset,
                                   model_->params().data() + e.offset + e.size);
    ParamStore& params = model_->params();
    const auto t0 = Clock::now();
    while (step_ < tc.steps) {
        // Example order: a fresh permutation per epoch, a pure function of (seed, epoch).
        std::fill(tokens.begin(), tokens.end(), data::kPadId);
        std::fill(segs.begin(), segs.end(), 0);
        std::fill(labels.begin(), labels.end(), data::kIgnoreLabel);
        for (int b = 0; b < B; ++b) {
            const std::int64_t pos = step_ * B + b;
            const std::int64_t epoch = pos / n;
            if (epoch != order_epoch) {
                for (std::int64_t i = 0; i < n; ++i)
                    order[static_cast<std::size_t>(i)] = i;
                std::mt19937_64 rng(static_cast<std::uint64_t>(tc.seed) * 0x9E3779B97F4A7C15ULL +
                                    static_cast<std::uint64_t>(epoch));
                std::shuffle(order.begin(), order.end(), rng);
                order_epoch = epoch;
            }
            const auto& e =
                train_.examples[static_cast<std::size_t>(order[static_cast<std::size_t>(pos % n)])];
            const auto row = static_cast<std::size_t>(b) * L;
            std::copy(e.tokens.begin(), e.tokens.end(), tokens.begin() + row);
            std::copy(e.types.begin(), e.types.end(), segs.begin() + row);
            if (!e.targets.empty())
                std::copy(e.targets.begin(), e.targets.end(), labels.begin() + row);
            lengths[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(e.tokens.size());
            classes[static_cast<std::size_t>(b)] = e.label;
        }
        models::Batch batch;
        batch.tokens = tokens.data();
        batch.lengths = lengths.data();
        batch.types = types ? segs.data() : nullptr;
        if (train_.targets)
            batch.labels = labels.data();
        else
            batch.class_labels = classes.data();
        params.zero_grad();
        const double loss =
            model_->forward(batch, /*training=*/true, static_cast<std::uint32_t>(step_));
        if (!std::isfinite(loss))
            throw TrainingDiverged("step " + std::to_string(step_ + 1) +
                                   ": the loss is not finite (train.lr = " + std::to_string(tc.lr) +
                                   "); training stopped");
        model_->backward();
        for (const auto& e : frozen_)
            std::fill_n(params.grad_data() + e.offset, e.size, 0.0f);
        const double grad_norm = optimizer_->clip(params);
        if (!std::isfinite(grad_norm))
            throw TrainingDiverged("step " + std::to_string(step_ + 1) +
                                   ": the gradient norm is not finite; training stopped");
        const double lr = optimizer_->update(params, model_->pool());
        // Frozen means untouched: whatever the optimizer does with a zero gradient.
        for (std::size_t k = 0; k < frozen_.size(); ++k)
            std::copy(frozen_values[k].begin(), frozen_values[k].end(),
                      params.data() + frozen_[k].offset);
        ++step_;
        const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
        nlohmann::ordered_json r;
        r["type"] = "step";
        r["step"] = step_;
        r["loss"] = loss;
        r["lr"] = lr;
        r["grad_norm"] = grad_norm;
        r["tokens_per_s"] = elapsed > 0 ? static_cast<double>(step_) * B * L / elapsed : 0.0;
        r["elapsed"] = elapsed;
        r["eta"] = elapsed / static_cast<double>(step_) * static_cast<double>(tc.steps - step_);
        log_record(r);
        const bool last = step_ == tc.steps;
        const bool epoch_end = step_ % steps_per_epoch_ == 0;
        if (last || epoch_end || (tc.eval_every > 0 && step_ % tc.eval_every == 0))
            evaluate(result);
        const bool interrupted = StopSignal::requested() && !last;
        if (last || interrupted || (tc.checkpoint_every > 0 && step_ % tc.checkpoint_every == 0)) {
            save(result.checkpoint, /*with_state=*/true);
            nlohmann::ordered_json c;
            c["type"] = "checkpoint";
            c["step"] = step_;
            c["path"] = result.checkpoint;
            log_record(c);
        }
        if (interrupted) {
            result.interrupted = true;
            break;
        }
    }
    if (tc.steps == 0) {
        evaluate(result);
        save(result.checkpoint, true);
    }
    result.step = step_;
    return result;
}

}  // namespace routescope::train
