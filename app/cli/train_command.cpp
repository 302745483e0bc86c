// routescope-cli train --config run.json --out DIR [--set key=value ...] [--resume DIR]
//                      [--threads N] [--until STEP]
// Pretraining (train.objective mlm, clm, prefix_lm, birdie — the last three also on a built-in
// data.task: engine/train/trainer.hpp), or fine-tuning when train.objective = classify or data.task
// is set with another objective (engine/train/finetuner.hpp; also DIR/best.ckpt.h5); both run the
// same step loop (engine/train/training_loop.hpp), and --resume continues either, chosen by the
// checkpoint's configuration. Writes DIR/log.jsonl and DIR/model.ckpt.h5. On a terminal a progress
// bar with the ETA; otherwise the log's JSON lines on stdout (what the GUI's run launcher reads).
// Exit 0 done, 2 bad configuration or unreadable input, 3 failure at run time (a diverged loss
// included), 130 interrupted after saving a checkpoint.
//
// Under mpirun / srun (docs/scaling.md) every rank runs this command: each sets the run up, then
// they agree — a rank that failed prints its message, the others say which rank failed, and all
// exit with an error; ranks whose configuration or tokenizer differ from rank 0's all refuse. Rank
// 0 alone prints progress and writes the log and the checkpoints. A failure after setup (a
// checkpoint that cannot be written, a diverged loss) ends every rank through MPI_Abort, with the
// command's exit code; so does a rank that dies (mpirun ends the job).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

#include "app/cli/command.hpp"
#include "app/cli/device_option.hpp"
#include "app/cli/exit_codes.hpp"
#include "app/cli/input_check.hpp"
#include "app/cli/rank_agreement.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/data/utf8.hpp"
#include "engine/dist/communicator.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/output_lock.hpp"
#include "engine/train/finetuner.hpp"
#include "engine/train/run_inputs.hpp"
#include "engine/train/stop_signal.hpp"
#include "engine/train/trainer.hpp"

namespace routescope::cli {
namespace {

namespace fs = std::filesystem;

struct TrainArgs {
    std::string device = "cpu";
    std::string config;
    std::string out;
    std::string resume;
    std::string init;
    std::vector<std::string> sets;
    std::string precision;  ///< --precision: appended to sets as train.precision
    int threads = 0;
    std::int64_t until = 0;
    bool json = false;
    bool overwrite = false;  ///< --overwrite: a fresh run may replace the run in --out
    InputCheck check;
};

std::string clock_text(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    return buf;
}

// A one-line progress bar redrawn in place; eval and checkpoint records get their own lines.
class ProgressBar {
public:
    explicit ProgressBar(std::int64_t steps) : steps_(steps) {}
    void show(const nlohmann::ordered_json& r) {
        const std::string type = r.value("type", "");
        if (type == "step") {
            const double frac = steps_ > 0 ? double(r["step"].get<std::int64_t>()) / steps_ : 1.0;
            const int width = 30, full = static_cast<int>(frac * width);
            std::printf("\r[%s%s] %lld/%lld  loss %.4f  %.0f tok/s  elapsed %s  ETA %s ",
                        std::string(full, '#').c_str(), std::string(width - full, '.').c_str(),
                        static_cast<long long>(r["step"].get<std::int64_t>()),
                        static_cast<long long>(steps_), r["loss"].get<double>(),
                        r["tokens_per_s"].get<double>(), clock_text(r["elapsed"]).c_str(),
                        clock_text(r["eta"]).c_str());
        } else if (type == "eval" && r.contains("targets") &&
                   r["targets"].get<std::int64_t>() == 0) {
            std::printf("\n  eval at step %lld: no target scored (loss and accuracy null)\n",
                        static_cast<long long>(r["step"].get<std::int64_t>()));
        } else if (type == "eval") {
            std::printf(
                "\n  eval at step %lld: loss %.4f, %s %.3f (%lld %s)\n",
                static_cast<long long>(r["step"].get<std::int64_t>()), r["loss"].get<double>(),
                r.value("metric", "accuracy").c_str(), r["accuracy"].get<double>(),
                static_cast<long long>(r.contains("targets") ? r["targets"].get<std::int64_t>()
                                                             : r["examples"].get<std::int64_t>()),
                r.contains("targets") ? "targets" : "examples");
        } else if (type == "best") {
            std::printf("  best so far: %s\n", r["path"].get<std::string>().c_str());
        } else if (type == "checkpoint") {
            std::printf("\n  checkpoint %s (step %lld)\n", r["path"].get<std::string>().c_str(),
                        static_cast<long long>(r["step"].get<std::int64_t>()));
        } else if (type == "start") {
            std::printf("training %lld parameters, %lld training sequences, %lld threads\n",
                        static_cast<long long>(r["parameters"].get<std::int64_t>()),
                        static_cast<long long>(r["train_sequences"].get<std::int64_t>()),
                        static_cast<long long>(r["threads"].get<std::int64_t>()));
        }
        std::fflush(stdout);
    }

private:
    std::int64_t steps_;
};

// Data-parallel: after every rank's setup (`error` is its failure or null), the ranks agree (file
// comment). `fingerprint` is what every rank must share, part by part: each configuration key,
// the tokenizer, the data read and the step the run starts from. Afterwards a failure on one rank
// would leave the others waiting in a collective, so from here on run_train_on_ranks aborts the
// job on an error.
bool g_setup_agreed = false;

using Fingerprint = std::vector<std::pair<std::string, std::uint64_t>>;  // (part, digest)

void agree_after_setup(std::exception_ptr error, const std::function<Fingerprint()>& fingerprint) {
    dist::Communicator& w = dist::world();
    if (w.size() == 1) {
        if (error) std::rethrow_exception(error);
        return;
    }
    const int failed = agree_on_failure(w, error);
    const std::string where =
        "rank " + std::to_string(w.rank()) + " of " + std::to_string(w.size());
    if (failed >= 0)
        throw ConfigError(where + ": rank " + std::to_string(failed) +
                          " could not set the run up (its message says why); every rank stops");
    const Fingerprint parts = fingerprint();
    std::string names;
    for (const auto& p : parts)
        names += p.first + '\n';
    const std::string same_files =
        " (every rank must read the same configuration, corpus, tokenizer and checkpoint files)";
    // The parts' names first (the same on every rank of one build), then their digests.
    const auto layouts = dist::gather_all<std::uint64_t>(w, dist::fnv1a(names) ^ parts.size());
    // Every rank compares the same gathered digests and finds the same difference: rank 0 says it.
    if (w.rank() != 0) quiet_error_message();
    for (std::size_t r = 1; r < layouts.size(); ++r)
        if (layouts[r] != layouts[0])
            throw ConfigError(where + ": rank " + std::to_string(r) +
                              "'s configuration differs from rank 0's" + same_files);
    std::vector<std::uint64_t> mine, all(parts.size() * static_cast<std::size_t>(w.size()));
    for (const auto& p : parts)
        mine.push_back(p.second);
    w.allgather(mine.data(), all.data(), mine.size() * sizeof(std::uint64_t));
    for (std::size_t r = 1; r < static_cast<std::size_t>(w.size()); ++r)
        for (std::size_t k = 0; k < parts.size(); ++k)
            if (all[r * parts.size() + k] != all[k])
                throw ConfigError(where + ": rank " + std::to_string(r) + "'s " + parts[k].first +
                                  " differs from rank 0's" + same_files);
    g_setup_agreed = true;
    unquiet_error_message();
}

// A digest of int32 words (FNV-1a over each word): the data a rank packed.
struct WordDigest {
    std::uint64_t h = 1469598103934665603ULL;
    void add(const std::int32_t* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            h ^= static_cast<std::uint32_t>(p[i]);
            h *= 1099511628211ULL;
        }
    }
    void add(const std::vector<std::int32_t>& v) {
        add(static_cast<const std::int32_t*>(v.data()), v.size());
        const auto n = static_cast<std::int32_t>(v.size());  // where one example ends
        add(&n, 1);
    }
};

std::uint64_t digest_of(const train::SequenceSet& set) {
    WordDigest d;
    for (std::int64_t i = 0; i < set.size(); ++i) {
        d.add(set.ids(i), static_cast<std::size_t>(set.seq_len()));
        const std::int32_t n = set.length(i);
        d.add(&n, 1);
    }
    return d.h;
}

std::uint64_t digest_of(const train::LabelledSet& set) {
    WordDigest d;
    for (const auto& e : set.examples) {
        d.add(e.tokens);
        d.add(e.types);
        d.add(e.targets);
        d.add(&e.label, 1);
    }
    return d.h;
}

// A digest of the parameters a rank starts from (FNV-1a over their bytes, tensor by tensor, in
// the store's order), downloaded one tensor at a time: every rank initialises the same values from
// the seed, so a difference is a checkpoint (--init, train.init_from, --resume) read from another
// file's bytes, such as a node's stale copy at the same step.
std::uint64_t digest_of(const ParamStore& params) {
    std::uint64_t h = 1469598103934665603ULL;
    for (const ParamEntry& e : params.entries()) {
        const std::vector<float> values = params.download_entry(e.name);
        const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
        for (std::size_t i = 0; i < values.size() * sizeof(float); ++i) {
            h ^= bytes[i];
            h *= 1099511628211ULL;
        }
    }
    return h;
}

/// make() on every rank, then agree_after_setup on the fingerprint: every key of the
/// configuration, the tokenizer's bytes, the training and validation data as tokenized, the
/// step and the parameters the run starts from (a node whose copy of a checkpoint or corpus is
/// stale or partial would otherwise train other data, or from another step, in the same
/// collectives), and --until.
template <class Make>
auto set_up_together(Make&& make, std::int64_t until) {
    std::exception_ptr error;
    decltype(make()) made{};
    try {
        made = make();
    } catch (...) {
        error = std::current_exception();
    }
    agree_after_setup(error, [&] {
        Fingerprint parts;
        const nlohmann::json flat = nlohmann::json::parse(made->config().to_json_text()).flatten();
        for (const auto& [key, value] : flat.items()) {  // "/train/threads": train.threads
            std::string name = key.size() > 1 ? key.substr(1) : key;
            std::replace(name.begin(), name.end(), '/', '.');
            parts.emplace_back("configuration key " + name, dist::fnv1a(value.dump()));
        }
        if constexpr (requires { made->tokenizer(); }) {
            const std::vector<std::uint8_t> t = made->tokenizer().serialize();
            parts.emplace_back("tokenizer", dist::fnv1a(std::string(t.begin(), t.end())));
        }
        if constexpr (requires { made->corpus(); }) {
            parts.emplace_back("training data (the corpus as tokenized)",
                               digest_of(made->corpus().train));
            parts.emplace_back("held-out data (as tokenized)", digest_of(made->corpus().valid));
        } else {
            parts.emplace_back("training data (as tokenized)", digest_of(made->train_set()));
            parts.emplace_back("validation data (as tokenized)", digest_of(made->valid_set()));
        }
        parts.emplace_back("starting step (its checkpoint)",
                           static_cast<std::uint64_t>(made->step()));
        parts.emplace_back("starting state of the parameters (its checkpoint or initialisation)",
                           digest_of(made->model().params()));
        // Where the run stops: a rank given another --until left (or trained on) while the
        // others waited for it in the next step's collective, for ever.
        parts.emplace_back("--until", static_cast<std::uint64_t>(until));
        return parts;
    });
    return made;
}

// The progress bar, or JSON lines (--json, or stdout not a terminal). Under mpirun / srun JSON
// lines always: Open MPI gives each rank a pseudo-terminal whatever mpirun's own stdout is, so a
// job redirected to a file got the bar's \r-joined lines (docs/scaling.md).
bool progress_bar_wanted(const TrainArgs& a) {
    return !a.json && isatty(STDOUT_FILENO) && dist::world().rank() == 0 &&
           dist::launcher_size() <= 1;
}

// A stop signal ended the run (exit 130). Under N ranks rank 0 saved the checkpoint and says so,
// once; the others leave only after it has (a rank that exited 130 first had mpirun end the job,
// rank 0 with it, before its line was written: the message was lost, or said by every rank).
[[noreturn]] void stopped(const std::string& message) {
    dist::Communicator& w = dist::world();
    if (w.size() > 1) {
        if (w.rank() == 0)
            std::cerr << "routescope-cli train: " << data::printable_text(message, true)
                      << std::endl;
        w.barrier();
        quiet_error_message();
    }
    throw Interrupted(message);
}

// The options of a pretraining or fine-tuning run (one RunOptions for both): output directory,
// threads, --until, --device, and the records shown on `bar` once it exists, else printed.
train::RunOptions run_options(const TrainArgs& a, const std::string& out,
                              std::unique_ptr<ProgressBar>& bar) {
    train::RunOptions options;
    options.out_dir = out;
    options.threads = a.threads;
    options.until = a.until;
    options.device = checked_device(a.device);
    options.on_record = [&bar](const nlohmann::ordered_json& r) {  // rank 0's records only
        // A fine-tune whose tokenizer reads much of the text as [UNK]: said where it is seen.
        if (r.value("type", "") == "start" && r.contains("unk_fraction") &&
            r["unk_fraction"].get<double>() > 0.2)
            std::fprintf(stderr,
                         "warning: %.0f%% of the training file's tokens are [UNK] under the "
                         "checkpoint's tokenizer: the model sees little of this text\n",
                         100 * r["unk_fraction"].get<double>());
        if (bar)
            bar->show(r);
        else
            std::cout << r.dump() << std::endl;
    };
    return options;
}

// The files a run writes found in `dir` (model.ckpt.h5, best.ckpt.h5, step-N.ckpt.h5, log.jsonl),
// as paths, sorted; none when `dir` is not a directory. builtin-corpus.txt is not among them: the
// run writes it again from its seed.
std::vector<std::string> run_files_in(const std::string& dir) {
    std::vector<std::string> found;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return found;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name == train::kCheckpointName || name == train::kBestCheckpointName ||
            name == train::kLogName || (name.starts_with("step-") && name.ends_with(".ckpt.h5")))
            found.push_back(entry.path().string());
    }
    std::sort(found.begin(), found.end());
    return found;
}

// A resumed run writing into the directory it continues (--out absent or the same directory).
bool resumes_in_place(const TrainArgs& a, const std::string& out) {
    if (a.resume.empty()) return false;
    std::error_code ec;
    return fs::weakly_canonical(fs::absolute(a.resume), ec) ==
           fs::weakly_canonical(fs::absolute(out), ec);
}

// --overwrite: once the new run is set up (its inputs read), the replaced run's checkpoints go:
// model.ckpt.h5, best.ckpt.h5 and the kept step-N.ckpt.h5. Left in place they sat beside the new
// run's log, where `--resume` continued the old model and an experiment scored an old best
// checkpoint. Other files in the directory are the user's and stay, and so does the checkpoint
// the new run starts from (train.init_from may name the old run's own model.ckpt.h5).
void remove_replaced_run(const TrainArgs& a, const std::string& out,
                         const std::optional<std::string>& init_from) {
    if (!a.overwrite || resumes_in_place(a, out) || dist::world().rank() != 0) return;
    std::error_code ec;
    const auto same = [](const fs::path& x, const std::string& y) {
        std::error_code e;
        return fs::equivalent(x, y, e);
    };
    for (const auto& entry : fs::directory_iterator(out, ec)) {
        const std::string name = entry.path().filename().string();
        const bool kept_step = name.starts_with("step-") && name.ends_with(".ckpt.h5");
        if (init_from && same(entry.path(), *init_from)) continue;
        if (name == train::kCheckpointName || name == train::kBestCheckpointName || kept_step) {
            std::error_code removed;
            if (!fs::remove(entry.path(), removed) && removed)
                throw RuntimeFailure(
                    entry.path().string() +
                    ": cannot remove the replaced run's checkpoint: " + removed.message());
        }
    }
}

// Fine-tuning (classification files, built-in tasks): same errors and exit codes as pretraining.
// `config` for a fresh run; none to continue the run saved in --resume DIR.
int run_finetune(std::optional<RunConfig> config, const TrainArgs& a, const std::string& out) {
    std::unique_ptr<ProgressBar> bar;
    const train::RunOptions options = run_options(a, out, bar);
    const bool terminal = progress_bar_wanted(a);
    // Errors are thrown to main's handler (exit_codes.hpp): while the inputs are read (the
    // constructor), an unreadable file is exit 2; after inputs_read(), a failure is exit 3.
    std::unique_ptr<train::Finetuner> tuner = set_up_together(
        [&] {
            return config ? std::make_unique<train::Finetuner>(std::move(*config), options)
                          : train::Finetuner::resume(
                                (fs::path(a.resume) / train::kCheckpointName).string(), a.sets,
                                options);
        },
        a.until);
    inputs_read();
    remove_replaced_run(a, out, tuner->config().train.init_from);
    if (terminal) bar = std::make_unique<ProgressBar>(tuner->config().train.steps);
    train::StopSignal signals;
    train::StopSignal::reset();
    try {
        const train::FinetuneResult r = tuner->run();
        if (r.interrupted) {
            if (bar) std::printf("\n");
            stopped("interrupted at step " + std::to_string(r.step) + "; saved " + r.checkpoint +
                    " (continue with --resume " + out + ")");
        }
        if (bar && r.status == train::TrainResult::Status::finished)
            std::printf("\nbest validation %.4f at step %lld: %s\n", r.best_metric,
                        static_cast<long long>(r.best_step), r.best_checkpoint.c_str());
        return kExitOk;
    } catch (const Interrupted&) {
        throw;
    } catch (...) {
        if (bar) std::printf("\n");  // the message starts on its own line after the progress bar
        throw;
    }
}

int run_train(const TrainArgs& a) {
    const std::string out = !a.out.empty() ? a.out : a.resume;
    // Errors are thrown to main's handler (exit_codes.hpp). Setup: a bad key, an unreadable
    // corpus or tokenizer is exit 2; after inputs_read(), a failure is exit 3.
    std::unique_ptr<train::Trainer> trainer;
    // A directory this command created and nothing was written into (a configuration refused,
    // an input that does not read) is removed again when the command ends, however it ends;
    // fs::remove leaves a directory that holds anything. The built-in corpus's copy does not
    // count: a tokenizer refused after it was written left a directory holding only
    // builtin-corpus.txt (it is now kept only once the run is set up: DiscardUnkeptCorpus).
    struct RemoveIfLeftEmpty {
        fs::path dir;
        bool created = false;
        ~RemoveIfLeftEmpty() {
            if (!created) return;
            std::error_code ec;
            std::vector<fs::path> copies;
            for (const auto& e : fs::directory_iterator(dir, ec)) {
                const std::string name = e.path().filename().string();
                if (!(name.starts_with("builtin-corpus.") && name.ends_with(".txt") &&
                      e.is_regular_file(ec)))
                    return;  // the run wrote something: it stays
                copies.push_back(e.path());
            }
            if (ec) return;
            for (const auto& c : copies)
                fs::remove(c, ec);
            fs::remove(dir, ec);
        }
    } created_out{out, false};
    // The built-in corpus generated for this run (run_inputs.hpp) stays under its temporary name
    // until the run is set up; a run refused before goes without it (declared after created_out
    // so that it is gone before that directory is looked at).
    struct DiscardUnkeptCorpus {
        std::string dir;
        ~DiscardUnkeptCorpus() {
            if (dist::world().rank() == 0) train::discard_builtin_corpus(dir);
        }
    } unkept_corpus{out};
    // Which run this is (a fine-tuning one goes to run_finetune, which agrees on its own setup).
    // Everything a rank may find differently from the others (a device, the output directory, a
    // checkpoint a node sees damaged or not at all) is read before the ranks agree: a rank that
    // left alone would leave the others waiting in the agreement for ever.
    std::optional<RunConfig> config;
    std::exception_ptr read_error;
    int verdict = 0;     // an input check's exit code
    std::string report;  // why (agree_on_failure prints it once for all ranks)
    bool finetune = false;
    std::int64_t resume_step = -1;  // the --resume checkpoint's step
    try {
        (void)checked_device(a.device);  // before any work: cuda is exit 2 with the reason
        // --resume names the run's directory (an input, exit 2 when it is not one): a file there
        // was taken for the output directory and refused as one that cannot be created (exit 3).
        if (std::error_code ec;
            !a.resume.empty() && fs::exists(a.resume, ec) && !fs::is_directory(a.resume, ec)) {
            const fs::path file(a.resume);
            throw ConfigError(
                "--resume " + a.resume + ": a file, not a run directory; " +
                (file.filename() == train::kCheckpointName
                     ? "give its directory, --resume " +
                           (file.has_parent_path() ? file.parent_path().string() : ".")
                     : "give the directory that holds the run's " +
                           std::string(train::kCheckpointName)));
        }
        // A fresh run into a directory holding one would replace its checkpoint and log: hours
        // of training lost to a repeated command line (the workbench's run dialog refuses it).
        // So would a resumed run written into another directory that holds one (--resume A
        // --out B replaced B's checkpoint and log and left B's best.ckpt.h5 beside them).
        // Every file a run writes counts, not model.ckpt.h5 alone: a fine-tuning run whose
        // model.ckpt.h5 was deleted to save space (its best.ckpt.h5 and log kept) was replaced
        // without a word.
        if (!resumes_in_place(a, out) && !a.overwrite) {
            const std::vector<std::string> held = run_files_in(out);
            std::error_code ec;
            const fs::path model = fs::path(out) / train::kCheckpointName;
            if (fs::exists(model, ec))
                throw ConfigError("--out " + out + " already holds a run (" + model.string() +
                                  "): continue it with `train --resume " + out +
                                  "`, choose another --out, or give --overwrite to replace it");
            if (!held.empty()) {
                std::string names;
                for (const auto& h : held)
                    names += (names.empty() ? "" : ", ") + h;
                throw ConfigError("--out " + out + " already holds an earlier run's files (" +
                                  names + "): choose another --out, or give --overwrite to " +
                                  "replace them");
            }
        }
        {
            std::error_code ec;
            created_out.created = !fs::exists(out, ec);
            fs::create_directories(out, ec);
            if (ec || !fs::is_directory(out)) {
                // The system's reason (docs/cli.md): under a file, "Not a directory".
                if (!ec) ec = std::make_error_code(std::errc::not_a_directory);
                throw RuntimeFailure(out + ": cannot create the output directory (" + ec.message() +
                                     ")");
            }
        }
        // One run at a time in a directory (rank 0 holds it for the job): a second training or
        // resume into it would tear the log and leave one run's checkpoint under the other's log.
        if (dist::world().rank() == 0 && !lock_directory_for_this_process(out))
            throw ConfigError("--out " + out +
                              ": another training is running into this directory; wait for it "
                              "to end, or choose another --out");
        if (!a.resume.empty()) {
            const std::string checkpoint = (fs::path(a.resume) / train::kCheckpointName).string();
            verdict = check_input(checkpoint, a.check, &report);
            if (!verdict) {
                const Checkpoint ck = read_checkpoint(checkpoint);
                finetune = train::is_finetuning(ck.config);
                if (ck.train) resume_step = ck.train->step;
                // Nothing to train (below): the --set overrides are still checked against the
                // checkpoint (exit 2 for a bad one), which writes nothing.
                if (a.until > 0 && a.until == resume_step)
                    (void)train::read_resume_point(checkpoint, a.sets);
            }
        } else {
            // Fine-tuning from --init needs no file: the model and tokenizer are the
            // checkpoint's, the rest docs/config.md's defaults and the --set overrides.
            if (a.config.empty()) {
                // The sequences no longer than the checkpoint's positions (a BiGS_128: 128).
                verdict = check_input(a.init, a.check, &report);
                if (!verdict) {
                    config = RunConfig::from_json(nlohmann::json::object());
                    const Checkpoint ck = read_checkpoint(a.init, CheckpointRead::without_values);
                    config->data.seq_len = std::min(config->data.seq_len, ck.config.model.max_len);
                }
            } else {
                config = RunConfig::load(a.config);
            }
            if (!verdict) {
                if (!a.sets.empty()) config = config->with_overrides(a.sets);
                if (!a.init.empty()) {
                    config->train.init_from = a.init;
                    config->check();  // --init is for fine-tuning: a pretraining config refuses it
                }
                if (config->train.init_from && !a.config.empty())  // checked above without one
                    verdict = check_input(*config->train.init_from, a.check, &report);
                finetune = train::is_finetuning(*config);
            }
        }
    } catch (...) {
        read_error = std::current_exception();
    }
    if (read_error || verdict || dist::world().size() > 1) {
        // Every rank must take the same branch: agree on the reading first.
        const int failed = agree_on_failure(dist::world(), read_error, report);
        if (verdict) return verdict;
        if (failed >= 0)
            throw ConfigError("rank " + std::to_string(failed) +
                              " could not read the configuration or its inputs (its message says "
                              "why); every rank stops");
    }
    // --until at the checkpoint's step: the run is where it should stop, and nothing is trained
    // (an --until before it is refused by the loop, exit 2). Nothing is written either: the run
    // is not set up, so a resubmitted job finds its work done (exit 0) even where DIR can no
    // longer be written (a full disk, a read-only mount), and the log keeps no second "start"
    // record. Under N ranks every rank must see it so (a node's stale checkpoint at another step
    // goes on into the setup, whose agreement refuses it), or some would wait there for ever.
    if (bool done = a.until > 0 && a.until == resume_step; done || dist::world().size() > 1) {
        if (dist::world().size() > 1)
            for (const int d : dist::gather_all<int>(dist::world(), done ? 1 : 0))
                done = done && d == 1;
        if (done) {
            if (dist::world().rank() == 0)
                std::fprintf(stderr,
                             "routescope-cli train: --until %lld: %s is already at step %lld; "
                             "nothing is trained\n",
                             static_cast<long long>(a.until),
                             (fs::path(a.resume) / train::kCheckpointName).string().c_str(),
                             static_cast<long long>(resume_step));
            return kExitOk;
        }
    }
    std::unique_ptr<ProgressBar> bar;
    const train::RunOptions options = run_options(a, out, bar);
    const bool terminal = progress_bar_wanted(a);
    if (finetune) return run_finetune(std::move(config), a, out);
    trainer = set_up_together(
        [&] {
            return config ? std::make_unique<train::Trainer>(std::move(*config), options)
                          : train::Trainer::resume(
                                (fs::path(a.resume) / train::kCheckpointName).string(), a.sets,
                                options);
        },
        a.until);
    inputs_read();
    remove_replaced_run(a, out, trainer->config().train.init_from);
    if (dist::world().rank() == 0) train::keep_builtin_corpus(out);
    if (terminal) bar = std::make_unique<ProgressBar>(trainer->config().train.steps);

    train::StopSignal signals;
    train::StopSignal::reset();
    train::TrainResult r;
    try {
        r = trainer->run();
    } catch (...) {
        if (bar) std::printf("\n");  // the message starts on its own line after the progress bar
        throw;
    }
    if (bar) std::printf("\n");
    if (r.status == train::TrainResult::Status::interrupted)
        stopped("interrupted at step " + std::to_string(r.step) + "; saved " + r.checkpoint +
                " (continue with --resume " + out + ")");
    return kExitOk;
}

// run_train on every rank of an MPI job (or alone): MPI starts and ends here; after the ranks
// agreed on their setup, an error on any rank ends the whole job (MPI_Abort) with its exit code.
int run_train_on_ranks(const TrainArgs& a) {
    dist::WorldScope world_scope;
    dist::Communicator& w = dist::world();
    if (w.size() == 1) return run_train(a);
    g_setup_agreed = false;
    try {
        return run_train(a);
    } catch (const Interrupted&) {
        throw;  // every rank stopped after the same step and saved (training_loop.hpp)
    } catch (...) {
        if (!g_setup_agreed) throw;  // every rank is failing together (agree_after_setup)
        const int code = exit_for_current_exception("train (rank " + std::to_string(w.rank()) +
                                                    " of " + std::to_string(w.size()) + ")");
        std::cerr << std::flush;
        w.abort(code);
    }
    return kExitFailure;  // not reached: abort() ends the process
}

CommandRunner setup_train(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "train",
        "Pretrain (MLM, causal LM, prefix LM, Birdie mixture) or fine-tune a model "
        "(classification, built-in tasks)");
    auto a = std::make_shared<TrainArgs>();
    add_device_option(cmd, a->device);
    auto* config = cmd->add_option("--config", a->config, "Run configuration (docs/config.md)");
    cmd->add_option("--out", a->out,
                    "Output directory: log.jsonl and model.ckpt.h5 (default: the --resume one)");
    cmd->add_option("--set", a->sets, "Override a configuration value, e.g. train.steps=100")
        ->allow_extra_args(false);
    auto* resume = cmd->add_option("--resume", a->resume,
                                   "Continue the run saved in this directory (its model.ckpt.h5)");
    cmd->add_option("--init", a->init,
                    "Fine-tuning: start from this pretrained checkpoint (train.init_from)");
    cmd->add_option("--threads", a->threads, "Threads (overrides train.threads; 0 = the config's)")
        ->check(CLI::Range(0, kMaxThreads));
    cmd->add_option("--until", a->until,
                    "Stop after this step with a checkpoint (the schedule still ends at "
                    "train.steps)")
        ->check(kPositive);
    cmd->add_flag("--json", a->json, "JSON lines on stdout even on a terminal");
    cmd->add_flag("--overwrite", a->overwrite,
                  "Replace the run already in --out (its checkpoints and log) instead of "
                  "refusing; --resume continues it");
    cmd->add_option("--precision", a->precision,
                    "fp32 | tf32 (CUDA) | bf16-mixed: train.precision (docs/config.md)")
        ->check(CLI::IsMember({"fp32", "tf32", "bf16-mixed"}));
    add_check_flags(cmd, a->check, "the --init or --resume checkpoint");
    config->excludes(resume);
    return [a]() {
        if (!a->precision.empty()) a->sets.push_back("train.precision=" + a->precision);
        if (a->config.empty() && a->resume.empty() && a->init.empty())
            throw ConfigError("--config, --init or --resume is required");
        if (a->out.empty() && a->resume.empty()) throw ConfigError("--out is required");
        return run_train_on_ranks(*a);
    };
}

const CommandRegistration registration{"train", setup_train};

}  // namespace
}  // namespace routescope::cli
