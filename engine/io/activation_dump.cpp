#include "engine/io/activation_dump.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "engine/core/error.hpp"
#include "engine/io/dump_writer.hpp"
#include "engine/io/half.hpp"
#include "engine/io/write_queue.hpp"
#include "engine/models/birdie_block.hpp"
#include "engine/models/host_batch.hpp"
#include "engine/models/model.hpp"

namespace routescope {
namespace {

// The most bytes of rows waiting for the disk: about one batch of a published-size BiGS (8 × 512
// tokens × d 1024 × 24 layers in float16 is 192 MiB), so the model runs a batch ahead of the
// writes and no further.
constexpr std::size_t kWriteQueueBytes = std::size_t(256) << 20;

constexpr std::int32_t kIgnore = -100;  // MLM target of an unscored position (PyTorch's index)

// bigs and stack_ssm carry /kernels; a causal one (model.causal) has no backward SSM, so its
// /kernels/<l> holds the forward kernel and D_forward alone (docs/formats/dump.md).
bool has_ssm_kernels(const ModelConfig& m) {
    return m.arch == "bigs" || m.arch == "stack_ssm";
}

// Queues each example's rows of the chosen layers while the forward runs (DUMP_FORMAT.md
// numbering), to be written on the queue's thread while the model computes the next layers. The
// hidden states and their sentence pools come as device rows (ActivationProbe::DeviceRows): pooled,
// and converted to float16 for a float16 dump, where the model runs, then downloaded straight into
// the queue's buffers. Gates, attention and S-LSTM's node come as host copies, copied or converted
// (to_half) into a buffer here. No activation outlives the queue's bound (kWriteQueueBytes).
class DumpProbe : public models::ActivationProbe {
public:
    DumpProbe(DumpWriter& writer, WriteQueue& queue, const ModelConfig& m,
              const std::vector<int>& layers, bool gates, bool attention, int L, bool half)
        : writer_(writer),
          queue_(queue),
          wanted_(static_cast<std::size_t>(m.n_layers) + 1, false),
          gates_(gates),
          attention_(attention),
          half_(half),
          slstm_(m.arch == "slstm"),
          L_(L),
          d_(m.d_model) {
        for (int l : layers)
            wanted_[static_cast<std::size_t>(l)] = true;
    }

    void set_batch(std::int64_t first, int rows) {
        first_ = first;
        rows_ = rows;
    }

    // The hidden rows where the model computed them: each example's row downloaded straight into
    // a queue buffer (page-locked on a GPU), in float16 bits when the dump is float16 (converted
    // on the device), and the sentence pool computed there too. The host neither converts nor
    // pools, and copies each stored byte once.
    bool takes_device_rows() const override { return true; }
    bool wants_layer(int layer) const override { return wanted_[static_cast<std::size_t>(layer)]; }
    bool wants_half() const override { return half_; }

    void hidden_rows(int layer, const DeviceRows& rows) override {
        const std::size_t row = static_cast<std::size_t>(L_) * d_;
        const std::size_t elt = half_ ? sizeof(std::uint16_t) : sizeof(float);
        const std::size_t d = static_cast<std::size_t>(d_);
        if (rows.pooled) {
            pooled_.resize(static_cast<std::size_t>(rows_) * d);
            rows.backend->copy(pooled_.data(), rows.pooled, pooled_.size() * sizeof(float),
                               Backend::CopyKind::device_to_host);
        }
        for (int b = 0; b < rows_; ++b) {
            const int s = static_cast<int>(first_ + b);
            WriteQueue::Buffer buf = queue_.buffer(row * elt);
            const void* from = half_ ? static_cast<const void*>(rows.half + b * row)
                                     : static_cast<const void*>(rows.hidden + b * row);
            rows.backend->copy(buf.data(), from, row * elt, Backend::CopyKind::device_to_host);
            check_finite(buf.data(), row, layer, "hidden", {}, s);
            bytes_ += row * sizeof(float);
            push_row(std::move(buf),
                     [this, layer, s](FloatRow r) { writer_.write_hidden(layer, s, r); });
            if (rows.pooled)
                queue_row(pooled_.data() + static_cast<std::size_t>(b) * d, d, layer, "sentence",
                          {}, s,
                          [this, layer, s](FloatRow r) { writer_.write_sentence(layer, s, r); });
        }
    }

    bool wants_gates() const override { return gates_; }
    bool wants_attention() const override { return attention_; }

    void attention(int layer, const float* probs, int heads) override {
        if (!wanted_[static_cast<std::size_t>(layer)]) return;
        const std::size_t row = static_cast<std::size_t>(heads) * L_ * L_;
        for (int b = 0; b < rows_; ++b) {
            const int s = static_cast<int>(first_ + b);
            queue_row(probs + b * row, row, layer, "attention", {}, s,
                      [this, layer, s](FloatRow r) { writer_.write_attention(layer, s, r); });
        }
    }

    void gate(int layer, const char* name, const float* values, int channels) override {
        if (!wanted_[static_cast<std::size_t>(layer)]) return;
        const std::size_t row = static_cast<std::size_t>(L_) * channels;
        for (int b = 0; b < rows_; ++b) {
            const int s = static_cast<int>(first_ + b);
            queue_row(values + b * row, row, layer, "gates/", name, s,
                      [this, layer, s, gate = std::string(name)](FloatRow r) {
                          writer_.write_gate(layer, gate, s, r);
                      });
        }
    }

    // S-LSTM's sentence node g [B, d] (DUMP_FORMAT.md /layers/<l>/sentence).
    void sentence(int layer, const float* values) override {
        if (!slstm_ || !wanted_[static_cast<std::size_t>(layer)]) return;
        for (int b = 0; b < rows_; ++b) {
            const int s = static_cast<int>(first_ + b);
            queue_row(values + static_cast<std::size_t>(b) * d_, static_cast<std::size_t>(d_),
                      layer, "sentence", {}, s,
                      [this, layer, s](FloatRow r) { writer_.write_sentence(layer, s, r); });
        }
    }

    // S-LSTM's sentence-node weights [B, L + 1, k] (gate `sentence_weight`).
    void sentence_weight(int layer, const float* values, int channels) override {
        if (!wanted_[static_cast<std::size_t>(layer)]) return;
        const std::size_t row = static_cast<std::size_t>(L_ + 1) * channels;
        for (int b = 0; b < rows_; ++b) {
            const int s = static_cast<int>(first_ + b);
            queue_row(values + b * row, row, layer, "gates/sentence_weight", {}, s,
                      [this, layer, s](FloatRow r) {
                          writer_.write_gate(layer, "sentence_weight", s, r);
                      });
        }
    }

    /// Float32 bytes of the activations handed over (what the model produced, whatever the
    /// stored type).
    std::uint64_t bytes() const { return bytes_; }

private:
    // One row of n values: copied (float32) or converted to halves (float16, half_bits: ties to
    // even) into a queue buffer here, on the model's thread; `write` stores it on the queue's.
    template <class Write>
    void queue_row(const float* v, std::size_t n, int layer, std::string_view dataset,
                   std::string_view gate, int s, Write write) {
        WriteQueue::Buffer buf = queue_.buffer(n * (half_ ? sizeof(std::uint16_t) : sizeof(float)));
        if (half_)
            to_half(v, n, reinterpret_cast<std::uint16_t*>(buf.data()));
        else
            std::memcpy(buf.data(), v, n * sizeof(float));
        check_finite(buf.data(), n, layer, dataset, gate, s);
        bytes_ += n * sizeof(float);
        push_row(std::move(buf), std::move(write));
    }

    // A dump holds finite values only (DUMP_FORMAT.md; its readers refuse NaN and Inf), so a row
    // that is not is an error here, before it is written: a value beyond float16's ±65504 in a
    // float16 dump, or a model whose forward overflows (a finite checkpoint can). The row as
    // stored, by its bits: exponent all ones is Inf or NaN, in float32 and in float16. One pass
    // that vectorises; the position is looked for only when there is one. The dataset's name is
    // `dataset` + `gate` (a gate's "gates/" and its name), made only for the message.
    void check_finite(const void* row, std::size_t n, int layer, std::string_view dataset,
                      std::string_view gate, int s) const {
        const auto at = [&](auto exponent) -> std::size_t {
            using U = decltype(exponent);
            const auto* v = static_cast<const U*>(row);
            bool any = false;
            for (std::size_t i = 0; i < n; ++i)
                any |= (v[i] & exponent) == exponent;
            if (!any) return n;
            std::size_t i = 0;
            while ((v[i] & exponent) != exponent)
                ++i;
            return i;
        };
        const std::size_t bad = half_ ? at(std::uint16_t{0x7C00}) : at(std::uint32_t{0x7F800000});
        if (bad == n) return;
        throw RuntimeFailure(
            writer_.final_path() + ": /layers/" + std::to_string(layer) + "/" +
            std::string(dataset) + std::string(gate) + " of example " + std::to_string(s) +
            " is not finite at its value " + std::to_string(bad) +
            (half_ ? ": the model's activation is beyond float16's range (±65504) or not finite; "
                     "dump with --dtype f32 to keep large values"
                   : ": the model's forward pass overflows (Inf or NaN) on this checkpoint") +
            "; a dump holds finite values only, so nothing was written");
    }

    // Queues a row already in the stored type (float16 bits for a float16 dump).
    template <class Write>
    void push_row(WriteQueue::Buffer buf, Write write) {
        queue_.push(std::move(buf), [write = std::move(write), half = half_](const auto& data) {
            if (half)
                write(FloatRow(reinterpret_cast<const std::uint16_t*>(data.data())));
            else
                write(FloatRow(reinterpret_cast<const float*>(data.data())));
        });
    }

    DumpWriter& writer_;
    WriteQueue& queue_;
    std::vector<bool> wanted_;
    bool gates_, attention_, half_;
    bool slstm_;  // the sentence vector is the model's node g (sentence()), not a pool of h
    int L_, d_;
    std::vector<float> pooled_;  // a batch's sentence pools [rows, d] (hidden_rows)
    std::int64_t first_ = 0;
    int rows_ = 0;
    std::uint64_t bytes_ = 0;
};

// /kernels/<l> of every block: the S4D kernel of length L of each direction and D (channel group
// 0; DUMP_FORMAT.md has one kernel per direction).
void write_kernels(DumpWriter& writer, models::Model& model, int L) {
    const ModelConfig& m = model.config().model;
    const int H = m.ssm.n_kernels;  // H > 1: every group's kernel too (<direction>_groups)
    for (int l = 1; l <= m.n_layers; ++l) {
        std::vector<float> k[2], all[2];
        std::vector<double> D[2];
        for (int dir = 0; dir < (m.causal ? 1 : 2); ++dir) {
            const std::string s =
                "layers." + std::to_string(l - 1) + (dir == 0 ? ".ssm_forward" : ".ssm_backward");
            // The backend's s4d_kernel op where the parameters live, then one download: [H, L].
            all[dir] = model.ssm_kernel(s, L);
            k[dir].assign(all[dir].begin(), all[dir].begin() + L);
            const std::vector<float> d = model.params().download_entry(s + ".D");
            D[dir].assign(d.begin(), d.end());
        }
        writer.write_kernel(l, k[0], k[1], D[0][0], m.causal ? 0.0 : D[1][0]);
        if (H > 1)
            for (int dir = 0; dir < (m.causal ? 1 : 2); ++dir)
                writer.write_kernel_groups(l, dir == 0, all[dir], H, D[dir]);
    }
}

// /mixing/<l> of every gMLP block: W[:L, :L] (the model uses only that block on rows of length L;
// docs/decisions.md "Dump: gMLP's /mixing and spatial_gate").
void write_mixing(DumpWriter& writer, const models::Model& model, int L) {
    const ModelConfig& m = model.config().model;
    const int n = m.max_len;
    std::vector<float> w(static_cast<std::size_t>(L) * L);
    for (int l = 1; l <= m.n_layers; ++l) {
        const std::vector<float> W =
            model.params().download_entry("layers." + std::to_string(l - 1) + ".spatial.weight");
        for (int i = 0; i < L; ++i)
            for (int j = 0; j < L; ++j) {
                const float v = W[static_cast<std::size_t>(i) * n + j];
                w[static_cast<std::size_t>(i) * L + j] = v;
            }
        writer.write_mixing(l, w.data(), L);
    }
}

bool has_prefix_layers(const ModelConfig& m) {
    if (m.arch != "birdie") return false;
    for (int i = 0; i < m.n_layers; ++i)
        if (models::birdie_layer_mode(m, i) == models::BirdieLayerMode::prefix) return true;
    return false;
}

}  // namespace

std::vector<int> parse_dump_layers(const std::string& text, int n_layers) {
    std::vector<int> layers;
    if (text.empty())  // `--layers ""` (a script's empty variable): not "all" by accident
        throw ConfigError("--layers: empty (use all or indices such as 0,4,8)");
    if (text == "all") {
        for (int l = 0; l <= n_layers; ++l)
            layers.push_back(l);
        return layers;
    }
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::size_t used = 0;
        int l = -1;
        try {
            l = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size())
            throw ConfigError("--layers: '" + item + "' is not a layer index (use all or 0,4,8)");
        if (l < 0 || l > n_layers)
            throw ConfigError("--layers: layer " + std::to_string(l) + " is outside 0.." +
                              std::to_string(n_layers) + " (0 = embeddings, " +
                              std::to_string(n_layers) + " blocks)");
        layers.push_back(l);
    }
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    if (layers.empty()) throw ConfigError("--layers: no layer given");
    return layers;
}

ActivationDumpSummary write_activation_dump(const RunConfig& config, std::vector<float> params,
                                            const DumpSource& source, const std::string& out,
                                            const ActivationDumpOptions& options) {
    return write_activation_dump(
        config,
        [&params](ParamStore& store) {
            if (params.size() != store.size())
                throw Error("dump: " + std::to_string(params.size()) +
                            " parameters given, the model of this configuration has " +
                            std::to_string(store.size()));
            store.upload(params.data());
            std::vector<float>().swap(params);  // the model holds them now
        },
        source, out, options);
}

ActivationDumpSummary write_activation_dump(const RunConfig& config,
                                            const std::function<void(ParamStore&)>& load,
                                            const DumpSource& source, const std::string& out,
                                            const ActivationDumpOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const ModelConfig& m = config.model;
    if (options.gates && !models::Model::has_gates(m))
        throw ConfigError("--gates: model.arch '" + m.arch +
                          "' has no gates to dump (gates exist for bigs: u_f, u_b, v; slstm: i, l, "
                          "r, f, s, o, sentence_weight)");
    if (source.count < 1) throw ConfigError("dump: no examples to dump");
    if (source.length < 1 || source.length > m.max_len)
        throw ConfigError("dump: padded length " + std::to_string(source.length) +
                          " must lie in [1, model.max_len = " + std::to_string(m.max_len) + "]");
    if (source.count > std::int64_t(1) << 31)
        throw ConfigError("dump: " + std::to_string(source.count) + " examples exceed int32 rows");
    const std::vector<int> layers =
        options.layers.empty() ? parse_dump_layers("all", m.n_layers) : options.layers;
    for (int l : layers)
        if (l < 0 || l > m.n_layers)
            throw ConfigError("--layers: layer " + std::to_string(l) + " is outside 0.." +
                              std::to_string(m.n_layers));

    const int L = source.length;
    const int B =
        static_cast<int>(std::min<std::int64_t>(std::max(options.batch, 1), source.count));
    // The heads run only when a prediction is recorded (a classifier's, a token task's); a corpus
    // dump needs the blocks alone (models::ModelUse::encoding: no [B·L, V] logits in memory).
    const bool heads = m.n_labels > 0 || source.token_targets || source.single_target;
    models::Model model(config, B, L, options.threads, options.device,
                        heads ? models::ModelUse::inference : models::ModelUse::encoding);
    load(model.params());

    const bool classifier = m.n_labels > 0;
    DumpSpec spec;
    spec.arch = m.arch;
    spec.name = options.name;
    spec.producer = options.producer;
    spec.device = device_name(options.device);
    spec.n_layers = m.n_layers;
    spec.d_model = m.d_model;
    spec.config_json = config.to_json_text();
    spec.checkpoint = options.checkpoint;
    spec.checkpoint_sha256 = options.checkpoint_sha256;
    spec.examples = static_cast<int>(source.count);
    spec.length = L;
    spec.layers = layers;
    spec.sentence = true;
    if (options.attention) {
        if (m.arch != "bert" && m.arch != "gated_att")
            throw ConfigError("--attention: model.arch '" + m.arch +
                              "' has no attention probabilities to dump (bert and gated_att have; "
                              "for the implicit attention of an SSM layer use `analyze "
                              "implicit-attention` on a dump with --gates)");
        spec.attention_heads = m.heads();
    }
    if (options.gates && m.arch == "slstm") {
        spec.gates = {"i", "l", "r", "f", "s", "o", "sentence_weight"};  // DUMP_FORMAT.md
        spec.gate_channels = m.d_model;
    } else if (options.gates && m.arch == "birdie") {
        spec.gates = {"f", "i", "z", "o"};  // DUMP_FORMAT.md
        spec.gate_channels = m.inner();
        for (int l = 1; l <= m.n_layers; ++l)
            if (models::birdie_layer_mode(m, l - 1) != models::BirdieLayerMode::causal)
                spec.reverse_from[l] = m.inner() / 2;
    } else if (options.gates && m.arch == "gmlp") {
        spec.gates = {"spatial_gate"};  // W · LN(Z2) + b (docs/decisions.md)
        spec.gate_channels = m.inner() / 2;
    } else if (options.gates && m.causal) {  // causal bigs: no backward branch, no u_b
        spec.gates = {"u_f", "v"};
        spec.gate_channels = m.d_model;
        spec.gate_channels_of["v"] = m.inner();
    } else if (options.gates) {
        spec.gates = {"u_f", "u_b", "v"};
        spec.gate_channels = m.d_model;
        spec.gate_channels_of["v"] = m.inner();
    }
    const bool reset_mask = has_prefix_layers(m);
    spec.reset_mask = reset_mask;
    // Negative: the checkpoint's; NaN (which no comparison catches) or above 1 names no split.
    if (std::isnan(options.prefix_fraction) || options.prefix_fraction > 1)
        throw ConfigError("--prefix-fraction: " + std::to_string(options.prefix_fraction) +
                          " is not a fraction in [0, 1]");
    const double prefix_fraction =
        options.prefix_fraction >= 0 ? options.prefix_fraction : config.train.prefix_fraction;
    spec.float16 = options.float16;
    spec.labels = source.class_labels || source.single_target;
    spec.predictions = classifier || source.single_target;
    spec.text = source.text;
    spec.attributes = source.attributes;
    if (source.token_targets) spec.attributes.push_back("correct");
    spec.vocab = source.vocab;

    DumpWriter writer(out, spec);
    // Declared after the writer: on an error its destructor drops the queued rows and joins
    // before the writer removes its temporary file.
    // Its buffers are the backend's host memory: page-locked on a GPU, so each row's download
    // is one DMA (Backend::allocate_host).
    Backend& backend = model.backend();
    WriteQueue queue(kWriteQueueBytes,
                     HostMemory{[&backend](std::size_t n) { return backend.allocate_host(n); },
                                [&backend](void* p) { backend.release_host(p); }});
    DumpProbe probe(writer, queue, m, layers, options.gates, options.attention, L, options.float16);
    model.set_capture(&probe);

    models::HostBatch hb(B, L, source.pad_id);  // rows past the end: one pad token, no target
    std::vector<std::int8_t> reset_row(static_cast<std::size_t>(L));
    const bool any_types = m.type_embeddings;
    for (std::int64_t first = 0; first < source.count; first += B) {
        const int rows = static_cast<int>(std::min<std::int64_t>(B, source.count - first));
        hb.clear();
        std::vector<ExampleRecord> records(static_cast<std::size_t>(rows));
        for (int b = 0; b < rows; ++b) {
            const std::int64_t s = first + b;
            DumpExample e = source.example(s);
            const int n = static_cast<int>(e.tokens.size());
            if (n < 1 || n > L)
                throw FormatError("dump: example " + std::to_string(s) + " has " +
                                  std::to_string(n) + " tokens, outside 1.." + std::to_string(L));
            for (int t = 0; t < n; ++t) {
                const std::int32_t id = e.tokens[static_cast<std::size_t>(t)];
                if (id < 0 || id >= m.vocab_size)
                    throw FormatError("dump: example " + std::to_string(s) + " token " +
                                      std::to_string(t) + " = " + std::to_string(id) +
                                      " is outside the model's vocabulary [0, " +
                                      std::to_string(m.vocab_size) + ")");
            }
            std::copy(e.tokens.begin(), e.tokens.end(), hb.tokens(b));
            if (!e.types.empty() && any_types)
                std::copy_n(e.types.begin(), std::min<std::size_t>(e.types.size(), n), hb.types(b));
            if (!e.targets.empty())
                std::copy_n(e.targets.begin(), std::min<std::size_t>(e.targets.size(), n),
                            hb.labels(b));
            hb.length(b) = n;
            if (reset_mask) {
                // The prefix-LM split of objective_rows.cpp at a fixed fraction: [0, p) prefix,
                // [p, L) causal region (pads included), a new sample at position 0. An example with
                // its own flags (a causal checkpoint's answer row) keeps them; the pads after it
                // are causal.
                const int p = std::clamp(static_cast<int>(std::lround(prefix_fraction * n)), 1,
                                         std::max(1, n - 1));
                for (int t = 0; t < L; ++t) {
                    const std::int32_t v =
                        t < static_cast<int>(e.reset.size())
                            ? e.reset[static_cast<std::size_t>(t)]
                            : (t == 0 ? models::kResetNewSample : 0) |
                                  (t >= p || !e.reset.empty() ? models::kResetCausal : 0);
                    hb.reset(b)[t] = v;
                    reset_row[static_cast<std::size_t>(t)] = static_cast<std::int8_t>(v);
                }
                WriteQueue::Buffer mask = queue.buffer(reset_row.size());
                std::memcpy(mask.data(), reset_row.data(), reset_row.size());
                queue.push(std::move(mask), [&writer, s](const WriteQueue::Buffer& row) {
                    writer.write_reset_mask(static_cast<int>(s),
                                            reinterpret_cast<const std::int8_t*>(row.data()));
                });
            }
            if (classifier && e.label >= 0 && e.label < m.n_labels) hb.class_label(b) = e.label;
            ExampleRecord& r = records[static_cast<std::size_t>(b)];
            r.tokens.assign(hb.tokens(b), hb.tokens(b) + L);
            r.length = n;
            r.label = e.label;
            r.text = std::move(e.text);
            r.attributes = std::move(e.attributes);
            if (r.attributes.size() != source.attributes.size())
                throw Error("dump: example " + std::to_string(s) + " carries " +
                            std::to_string(r.attributes.size()) + " attributes, the source names " +
                            std::to_string(source.attributes.size()));
        }
        probe.set_batch(first, rows);
        model.forward(hb.view(classifier ? models::HostBatch::Head::classification
                                         : models::HostBatch::Head::mlm,
                              any_types, reset_mask),
                      /*training=*/false);

        // Per-row argmaxes computed where the logits live (Model::readout): O(rows) bytes down.
        static const std::vector<std::int32_t> kNone;
        const std::vector<std::int32_t>& predicted_at = heads ? model.readout().argmax : kNone;
        for (int b = 0; b < rows; ++b) {
            ExampleRecord& r = records[static_cast<std::size_t>(b)];
            if (classifier) {
                r.prediction = predicted_at[static_cast<std::size_t>(b)];
            } else if (source.token_targets) {
                bool all = true;
                int n_targets = 0;
                for (int t = 0; t < L; ++t) {
                    const std::int32_t target = hb.labels(b)[t];
                    if (target == kIgnore) continue;
                    const int predicted = predicted_at[std::size_t(b) * L + t];
                    all = all && predicted == target;
                    if (n_targets++ == 0 && source.single_target) {
                        r.label = target;
                        r.prediction = predicted;
                    }
                }
                r.attributes.push_back(all && n_targets > 0 ? 1.0 : 0.0);
            }
            queue.push({}, [&writer, s = static_cast<int>(first + b), r = std::move(r)](
                               const WriteQueue::Buffer&) { writer.write_example(s, r); });
        }
        if (options.progress) options.progress(first + rows, source.count);
    }
    model.set_capture(nullptr);
    queue.drain();  // every row is in the file; the writer is this thread's again
    if (has_ssm_kernels(m)) write_kernels(writer, model, L);
    if (m.arch == "gmlp") write_mixing(writer, model, L);
    writer.finish();

    ActivationDumpSummary summary;
    summary.examples = source.count;
    std::error_code ec;
    summary.file_bytes = std::filesystem::file_size(out, ec);
    summary.activation_bytes = probe.bytes();
    summary.queue_peak_bytes = queue.peak_bytes();
    summary.parameter_bytes = model.params().size() * sizeof(float);
    summary.arena_bytes = model.arena_bytes();
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

}  // namespace routescope
