// routescope-cli experiment slstm-vs-bert --out DIR [--steps N] [--threads N] [--seed S]
//                                          [--set key=value ...]
// The S-LSTM paper's representation comparison (issue 7; docs/experiments.md): S-LSTM and a BERT
// baseline of comparable size are MLM-pretrained on the same corpus with the same budget and seed,
// each final checkpoint is dumped on the same held-out text, and `analyze anisotropy` (token and
// sentence vectors) and `analyze pca` run on every layer of each dump. The model that ends at the
// lower validation loss is also dumped and analysed at its kept checkpoint nearest the other's
// final loss (the comparison at matched loss). Every stage is routescope-cli's own train / dump /
// analyze, run as a child process exactly as a user runs it. Files (docs/cli.md):
// - DIR/corpus.txt: the training corpus, builtin:grammar, 20,000 documents from --seed (not
//   written when --set data.train names a file);
// - DIR/<arch>/config.json: the run configuration (then --steps, --seed, --threads, --set);
// - DIR/<arch>/log.jsonl, model.ckpt.h5, step-N.ckpt.h5: train's outputs (the kept history);
// - DIR/<arch>.dump.h5, DIR/<arch>-matched.dump.h5: the dumps over the held-out part;
// - DIR/<arch>/[matched-]{anisotropy-token,anisotropy-sentence,pca,pca-passage100}.json: analyze's
//   results, and each stage's .stdout / .stderr beside them;
// - DIR/results.json, DIR/results.md: the tables (results.md is also printed).
// Layer ℓ of S-LSTM is its recurrent step ℓ (ℓ = 0: the embeddings; sentence vector: the node g);
// layer ℓ of BERT is block ℓ (sentence vector: the masked mean of h, the dump's pool). Both have
// the same number of layers, so they are aligned one to one (relative depth ℓ / n_layers).
#include "app/cli/representation_experiment.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/atomic_text_file.hpp"
#include "app/cli/child_process.hpp"
#include "app/cli/command.hpp"
#include "app/cli/experiment_stage.hpp"
#include "app/cli/seed_grid.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/train/builtin_corpus.hpp"
#include "engine/train/stop_signal.hpp"

namespace routescope::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr int kCorpusDocuments = 20000;
constexpr std::int64_t kEvaluations = 40;
constexpr std::int64_t kLongPassage = 300;  // the S-LSTM paper's longer passages
const std::vector<double> kThresholds = {0.90, 0.92, 0.94, 0.96, 0.98};  // ANALYSES.md §4

struct Model {
    std::string label, arch, sentence_vector;
    json model;
    // The recipe: steps (without --steps), peak lr and warmup as a fraction of the steps.
    std::int64_t steps;
    double lr, warmup;
};

// d = 64, four layers each: S-LSTM's one shared step is 41d² weights (W 28d², U 7d², W_g 4d²,
// W_f 2d²), BERT's block 12d², so S-LSTM with T = 4 steps has 199k parameters and BERT with four
// blocks 230k (embeddings and MLM head included). The same max_len and LN epsilon; S-LSTM with its
// gate LayerNorms (as resources/configs/slstm-*.json); BERT with two heads.
// Each model has its own recipe, and they are compared at matched loss (docs/decisions.md,
// "S-LSTM against BERT at matched loss"): S-LSTM 2000 steps, lr 2e-3, 10% warmup, dropout 0.1, init
// std 0.02; BERT, which sits on the unigram plateau for thousands of steps with that recipe (also
// in PyTorch), 6000 steps, lr 3e-3, 6% warmup, no dropout and init std 0.1, with which it leaves
// the plateau after about 3000 steps.
std::vector<Model> models() {
    const json common = {{"d_model", 64}, {"n_layers", 4}, {"max_len", 128}, {"ln_eps", 1e-5}};
    json slstm = common, bert = common;
    slstm["arch"] = "slstm";
    slstm["slstm"] = {{"gate_norm", true}};
    slstm["dropout"] = 0.1;
    slstm["init_std"] = 0.02;
    bert["arch"] = "bert";
    bert["n_heads"] = 2;
    bert["dropout"] = 0.0;
    bert["init_std"] = 0.1;
    return {{"S-LSTM", "slstm", "sentence node g", slstm, 2000, 2e-3, 0.10},
            {"BERT", "bert", "masked mean of h", bert, 6000, 3e-3, 0.06}};
}

RunConfig model_config(const Model& m, const RepresentationExperimentArgs& a,
                       const std::string& corpus) {
    const std::int64_t steps = a.steps > 0 ? a.steps : m.steps;
    json c;
    c["model"] = m.model;
    c["tokenizer"] = {{"kind", "bytes"}};
    c["data"] = {{"train", corpus}, {"seq_len", 128}};
    c["train"] = {
        {"objective", "mlm"},
        {"batch_size", 16},
        {"steps", steps},
        {"lr", m.lr},
        {"warmup_steps", std::max<std::int64_t>(1, std::llround(m.warmup * double(steps)))},
        {"schedule", "cosine"},
        {"weight_decay", 0.01},
        {"clip_grad_norm", 1.0},
        // 40 evaluations, each step's weights kept: the history the matched-loss
        // comparison picks its checkpoint from.
        {"eval_every", std::max<std::int64_t>(1, steps / kEvaluations)},
        {"eval_batches", 0},  // the whole held-out part, the same masks for both
        {"checkpoint_every", std::max<std::int64_t>(1, steps / kEvaluations)},
        {"keep_checkpoints", true},
        {"seed", a.seed},
        {"threads", a.threads}};
    RunConfig config = RunConfig::from_json(nlohmann::json::parse(c.dump()));
    if (!a.sets.empty()) config = config.with_overrides(a.sets);  // checked once all are set
    return config;
}

// The log's facts: parameters, last step, and the validation record of the dumped checkpoint:
// the best step's when train kept a best.ckpt.h5, else the last evaluation (MLM pretraining keeps
// only model.ckpt.h5, the final step).
void read_log(const std::string& path, json& m) {
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot read");
    std::int64_t best = -1;
    m["valid_curve"] = json::array();
    json evals = json::object();
    json last_eval;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const json j = parse_json_text(line, path + ": a log line");
        const std::string type = j.value("type", "");
        if (type == "start") m["parameters"] = j.value("parameters", std::int64_t{0});
        if (type == "step") m["steps"] = j.value("step", std::int64_t{0});
        if (type == "best") best = j.value("step", std::int64_t{-1});
        if (type == "eval") {
            const json e = {{"step", j.value("step", std::int64_t{-1})},
                            {"loss", number_or(j, "loss", std::nan(""))},
                            {"accuracy", number_or(j, "accuracy", std::nan(""))},
                            {"targets", j.value("targets", std::int64_t{0})}};
            evals[std::to_string(e["step"].get<std::int64_t>())] = e;
            m["valid_curve"].push_back(e);
            last_eval = e;
        }
    }
    m["best_step"] = best;
    const std::string key = std::to_string(best);
    m["valid"] = best >= 0 && evals.contains(key) ? evals[key] : last_eval;
}

// The numbers of one anisotropy result that the table reports.
json cosine_summary(const json& r) {
    return {{"m", r["m_used"]},
            {"pairs", r["pairs"]},
            {"mean", r["mean"]},
            {"median", r["median"]},
            {"std", r["std"]},
            {"fraction_negative", r["fraction_negative"]},
            {"mean_norm", r["mean_norm"]},
            {"pc1_variance", r["pc1_variance"]},
            {"isotropy", r["isotropy"]}};
}

// results[] of an analyze JSON by layer.
std::map<int, json> by_layer(const json& analysis, const std::string& path) {
    std::map<int, json> out;
    if (!analysis.contains("results") || !analysis["results"].is_array())
        throw FormatError(path + ": no results array");
    for (const auto& r : analysis["results"])
        out[r["layer"].get<int>()] = r;
    return out;
}

// The comparison at matched masked-LM loss (docs/decisions.md, "S-LSTM against BERT at matched
// loss"): the target is the final validation loss of the model that ends higher; the other model
// is also taken at the kept checkpoint (train.keep_checkpoints) whose validation loss is nearest
// the target, the earliest on a tie. Returns the summary for results.json, with "entry" (that
// model's row, to be dumped and analysed) unless the nearest is its final checkpoint.
json matched_loss(const std::vector<json>& trained, const fs::path& out) {
    if (trained.size() != 2 || trained[0]["valid"].is_null() || trained[1]["valid"].is_null())
        return {{"status", "no validation loss"}};
    const double l0 = trained[0]["valid"]["loss"], l1 = trained[1]["valid"]["loss"];
    const std::size_t worse = l0 >= l1 ? 0 : 1, better = 1 - worse;
    const double target = std::max(l0, l1);
    json summary = {{"target_model", trained[worse]["label"]},
                    {"target_step", trained[worse]["valid"]["step"]},
                    {"target_loss", target},
                    {"matched_model", trained[better]["label"]}};
    const json& b = trained[better];
    const std::string arch = b["arch"];
    json pick;
    for (const auto& e : b["valid_curve"]) {
        const std::int64_t step = e["step"];
        const fs::path kept = fs::path(arch) / ("step-" + std::to_string(step) + ".ckpt.h5");
        if (!fs::exists(out / kept)) continue;
        const double gap = std::abs(e["loss"].get<double>() - target);
        if (pick.is_null() || gap < pick["gap"].get<double>())
            pick = {{"eval", e}, {"gap", gap}, {"checkpoint", kept.string()}};
    }
    if (pick.is_null()) {
        summary["status"] = "no kept checkpoint with a validation loss";
        return summary;
    }
    const json& e = pick["eval"];
    if (e["step"] == b["valid"]["step"]) {
        summary["status"] = "the final checkpoints are the nearest in loss";
        return summary;
    }
    summary["status"] = "matched";
    summary["step"] = e["step"];
    summary["loss"] = e["loss"];
    summary["relative_difference"] = (e["loss"].get<double>() - target) / target;
    json entry = b;
    entry["label"] = b["label"].get<std::string>() + " at " +
                     trained[worse]["label"].get<std::string>() + "'s loss";
    entry["matched"] = {
        {"to", trained[worse]["label"]}, {"target_loss", target}, {"step", e["step"]}};
    entry["steps"] = e["step"];
    entry["valid"] = e;
    entry["best_step"] = -1;
    entry["checkpoint"] = pick["checkpoint"];
    summary["entry"] = entry;
    return summary;
}

// Ends a table's header with one k(p) column per threshold, then its rule: `rule` for the
// columns before them, right-aligned for theirs.
void threshold_columns(std::ostringstream& md, const std::string& rule) {
    for (double p : kThresholds)
        md << " k(" << fixed(p, 2) << ") |";
    md << "\n" << rule;
    for (std::size_t i = 0; i < kThresholds.size(); ++i)
        md << "---:|";
    md << "\n";
}

// The per-passage table of `key` (passage_pca, passage_pca_300), when the layers have it.
void passage_table(std::ostringstream& md, const json& results, const std::string& key) {
    if (results["models"].empty() || results["models"][0]["layers"].empty() ||
        !results["models"][0]["layers"][0].contains(key))
        return;
    const json passage = results["models"][0]["layers"][0][key]["passage"];
    md << "\nPer passage of " << passage.dump()
       << " tokens (each sequence's first), uncentred SVD (the S-LSTM paper's Table 6 statistic"
       << (key == "passage_pca" && passage.get<std::int64_t>() < kLongPassage
               ? "; its 300-token passages need sequences of at least 300"
               : "")
       << "): mean k(p) [95% bootstrap interval over passages, 1000 resamples].\n\n"
          "| model | layer | passages |";
    threshold_columns(md, "|---|---:|---:|");
    for (const auto& m : results["models"])
        for (const auto& l : m["layers"]) {
            const json& q = l[key];
            md << "| " << m["label"].get<std::string>() << " | " << l["layer"].get<int>() << " | "
               << q["passages"].get<std::int64_t>() << " |";
            for (std::size_t t = 0; t < q["mean_k"].size(); ++t)
                md << " " << fixed(q["mean_k"][t], 2) << " [" << fixed(q["ci_low"][t], 2) << ", "
                   << fixed(q["ci_high"][t], 2) << "] |";
            md << "\n";
        }
}

std::string markdown(const json& results) {
    std::ostringstream md;
    md << "| model | arch | parameters | steps | train time (s) | valid MLM loss (step) | "
          "valid MLM accuracy |\n|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& m : results["models"]) {
        const json& v = m["valid"];
        md << "| " << m["label"].get<std::string>() << " | " << m["arch"].get<std::string>()
           << " | " << m["parameters"].get<std::int64_t>() << " | "
           << m["steps"].get<std::int64_t>() << " | " << fixed(m["train_seconds"], 1) << " | "
           << (v.is_null() ? "–" : fixed(v["loss"], 4) + " (" + v["step"].dump() + ")") << " | "
           << (v.is_null() ? "–" : fixed(v["accuracy"], 3)) << " |\n";
    }
    const json& ml = results.value("matched_loss", json::object());
    if (ml.value("status", "") == "matched")
        md << "\nMatched loss: " << ml["target_model"].get<std::string>()
           << " ends at validation MLM loss " << fixed(ml["target_loss"], 4) << "; "
           << ml["matched_model"].get<std::string>() << "'s kept checkpoint nearest it is step "
           << ml["step"].dump() << " (" << fixed(ml["loss"], 4) << ", "
           << fixed(100 * ml["relative_difference"].get<double>(), 2)
           << "%), compared in the rows \"" << ml["matched_model"].get<std::string>() << " at "
           << ml["target_model"].get<std::string>() << "'s loss\".\n";
    else if (ml.contains("status"))
        md << "\nMatched loss: " << ml["status"].get<std::string>() << ".\n";
    md << "\nPer layer (S-LSTM: step ℓ; 0 = embeddings). Cosine of one random token per sequence "
          "(token) and of the sentence vectors (S-LSTM: g; BERT: masked mean of h), uncentred: "
          "mean ± std, fraction < 0, Mu & Viswanath isotropy; mean k(p) of the per-sequence "
          "token PCA.\n\n";
    md << "| model | layer | depth | token cos | token <0 | token isotropy | sentence cos | "
          "sentence <0 | sentence isotropy |";
    threshold_columns(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const auto& m : results["models"])
        for (const auto& l : m["layers"]) {
            const json &t = l["token"], &s = l["sentence"];
            md << "| " << m["label"].get<std::string>() << " | " << l["layer"].get<int>() << " | "
               << fixed(l["relative_depth"], 2) << " | " << fixed(t["mean"], 3) << " ± "
               << fixed(t["std"], 3) << " | " << fixed(t["fraction_negative"], 3) << " | "
               << fixed(t["isotropy"], 3) << " | " << fixed(s["mean"], 3) << " ± "
               << fixed(s["std"], 3) << " | " << fixed(s["fraction_negative"], 3) << " | "
               << fixed(s["isotropy"], 3) << " |";
            for (const auto& k : l["pca"]["mean_k"])
                md << " " << fixed(k, 2) << " |";
            md << "\n";
        }
    passage_table(md, results, "passage_pca");
    passage_table(md, results, "passage_pca_300");
    return md.str();
}

// The two runs' configurations after --steps and --set, with the checks that keep them a
// comparison (ConfigError, exit 2): made before any work, by a single run and by a seed grid.
std::vector<RunConfig> checked_configs(const RepresentationExperimentArgs& a,
                                       const std::string& corpus) {
    if (a.steps < 0) throw ConfigError("--steps: must be positive");
    std::vector<RunConfig> configs;
    try {
        for (const auto& m : models())
            configs.push_back(model_config(m, a, corpus));
    } catch (const Error& e) {
        throw ConfigError(e.what());
    }
    for (const auto& c : configs) {
        if (c.train.objective != "mlm")
            throw ConfigError("train.objective: the comparison is of MLM pretraining, got '" +
                              c.train.objective + "'");
        if (c.data.task)
            throw ConfigError("data.task: the comparison pretrains on a corpus, not a task");
    }
    if (configs[0].data.train != configs[1].data.train)
        throw ConfigError("data.train: the two runs must read the same corpus");
    return configs;
}

}  // namespace

json check_slstm_vs_bert_options(const std::string& out, std::int64_t steps, int threads,
                                 std::uint64_t seed, const std::vector<std::string>& sets) {
    const RepresentationExperimentArgs a{out, steps, threads, seed, sets};
    (void)checked_configs(a, fs::absolute(fs::path(out) / "corpus.txt").string());
    return steps > 0 ? json(steps) : json(nullptr);  // as run_slstm_vs_bert records it
}

int run_slstm_vs_bert(const RepresentationExperimentArgs& a) {
    const fs::path out = a.out;
    const std::string corpus = fs::absolute(out / "corpus.txt").string();
    const std::vector<Model> specs = models();
    const std::vector<RunConfig> configs = checked_configs(a, corpus);

    prepare_output_directory(a.out);
    inputs_read();
    discard_previous_results(a.out);
    json corpus_info;
    try {
        // The corpus is written once and read by both runs, so they see the same text.
        if (configs[0].data.train == corpus || configs[1].data.train == corpus) {
            train::write_builtin_corpus("builtin:grammar", corpus, a.seed, kCorpusDocuments);
            corpus_info = {{"source", "builtin:grammar"},
                           {"documents", kCorpusDocuments},
                           {"seed", a.seed},
                           {"path", "corpus.txt"}};
        } else {
            corpus_info = {{"source", configs[0].data.train.value_or("")}};
        }
    } catch (const Error&) {
        rethrow_as_runtime_failure(a.out + ": ");
    }

    std::string self;
    try {
        self = self_executable();  // resolved once: a rebuild during the run replaces the file
    } catch (const Error&) {
        rethrow_as_runtime_failure();
    }
    train::StopSignal signals;
    train::StopSignal::reset();
    const std::string threads = std::to_string(a.threads);

    json results;
    results["experiment"] = kSlstmVsBert;
    results["corpus"] = corpus_info;
    results["seed"] = a.seed;
    results["steps"] = a.steps > 0 ? json(a.steps) : json(nullptr);  // null: each model's recipe
    results["threads"] = a.threads;
    results["device"] = experiment_device_name();
    results["sets"] = a.sets;
    results["thresholds"] = kThresholds;
    results["models"] = json::array();
    try {
        // 1. Both trainings, each keeping its checkpoint history.
        std::vector<json> trained;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            const Model& spec = specs[i];
            const RunConfig& config = configs[i];
            const fs::path dir = out / config.model.arch;
            std::error_code ec;
            fs::create_directories(dir, ec);
            if (ec) throw IoError(dir.string() + ": cannot create (" + ec.message() + ")");
            const std::string config_path = (dir / "config.json").string();
            write_text_atomically(config_path, config.to_json_text() + "\n");

            json m;
            m["label"] = spec.label;
            m["arch"] = config.model.arch;
            m["n_layers"] = config.model.n_layers;
            m["d_model"] = config.model.d_model;
            m["sentence_vector"] = spec.sentence_vector;
            std::printf("[%zu/%zu] %s (%s): MLM pretraining, %lld steps\n", i + 1, specs.size(),
                        spec.label.c_str(), config.model.arch.c_str(),
                        static_cast<long long>(config.train.steps));
            std::fflush(stdout);
            const auto t0 = std::chrono::steady_clock::now();
            run_experiment_stage(
                self, "train", spec.label, dir,
                {"train", "--config", config_path, "--out", dir.string(), "--json", "--overwrite"});
            m["train_seconds"] =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            read_log((dir / "log.jsonl").string(), m);
            const std::string checkpoint_name =
                fs::exists(dir / "best.ckpt.h5") ? "best.ckpt.h5" : "model.ckpt.h5";
            m["config"] = (fs::path(config.model.arch) / "config.json").string();
            m["checkpoint"] = (fs::path(config.model.arch) / checkpoint_name).string();
            const json& v = m["valid"];
            std::printf("      %.1f s, validation MLM loss %s at step %s\n",
                        m["train_seconds"].get<double>(),
                        v.is_null() ? "–" : fixed(v["loss"], 4).c_str(),
                        v.is_null() ? "–" : v["step"].dump().c_str());
            std::fflush(stdout);
            trained.push_back(std::move(m));
        }

        // 2. The comparison at matched loss: the model that ends lower, also at its kept
        //    checkpoint whose loss is nearest the other's final one.
        json entries = json::array();
        for (const auto& m : trained)
            entries.push_back(m);
        json matched = matched_loss(trained, out);
        if (matched.contains("entry")) {
            entries.push_back(matched["entry"]);
            matched.erase("entry");
        }
        results["matched_loss"] = matched;

        // 3. Each entry dumped over the same held-out text and analysed.
        for (auto& m : entries) {
            const std::string arch = m["arch"];
            const bool at_match = m.contains("matched");
            const std::string prefix = at_match ? "matched-" : "";
            const fs::path dir = out / arch;
            const std::string dump_name = arch + (at_match ? "-matched" : "") + ".dump.h5";
            const std::string dump = (out / dump_name).string();
            const std::string label = m["label"];
            run_experiment_stage(
                self, prefix + "dump", label, dir,
                {"dump", "--checkpoint", (out / m["checkpoint"].get<std::string>()).string(),
                 "--out", dump, "--threads", threads});

            // The analyses, each over every layer, with ANALYSES.md's defaults (M = 5000 or all
            // sequences, sample seed 0, uncentred; p = .90 … .98).
            // Passages of 100 tokens, or of the whole sequence when it is shorter (a tiny run).
            const std::int64_t seq_len = configs[0].data.seq_len;
            const std::int64_t passage = std::min<std::int64_t>(100, seq_len);
            std::vector<std::pair<std::string, std::vector<std::string>>> analyses = {
                {"anisotropy-token", {"anisotropy"}},
                {"anisotropy-sentence", {"anisotropy", "--sentence"}},
                {"pca", {"pca"}},
                // The S-LSTM paper's Table 6 statistic: k(p) per passage of 100 tokens from the
                // uncentred SVD, with a bootstrap interval over passages (its 300-token passages
                // need sequences longer than this experiment's 128).
                {"pca-passage100",
                 {"pca", "--uncentred", "--passage", std::to_string(passage), "--pca-bootstrap",
                  "1000", "--global-m", "0"}}};
            // Its 300-token passages too, when the sequences are that long (--set data.seq_len
            // and model.max_len of at least 300).
            const bool long_passages = seq_len >= kLongPassage;
            if (long_passages)
                analyses.push_back(
                    {"pca-passage300",
                     {"pca", "--uncentred", "--passage", std::to_string(kLongPassage),
                      "--pca-bootstrap", "1000", "--global-m", "0"}});
            json files = json::object();
            std::map<std::string, std::map<int, json>> layers_of;
            for (const auto& [name, kind] : analyses) {
                std::vector<std::string> args = {"analyze"};
                args.insert(args.end(), kind.begin(), kind.end());
                const std::string file = prefix + name + ".json";
                const std::string result = (dir / file).string();
                args.insert(args.end(), {"--dump", dump, "--layer", "all", "--out", result});
                run_experiment_stage(self, prefix + name, label, dir, args);
                files[name] = (fs::path(arch) / file).string();
                layers_of[name] = by_layer(read_json_file(result), file);
            }
            const auto& token = layers_of["anisotropy-token"];
            const auto& sentence = layers_of["anisotropy-sentence"];
            const auto& pca = layers_of["pca"];
            const auto& passages = layers_of["pca-passage100"];
            const auto& long_ones = layers_of["pca-passage300"];  // empty unless long_passages
            const int n_layers = m["n_layers"];
            m["layers"] = json::array();
            for (const auto& [layer, t] : token) {
                if (!sentence.count(layer) || !pca.count(layer) || !passages.count(layer) ||
                    (long_passages && !long_ones.count(layer)))
                    throw FormatError(dir.string() + ": layer " + std::to_string(layer) +
                                      " is missing from an analysis");
                const json& p = pca.at(layer);
                const auto passage_pca = [](std::int64_t length, const json& r) {
                    return json{{"passage", length},
                                {"centred", false},
                                {"passages", r["overall"]["sentences"]},
                                {"mean_k", r["overall"]["mean_k"]},
                                {"ci_low", r["overall"]["ci_low"]},
                                {"ci_high", r["overall"]["ci_high"]}};
                };
                m["layers"].push_back({{"layer", layer},
                                       {"relative_depth", double(layer) / double(n_layers)},
                                       {"token", cosine_summary(t)},
                                       {"sentence", cosine_summary(sentence.at(layer))},
                                       {"pca",
                                        {{"sentences", p["overall"]["sentences"]},
                                         {"mean_k", p["overall"]["mean_k"]},
                                         {"global_k", p["global"]["k"]}}},
                                       {"passage_pca", passage_pca(passage, passages.at(layer))}});
                if (long_passages)
                    m["layers"].back()["passage_pca_300"] =
                        passage_pca(kLongPassage, long_ones.at(layer));
            }
            m["dump"] = dump_name;
            m["analyses"] = files;
            results["models"].push_back(m);
        }
    } catch (const Error&) {
        rethrow_as_runtime_failure();
    } catch (const json::exception& e) {
        throw RuntimeFailure(std::string("an analysis result lacks a field: ") + e.what());
    }
    const std::string table = markdown(results);
    try {
        write_texts_atomically(
            {{(out / "results.json").string(), results.dump(2) + "\n"},
             {(out / "results.md").string(),
              std::string("# routescope-cli experiment ") + kSlstmVsBert + "\n\n" + table}});
    } catch (const Error&) {
        rethrow_as_runtime_failure();
    }
    std::cout << "\n" << table << std::flush;
    return kExitOk;
}

}  // namespace routescope::cli
