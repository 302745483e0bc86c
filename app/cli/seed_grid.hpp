#pragma once
// `experiment NAME --seeds N [--jobs J]` (issue 27): the experiment once per seed (seed, seed+1,
// …), each an independent `routescope-cli experiment NAME --seed S --out DIR/seed-S` child
// process, J at a time. A seed whose DIR/seed-S/results.json exists is finished and skipped (an
// interrupted grid resumes where it stopped; a seed folder without results.json is run again from
// scratch). Then per model and metric the mean over seeds, the standard deviation, a 95% Student t
// interval of the mean and the share of seeds at or above the protocol's threshold, written as
// DIR/results.json and DIR/results.md (and printed). docs/experiments.md, "Seeds and intervals".
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
    int threads = 0;
    std::vector<std::string> sets;
    std::optional<double> threshold;  ///< default: the experiment's (default_threshold)
};

/// The protocol's threshold of "the model solves the task" for the experiment's headline metric:
/// induction 0.95 (H3's criterion for gated and attention models), gap-matching 0.95, phone-book
/// 0.5 (exact match); none for slstm-vs-bert, which has no pass mark.
std::optional<double> default_threshold(const std::string& name);

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
