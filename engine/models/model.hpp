#pragma once
// A model of the BiGS family (MODELS.md): embeddings + n_layers blocks of model.arch + the MLM head
// (always) + the classification head (when model.n_labels > 0); no final LayerNorm. S-LSTM
// (slstm_recurrence.hpp) has no blocks: one shared recurrence runs n_layers steps instead, and its
// sentence node g can be the classification pool (model.pool = sentence).
//
//   bigs      GATED/SSM (gated_ssm_block.hpp)     stack_ssm  STACK/SSM (stack_ssm_block.hpp)
//   gated_att GATED/ATT (gated_att_block.hpp)     bert       STACK/ATT (stack_att_block.hpp)
//
// llm.c's discipline: all parameters in one buffer and their gradients in a second (ParamStore,
// names and shapes of tests/reference/README.md), activations in one arena sized once from
// (B, L, config) by a planning pass of the same forward code, a tape that replays the ops'
// backwards. Which head produces the logits is decided by the batch: `labels` → MLM loss (one mean
// over every target token, −100 ignored), `class_labels` → classification loss (mean over B).
//
// Device-resident: a model is built for a device (Device::cpu, cuda, or the diagnostic guard), and
// everything a step touches (parameters, gradients, the arena, the batch) is that backend's memory
// (Backend::allocate). The host hands the model a host Batch, which forward() validates and
// uploads once; the host reads back only what it asks for: the loss, per-row read-outs
// (readout()), and host copies of activations for an ActivationProbe, all through Backend::copy.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/device_array.hpp"
#include "engine/backend/tape.hpp"
#include "engine/core/arena.hpp"
#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/op_table.hpp"

namespace routescope::models {

class Block;
class Graph;
struct Act;
class Embeddings;
class MlmHead;
class ClassifierHead;
class SlstmRecurrence;

/// One batch, row-major [B, L] int32 (tests/reference/README.md "batch.h5"). Exactly one of
/// labels / class_labels. types may be null (all segment 0).
struct Batch {
    const std::int32_t* tokens = nullptr;        ///< [B, L] ids in [0, V)
    const std::int32_t* lengths = nullptr;       ///< [B], 1 ≤ length ≤ L
    const std::int32_t* types = nullptr;         ///< [B, L] 0/1 or null
    const std::int32_t* labels = nullptr;        ///< [B, L] MLM targets, −100 ignored
    const std::int32_t* class_labels = nullptr;  ///< [B] in [0, n_labels)
    /// Birdie's reset mask [B, L] or null (MODELS.md; birdie_block.hpp): bit 1 = the position
    /// starts a new packed sample, bit 2 = it lies in a prefix-LM sample's causal region.
    const std::int32_t* reset_mask = nullptr;
    /// The global batch row of row 0: rank r of N data-parallel ranks holds rows [r·B, (r+1)·B) of
    /// the N·B global batch, and its dropout masks are those rows' masks (ops::DropoutSite).
    std::int64_t first_row = 0;
};

/// Receives the activations of a non-training forward (Model::set_capture), e.g. to write an
/// activation dump (DUMP_FORMAT.md). Called during forward() with HOST copies the model downloads
/// from the backend; the pointers are valid only for the duration of the call (a staging buffer
/// reused by the next call), so a probe copies what it keeps.
class ActivationProbe {
public:
    virtual ~ActivationProbe() = default;
    /// The hidden state [B, L, d] after layer `layer` (DUMP_FORMAT.md numbering: 0 = embeddings
    /// output, l ≥ 1 = output of block l, parameters `layers.<l−1>.*`).
    /// Not called for a probe that takes device rows (hidden_rows instead).
    virtual void hidden(int layer, const float* values) { (void)layer, (void)values; }
    /// Whether layer `layer`'s hidden state is wanted at all (a dump of chosen layers): the model
    /// hands over, converts and pools only those.
    virtual bool wants_layer(int layer) const { return (void)layer, true; }

    /// A hidden state where the model computed it (takes_device_rows()): backend memory, read
    /// only through `backend`'s copies during the call. `half` is the state in binary16 bits
    /// (half_bits) when wants_half(), else null; `pooled` is the classification pool of it
    /// (model.pool: the masked mean over each example's length, the mean of all L positions, or
    /// the first token) [B, d],
    /// null for S-LSTM (whose sentence vector is its node, sentence()).
    struct DeviceRows {
        Backend* backend = nullptr;
        const float* hidden = nullptr;        ///< [B, L, d] float32
        const std::uint16_t* half = nullptr;  ///< [B, L, d] binary16 bits, or null
        const float* pooled = nullptr;        ///< [B, d] float32, or null
    };
    /// Whether the probe takes hidden states as DeviceRows (hidden_rows) instead of host copies
    /// (hidden): then the model pools, and converts to float16 when asked, on its own device, and
    /// the probe downloads only the bytes it keeps, straight into its own buffers.
    virtual bool takes_device_rows() const { return false; }
    /// With takes_device_rows(): whether DeviceRows::half is wanted (a float16 dump).
    virtual bool wants_half() const { return false; }
    /// The hidden state of layer `layer` as DeviceRows (called instead of hidden()).
    virtual void hidden_rows(int layer, const DeviceRows& rows) { (void)layer, (void)rows; }
    /// Whether gate() should be called (collecting gates costs a copy per block).
    virtual bool wants_gates() const { return false; }
    /// Gate `name` of block `layer` ≥ 1, [B, L, channels] in token order (DUMP_FORMAT.md names,
    /// BiGS: u_f, u_b, v). Only architectures that have gates call it.
    virtual void gate(int layer, const char* name, const float* values, int channels) {
        (void)layer, (void)name, (void)values, (void)channels;
    }
    /// Whether attention() should be called (the probabilities cost a copy of B·H·L² per block).
    virtual bool wants_attention() const { return false; }
    /// The attention probabilities [B, heads, L, L] of block `layer` ≥ 1 (bert, gated_att):
    /// row i of head h is query i's distribution over the keys (pad keys 0).
    virtual void attention(int layer, const float* probs, int heads) {
        (void)layer, (void)probs, (void)heads;
    }
    /// The sentence vector [B, d] at layer `layer` ≥ 0 (S-LSTM: the sentence node g after step
    /// `layer`, g⁰ = the mean of the embeddings at 0). Only architectures with one call it.
    virtual void sentence(int layer, const float* values) { (void)layer, (void)values; }
    /// S-LSTM's sentence-node weights of step `layer` ≥ 1 when wants_gates(), [B, L + 1, channels]
    /// (DUMP_FORMAT.md `sentence_weight`: the token weights, 0 at pads, then the node's own).
    virtual void sentence_weight(int layer, const float* values, int channels) {
        (void)layer, (void)values, (void)channels;
    }
};

/// What a model is built for. A training model holds a gradient per parameter and an arena for a
/// training step (every activation, its gradient and what the backward reads); an inference
/// model holds the parameters only and an arena for one layer at a time (an inference forward
/// frees a layer's internals once its output is copied out), so a dump or an evaluation of a
/// published-size model needs about its weights' memory, not several times it. An encoding model
/// is an inference model that stops after the last block: its forward hands the probe every
/// layer and computes no head (no logits, no loss: NaN), for a dump that records no prediction
/// (the MLM head's [B·L, V] logits are most of an inference arena at a 30,522-token vocabulary).
enum class ModelUse { training, inference, encoding };

class Model {
public:
    /// Declares and allocates the parameters (zero until init() or a checkpoint load) and sizes
    /// the activation arena for batches of `batch` rows of `length` tokens. threads ≤ 0: all cores.
    /// `device` chooses the backend (make_backend) whose memory holds everything a step touches.
    /// An inference model (ModelUse) refuses a training forward and has no gradients.
    Model(const RunConfig& config, int batch, int length, int threads = 1,
          Device device = Device::cpu, ModelUse use = ModelUse::training);
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    /// The parameters of a model of `m`, in registration order (names and shapes only).
    static std::vector<ParamEntry> parameter_layout(const ModelConfig& m);

    /// MODELS.md init: normal(0, init_std) for dense weights and embedding tables, zero biases,
    /// LayerNorm 1/0, SSM parameters by ops::ssm_init. Draws are Philox(seed, tensor, element), so
    /// they depend on nothing but the seed and the parameter list.
    void init(std::uint64_t seed);
    /// The same parameters drawn into a host vector (Model::parameter_layout's order) without
    /// building a model: what a tool that only needs initial weights uses (`bench dump` at
    /// published size: 1.2 GB of host memory, not a training model's 6 GB).
    static std::vector<float> initial_parameters(const ModelConfig& m, std::uint64_t seed);

    /// Runs the forward pass, returns the loss. training = true records the tape (backward() may
    /// follow) and applies dropout (model.dropout; masks from (train.seed, step)); an inference
    /// model refuses it. `batch` is host
    /// memory: it is validated (ids, types, labels, lengths in range; a bad one is an Error naming
    /// it) and uploaded into the model's batch buffers, so it may be reused once forward returns.
    double forward(const Batch& batch, bool training, std::uint32_t step = 0);
    /// ACCUMULATES ∂loss/∂θ of the last training forward into the gradient buffer (call
    /// params().zero_grad() first, once per optimizer step). `loss_weight`
    /// multiplies the gradient (∂(w·loss)/∂θ, in the loss's backward: the data-parallel step's
    /// share of a rank, engine/train/training_loop.hpp); 1 is the plain gradient, bit for bit.
    void backward(double loss_weight = 1.0);
    /// Per-op wall times of training forwards and backwards into `profile` ("<op> forward",
    /// "<op> backward"; the tape's timers), or off with nullptr. For `routescope-cli bench`.
    void set_profile(ops::OpProfile* profile);
    /// Hands the activations of every later non-training forward to `probe` (nullptr: off).
    /// Training forwards never call it, so capturing cannot change training results.
    void set_capture(ActivationProbe* probe);
    /// Whether blocks of this model's architecture report gates to an ActivationProbe.
    static bool has_gates(const ModelConfig& m);

    /// Logits of the last forward: [B, L, V] (MLM) or [B, n_labels], in the BACKEND's memory
    /// (for its ops; host code reads them through readout() or download_logits()); valid until
    /// the next forward.
    const float* logits() const { return logits_; }
    std::int64_t logits_size() const { return logits_size_; }
    /// Per row of the last forward's logits ([B·L] rows for MLM, [B] for classification): the
    /// argmax and the NLL at the batch's target (labels / class_labels; NaN where ignored),
    /// computed by the backend (Backend::row_readout), 12 bytes a row to the host.
    struct RowReadout {
        std::vector<std::int32_t> argmax;
        std::vector<double> nll;
        std::int64_t width = 0;  ///< logits per row (V or n_labels)
    };
    const RowReadout& readout();
    /// The S4D kernel K [H, L] of the SSM module `module` (`layers.<i>.ssm_forward`), computed by
    /// the backend's s4d_kernel op and downloaded (the dump's /kernels).
    std::vector<float> ssm_kernel(std::string_view module, int L);
    /// A host copy of the last logits (tests, tools; 4·B·L·V bytes down: evaluation uses readout).
    std::vector<float> download_logits() const;

    const RunConfig& config() const { return config_; }
    ParamStore& params() { return params_; }
    const ParamStore& params() const { return params_; }
    ThreadPool& pool() { return *pool_; }
    /// The backend the model's ops run on and whose memory holds its tensors.
    Backend& backend() { return *backend_; }
    Device device() const { return backend_->device(); }
    /// Records the last training forward appended (the tape is data: engine/backend/tape.hpp).
    const Tape& tape() const { return tape_; }
    ModelUse use() const { return use_; }
    int batch_size() const { return B_; }
    int length() const { return L_; }
    std::size_t arena_bytes() const { return arena_->capacity(); }

private:
    /// Model::init's draws into `base` laid out as `entries`.
    static void draw_parameters(const std::vector<ParamEntry>& entries, float* base,
                                const ModelConfig& m, std::uint64_t seed);
    double run(Graph& g, const Batch& batch, std::uint32_t step);
    /// The batch's device buffers and the activations' arena, sized by planning passes;
    /// ConfigError naming the batch when the arena is larger than the machine's memory.
    void allocate_batch(Backend& be, ModelUse use);
    /// Checks a host batch (ids, types, labels, lengths in range) and uploads it: the device batch.
    Batch upload(const Batch& batch);
    /// Host copy of n floats of backend memory into staging slot `slot` (0 or 1).
    const float* to_host(const float* device, std::size_t n, int slot = 0);
    /// Hands the hidden state [B, L, d] of `layer` to the probe: a host copy (hidden), or, for a
    /// probe that takes device rows, the state with its pool and float16 bits made on the device.
    void hand_over(ActivationProbe& probe, int layer, const float* h, const std::int32_t* lengths);
    /// The classification pool (model.pool: first token, masked mean or the mean of all L
    /// positions) of a hidden state [B, L, d]
    /// `h` (h.v only is read), with `lengths` the batch's device lengths.
    Act pool_hidden(Graph& g, const Act& h, const std::int32_t* lengths);

    RunConfig config_;
    int B_, L_;
    ModelUse use_;
    // Declared first so they are destroyed last: every buffer below is this backend's memory.
    std::unique_ptr<ThreadPool> pool_;
    std::unique_ptr<Backend> backend_;
    ParamStore params_;
    std::unique_ptr<Embeddings> embeddings_;
    std::vector<std::unique_ptr<Block>> blocks_;
    std::unique_ptr<SlstmRecurrence> slstm_;  ///< model.arch = slstm (then blocks_ is empty)
    std::unique_ptr<MlmHead> mlm_;
    std::unique_ptr<ClassifierHead> classifier_;
    DeviceArray<double> loss_weight_;  ///< Tape::set_loss_seed
    /// The batch on the device (upload): ids, lengths, types, MLM labels, class labels; position
    /// ids 0..L−1 and zero type ids (uploaded once); Birdie's carry masks (made on the host per
    /// batch with a reset mask, then uploaded). [B, L] each, lengths and class labels [B].
    DeviceArray<std::int32_t> tokens_, lengths_, types_, labels_, class_labels_, positions_, zeros_,
        keep_forward_, keep_reverse_, keep_reverse_prefix_;
    DeviceArray<std::int32_t> row_lengths_;  ///< [B], every value L (model.pool = mean_all)
    std::vector<std::int32_t> host_keep_forward_, host_keep_reverse_, host_keep_reverse_prefix_;
    DeviceArray<std::int32_t> readout_argmax_;
    DeviceArray<double> readout_nll_;
    RowReadout readout_;
    bool readout_fresh_ = false;
    bool last_classification_ = false;
    std::unique_ptr<Arena> arena_;
    Tape tape_;
    ops::OpProfile* profile_ = nullptr;
    ActivationProbe* capture_ = nullptr;
    std::vector<float> staging_[2];  ///< host copies for the probe (to_host)
    /// For a probe that takes device rows (set_capture): the float16 bits of a hidden state
    /// [B, L, d], and the arena and tape of the pool's one op (planned once).
    DeviceArray<std::uint16_t> probe_half_;
    std::unique_ptr<Arena> probe_arena_;
    Tape probe_tape_;
    std::vector<float> weights_;  ///< a gate re-ordered on the host for the probe
    const float* logits_ = nullptr;
    std::int64_t logits_size_ = 0;
};

}  // namespace routescope::models
