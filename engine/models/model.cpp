#include "engine/models/model.hpp"
#include "engine/models/gated_att_block.hpp"
#include "engine/models/stack_att_block.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "engine/backend/make_backend.hpp"
#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/core/philox.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/models/block.hpp"
#include "engine/models/classifier_head.hpp"
#include "engine/models/embeddings.hpp"
#include "engine/models/gated_ssm_block.hpp"
#include "engine/models/gmlp_block.hpp"
#include "engine/models/graph.hpp"
#include "engine/models/mlm_head.hpp"
#include "engine/models/slstm_recurrence.hpp"
#include "engine/ops/hippo.hpp"

namespace routescope::models {

namespace {

void declare_all(ParamStore& store, const ModelConfig& m) {
    Embeddings::declare(store, m);
    if (m.arch == "slstm")
        SlstmRecurrence::declare(store, m);  // one parameter set shared by the n_layers steps
    else
        for (int i = 0; i < m.n_layers; ++i)
            declare_block(store, m, i);
    if (m.mlm_head) MlmHead::declare(store, m);
    if (m.n_labels > 0) ClassifierHead::declare(store, m);
}

// A uniform in (0, 1) from 32 random bits (never 0, so log() is finite).
double open_uniform(std::uint32_t bits) {
    return (bits + 0.5) * (1.0 / 4294967296.0);
}

// N(0, 1) number `i` of stream `stream` under `seed`: Box–Muller on two Philox draws.
double philox_normal(std::uint64_t seed, std::uint32_t stream, std::uint64_t i) {
    const double u1 = open_uniform(philox_bits(seed, 0, stream, 2 * i));
    const double u2 = open_uniform(philox_bits(seed, 0, stream, 2 * i + 1));
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// The SSM init's own streams live above the per-tensor ones so the two never share draws.
constexpr std::uint32_t kSsmStreamBase = 1u << 24;

}  // namespace

namespace {
// What a batch asks of memory, said with its size and the options that set it.
std::string batch_memory_message(int batch, int length) {
    return "a batch of " + std::to_string(batch) + " sequences × " + std::to_string(length) +
           " positions does not fit in memory; lower the batch size (train.batch_size, or "
           "--batch / --batch-size of dump and eval) or the length (data.seq_len)";
}

std::string mib(double bytes) {
    return std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB";
}

}  // namespace

// A batch too large for memory is a configuration error naming the batch (it was a bare
// std::bad_alloc, exit 3, or an arena larger than the machine touched until the kernel killed
// the process).
Model::Model(const RunConfig& config, int batch, int length, int threads, Device device,
             ModelUse use)
    : config_(config), B_(batch), L_(length), use_(use) {
    const auto& m = config_.model;
    if (batch < 1) throw ConfigError("train.batch_size: must be at least 1");
    if (length < 1 || length > m.max_len)
        throw ConfigError("model.max_len: sequence length " + std::to_string(length) +
                          " must lie in [1, " + std::to_string(m.max_len) + "]");
    // Before any allocation: a lower bound of the batch's memory (eight int32 buffers per row
    // and one float32 vector of d per row and layer), which the planned arena below exceeds.
    const double rows = static_cast<double>(batch) * static_cast<double>(length);
    if (const MemoryLimit limit = memory_limit();
        device == Device::cpu && limit.bytes > 0 &&
        rows * (32.0 + 4.0 * m.d_model * (m.n_layers + 1.0)) > limit.bytes)
        throw ConfigError(batch_memory_message(batch, length) + " (more than " + limit.text() +
                          ")");
    pool_ = std::make_unique<ThreadPool>(threads);
    backend_ = make_backend(device, *pool_);
    Backend& be = *backend_;
    declare_all(params_, m);
    // The parameters, and for training their gradients and AdamW's two moments, against this
    // machine's memory before they are allocated. The configuration's estimate (config.cpp)
    // stops only at 64 GiB, and a vocabulary the tokenizer sets (a vocab.txt of 10^6 pieces) is
    // known only here: both ended in an allocation failure that named nothing.
    if (const MemoryLimit limit = memory_limit(); device != Device::cuda && limit.bytes > 0) {
        const double per = use == ModelUse::training ? 16.0 : 4.0;
        const double bytes = per * static_cast<double>(params_.size());
        if (bytes > limit.bytes)
            throw ConfigError(
                "model: its " + std::to_string(params_.size()) + " parameters need " + mib(bytes) +
                (use == ModelUse::training
                     ? " (16 bytes each: the weights, their gradients and AdamW's two moments)"
                     : " (4 bytes each)") +
                ", more than " + limit.text() +
                "; lower model.d_model, model.n_layers, model.max_len or the vocabulary "
                "(model.vocab_size = " +
                std::to_string(m.vocab_size) + ", the tokenizer's when a tokenizer sets it)");
    }
    if (use == ModelUse::training)
        params_.allocate(be);
    else
        params_.allocate_parameters_only(be);
    embeddings_ = std::make_unique<Embeddings>(m);
    if (m.arch == "slstm")
        slstm_ = std::make_unique<SlstmRecurrence>(m);
    else
        for (int i = 0; i < m.n_layers; ++i)
            blocks_.push_back(make_block(m, i));
    if (m.mlm_head) mlm_ = std::make_unique<MlmHead>(m);
    if (m.n_labels > 0) classifier_ = std::make_unique<ClassifierHead>(m);
    loss_weight_ = DeviceArray<double>(be, 1);
    try {
        allocate_batch(be, use);
    } catch (const std::bad_alloc&) {
        throw ConfigError(batch_memory_message(batch, length) +
                          " (out of memory while allocating)");
    }
}

// The batch's buffers and the arena of its activations (sized by planning passes).
void Model::allocate_batch(Backend& be, ModelUse use) {
    const auto& m = config_.model;
    const auto rows = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_);
    const auto Bn = static_cast<std::size_t>(B_);
    tokens_ = DeviceArray<std::int32_t>(be, rows);
    lengths_ = DeviceArray<std::int32_t>(be, Bn);
    types_ = DeviceArray<std::int32_t>(be, rows);
    labels_ = DeviceArray<std::int32_t>(be, rows);
    class_labels_ = DeviceArray<std::int32_t>(be, Bn);
    readout_argmax_ = DeviceArray<std::int32_t>(be, rows);
    readout_nll_ = DeviceArray<double>(be, rows);
    std::vector<std::int32_t> host(rows);
    for (std::size_t r = 0; r < rows; ++r)
        host[r] = static_cast<std::int32_t>(r % static_cast<std::size_t>(L_));
    positions_ = DeviceArray<std::int32_t>(be, rows);
    positions_.upload(host);
    row_lengths_ = DeviceArray<std::int32_t>(be, Bn);
    row_lengths_.upload(std::vector<std::int32_t>(Bn, static_cast<std::int32_t>(L_)));
    zeros_ = DeviceArray<std::int32_t>(be, rows);  // zero-filled
    if (m.arch == "birdie") {
        for (auto* k : {&keep_forward_, &keep_reverse_, &keep_reverse_prefix_})
            *k = DeviceArray<std::int32_t>(be, rows);
        host_keep_forward_.assign(rows, 1);
        host_keep_reverse_.assign(rows, 1);
        host_keep_reverse_prefix_.assign(rows, 1);
    }
    // Planning passes (no compute): the bytes and tape records a step asks for, for each head —
    // a training step (training models) and an inference step (both: a training model
    // evaluates); the backend prepares its workspaces (FFT plans, scratch) on the way. The batch
    // pointers are the model's own buffers (never read while planning).
    std::size_t bytes = 0, records = 0;
    for (const bool training : {true, false}) {
        if (training && use != ModelUse::training) continue;
        // A model without heads (an imported encoder) plans with the MLM batch: an encoding
        // model stops before the head; any other use throws there, naming model.mlm_head.
        for (int head = mlm_ || !classifier_ ? 0 : 1; head < (classifier_ ? 2 : 1); ++head) {
            Graph plan(params_, be, training);
            Batch b;
            b.tokens = tokens_.data();
            b.lengths = lengths_.data();
            (head == 0 ? b.labels : b.class_labels) =
                head == 0 ? labels_.data() : class_labels_.data();
            run(plan, b, 0);
            bytes = std::max(bytes, plan.planned_bytes());
            records = std::max(records, plan.planned_ops());
        }
    }
    if (const MemoryLimit limit = memory_limit();
        be.device() == Device::cpu && limit.bytes > 0 && static_cast<double>(bytes) > limit.bytes)
        throw ConfigError(batch_memory_message(B_, L_) + " (its activations need about " +
                          mib(static_cast<double>(bytes)) + ", more than " + limit.text() + ")");
    arena_ = std::make_unique<Arena>(bytes, be);
    tape_.reserve(records);
}

Model::~Model() = default;

std::vector<ParamEntry> Model::parameter_layout(const ModelConfig& m) {
    ParamStore store;
    declare_all(store, m);
    // The block constructors validate what declaration does not (heads, pool).
    if (m.arch == "gated_att" || m.arch == "bert") (void)m.heads();
    if (m.n_labels > 0) ClassifierHead check(m);
    return store.entries();
}

void Model::init(std::uint64_t seed) {
    // Drawn on the host (Philox, the SSM init), then uploaded once.
    ParamStore host = params_.host_copy(/*values=*/false);
    draw_parameters(host.entries(), host.data(), config_.model, seed);
    params_.upload(host.data());
}

std::vector<float> Model::initial_parameters(const ModelConfig& m, std::uint64_t seed) {
    const std::vector<ParamEntry> entries = parameter_layout(m);
    std::size_t total = 0;
    for (const ParamEntry& e : entries)
        total = std::max(total, e.offset + e.size);
    std::vector<float> out(total, 0.0f);
    draw_parameters(entries, out.data(), m, seed);
    return out;
}

void Model::draw_parameters(const std::vector<ParamEntry>& entries, float* base,
                            const ModelConfig& m, std::uint64_t seed) {
    const auto param = [&](const std::string& name) {
        for (const ParamEntry& e : entries)
            if (e.name == name) return base + e.offset;
        throw Error("Model::init: no parameter named '" + name + "'");
    };
    for (std::size_t e = 0; e < entries.size(); ++e) {
        const ParamEntry& p = entries[e];
        float* w = base + p.offset;
        const auto stream = static_cast<std::uint32_t>(e);
        switch (p.init) {
            case ParamInit::normal:
                for (std::size_t i = 0; i < p.size; ++i)
                    w[i] = static_cast<float>(m.init_std * philox_normal(seed, stream, i));
                break;
            case ParamInit::zeros:
                std::fill(w, w + p.size, 0.0f);
                break;
            case ParamInit::ones:
                std::fill(w, w + p.size, 1.0f);
                break;
            case ParamInit::ssm_part:
                break;  // drawn with its SSM's A_re
            case ParamInit::ssm: {
                // The five tensors of one SSM, declared together (declare_ssm): A_re first.
                const std::string module = p.name.substr(0, p.name.rfind('.'));
                ops::SsmInitConfig sc;
                sc.n_modes = m.ssm.n_modes;
                sc.n_kernels = m.ssm.n_kernels;
                sc.a_im = ops::parse_a_im_init(m.ssm.a_im_init);
                sc.dt_min = m.ssm.dt_min;
                sc.dt_max = m.ssm.dt_max;
                std::uint64_t n_normal = 0, n_uniform = 0;
                ops::SsmInitSources sources;
                sources.standard_normal = [&] {
                    return philox_normal(seed, kSsmStreamBase + stream, n_normal++);
                };
                sources.uniform01 = [&] {
                    return open_uniform(
                        philox_bits(seed, 0, kSsmStreamBase + stream + 1, n_uniform++));
                };
                ops::ssm_init(param(module + ".A_re"), param(module + ".A_im"),
                              param(module + ".C"), param(module + ".D"),
                              param(module + ".log_step"), sc, sources);
                break;
            }
            case ParamInit::spatial_weight: {
                // gMLP's W uniform(−1e−3/n, 1e−3/n) (MODELS.md: the block starts as an FFN); when
                // causal, W's strict upper triangle is 0 (never read, never updated).
                const std::int64_t n = p.shape[0];
                const double a = 1e-3 / static_cast<double>(n);
                for (std::size_t i = 0; i < p.size; ++i) {
                    const bool upper = std::int64_t(i) % n > std::int64_t(i) / n;
                    const double u = open_uniform(philox_bits(seed, 0, stream, i));
                    w[i] = m.gmlp.causal && upper ? 0.0f : static_cast<float>(a * (2 * u - 1));
                }
                break;
            }
            case ParamInit::spatial_bias:
                std::fill(w, w + p.size, 1.0f);
                break;
            case ParamInit::forget_bias: {  // model.birdie.forget_init (zero: MODELS.md's zero
                                            // bias)
                const auto bias = birdie_forget_bias(m, p.layer);
                std::copy(bias.begin(), bias.end(), w);
                break;
            }
        }
    }
}

double Model::run(Graph& g, const Batch& batch, std::uint32_t step) {
    const auto& m = config_.model;
    BlockInput in{B_, L_, batch.lengths};
    in.row_lengths = row_lengths_.data();
    in.reset_mask = batch.reset_mask;
    if (batch.reset_mask && !keep_forward_.empty()) {
        in.keep_forward = keep_forward_.data();
        in.keep_reverse = keep_reverse_.data();
        in.keep_reverse_prefix = keep_reverse_prefix_.data();
    }
    const auto hd = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_) *
                    static_cast<std::size_t>(m.d_model);
    const auto bd = static_cast<std::size_t>(B_) * static_cast<std::size_t>(m.d_model);
    const auto p = static_cast<float>(m.dropout);
    // Dropout sites of one step (ops::DropoutSite::stream): 0 embeddings, 1 classifier; their
    // seed is salted apart from the parameters' draws (data::kDropoutSalt).
    const auto seed = static_cast<std::uint64_t>(config_.train.seed) ^ data::kDropoutSalt;
    // Each site's mask is indexed by global element (rank r's rows continue rank r − 1's).
    const auto row0 = static_cast<std::uint64_t>(batch.first_row);
    const auto d = static_cast<std::uint64_t>(m.d_model);
    Act h = embeddings_->forward(g, batch.tokens, batch.types, positions_.data(), zeros_.data(), B_,
                                 L_, {p, seed, step, 0, row0 * std::uint64_t(L_) * d});
    // A probe gets host copies (to_host) or, if it takes them, device rows made for it
    // (hand_over), never the arena's pointers to keep. It sees inference forwards only (never
    // planning, never training).
    ActivationProbe* probe = g.planning() || g.training() ? nullptr : capture_;
    if (probe) hand_over(*probe, 0, h.v, in.lengths);
    // An inference step keeps one layer's internals at a time: each block's output is copied into
    // one of two residual buffers (not the one holding its input) and the arena is rewound to
    // where the block began. A training step keeps everything (its tape reads it).
    const bool layer_by_layer = !g.training() && !blocks_.empty();
    Act residual[2];
    if (layer_by_layer)
        for (Act& r : residual)
            r = g.alloc(static_cast<std::int64_t>(hd), "residual stream");
    for (std::size_t l = 0; l < blocks_.size(); ++l) {
        const std::size_t mark = layer_by_layer ? g.mark() : 0;
        h = blocks_[l]->forward(g, h, in);
        if (probe) hand_over(*probe, static_cast<int>(l) + 1, h.v, in.lengths);
        if (layer_by_layer) {
            const Act& to = residual[l % 2];
            if (!g.planning())
                backend_->copy(to.v, h.v, hd * sizeof(float), Backend::CopyKind::device_to_device);
            g.release_to(mark);
            h = to;
        }
    }
    Act sentence;  // S-LSTM's sentence node g after the last step
    if (slstm_) {
        // Layer l of the dump numbering is recurrent step l (0 = the embeddings and g⁰).
        const Act Ux = slstm_->input_projection(g, h, in);
        SlstmState state = slstm_->start(g, h, in);
        if (probe) probe->sentence(0, to_host(state.g.v, bd));
        for (int l = 1; l <= m.n_layers; ++l) {
            state = slstm_->step(g, state, Ux, in, l);
            if (probe) {
                hand_over(*probe, l, state.h.v, in.lengths);
                probe->sentence(l, to_host(state.g.v, bd));
            }
        }
        h = state.h;
        sentence = state.g;
    }
    if (use_ == ModelUse::encoding) {  // the blocks only (ModelUse)
        logits_ = nullptr;
        logits_size_ = 0;
        readout_fresh_ = false;
        return std::numeric_limits<double>::quiet_NaN();
    }
    double loss = 0;
    if (batch.class_labels) {
        if (!classifier_)
            throw ConfigError("model.n_labels: a classification batch needs n_labels > 0");
        const Act logits = classifier_->forward(g, h, sentence, in, {p, seed, step, 1, row0 * d});
        loss = g.cross_entropy(logits, batch.class_labels, B_, m.n_labels);
        logits_ = logits.v;
        logits_size_ = logits.n;
        last_classification_ = true;
    } else {
        if (!mlm_)
            throw ConfigError(
                std::string("model.mlm_head: an MLM batch needs the MLM head (this model has ") +
                (classifier_ ? "only the classifier)" : "no head: an encoder)"));
        const Act logits = mlm_->forward(g, h, std::int64_t(B_) * L_);
        loss = g.cross_entropy(logits, batch.labels, std::int64_t(B_) * L_, m.vocab_size);
        logits_ = logits.v;
        logits_size_ = logits.n;
        last_classification_ = false;
    }
    readout_fresh_ = false;
    return loss;
}

Batch Model::upload(const Batch& batch) {
    const auto& m = config_.model;
    if (!batch.tokens || !batch.lengths || (!batch.labels == !batch.class_labels))
        throw Error(
            "Model::forward: a batch needs tokens, lengths and exactly one of labels / "
            "class_labels");
    // Every value an op would index with is checked here, on the host: a device kernel cannot
    // report a bad id (engine/ops keep their own checks for direct callers).
    const auto fail = [](const char* what, std::size_t i, std::int32_t v,
                         const std::string& range) {
        throw Error("Model::forward: " + std::string(what) + "[" + std::to_string(i) +
                    "] = " + std::to_string(v) + " is outside " + range);
    };
    const auto rows = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_);
    for (int b = 0; b < B_; ++b)
        if (batch.lengths[b] < 1 || batch.lengths[b] > L_)
            fail("lengths", std::size_t(b), batch.lengths[b], "[1, " + std::to_string(L_) + "]");
    for (std::size_t i = 0; i < rows; ++i)
        if (batch.tokens[i] < 0 || batch.tokens[i] >= m.vocab_size)
            fail("tokens", i, batch.tokens[i], "[0, " + std::to_string(m.vocab_size) + ")");
    if (batch.types)
        for (std::size_t i = 0; i < rows; ++i)
            if (batch.types[i] < 0 || batch.types[i] > 1)
                fail("types", i, batch.types[i], "[0, 2)");
    if (batch.labels)
        for (std::size_t i = 0; i < rows; ++i)
            if (batch.labels[i] != -100 && (batch.labels[i] < 0 || batch.labels[i] >= m.vocab_size))
                fail("labels", i, batch.labels[i],
                     "[0, " + std::to_string(m.vocab_size) + ") and is not −100");
    if (batch.class_labels)
        for (int b = 0; b < B_; ++b)
            if (batch.class_labels[b] < 0 || batch.class_labels[b] >= m.n_labels)
                fail("class_labels", std::size_t(b), batch.class_labels[b],
                     "[0, " + std::to_string(m.n_labels) + ")");
    Batch d;
    d.first_row = batch.first_row;
    tokens_.upload(batch.tokens, rows);
    d.tokens = tokens_.data();
    lengths_.upload(batch.lengths, static_cast<std::size_t>(B_));
    d.lengths = lengths_.data();
    if (batch.types) {
        types_.upload(batch.types, rows);
        d.types = types_.data();
    }
    if (batch.labels) {
        labels_.upload(batch.labels, rows);
        d.labels = labels_.data();
    } else {
        class_labels_.upload(batch.class_labels, static_cast<std::size_t>(B_));
        d.class_labels = class_labels_.data();
    }
    if (batch.reset_mask && !keep_forward_.empty()) {
        birdie_carry_masks(batch.reset_mask, B_, L_, host_keep_forward_.data(),
                           host_keep_reverse_.data(), host_keep_reverse_prefix_.data());
        keep_forward_.upload(host_keep_forward_);
        keep_reverse_.upload(host_keep_reverse_);
        keep_reverse_prefix_.upload(host_keep_reverse_prefix_);
    }
    // The blocks test the reset mask for null only (the carry masks are the data); the host
    // pointer is never handed to an op.
    d.reset_mask = batch.reset_mask;
    return d;
}

double Model::forward(const Batch& batch, bool training, std::uint32_t step) {
    if (training && use_ != ModelUse::training)
        throw Error(
            "Model::forward: this model was built for inference (ModelUse::inference or "
            "encoding: no gradients, one layer's activations at a time); a training step needs a "
            "training model");
    const Batch device_batch = upload(batch);
    arena_->reset();
    tape_.clear();
    Graph g(params_, *arena_, tape_, *backend_, training);
    if (training) g.set_profile(profile_);
    return run(g, device_batch, step);
}

Act Model::pool_hidden(Graph& g, const Act& h, const std::int32_t* lengths) {
    const ModelConfig& m = config_.model;
    Act x = h;
    x.n = static_cast<std::int64_t>(B_) * L_ * m.d_model;
    return pool_tokens(g, m.pool, x, lengths, row_lengths_.data(), B_, L_, m.d_model);
}

void Model::hand_over(ActivationProbe& probe, int layer, const float* h,
                      const std::int32_t* lengths) {
    const auto hd = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_) *
                    static_cast<std::size_t>(config_.model.d_model);
    if (!probe.wants_layer(layer)) return;
    if (!probe.takes_device_rows()) {
        probe.hidden(layer, to_host(h, hd));
        return;
    }
    ActivationProbe::DeviceRows rows;
    rows.backend = backend_.get();
    rows.hidden = h;
    if (!probe_half_.empty()) {
        backend_->to_half(h, probe_half_.data(), hd);
        rows.half = probe_half_.data();
    }
    if (probe_arena_) {
        probe_arena_->reset();
        probe_tape_.clear();
        Graph g(params_, *probe_arena_, probe_tape_, *backend_, /*training=*/false);
        Act x;
        x.v = const_cast<float*>(h);
        rows.pooled = pool_hidden(g, x, lengths).v;
    }
    probe.hidden_rows(layer, rows);
}

const float* Model::to_host(const float* device, std::size_t n, int slot) {
    auto& buf = staging_[slot];
    if (buf.size() < n) buf.resize(n);
    backend_->copy(buf.data(), device, n * sizeof(float), Backend::CopyKind::device_to_host);
    return buf.data();
}

const Model::RowReadout& Model::readout() {
    if (!logits_)
        throw Error(use_ == ModelUse::encoding
                        ? "Model::readout: an encoding model computes no logits (ModelUse)"
                        : "Model::readout: no forward has run");
    if (readout_fresh_) return readout_;
    const std::int64_t rows = last_classification_ ? B_ : std::int64_t(B_) * L_;
    const std::int64_t width = logits_size_ / rows;
    const std::int32_t* targets = last_classification_ ? class_labels_.data() : labels_.data();
    backend_->row_readout(logits_, targets, rows, width, readout_argmax_.data(),
                          readout_nll_.data());
    readout_.argmax.resize(static_cast<std::size_t>(rows));
    readout_.nll.resize(static_cast<std::size_t>(rows));
    readout_.width = width;
    readout_argmax_.download(readout_.argmax.data(), static_cast<std::size_t>(rows));
    readout_nll_.download(readout_.nll.data(), static_cast<std::size_t>(rows));
    readout_fresh_ = true;
    return readout_;
}

std::vector<float> Model::ssm_kernel(std::string_view module, int L) {
    Graph plan(params_, *backend_, /*training=*/false);
    (void)plan.s4d_kernel(module, L);
    Arena arena(plan.planned_bytes(), *backend_);
    Tape tape;
    Graph g(params_, arena, tape, *backend_, /*training=*/false);
    const Act K = g.s4d_kernel(module, L);
    std::vector<float> out(static_cast<std::size_t>(K.n));
    backend_->copy(out.data(), K.v, out.size() * sizeof(float), Backend::CopyKind::device_to_host);
    return out;
}

std::vector<float> Model::download_logits() const {
    std::vector<float> out(static_cast<std::size_t>(logits_size_));
    if (!out.empty())
        backend_->copy(out.data(), logits_, out.size() * sizeof(float),
                       Backend::CopyKind::device_to_host);
    return out;
}

void Model::backward(double loss_weight) {
    if (use_ != ModelUse::training)
        throw Error("Model::backward: this model was built for inference (no gradients)");
    if (loss_weight != 1.0) {
        loss_weight_.upload(&loss_weight, 1);
        tape_.set_loss_seed(loss_weight_.data());
    } else {
        tape_.set_loss_seed(nullptr);
    }
    tape_.backward(*backend_, profile_);
}

void Model::set_profile(ops::OpProfile* profile) {
    profile_ = profile;
}

void Model::set_capture(ActivationProbe* probe) {
    capture_ = probe;
    // A probe that takes device rows: the float16 bits and the pool's arena, made here (never
    // inside a forward), once per probe.
    probe_half_ = {};
    probe_arena_.reset();
    if (probe && probe->takes_device_rows()) {
        const auto hd = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_) *
                        static_cast<std::size_t>(config_.model.d_model);
        if (probe->wants_half()) probe_half_ = DeviceArray<std::uint16_t>(*backend_, hd);
        if (!slstm_) {
            Graph plan(params_, *backend_, /*training=*/false);
            const Act h{};
            (void)pool_hidden(plan, h, nullptr);
            probe_arena_ = std::make_unique<Arena>(plan.planned_bytes(), *backend_);
        }
    }
    const bool gates = probe && probe->wants_gates();
    const auto rows = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_);
    // The blocks hand over backend memory; the probe gets host copies (to_host).
    const auto plain = [this, probe, rows](int layer) {
        return [this, probe, rows, layer](const char* name, const float* v, int k) {
            probe->gate(layer, name, to_host(v, rows * static_cast<std::size_t>(k)), k);
        };
    };
    if (slstm_) {
        slstm_->set_gate_capture(
            gates ? SlstmRecurrence::GateCapture([this, probe, rows](int step, const char* name,
                                                                     const float* v, int k,
                                                                     const float* own) {
                if (!own) {
                    probe->gate(step, name, to_host(v, rows * static_cast<std::size_t>(k)), k);
                    return;
                }
                // [B, L + 1, k]: each sequence's token weights, then the node's own weight.
                const float* tok = to_host(v, rows * static_cast<std::size_t>(k), 0);
                const float* node = to_host(own, static_cast<std::size_t>(B_) * k, 1);
                const auto Lk = static_cast<std::size_t>(L_) * static_cast<std::size_t>(k);
                std::vector<float>& out = weights_;
                out.resize(static_cast<std::size_t>(B_) * (Lk + static_cast<std::size_t>(k)));
                for (int b = 0; b < B_; ++b) {
                    float* o = out.data() + static_cast<std::size_t>(b) * (Lk + k);
                    std::copy_n(tok + static_cast<std::size_t>(b) * Lk, Lk, o);
                    std::copy_n(node + static_cast<std::size_t>(b) * k, k, o + Lk);
                }
                probe->sentence_weight(step, out.data(), k);
            })
                  : SlstmRecurrence::GateCapture());
    }
    const bool attention = probe && probe->wants_attention();
    for (std::size_t l = 0; l < blocks_.size(); ++l) {
        const int layer = static_cast<int>(l) + 1;
        MultiHeadAttention* mha = nullptr;
        if (auto* stack = dynamic_cast<StackAttBlock*>(blocks_[l].get())) mha = &stack->attention();
        if (auto* gated_att = dynamic_cast<GatedAttBlock*>(blocks_[l].get()))
            mha = &gated_att->attention();
        if (mha) {
            mha->set_capture(attention ? MultiHeadAttention::ProbsCapture(
                                             [this, probe, layer](const float* p, int heads) {
                                                 const auto n = static_cast<std::size_t>(B_) *
                                                                static_cast<std::size_t>(heads) *
                                                                static_cast<std::size_t>(L_) *
                                                                static_cast<std::size_t>(L_);
                                                 probe->attention(layer, to_host(p, n), heads);
                                             })
                                       : MultiHeadAttention::ProbsCapture());
            continue;
        }
        if (auto* birdie = dynamic_cast<BirdieBlock*>(blocks_[l].get())) {
            birdie->set_gate_capture(gates ? BirdieBlock::GateCapture(plain(layer))
                                           : BirdieBlock::GateCapture());
            continue;
        }
        if (auto* gmlp = dynamic_cast<GmlpBlock*>(blocks_[l].get())) {
            gmlp->set_gate_capture(gates ? GmlpBlock::GateCapture(plain(layer))
                                         : GmlpBlock::GateCapture());
            continue;
        }
        auto* gated = dynamic_cast<GatedSsmBlock*>(blocks_[l].get());
        if (!gated) continue;
        gated->set_gate_capture(gates ? GatedSsmBlock::GateCapture([this, probe, rows, layer](
                                                                       const char* name,
                                                                       const float* v, int k,
                                                                       bool reversed) {
            const float* host = to_host(v, rows * static_cast<std::size_t>(k), 0);
            if (reversed) {  // back to token order, sequence by sequence
                const auto kk = static_cast<std::size_t>(k);
                const auto row = static_cast<std::size_t>(L_) * kk;
                weights_.resize(rows * kk);
                for (int b = 0; b < B_; ++b)
                    for (int t = 0; t < L_; ++t)
                        std::copy_n(host + b * row + static_cast<std::size_t>(L_ - 1 - t) * kk, kk,
                                    weights_.data() + b * row + static_cast<std::size_t>(t) * kk);
                host = weights_.data();
            }
            probe->gate(layer, name, host, k);
        })
                                      : GatedSsmBlock::GateCapture());
    }
}

bool Model::has_gates(const ModelConfig& m) {
    return m.arch == "bigs" || m.arch == "slstm" || m.arch == "birdie" || m.arch == "gmlp";
}

}  // namespace routescope::models
