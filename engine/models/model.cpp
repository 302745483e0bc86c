#include "engine/models/model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/backend/make_backend.hpp"
#include "engine/core/error.hpp"
#include "engine/core/philox.hpp"
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

bool has_ssm(const ModelConfig& m) {
    return m.arch == "bigs" || m.arch == "stack_ssm";
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

Model::Model(const RunConfig& config, int batch, int length, int threads)
    : config_(config), B_(batch), L_(length) {
    const auto& m = config_.model;
    if (batch < 1) throw ConfigError("train.batch_size: must be at least 1");
    if (length < 1 || length > m.max_len)
        throw ConfigError("model.max_len: sequence length " + std::to_string(length) +
                          " must lie in [1, " + std::to_string(m.max_len) + "]");
    declare_all(params_, m);
    params_.allocate();
    pool_ = std::make_unique<ThreadPool>(threads);
    embeddings_ = std::make_unique<Embeddings>(m);
    if (m.arch == "slstm")
        slstm_ = std::make_unique<SlstmRecurrence>(m);
    else
        for (int i = 0; i < m.n_layers; ++i)
            blocks_.push_back(make_block(m, i));
    if (m.mlm_head) mlm_ = std::make_unique<MlmHead>(m);
    if (m.n_labels > 0) classifier_ = std::make_unique<ClassifierHead>(m);
    backend_ = make_backend(Device::cpu, *pool_);
    loss_weight_ = static_cast<double*>(backend_->allocate(sizeof(double)));
    const auto rows = static_cast<std::size_t>(B_) * static_cast<std::size_t>(L_);
    positions_.resize(rows);
    for (std::size_t r = 0; r < rows; ++r)
        positions_[r] = static_cast<std::int32_t>(r % static_cast<std::size_t>(L_));
    zeros_.assign(rows, 0);
    if (m.arch == "birdie") {
        keep_forward_.assign(rows, 1);
        keep_reverse_.assign(rows, 1);
        keep_reverse_prefix_.assign(rows, 1);
    }
    // Planning passes (no compute): the bytes and tape records a training step asks for, for
    // each head; the backend prepares its workspaces (FFT plans, scratch) on the way.
    std::size_t bytes = 0, records = 0;
    std::vector<std::int32_t> dummy(static_cast<std::size_t>(B_) * L_, 1);
    for (int head = mlm_ ? 0 : 1; head < (classifier_ ? 2 : 1); ++head) {
        Graph plan(params_, *backend_, /*training=*/true);
        Batch b;
        b.tokens = dummy.data();
        b.lengths = dummy.data();
        (head == 0 ? b.labels : b.class_labels) = dummy.data();
        run(plan, b, 0);
        bytes = std::max(bytes, plan.planned_bytes());
        records = std::max(records, plan.planned_ops());
    }
    arena_ = std::make_unique<Arena>(bytes);
    tape_.reserve(records);
}

Model::~Model() {
    if (backend_ && loss_weight_) backend_->release(loss_weight_);
}

std::vector<ParamEntry> Model::parameter_layout(const ModelConfig& m) {
    ParamStore store;
    declare_all(store, m);
    // The block constructors validate what declaration does not (heads, pool).
    if (m.arch == "gated_att" || m.arch == "bert") (void)m.heads();
    if (m.n_labels > 0) ClassifierHead check(m);
    return store.entries();
}

void Model::init(std::uint64_t seed) {
    const auto& m = config_.model;
    const auto& entries = params_.entries();
    for (std::size_t e = 0; e < entries.size(); ++e) {
        const ParamEntry& p = entries[e];
        float* w = params_.data() + p.offset;
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
                ops::ssm_init(params_.param(module + ".A_re"), params_.param(module + ".A_im"),
                              params_.param(module + ".C"), params_.param(module + ".D"),
                              params_.param(module + ".log_step"), sc, sources);
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
    in.reset_mask = batch.reset_mask;
    if (batch.reset_mask && !keep_forward_.empty()) {
        in.keep_forward = keep_forward_.data();
        in.keep_reverse = keep_reverse_.data();
        in.keep_reverse_prefix = keep_reverse_prefix_.data();
    }
    const auto p = static_cast<float>(m.dropout);
    const auto seed = static_cast<std::uint64_t>(config_.train.seed);
    // Dropout sites of one step (ops::DropoutSite::stream): 0 embeddings, 1 classifier.
    // Each site's mask is indexed by global element (rank r's rows continue rank r − 1's).
    const auto row0 = static_cast<std::uint64_t>(batch.first_row);
    const auto d = static_cast<std::uint64_t>(m.d_model);
    Act h = embeddings_->forward(g, batch.tokens, batch.types, positions_.data(), zeros_.data(), B_,
                                 L_, {p, seed, step, 0, row0 * std::uint64_t(L_) * d});
    // The probe sees inference forwards only (never planning, never training).
    ActivationProbe* probe = g.planning() || g.training() ? nullptr : capture_;
    if (probe) probe->hidden(0, h.v);
    for (std::size_t l = 0; l < blocks_.size(); ++l) {
        h = blocks_[l]->forward(g, h, in);
        if (probe) probe->hidden(static_cast<int>(l) + 1, h.v);
    }
    Act sentence;  // S-LSTM's sentence node g after the last step
    if (slstm_) {
        // Layer l of the dump numbering is recurrent step l (0 = the embeddings and g⁰).
        const Act Ux = slstm_->input_projection(g, h, in);
        SlstmState state = slstm_->start(g, h, in);
        if (probe) probe->sentence(0, state.g.v);
        for (int l = 1; l <= m.n_layers; ++l) {
            state = slstm_->step(g, state, Ux, in, l);
            if (probe) {
                probe->hidden(l, state.h.v);
                probe->sentence(l, state.g.v);
            }
        }
        h = state.h;
        sentence = state.g;
    }
    double loss = 0;
    if (batch.class_labels) {
        if (!classifier_)
            throw ConfigError("model.n_labels: a classification batch needs n_labels > 0");
        const Act logits = classifier_->forward(g, h, sentence, in, {p, seed, step, 1, row0 * d});
        loss = g.cross_entropy(logits, batch.class_labels, B_, m.n_labels);
        logits_ = logits.v;
        logits_size_ = logits.n;
    } else {
        if (!mlm_)
            throw ConfigError(
                "model.mlm_head: an MLM batch needs the MLM head (this model has "
                "only the classifier)");
        const Act logits = mlm_->forward(g, h, std::int64_t(B_) * L_);
        loss = g.cross_entropy(logits, batch.labels, std::int64_t(B_) * L_, m.vocab_size);
        logits_ = logits.v;
        logits_size_ = logits.n;
    }
    return loss;
}

double Model::forward(const Batch& batch, bool training, std::uint32_t step) {
    if (!batch.tokens || !batch.lengths || (!batch.labels == !batch.class_labels))
        throw Error(
            "Model::forward: a batch needs tokens, lengths and exactly one of labels / "
            "class_labels");
    for (int b = 0; b < B_; ++b)
        if (batch.lengths[b] < 1 || batch.lengths[b] > L_)
            throw Error("Model::forward: lengths[" + std::to_string(b) +
                        "] = " + std::to_string(batch.lengths[b]) + " is outside [1, " +
                        std::to_string(L_) + "]");
    if (batch.class_labels)
        for (int b = 0; b < B_; ++b)
            if (batch.class_labels[b] < 0 || batch.class_labels[b] >= config_.model.n_labels)
                throw Error("Model::forward: class_labels[" + std::to_string(b) +
                            "] = " + std::to_string(batch.class_labels[b]) + " is outside [0, " +
                            std::to_string(config_.model.n_labels) + ")");
    if (batch.reset_mask && !keep_forward_.empty())
        birdie_carry_masks(batch.reset_mask, B_, L_, keep_forward_.data(), keep_reverse_.data(),
                           keep_reverse_prefix_.data());
    arena_->reset();
    tape_.clear();
    Graph g(params_, *arena_, tape_, *backend_, training);
    if (training) g.set_profile(profile_);
    return run(g, batch, step);
}

void Model::backward(double loss_weight) {
    if (loss_weight != 1.0) {
        backend_->copy(loss_weight_, &loss_weight, sizeof loss_weight,
                       Backend::CopyKind::host_to_device);
        tape_.set_loss_seed(loss_weight_);
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
    const bool gates = probe && probe->wants_gates();
    if (slstm_) {
        slstm_->set_gate_capture(
            gates ? SlstmRecurrence::GateCapture(
                        [probe](int step, const char* name, const float* v, int k) {
                            if (std::string(name) == "sentence_weight")
                                probe->sentence_weight(step, v, k);
                            else
                                probe->gate(step, name, v, k);
                        })
                  : SlstmRecurrence::GateCapture());
    }
    for (std::size_t l = 0; l < blocks_.size(); ++l) {
        if (auto* birdie = dynamic_cast<BirdieBlock*>(blocks_[l].get())) {
            const int layer = static_cast<int>(l) + 1;
            birdie->set_gate_capture(
                gates ? BirdieBlock::GateCapture(
                            [probe, layer](const char* name, const float* v, int k) {
                                probe->gate(layer, name, v, k);
                            })
                      : BirdieBlock::GateCapture());
            continue;
        }
        if (auto* gmlp = dynamic_cast<GmlpBlock*>(blocks_[l].get())) {
            const int layer = static_cast<int>(l) + 1;
            gmlp->set_gate_capture(
                gates ? GmlpBlock::GateCapture(
                            [probe, layer](const char* name, const float* v, int k) {
                                probe->gate(layer, name, v, k);
                            })
                      : GmlpBlock::GateCapture());
            continue;
        }
        auto* gated = dynamic_cast<GatedSsmBlock*>(blocks_[l].get());
        if (!gated) continue;
        const int layer = static_cast<int>(l) + 1;
        gated->set_gate_capture(gates
                                    ? GatedSsmBlock::GateCapture(
                                          [probe, layer](const char* name, const float* v, int k) {
                                              probe->gate(layer, name, v, k);
                                          })
                                    : GatedSsmBlock::GateCapture());
    }
}

bool Model::has_gates(const ModelConfig& m) {
    return m.arch == "bigs" || m.arch == "slstm" || m.arch == "birdie" || m.arch == "gmlp";
}

}  // namespace routescope::models
