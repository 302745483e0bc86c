#include "engine/train/finetuner.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "engine/core/error.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/task.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/train/causal_capability.hpp"
#include "engine/train/run_inputs.hpp"
#include "engine/train/set_evaluation.hpp"

namespace routescope::train {

namespace fs = std::filesystem;

namespace {

// The value of a "best" record (or of a start record's "best"): the metric it names.
std::optional<double> record_value(const nlohmann::json& j) {
    for (const char* key : {"accuracy", "exact_match"})
        if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
    return std::nullopt;
}

// What a best.ckpt.h5 says it holds: its root attributes best_value and best_step (written with
// it, finetuner.hpp). nullopt for a file without them (written before they were) or unreadable.
std::optional<BestMark> best_mark(const std::string& best_path) {
    std::error_code ec;
    if (!fs::is_regular_file(best_path, ec)) return std::nullopt;  // a named pipe would block
    try {
        h5::quiet_errors();
        const H5::H5File f = h5::open_read(best_path);
        const auto value = h5::read_float_attr(f, kBestValueAttr);
        const auto step = h5::read_int_attr(f, kBestStepAttr);
        if (value && step && std::isfinite(*value) && *step >= 0)
            return BestMark{*step, "", *value};
    } catch (const H5::Exception&) {
    } catch (const Error&) {
    }
    return std::nullopt;
}

// The best validation metric of a resumed run and its step: the best of
// - the "eval" records of `log_path` up to `step` (the first maximum: a record is "best" when it
//   beats every earlier one), and the best an earlier resume's "start" record carried;
// - what the run's best.ckpt.h5 (`best_path`) says it holds. A run that went on past `step` and
//   then lost its model.ckpt.h5 save (a full disk, kill -9) left a best.ckpt.h5 of a later step;
//   counting the log up to `step` alone, the next, worse, evaluation replaced it. A best.ckpt.h5
//   without the attributes (an older build's) is taken as the log's last "best" record past
//   `step`, read before the log is cut back; the start record then carries it on.
// While best.ckpt.h5 exists its metric must be known, so a log that is missing or cannot be read
// is refused (ConfigError / IoError naming it, exit 2) rather than taken as "no evaluation yet",
// which replaced best.ckpt.h5 with the next, worse, model. Without a best.ckpt.h5 the run has no
// best to keep and the next evaluation becomes it.
void best_from_log(const std::string& log_path, const std::string& best_path, std::int64_t step,
                   double& best, std::int64_t& best_step) {
    data::require_regular_file(log_path, "training log");  // a named pipe blocked the resume
    std::error_code ec;
    const bool has_best = fs::exists(best_path, ec);
    if (!fs::exists(log_path, ec)) {
        if (!has_best) return;
        throw ConfigError(log_path + ": missing, so the validation metric of " + best_path +
                          " is unknown and a worse model could replace it; put the run's "
                          "log.jsonl back, or move " +
                          best_path + " out of the run directory to resume without it");
    }
    std::ifstream in(log_path);
    if (!in)
        throw IoError(log_path + ": cannot read the training log (" + std::strerror(errno) +
                      "), so the validation metric of " + best_path + " is unknown");
    const auto consider = [&](double value, std::int64_t at) {
        if (value > best) {
            best = value;
            best_step = at;
        }
    };
    const std::optional<BestMark> mark = has_best ? best_mark(best_path) : std::nullopt;
    std::optional<BestMark> later;  // the last "best" record past `step`
    std::string line;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded() || !j.is_object() || !j.contains("step") ||
            !j["step"].is_number_integer())
            continue;
        const auto s = j["step"].get<std::int64_t>();
        // A hand-edited "type": 3 is no record type (value() would throw nlohmann's type_error,
        // an internal error rather than a skipped line).
        const std::string type =
            j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
        if (type == "eval" && s <= step && j.contains("accuracy") && j["accuracy"].is_number()) {
            consider(j["accuracy"].get<double>(), s);
        } else if (type == "start" && s <= step && j.contains("best") && j["best"].is_object() &&
                   j["best"].contains("step") && j["best"]["step"].is_number_integer()) {
            if (const auto v = record_value(j["best"]))
                consider(*v, j["best"]["step"].get<std::int64_t>());
        } else if (type == "best" && s > step && has_best && !mark) {
            if (const auto v = record_value(j)) later = BestMark{s, "", *v};
        }
    }
    if (mark) consider(mark->value, mark->step);
    if (later) consider(later->value, later->step);
}

}  // namespace

bool is_finetuning(const RunConfig& c) {
    // A task with a causal objective is pretraining on the task's examples (trainer.hpp).
    return c.train.objective == "classify" ||
           (c.data.task && !c.data.task->empty() && !is_causal_objective(c.train.objective));
}

Finetuner::Finetuner(RunConfig config, FinetuneOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
    apply_threads(options_, config_);
    absolutize_paths(config_);
    prepare_output();
    if (config_.data.task && !config_.data.task->empty())
        prepare_task();
    else
        prepare_classification();
    build_model(/*pretrained=*/config_.train.init_from.has_value());
    loop_ = std::make_unique<TrainingLoop>(config_, *model_, *tokenizer_, training_examples(),
                                           LoopOptions(options_));
}

Finetuner::Finetuner(ResumeTag, RunConfig config, FinetuneOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
    apply_threads(options_, config_);
}

std::unique_ptr<Finetuner> Finetuner::resume(const std::string& checkpoint_path,
                                             const std::vector<std::string>& overrides,
                                             FinetuneOptions options) {
    ResumePoint point = read_resume_point(checkpoint_path, overrides);
    const Checkpoint& ck = point.checkpoint;
    RunConfig& config = point.config;
    if (!is_finetuning(config))
        throw ConfigError(checkpoint_path + ": train.objective = " + config.train.objective +
                          " is not a fine-tuning run");
    std::unique_ptr<Finetuner> t(new Finetuner(ResumeTag{}, std::move(config), std::move(options)));
    t->prepare_output();
    // The run's own tokenizer: the data are encoded exactly as before.
    t->tokenizer_ = checkpoint_tokenizer(ck, checkpoint_path, {}, &t->config_);
    const std::vector<std::string> labels =
        t->config_.data.labels.value_or(std::vector<std::string>{});
    const ModelConfig model = t->config_.model;
    if (t->config_.data.task && !t->config_.data.task->empty())
        t->prepare_task();
    else
        t->prepare_classification();
    if (t->config_.data.labels.value_or(std::vector<std::string>{}) != labels ||
        t->config_.model.n_labels != model.n_labels)
        throw ConfigError("data.labels: the training data of " + checkpoint_path +
                          " no longer give its labels (data.train or data.task_params changed?)");
    t->config_.model = model;  // the checkpoint's (train.init_from's architecture merged in)
    t->build_model(/*pretrained=*/false);
    // The steps train.epochs gives, below the checkpoint's step: nothing would run, and nothing
    // did (exit 0), as with a train.steps below it (read_resume_point).
    if (t->config_.train.epochs > 0 && t->config_.train.steps < ck.train->step)
        throw ConfigError("train.epochs: " + std::to_string(t->config_.train.epochs) +
                          " epoch(s) are " + std::to_string(t->config_.train.steps) +
                          " steps, but " + checkpoint_path + " is at step " +
                          std::to_string(ck.train->step) +
                          ": a resumed run trains on to the end of its epochs, so give more "
                          "epochs than that");
    load_params(ck, t->model_->params());
    // The best checkpoint so far: the log's up to the checkpoint's step, or the one best.ckpt.h5
    // says it holds (of a later step when the run went on and its next save failed).
    best_from_log((fs::path(t->options_.out_dir) / kLogName).string(), t->best_checkpoint_path(),
                  ck.train->step, t->best_metric_, t->best_step_);
    t->loop_ = std::make_unique<TrainingLoop>(t->config_, *t->model_, *t->tokenizer_,
                                              t->training_examples(), LoopOptions(t->options_),
                                              &*ck.train, checkpoint_path);
    return t;
}

Finetuner::~Finetuner() = default;

void Finetuner::prepare_output() {
    if (config_.train.batch_size < 1) throw ConfigError("train.batch_size: must be at least 1");
    if (config_.train.grad_accum < 1) throw ConfigError("train.grad_accum: must be at least 1");
    std::error_code ec;
    fs::create_directories(options_.out_dir, ec);
    if (ec || !fs::is_directory(options_.out_dir))
        throw IoError(options_.out_dir + ": cannot create the output directory (" + ec.message() +
                      ")");
}

std::string Finetuner::best_checkpoint_path() const {
    return (fs::path(options_.out_dir) / kBestCheckpointName).string();
}

void Finetuner::prepare_task() {
    const data::TaskData task = run_task(config_);
    if (!tokenizer_)
        tokenizer_ = task_tokenizer(task);
    else if (tokenizer_->vocabulary() != task.vocab)
        throw ConfigError("data.task: the checkpoint's vocabulary is not task " + task.name +
                          "'s (data.task_params changed?)");
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
    // The classification files and the tokenizer (run_inputs.hpp); a resumed run keeps its
    // checkpoint's, train.init_from gives the pretrained one's.
    const bool from_scratch = !tokenizer_ && !config_.train.init_from;
    ClassificationInputs in = classification_inputs(config_, std::move(tokenizer_));
    tokenizer_ = std::move(in.tokenizer);
    if (from_scratch) config_.model.vocab_size = tokenizer_->vocab_size();
    config_.model.n_labels = static_cast<int>(in.labels.size());
    config_.data.labels = std::move(in.labels);
    config_.data.pairs = in.pairs;
    train_ = std::move(in.train);
    valid_ = std::move(in.valid);
    valid_is_train_ = in.valid_is_train;
    no_consensus_ = in.no_consensus;
    config_.train.objective = "classify";
    check_coverage();
}

void Finetuner::check_coverage() {
    // A tokenizer that does not cover the text (a checkpoint trained on a built-in task's symbols,
    // or on another language) reads it as [UNK]s, and the classifier learns from lengths alone.
    const UnknownTokens unknown = unknown_tokens(train_, *tokenizer_);
    unk_fraction_ = unknown.fraction();
    const std::string by =
        "the " + tokenizer_->kind() + " tokenizer (" + std::to_string(tokenizer_->vocab_size()) +
        " ids" + (config_.train.init_from ? ", from " + *config_.train.init_from : "") + ")";
    if (unknown.all())
        throw ConfigError(train_.source + ": every token is [UNK] under " + by +
                          ": the model cannot read this text (fine-tune a checkpoint whose "
                          "vocabulary covers its language)");
}

void Finetuner::build_model(bool pretrained) {
    std::optional<Checkpoint> ck;
    if (pretrained) {
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
    // An epoch is counted in global batches (training_loop.hpp, steps_per_epoch).
    steps_per_epoch_ = steps_per_epoch(
        config_.train, static_cast<std::int64_t>(train_.examples.size()), dist::world().size());
    apply_epochs(config_.train, steps_per_epoch_);
    model_ = std::make_unique<models::Model>(config_, B, config_.data.seq_len,
                                             config_.train.threads, options_.device);
    model_->backend().set_precision(parse_precision(config_.train.precision));
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
            store.upload_entry(e.name, ck->params.data() + it->offset);
        }
    }
    // Padded with the tokenizer's [PAD], as pretraining's packed sequences are (0 when it has none,
    // as the trainer pads): a model that reads the padding saw 0 here, the pretrained one's
    // <unk> for a SentencePiece model whose [PAD] is 3.
    batch_ = std::make_unique<HostBatch>(B, config_.data.seq_len,
                                         std::max(0, tokenizer_->specials().pad));
}

Objective::MicroBatch Finetuner::micro_batch(std::span<const std::int64_t> examples,
                                             std::int64_t /*step*/, std::int64_t /*row_base*/) {
    std::int64_t tokens = 0;
    for (int b = 0; b < batch_->rows(); ++b)
        tokens +=
            batch_->put(b, train_.examples[static_cast<std::size_t>(examples[b])], train_.source);
    return {batch_->view(train_.targets ? HostBatch::Head::mlm : HostBatch::Head::classification,
                         config_.model.type_embeddings),
            tokens};
}

void Finetuner::write_best_checkpoint(TrainingLoop& loop, const std::string& metric) {
    // One atomic write of the model with what it holds (its best_* root attributes), as every
    // checkpoint is written; rank 0 alone writes.
    const BestMark mark{best_step_, metric, best_metric_};
    loop.write_checkpoint_file(best_checkpoint_path(), /*with_state=*/false, *this, &mark);
}

void Finetuner::evaluate(TrainingLoop& loop) {
    const std::int64_t step = loop.step();
    const auto predictions = predict_set(*model_, valid_);
    const SetScore s = score_set(valid_, predictions);
    nlohmann::ordered_json r;
    r["type"] = "eval";
    r["step"] = step;
    r["epoch"] = static_cast<double>(step) / static_cast<double>(steps_per_epoch_);
    r["loss"] = s.loss;
    r["accuracy"] = s.accuracy;
    r["metric"] = s.metric;
    if (s.macro_f1 >= 0) r["macro_f1"] = s.macro_f1;
    r["examples"] = s.scored;
    r["held_out"] = valid_is_train_ ? "train" : "valid";
    r["objective"] = config_.train.objective;
    loop.log_record(r);
    if (s.accuracy > best_metric_) {
        best_metric_ = s.accuracy;
        best_step_ = step;
        write_best_checkpoint(loop, s.metric);
        nlohmann::ordered_json b;
        b["type"] = "best";
        b["step"] = step;
        b[s.metric] = s.accuracy;
        b["path"] = best_checkpoint_path();
        loop.log_record(b);
    }
}

void Finetuner::describe(nlohmann::ordered_json& start) const {
    const TrainConfig& tc = config_.train;
    if (config_.data.task) start["task"] = *config_.data.task;
    start["n_labels"] = config_.model.n_labels;
    start["train_sequences"] = train_.examples.size();
    start["valid_sequences"] = valid_.examples.size();
    // Filler between a pair's sentences (data.pair_gap): the run's gap, beside its data.
    if (!config_.data.task || config_.data.task->empty()) start["pair_gap"] = config_.data.pair_gap;
    // Rows whose gold_label is "-" (SNLI: no consensus), left out of the files: said, not silent.
    if (no_consensus_ > 0) start["left_out_no_consensus"] = no_consensus_;
    start["steps_per_epoch"] = steps_per_epoch_;
    start["init_from"] = tc.init_from ? nlohmann::ordered_json(*tc.init_from) : nullptr;
    start["initialised_fresh"] = fresh_;
    // The share of the training file's tokens the tokenizer reads as [UNK] (the framing
    // specials left out): high, and the model sees little of the text.
    if (!config_.data.task || config_.data.task->empty())
        start["unk_fraction"] = std::round(unk_fraction_ * 1e4) / 1e4;
    // A resumed run's best so far (what best.ckpt.h5 holds, maybe of a step past this one): said
    // in its log, where a later resume finds it after the records past its step are cut.
    if (best_step_ >= 0) {
        nlohmann::ordered_json best;
        best["step"] = best_step_;
        best[valid_.metric == data::TaskMetric::ExactMatch ? "exact_match" : "accuracy"] =
            best_metric_;
        start["best"] = best;
    }
}

FinetuneResult Finetuner::run() {
    const TrainResult r = loop_->run(*this);
    FinetuneResult result;
    result.step = r.step;
    result.checkpoint = r.checkpoint;
    result.best_checkpoint = best_checkpoint_path();
    result.best_metric = best_metric_;
    result.best_step = best_step_;
    result.interrupted = r.status == TrainResult::Status::interrupted;
    result.status = r.status;
    return result;
}

}  // namespace routescope::train
