#pragma once
// Checkpoints, CHECKPOINT_FORMAT.md version 1 (`*.ckpt.h5`): one HDF5 file with everything needed
// to run, inspect or resume a model.
//
//   /            attrs format = "routescope-checkpoint", format_version = 1, producer, created
//   /config      attr json: the full run configuration (docs/config.md)
//   /params/<n>  float32, PyTorch names and shapes (tests/reference/README.md)
//   /tokenizer   attr kind; /tokenizer/model uint8 [n] (when the tokenizer has a model file)
//   /train       optional: attrs step, tokens_seen, rng_state (uint64 [k]), data_position;
//                /train/adam_m/<n>, /train/adam_v/<n>
//
// The writer writes a temporary name in the same directory and renames it over the real name, so
// a failure (or a crash) never leaves a half-written file under that name and never damages the
// checkpoint already there. It refuses non-finite parameters (a NaN run must not replace the last
// good checkpoint). The reader builds the parameter list of the model of /config and rejects,
// naming the dataset, a missing or unexpected parameter, a shape that disagrees, a non-finite
// value or an unknown format_version; a malformed file is a FormatError, never a crash.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"

namespace routescope {

inline constexpr const char* kCheckpointFormat = "routescope-checkpoint";

/// /train: what resuming needs. Moments are in the parameter buffer's flat layout (empty: absent).
/// The Birdie mixture controller at its last update (objective birdie; engine/train/
/// mixture_controller.hpp), so a resumed run continues its schedule: /train/mixture_controller.
struct MixtureControllerState {
    std::vector<std::string> arms;  ///< arm names, in the controller's order
    std::int64_t updates = 0;       ///< updates after the first measurement
    std::vector<double> mixture, rewards, predicted, losses;  ///< one value per arm
};

struct TrainState {
    std::int64_t step = 0;
    std::int64_t tokens_seen = 0;
    std::int64_t data_position = 0;
    std::vector<std::uint64_t> rng_state;
    std::vector<float> adam_m;
    std::vector<float> adam_v;
    std::optional<MixtureControllerState> mixture_controller;
};

/// /tokenizer: kind (bytes | sentencepiece | wordpiece | wordpiece_cased) and the serialized model
/// (may be empty).
struct TokenizerBlob {
    std::string kind = "bytes";
    std::vector<std::uint8_t> model;
};

struct Checkpoint {
    RunConfig config;
    std::vector<ParamEntry> layout;  ///< the parameters of the model of /config, in its order
    std::vector<float> params;       ///< flat, in `layout` order (ParamStore's layout)
    TokenizerBlob tokenizer;
    std::optional<TrainState> train;
};

/// What a fine-tuning run's DIR/best.ckpt.h5 holds, recorded as its root attributes best_step,
/// best_metric ("accuracy" | "exact_match") and best_value (docs/formats/checkpoint.md): a resume
/// reads them back, since the file may be of a later step than the run's model.ckpt.h5.
struct BestMark {
    std::int64_t step = -1;
    std::string metric;
    double value = 0;
};
inline constexpr const char* kBestStepAttr = "best_step";
inline constexpr const char* kBestMetricAttr = "best_metric";
inline constexpr const char* kBestValueAttr = "best_value";

/// Writes `store`'s parameters (and `train` when given) atomically to `path`. Throws IoError when
/// the file cannot be written, FormatError naming /params/<name> for a non-finite value, Error
/// when train moments do not match the store's size; in every case nothing is left under `path`
/// that was not there before, and no temporary file remains.
/// `device`: the device the parameters were trained on, recorded as the root attribute `device`
/// (provenance; a checkpoint loads on any device). Empty: not recorded. `best`: recorded as the
/// best_* root attributes (above) when given.
void write_checkpoint(const std::string& path, const RunConfig& config, const ParamStore& store,
                      const TokenizerBlob& tokenizer, const TrainState* train = nullptr,
                      const std::string& device = {}, const BestMark* best = nullptr);

/// As write_checkpoint without train state, but HDF5 writes the file as it goes instead of
/// building it in memory first, so the model is never held twice: for models too large for that
/// (the importer's published-size ones). The free space is checked before writing (IoError
/// naming `path` when short); the file is written under a temporary name and renamed.
void write_checkpoint_streaming(const std::string& path, const RunConfig& config,
                                const ParamStore& store, const TokenizerBlob& tokenizer);

/// What read_checkpoint reads: everything, or the model without its values — the configuration,
/// the parameter layout (every /params dataset checked for its shape), the tokenizer and the
/// training state's step and counters, but not the parameters' values nor Adam's moments
/// (`params` and the moments stay empty): for a tool that streams the values into a model on
/// its device (read_params_into) instead of holding them, up to three times over, in host memory.
enum class CheckpointRead { all, without_values };

/// Reads and validates a checkpoint (see above). IoError when the file cannot be opened,
/// FormatError naming the file and the dataset for every content problem.
Checkpoint read_checkpoint(const std::string& path, CheckpointRead what = CheckpointRead::all);

/// Reads the parameters of the checkpoint at `path` straight into `store` (laid out as the
/// checkpoint's /config model; a host store or one on a device), one tensor at a time through a
/// host buffer of the largest tensor, with read_checkpoint's checks (shape, finite values;
/// FormatError naming /params/<name>). Error when the store's layout differs.
void read_params_into(const std::string& path, const std::vector<ParamEntry>& layout,
                      ParamStore& store);

/// Why the model `m` (a checkpoint's /config) cannot be the one a file whose /params holds
/// `held` datasets stores, judged before its parameter layout is built: its model.n_layers blocks
/// alone need more parameter tensors than that ("model.n_layers = 50000000 blocks of 30 parameter
/// tensors need 1500000000; /params holds 61"). nullopt otherwise. Milliseconds for any
/// n_layers (the layouts of one and two blocks are built, not the whole one, which for
/// n_layers = 5e7 took minutes and gigabytes). ConfigError when the model cannot be built.
std::optional<std::string> parameter_count_problem(const ModelConfig& m, std::uint64_t held);

/// The loaders' check of a checkpoint's root attribute format_version (an integer from 1 to the
/// newest this build reads): FormatError "<path>: format_version 2 is not one this build reads
/// (1 … 1)" (or naming a missing or non-integer one), for readers that take only part of a
/// checkpoint, such as `analyze flops`. IoError when the file cannot be opened.
void require_checkpoint_format_version(const std::string& path);

/// Copies a checkpoint's parameters into a store of the same layout (by name; Error naming the
/// parameter when a name or shape differs).
void load_params(const Checkpoint& checkpoint, ParamStore& store);

}  // namespace routescope
