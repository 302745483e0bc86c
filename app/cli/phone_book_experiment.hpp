#pragma once
// routescope-cli experiment phone-book (issue 7; docs/experiments.md, "Phone book"): the Birdie
// paper's retrieval claim at workbench scale. Kept apart from experiment_command.cpp's seed
// experiments (three architectures on one task) because it compares training objectives of one
// architecture.
#include <cstdint>
#include <string>
#include <vector>

namespace routescope::cli {

struct PhoneBookExperimentArgs {
    std::string out;
    std::int64_t steps = 0;  ///< 0: the default budget
    int threads = 0;
    std::uint64_t seed = 1;
    std::vector<std::string> sets;
};

/// Runs the experiment; returns the exit code (as `experiment`: 0, 2, 3, 130).
int run_phone_book_experiment(const PhoneBookExperimentArgs& args);

}  // namespace routescope::cli
