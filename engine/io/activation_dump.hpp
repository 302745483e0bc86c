#pragma once
// Activation dumps of a model (DUMP_FORMAT.md version 1): runs a model's inference forward over a
// stream of examples and writes what it computes, batch by batch, through DumpWriter (temporary
// name, renamed when complete). Memory is independent of the number of examples S: one batch of
// activations lives at a time (the model's arena), and every example's rows are written to the
// file as soon as the forward produces them (the model's ActivationProbe), so nothing of size S·L·d
// is ever held.
//
// What is written:
//   /data        tokens, lengths, labels (gold class or the single MLM target's id, when known),
//                predictions (the classification head's argmax, or the MLM head's at the single
//                target), attributes (the source's, plus `correct` for token-target tasks: 1 when
//                every target position is predicted right), text, /vocab
//   /layers/<l>  hidden [S, L, d]; sentence [S, d] (the classification pool of model.pool: masked
//                mean, the mean of all L positions for mean_all, or the first token for first);
//                gates/<g> with --gates (bigs: u_f, u_b [S, L, d], v [S, L, I]; birdie: f, i, z, o
//                [S, L, N], attr reverse_from = N/2 on the gates group of bidirectional and prefix
//                layers; gmlp: spatial_gate [S, L, I/2] = W · LN(Z2) + b; slstm: i, l, r, f, s, o,
//                sentence_weight)
//   /data/reset_mask  Birdie models with prefix-mode layers: int8 [S, L], the mask the forward ran
//                with (bit 1 at position 0, bit 2 from the prefix split on, pads included)
//   /kernels/<l> forward/backward [L] and D_forward/D_backward for SSM architectures (every block;
//                with model.ssm.n_kernels > 1, the first channel group's kernel; a causal model:
//                forward and D_forward alone)
//   /mixing/<l>  gmlp: the spatial matrix W[:L, :L] of every block (what acts on a row of length L)
//   /model       arch, name, n_layers, d_model, config, checkpoint, checkpoint_sha256
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/tensor.hpp"

#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"

namespace routescope {

/// One example as the model sees it: ids framed as in training ([CLS] … [SEP]), unpadded.
struct DumpExample {
    std::vector<std::int32_t> tokens;
    std::vector<std::int32_t> types;  ///< segment ids, or empty (all 0)
    /// Target per token (−100 elsewhere; empty: none), read from the logits at the same position:
    /// the masked token's id for an MLM task, the next token's for a causal checkpoint's answer
    /// row (its label sits one position before the token it predicts).
    std::vector<std::int32_t> targets;
    /// Models with prefix-mode layers: the reset flags of each token (models::kReset*), as the
    /// row was scored; empty: the prefix split of ActivationDumpOptions::prefix_fraction.
    std::vector<std::int32_t> reset;
    std::int32_t label = -1;  ///< gold class, −1 when unknown
    std::string text;
    std::vector<double> attributes;  ///< in DumpSource::attributes order
};

/// Where the examples come from. `example(i)` is called once per example, in order.
struct DumpSource {
    std::int64_t count = 0;
    int length = 0;  ///< padded L of the dump (every example's tokens fit)
    std::int32_t pad_id = 0;
    std::vector<std::string> attributes;
    std::vector<std::string> vocab;  ///< /vocab (empty: not written)
    bool text = false;
    bool class_labels = false;   ///< examples carry a gold class
    bool token_targets = false;  ///< examples carry MLM targets (built-in token tasks)
    bool single_target = false;  ///< … exactly one per example (its id is the example's label)
    std::function<DumpExample(std::int64_t)> example;
};

struct ActivationDumpOptions {
    std::vector<int> layers;  ///< DUMP_FORMAT.md layer indices; empty: all 0..n_layers
    bool float16 = false;
    bool gates = false;  ///< ConfigError naming model.arch when the architecture has none
    /// Write each attention block's probabilities, /layers/<l>/attention [S, H, L, L] (bert,
    /// gated_att); ConfigError naming model.arch for an architecture without attention.
    bool attention = false;
    int batch = 8;
    int threads = 1;
    Device device = Device::cpu;  ///< the backend the model runs on (--device)
    /// Birdie with prefix-mode layers: the prefix of an example of n tokens is its first
    /// clamp(round(prefix_fraction · n), 1, max(1, n − 1)) tokens; the rest (and the pads) is the
    /// causal region of /data/reset_mask. Negative: the checkpoint's train.prefix_fraction.
    double prefix_fraction = -1;
    std::string name, producer = "routescope", checkpoint, checkpoint_sha256;
    /// Called after every batch with (examples written, S).
    std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct ActivationDumpSummary {
    std::int64_t examples = 0;
    std::uint64_t file_bytes = 0;
    std::uint64_t activation_bytes = 0;  ///< bytes of hidden/sentence/gate rows written
    std::uint64_t parameter_bytes = 0;   ///< the model's parameters on its device
    std::uint64_t arena_bytes = 0;       ///< its activation arena (an inference step's)
    std::uint64_t queue_peak_bytes = 0;  ///< the most row bytes that waited for the disk at once
    double seconds = 0;
};

/// Writes the dump of the model of `config` over `source` to `out`; `load` fills the model's
/// parameters (its ParamStore, on the model's device, laid out as Model::parameter_layout), e.g.
/// by read_params_into from a checkpoint, one tensor at a time. ConfigError for options the model
/// cannot honour, IoError when the file cannot be created or written (nothing is left under
/// `out`). The model is an inference model (models::ModelUse; an encoding model, without the
/// heads, when nothing the dump records needs them).
ActivationDumpSummary write_activation_dump(const RunConfig& config,
                                            const std::function<void(ParamStore&)>& load,
                                            const DumpSource& source, const std::string& out,
                                            const ActivationDumpOptions& options);
/// The same with the parameters in a host vector, released once they are on the model's device
/// (pass it moved).
ActivationDumpSummary write_activation_dump(const RunConfig& config, std::vector<float> params,
                                            const DumpSource& source, const std::string& out,
                                            const ActivationDumpOptions& options);

/// `--layers`: "all" → 0..n_layers; "0,4,8" → those, sorted, duplicates removed. ConfigError for
/// a malformed list or an index outside 0..n_layers (naming it).
std::vector<int> parse_dump_layers(const std::string& text, int n_layers);

}  // namespace routescope
