#pragma once
// `routescope-cli experiment slstm-vs-bert` (issue 7; docs/experiments.md): the S-LSTM paper's
// representation comparison — anisotropy (its Figure 6) and PCA redundancy (its Table 6) of S-LSTM
// against a BERT baseline, both MLM-pretrained on the same corpus with the same budget and seed.
// Kept apart from experiment_command.cpp, which only dispatches the name here.
#include <cstdint>
#include <string>
#include <vector>

namespace routescope::cli {

inline constexpr const char* kSlstmVsBert = "slstm-vs-bert";

struct RepresentationExperimentArgs {
    std::string out;
    std::int64_t steps = 0;  ///< 0: the experiment's default
    int threads = 0;
    std::uint64_t seed = 1;
    std::vector<std::string> sets;
};

/// Trains, dumps, analyses and tabulates (docs/cli.md, "experiment"). Returns the exit code: 0;
/// 2 for a bad --set / option; 3 for an unwritable --out or a stage that failed; 130 when
/// interrupted.
int run_slstm_vs_bert(const RepresentationExperimentArgs& args);

}  // namespace routescope::cli
