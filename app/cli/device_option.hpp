#pragma once
// `--device cpu|cuda|auto|guard` of the commands that run a model (train, eval, dump, experiment,
// bench train|forward|ops): declared and checked in one place, and the Device it names is handed to
// every Model the command builds. Until the CUDA backend implements the op table, cuda is a usage
// error (exit 2) naming the reason, and auto runs on the CPU. guard is the diagnostic device of
// engine/backend/guard_backend.hpp (a host access to tensor memory kills the run, named).
#include <CLI/CLI.hpp>

#include <string>

#include "engine/core/tensor.hpp"

namespace routescope::cli {

/// Adds `--device` (default cpu) to `cmd`, stored in `device`.
void add_device_option(CLI::App* cmd, std::string& device);

/// The device to run on; throws ConfigError (exit 2) naming why cuda cannot run.
Device checked_device(const std::string& device);

}  // namespace routescope::cli
