#pragma once
// What experiment_command.cpp shares with the experiments kept in their own files
// (phone_book_experiment.cpp): the checks made before any stage starts.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/config.hpp"

namespace routescope::cli {

/// What the train and eval stages would refuse of the tasks the runs of `configs` generate, said
/// before any stage starts (ConfigError naming the key, exit 2): parameters the task's generator
/// refuses (data.task_params.min_entries above max_entries), an empty training or test split
/// (data.task_params.n_train / n_test = 0), examples longer than model.max_len, a causal objective
/// on a model that reads later positions. Each distinct task is generated once. `use` completes
/// "has no test examples, which the experiment …".
void check_experiment_tasks(const std::vector<RunConfig>& configs, const std::string& use);

/// The refusal of train.epochs in an experiment (exit 2), `given` as the user gave it ("--set
/// train.epochs=3"); `steps` is --steps (0: not given). An experiment's budget is --steps, which
/// its schedule, the steps recorded and the protocol note follow; train.epochs changed the steps
/// trained without them.
std::string experiment_epochs_refused(const std::string& given, std::int64_t steps);

}  // namespace routescope::cli
