#pragma once
// `experiment NAME --seeds N [--jobs J]` (issue 27): the experiment once per seed (seed, seed+1,
// …), each an independent `routescope-cli experiment NAME --seed S --out DIR/seed-S` child
// process, J at a time. The options are checked before any seed starts, as a single run checks
// them (exit 2). A seed whose DIR/seed-S/results.json exists is finished and skipped when it was
// run by the same experiment with the same --steps (or both without), --set list, --threads and
// --device; otherwise the grid is refused (exit 2) before anything runs. A seed folder without
// results.json that an experiment made (it holds .routescope-experiment.lock, which every
// experiment creates first in its --out) or that is empty is run again from scratch; any other is
// refused, naming it. Then per model and metric the per-seed values, the mean over seeds, the
// standard deviation, a 95% Student t interval of the mean and the share of seeds at or above the
// protocol's threshold, written as DIR/results.json and DIR/results.md (and printed).
// docs/experiments.md, "Seeds and intervals".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace routescope::cli {

struct SeedGridArgs {
    std::string name, out, device = "cpu";
    int seeds = 1, jobs = 1;
    std::uint64_t seed = 1;
    std::int64_t steps = 0;
    int threads = 0;  ///< as the runs use it (--threads 0 resolved to the core count)
    /// --threads as given: a seed finished before the count was resolved recorded 0, which
    /// matches a grid given 0 (the default) again.
    int threads_given = 0;
    std::vector<std::string> sets;
    std::optional<double> threshold;  ///< default: the experiment's (default_threshold)
    /// What each seed's results.json records as "steps" for these options: the effective number
    /// (--steps, else the protocol's default), or null for slstm-vs-bert's per-model recipes.
    nlohmann::ordered_json recorded_steps;
};

/// The checks a single run of phone-book / slstm-vs-bert makes before its first stage (a bad --set
/// or one that breaks the comparison: ConfigError, exit 2), for a grid to make before any seed
/// starts; defined in phone_book_experiment.cpp and representation_experiment.cpp. Each returns
/// the value its results.json records as "steps" (SeedGridArgs::recorded_steps).
nlohmann::ordered_json check_phone_book_options(std::int64_t steps, int threads, std::uint64_t seed,
                                                const std::vector<std::string>& sets);
nlohmann::ordered_json check_slstm_vs_bert_options(const std::string& out, std::int64_t steps,
                                                   int threads, std::uint64_t seed,
                                                   const std::vector<std::string>& sets);

/// Refuses (ConfigError naming DIR/seed-S/results.json) a finished seed that does not answer the
/// grid's question: another experiment, seed, --steps, --set list, --threads or --device. A key
/// the file does not hold (a results.json written by hand) is not compared, except "experiment".
void check_finished_seed(const SeedGridArgs& args, std::uint64_t seed, const std::string& path,
                         const nlohmann::ordered_json& done);

/// The threshold as given, in the shortest form that reads back as the same double (0.048, not
/// the 0.05 of two decimals).
std::string threshold_text(double threshold);

/// The protocol's threshold of "the model solves the task" for the experiment's headline metric:
/// induction 0.95 (H3's criterion for gated and attention models), gap-matching 0.95, phone-book
/// 0.5 (exact match); none for slstm-vs-bert, which has no pass mark.
std::optional<double> default_threshold(const std::string& name);
/// The experiments whose headline metric has a pass mark (--threshold applies).
bool has_threshold(const std::string& name);

/// One row per (model, metric) of one seed's results.json, in the experiment's own terms:
/// induction / gap-matching: test accuracy and the accuracy of each difficulty bin; phone-book:
/// exact match and digit accuracy; slstm-vs-bert: the last layer's token and sentence mean cosine
/// and mean k(0.90). `headline` marks the metric the threshold applies to.
struct SeedMetric {
    std::string model, metric;
    double value = 0;
    bool headline = false;
};
std::vector<SeedMetric> seed_metrics(const std::string& name,
                                     const nlohmann::ordered_json& results);

/// Aggregates the finished seeds' results (the rows above, per model and metric, in seed order).
nlohmann::ordered_json aggregate_seeds(const std::string& name,
                                       const std::vector<std::uint64_t>& seeds,
                                       const std::vector<nlohmann::ordered_json>& results,
                                       std::optional<double> threshold);
std::string seed_table_markdown(const nlohmann::ordered_json& aggregate);

int run_seed_grid(const SeedGridArgs& args);

}  // namespace routescope::cli
