#include "app/cli/seed_grid.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "analysis/seed_statistics.hpp"
#include "app/cli/atomic_text_file.hpp"
#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "app/cli/experiment_stage.hpp"
#include "engine/core/error.hpp"
#include "engine/train/stop_signal.hpp"

namespace routescope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

double number(const json& v) {
    return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// A member of an object, or null: a seed's results.json may be written by hand
// (docs/experiments.md, "What a grid reuses"), and const operator[] on a key that is not there is
// undefined behaviour (it read past the map's end: "internal error: cannot use operator[] with
// null").
const json& field(const json& j, const char* key) {
    static const json none;
    if (!j.is_object()) return none;
    const auto it = j.find(key);
    return it == j.end() ? none : *it;
}

const json& item(const json& j, std::size_t i) {
    static const json none;
    return j.is_array() && i < j.size() ? j[i] : none;
}

std::string text_of(const json& j, const char* key, const std::string& fallback) {
    const json& v = field(j, key);
    return v.is_string() ? v.get<std::string>() : fallback;
}

json optional_number(const std::optional<double>& v) {
    return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

}  // namespace

std::optional<double> default_threshold(const std::string& name) {
    if (name == "induction" || name == "induction-bidirectional" || name == "gap-matching")
        return 0.95;
    if (name == "phone-book") return 0.5;
    return std::nullopt;
}

bool has_threshold(const std::string& name) {
    return default_threshold(name).has_value();
}

std::string threshold_text(double threshold) {
    if (threshold == 0) return "0";  // -0 too
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, threshold);
    return std::string(buf, r.ptr);
}

namespace {

// "--steps 20 --threads 1 --device cpu --set a=b": the options a results.json records, for the
// refusal's message ("default" for a null steps: each model's own recipe).
std::string recorded_options(const json& steps, const json& threads, const json& device,
                             const json& sets) {
    std::string s = "--steps " + (steps.is_null() ? std::string("default") : steps.dump());
    s += " --threads " + (threads.is_null() ? std::string("?") : threads.dump());
    s += " --device " + (device.is_string() ? device.get<std::string>() : std::string("?"));
    if (sets.is_array())
        for (const auto& v : sets)
            s += " --set " + (v.is_string() ? v.get<std::string>() : v.dump());
    return s;
}

}  // namespace

void check_finished_seed(const SeedGridArgs& a, std::uint64_t seed, const std::string& path,
                         const json& done) {
    const std::string dir = fs::path(path).parent_path().string();
    if (!done.is_object() || !done.contains("experiment") || !done["experiment"].is_string())
        throw ConfigError(path + ": seed " + std::to_string(seed) +
                          " has a results.json that names no experiment; this grid runs " + a.name +
                          " and would table it as such: choose another --out, or remove " + dir +
                          " to run it again");
    const std::string held = done["experiment"].get<std::string>();
    if (held != a.name)
        throw ConfigError(path + ": seed " + std::to_string(seed) +
                          " is a finished run of experiment " + held + ", not of " + a.name +
                          ": this --out holds another experiment's seeds; "
                          "choose another --out");
    if (done.contains("seed") && done["seed"].is_number() &&
        done["seed"] != json(static_cast<std::uint64_t>(seed)))
        throw ConfigError(path + ": the run in " + dir + " used --seed " + done["seed"].dump() +
                          ", not " + std::to_string(seed) + ": choose another --out, or remove " +
                          dir + " to run it again");
    json sets_given = json::array();
    for (const auto& v : a.sets)
        sets_given.push_back(v);
    const bool same_steps = !done.contains("steps") || done["steps"] == a.recorded_steps;
    const bool same_sets = !done.contains("sets") || done["sets"] == sets_given;
    const bool same_threads = !done.contains("threads") || done["threads"] == json(a.threads) ||
                              (done["threads"] == json(0) && a.threads_given == 0);
    const bool same_device = !done.contains("device") || done["device"] == json(a.device);
    if (same_steps && same_sets && same_threads && same_device) return;
    const auto field = [&](const char* key, const json& fallback) {
        return done.contains(key) ? done[key] : fallback;
    };
    // Bit-identical results hold for one thread count and device only (docs/experiments.md), so
    // a seed finished under others is no seed of this grid either.
    throw ConfigError(
        path + ": seed " + std::to_string(seed) + " finished earlier with other options (" +
        recorded_options(field("steps", a.recorded_steps), field("threads", json(a.threads)),
                         field("device", json(a.device)), field("sets", sets_given)) +
        "; this grid: " + recorded_options(a.recorded_steps, a.threads, a.device, sets_given) +
        (a.threads_given == 0 ? ", --threads 0 being this machine's cores" : "") +
        "); this grid would table it beside runs it does not match: choose another --out, or "
        "remove " +
        dir + " to run it again");
}

std::vector<SeedMetric> seed_metrics(const std::string& name, const json& results) {
    std::vector<SeedMetric> out;
    const auto list = [&](const char* key) {
        const json& v = field(results, key);
        return v.is_array() ? v : json::array();
    };
    if (name == "phone-book") {
        for (const auto& r : list("runs")) {
            const std::string label = text_of(r, "label", text_of(r, "run", "?"));
            const json& test = field(r, "test");
            out.push_back({label, "exact match", number(field(test, "exact_match")), true});
            out.push_back({label, "digit accuracy", number(field(test, "digit_accuracy")), false});
        }
    } else if (field(results, "bins").is_array()) {  // induction, gap
        const json& bins = field(results, "bins");
        for (const auto& m : list("models")) {
            const std::string label = text_of(m, "label", "?");
            out.push_back(
                {label, "test accuracy", number(field(field(m, "test"), "accuracy")), true});
            const json& own = field(m, "bins");
            for (std::size_t b = 0; b < bins.size() && own.is_array() && b < own.size(); ++b)
                out.push_back({label, text_of(bins[b], "name", "bin " + std::to_string(b)),
                               number(field(own[b], "accuracy")), false});
            // An attention model on induction: its induction heads (analysis/induction_heads.hpp)
            const json& heads = field(m, "induction_heads");
            for (std::size_t h = 0; heads.is_array() && h < heads.size(); ++h) {
                const json& l = heads[h];
                const json& layer = field(l, "layer");
                out.push_back({label,
                               "layer " + (layer.is_number() ? layer.dump() : std::string("-1")) +
                                   ": query → copied symbol (induction head)",
                               number(field(l, "induction")), false});
            }
        }
    } else {  // slstm-vs-bert: the last layer
        for (const auto& m : list("models")) {
            const std::string label = text_of(m, "label", "?");
            const json& layers = field(m, "layers");
            if (!layers.is_array() || layers.empty()) continue;
            const json& last = layers.back();
            const json& layer = field(last, "layer");
            const std::string at =
                " (layer " + (layer.is_number() ? layer.dump() : std::string("-1")) + ")";
            out.push_back({label, "token mean cosine" + at,
                           number(field(field(last, "token"), "mean")), false});
            out.push_back({label, "sentence mean cosine" + at,
                           number(field(field(last, "sentence"), "mean")), false});
            const json& k = field(field(last, "pca"), "mean_k");
            if (k.is_array() && !k.empty())
                out.push_back({label, "mean k(0.90)" + at, number(k[0]), false});
            else if (k.is_object() && !k.empty())
                out.push_back({label, "mean k(" + k.begin().key() + ")" + at,
                               number(k.begin().value()), false});
            const json& passage = field(field(last, "passage_pca"), "mean_k");
            if (passage.is_array() && !passage.empty())
                out.push_back({label, "passage k(0.90)" + at, number(item(passage, 0)), false});
        }
    }
    return out;
}

// What a finished seed's results.json must hold for the table (checked before anything is deleted
// or run): the headline metric of every model, a number or null. Empty when it does.
std::string seed_shape_problem(const std::string& name, const json& results) {
    const bool phone = name == "phone-book";
    const char* list = phone ? "runs" : "models";
    const json& entries = field(results, list);
    if (!entries.is_array() || entries.empty())
        return std::string("no \"") + list + "\" list of the experiment's " +
               (phone ? "runs" : "models");
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const json& e = entries[i];
        const std::string where = std::string(list) + "[" + std::to_string(i) + "]";
        if (!e.is_object()) return where + " is not an object";
        if (name == "slstm-vs-bert") {
            if (!field(e, "layers").is_array()) return where + " has no \"layers\" list";
            continue;
        }
        const json& v = field(field(e, "test"), phone ? "exact_match" : "accuracy");
        if (!(v.is_number() || v.is_null()) || !field(e, "test").is_object())
            return where + " has no test." + (phone ? "exact_match" : "accuracy") +
                   " (a number, or null)";
        if (!phone && !(field(e, "bins").is_array() || field(e, "bins").is_null()))
            return where + ".bins is not a list";
    }
    return {};
}

json aggregate_seeds(const std::string& name, const std::vector<std::uint64_t>& seeds,
                     const std::vector<json>& results, std::optional<double> threshold) {
    // (model, metric) in the order of the first seed's results; values in seed order.
    std::vector<std::pair<std::string, std::string>> order;
    std::map<std::pair<std::string, std::string>, std::vector<double>> values;
    std::map<std::pair<std::string, std::string>, bool> headline;
    for (std::size_t s = 0; s < results.size(); ++s)
        for (const auto& m : seed_metrics(name, results[s])) {
            const auto key = std::make_pair(m.model, m.metric);
            if (!values.count(key)) {
                order.push_back(key);
                values[key].assign(results.size(), std::numeric_limits<double>::quiet_NaN());
            }
            values[key][s] = m.value;
            headline[key] = m.headline;
        }
    json out;
    out["experiment"] = name;
    out["seeds"] = seeds;
    out["interval"] =
        "95% Student t interval of the mean over seeds: mean ± t(0.975, n−1)·sd/√n, sd the sample "
        "standard deviation (n − 1); null with fewer than two seeds";
    out["threshold"] = optional_number(threshold);
    out["rows"] = json::array();
    for (const auto& key : order) {
        const auto& v = values[key];
        const bool head = headline[key];
        const auto s = analysis::summarise_seeds(v, head ? threshold : std::nullopt);
        json row;
        row["model"] = key.first;
        row["metric"] = key.second;
        row["headline"] = head;
        json per_seed = json::array();
        for (double x : v)
            per_seed.push_back(std::isfinite(x) ? json(x) : json(nullptr));
        row["values"] = per_seed;
        row["n"] = s.n;
        row["mean"] = s.n > 0 ? json(s.mean) : json(nullptr);
        row["sd"] = optional_number(s.sd);
        row["ci_low"] = optional_number(s.ci_low);
        row["ci_high"] = optional_number(s.ci_high);
        row["share_at_or_above_threshold"] = optional_number(s.share_at_or_above);
        out["rows"].push_back(row);
    }
    return out;
}

std::string seed_table_markdown(const json& a) {
    std::ostringstream md;
    const auto& seeds = a["seeds"];
    md << "Seeds " << seeds.front().get<std::uint64_t>() << "–" << seeds.back().get<std::uint64_t>()
       << " (" << seeds.size() << "); intervals: " << a["interval"].get<std::string>() << ".\n\n";
    const bool share = a["threshold"].is_number();
    md << "| model | metric | n | mean | 95% interval | sd |";
    if (share) md << " share ≥ " << threshold_text(a["threshold"].get<double>()) << " |";
    md << " values (seed order) |";
    md << "\n|---|---|---:|---:|---|---:|" << (share ? "---:|" : "") << "---|\n";
    for (const auto& r : a["rows"]) {
        md << "| " << r["model"].get<std::string>() << " | " << r["metric"].get<std::string>()
           << " | " << r["n"].get<int>() << " | " << fixed(r["mean"], 3) << " | ";
        if (r["ci_low"].is_number())
            md << "[" << fixed(r["ci_low"], 3) << ", " << fixed(r["ci_high"], 3) << "]";
        else
            md << "–";
        md << " | " << fixed(r["sd"], 3) << " |";
        if (share) {
            const auto& v = r["share_at_or_above_threshold"];
            md << " " << (v.is_number() ? fixed(v, 2) : std::string("")) << " |";
        }
        // Each seed's value (3 decimals; "–" where the seed has none), so the table alone shows
        // what the mean and interval summarise.
        std::string values;
        for (const auto& v : r["values"])
            values += (values.empty() ? "" : ", ") + fixed(v, 3);
        md << " " << values << " |\n";
    }
    return md.str();
}

int run_seed_grid(const SeedGridArgs& a) {
    if (a.seeds < 1) throw ConfigError("--seeds must be at least 1");
    if (a.jobs < 1) throw ConfigError("--jobs must be at least 1");
    if (a.threshold && !has_threshold(a.name))
        throw ConfigError("--threshold: " + a.name +
                          " has no thresholded metric (no pass mark: its share column would be "
                          "empty); leave --threshold out");
    // A refusal below leaves DIR as it was: the lock file this command created goes again (with
    // DIR itself when it made it). It stayed, and an experiment's lock in the user's folder later
    // let a single run replace the user's own run there as one "an experiment made".
    struct UndoUnlessKept {
        fs::path dir, lock;
        bool dir_existed, lock_existed, keep = false;
        ~UndoUnlessKept() {
            if (keep) return;
            std::error_code ec;
            if (!lock_existed) fs::remove(lock, ec);
            if (!dir_existed) fs::remove(dir, ec);  // only when empty
        }
    } undo{a.out, fs::path(a.out) / ".routescope-experiment.lock", false, false};
    {
        std::error_code ec;
        undo.dir_existed = fs::exists(a.out, ec) || fs::is_symlink(a.out, ec);
        undo.lock_existed = fs::exists(undo.lock, ec) || fs::is_symlink(undo.lock, ec);
    }
    prepare_output_directory(a.out);
    inputs_read();
    std::string self;
    try {
        self = self_executable();
    } catch (const Error&) {
        rethrow_as_runtime_failure();
    }
    const fs::path out = a.out;
    std::vector<std::uint64_t> seeds;
    for (int k = 0; k < a.seeds; ++k)
        seeds.push_back(a.seed + static_cast<std::uint64_t>(k));
    auto dir_of = [&](std::uint64_t s) { return out / ("seed-" + std::to_string(s)); };

    // Everything is checked before anything is deleted or started: a refusal leaves DIR as it was.
    // The grid's own results.json names the experiment it tabled: another's is not replaced.
    std::vector<std::uint64_t> pending;
    for (auto s : seeds) {
        const fs::path dir = dir_of(s);
        const std::string path = (dir / "results.json").string();
        if (fs::exists(path)) {
            // Reused only when it answers this run's question: a seed finished by another
            // experiment, with other --set values, another --steps (given or not), --threads or
            // --device was "skipped" into a table it does not belong to.
            json done;
            try {
                done = read_json_file(path);
            } catch (const Error& e) {
                throw ConfigError(path + ": seed " + std::to_string(s) +
                                  "'s results.json cannot be read (" + e.what() + "): remove " +
                                  dir.string() + " to run it again");
            }
            check_finished_seed(a, s, path, done);
            if (const std::string problem = seed_shape_problem(a.name, done); !problem.empty())
                throw ConfigError(path + ": seed " + std::to_string(s) +
                                  "'s results.json cannot be tabled (" + problem + "): remove " +
                                  dir.string() + " to run it again");
            std::printf("seed %llu: finished earlier (%s), skipped\n",
                        static_cast<unsigned long long>(s), dir.string().c_str());
            continue;
        }
        std::error_code ec;
        if (fs::exists(dir, ec) || fs::is_symlink(dir, ec)) {
            // An interrupted seed starts again from scratch, but only a folder an experiment
            // made (it creates its lock file first) or an empty one is deleted: the user's own
            // DIR/seed-S is not the grid's to remove.
            const bool made_by_experiment =
                !fs::is_symlink(dir, ec) && fs::is_directory(dir, ec) &&
                (fs::exists(dir / ".routescope-experiment.lock", ec) || fs::is_empty(dir, ec));
            if (!made_by_experiment) {
                if (!fs::is_directory(dir, ec))  // a file (or a link) of the seed folder's name
                    throw ConfigError(dir.string() + ": seed " + std::to_string(s) +
                                      " would run into a folder of this name, and a file is "
                                      "there (not the grid's to delete): move it away or choose "
                                      "another --out");
                throw ConfigError(dir.string() + ": seed " + std::to_string(s) +
                                  " would run into this folder, which has no results.json and "
                                  "was not made by an experiment (no .routescope-experiment.lock): "
                                  "the grid deletes an interrupted seed's folder before running "
                                  "it again, and this one is not its to delete; move it away or "
                                  "choose another --out");
            }
        }
        pending.push_back(s);
    }
    undo.keep = true;  // the checks passed: from here the grid is DIR's
    for (auto s : pending) {
        std::error_code ec;
        fs::remove_all(dir_of(s), ec);  // an interrupted seed starts again from scratch
    }
    std::fflush(stdout);
    discard_previous_results(a.out);

    train::StopSignal signals;
    train::StopSignal::reset();
    std::atomic<std::size_t> next{0};
    std::mutex lock;
    std::vector<std::string> failures;
    auto worker = [&] {
        for (std::size_t i = next++; i < pending.size(); i = next++) {
            if (train::StopSignal::requested()) return;
            const std::uint64_t s = pending[i];
            std::vector<std::string> args = {"experiment", a.name,
                                             "--out",      dir_of(s).string(),
                                             "--seed",     std::to_string(s),
                                             "--threads",  std::to_string(a.threads),
                                             "--device",   a.device};
            if (a.steps > 0) args.insert(args.end(), {"--steps", std::to_string(a.steps)});
            for (const auto& set : a.sets)
                args.insert(args.end(), {"--set", set});
            const std::string log = (out / ("seed-" + std::to_string(s))).string();
            {
                std::lock_guard<std::mutex> g(lock);
                std::printf("seed %llu: running (%s.stdout, .stderr)\n",
                            static_cast<unsigned long long>(s), log.c_str());
                std::fflush(stdout);
            }
            int status = -1;
            std::string error;
            try {
                status = run_child(self, args, log + ".stdout", log + ".stderr");
            } catch (const Error& e) {
                error = e.what();
            }
            std::lock_guard<std::mutex> g(lock);
            if (status == 0) {
                std::printf("seed %llu: finished\n", static_cast<unsigned long long>(s));
            } else if (status == kExitInterrupted && train::StopSignal::requested()) {
                // Ctrl-C: the seed stopped, it did not fail (the grid resumes it).
                std::printf("seed %llu: interrupted\n", static_cast<unsigned long long>(s));
            } else {
                std::string tail;
                try {
                    std::ifstream in(log + ".stderr");
                    std::string all{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
                    tail = all.size() > 2000 ? all.substr(all.size() - 2000) : all;
                } catch (...) {
                }
                // A seed killed by a signal writes nothing: said, not an empty text after ": ".
                const bool silent = tail.find_first_not_of(" \t\r\n") == std::string::npos;
                failures.push_back("seed " + std::to_string(s) + " (exit " +
                                   std::to_string(status) +
                                   (status > 128 && status != kExitInterrupted
                                        ? ", ended by signal " + std::to_string(status - 128)
                                        : "") +
                                   "): " +
                                   (!error.empty() ? error
                                    : silent ? "it wrote no message (" + log + ".stderr is empty)"
                                             : tail));
                std::printf("seed %llu: failed (exit %d)\n", static_cast<unsigned long long>(s),
                            status);
            }
            std::fflush(stdout);
        }
    };
    std::vector<std::thread> threads;
    for (int j = 0; j < std::min<int>(a.jobs, static_cast<int>(pending.size())); ++j)
        threads.emplace_back(worker);
    for (auto& t : threads)
        t.join();
    if (train::StopSignal::requested())
        throw Interrupted("experiment " + a.name +
                          " --seeds: interrupted; run the same command "
                          "again to resume (finished seeds are skipped)");
    if (!failures.empty()) {
        std::string text;
        for (const auto& f : failures)
            text += "\n" + f;
        throw RuntimeFailure("experiment " + a.name +
                             " --seeds: " + std::to_string(failures.size()) +
                             " seed(s) failed; run the same "
                             "command again to retry them:" +
                             text);
    }

    std::vector<json> results;
    try {
        for (auto s : seeds)
            results.push_back(read_json_file((dir_of(s) / "results.json").string()));
        const std::optional<double> threshold =
            a.threshold ? a.threshold : default_threshold(a.name);
        json aggregate = aggregate_seeds(a.name, seeds, results, threshold);
        // The options every seed ran with (each seed's results.json was checked against them):
        // a grid extended later with other options is refused, and the record shows what the
        // table is of. steps: the effective number, "default" where each model keeps its own.
        json options;
        options["steps"] = a.recorded_steps.is_null() ? json("default") : a.recorded_steps;
        options["steps_given"] = a.steps > 0;
        options["sets"] = a.sets;
        options["threads"] = a.threads;
        options["device"] = a.device;
        json ordered;
        for (auto it = aggregate.begin(); it != aggregate.end(); ++it) {
            ordered[it.key()] = it.value();
            if (it.key() == "seeds")
                for (auto o = options.begin(); o != options.end(); ++o)
                    ordered[o.key()] = o.value();
        }
        aggregate = std::move(ordered);
        const std::string table = seed_table_markdown(aggregate);
        write_texts_atomically(
            {{(out / "results.json").string(), aggregate.dump(2) + "\n"},
             {(out / "results.md").string(), "# routescope-cli experiment " + a.name + " --seeds " +
                                                 std::to_string(a.seeds) + "\n\n" + table}});
        std::cout << "\n" << table << std::flush;
    } catch (const Error&) {
        rethrow_as_runtime_failure();
    }
    return kExitOk;
}

}  // namespace routescope::cli
