#include "analysis/flops.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/file_info.hpp"

namespace routescope::analysis {
namespace {

double dense(double in, double out) {
    return in * out + out;
}  // weight + bias

/// Intermediate width when the configuration leaves it 0 (MODELS.md: 3d for gated blocks, 4d for
/// FFN blocks; gMLP's U maps d → I with I = 6d in the gMLP paper).
double intermediate(const FlopConfig& c) {
    if (c.intermediate > 0) return static_cast<double>(c.intermediate);
    const double d = static_cast<double>(c.d_model);
    if (c.arch == "bigs" || c.arch == "gated_att") return 3 * d;
    if (c.arch == "gmlp") return 6 * d;
    return 4 * d;
}

/// The state size N: SSM modes (default 64) or Birdie's state channels, which are its
/// intermediate width (model.d_inner, default 3d; ModelConfig::inner()).
double state_size(const FlopConfig& c) {
    if (c.state > 0) return static_cast<double>(c.state);
    if (c.arch == "birdie")
        return c.intermediate > 0 ? static_cast<double>(c.intermediate)
                                  : 3 * static_cast<double>(c.d_model);
    return 64;
}

/// One real FFT of size n: 2.5·n·log2(n) FLOPs (half the 5·n·log2(n) of a complex one).
double real_fft(double n) {
    return 2.5 * n * std::log2(n);
}

/// One causal FFT convolution of d channels (MODELS.md: size 2L, rfft of input, product, irfft),
/// plus generating each of the H kernels K[l] for l < L from N modes (≈ 8 FLOPs per mode and
/// position) and its rfft.
double ssm_convolution(double L, double d, double N, double H) {
    const double per_channel = 2 * real_fft(2 * L) + 6 * (L + 1);
    return d * per_channel + H * (8 * N * L + real_fft(2 * L));
}

}  // namespace

double block_parameters(const FlopConfig& c) {
    const double d = static_cast<double>(c.d_model), I = intermediate(c), N = state_size(c);
    const double norm = 2 * d;
    // A_re, A_im [H, N]; C [H, N, 2]; D, log_step [H]
    const double ssm = static_cast<double>(std::max<std::int64_t>(1, c.kernels)) * (4 * N + 2);
    // model.causal: no backward branch (bigs: du_b, duc_b, ssm_b; stack_ssm: its second LN, Wi/Wo
    // and SSM of the backward direction).
    const double directions = c.causal ? 1 : 2;
    if (c.arch == "bigs")  // dv, du_{f,b}, duc_{f,b}, dol, do, LN, two SSMs
        return dense(d, I) + directions * (2 * dense(d, d) + ssm) + dense(d, I) + dense(I, d) +
               norm;
    if (c.arch == "stack_ssm")  // Wi/Wo per direction, FFN, three LNs, two SSMs
        return directions * (2 * dense(d, d) + norm + ssm) + dense(d, I) + dense(I, d) + norm;
    if (c.arch == "gated_att")  // dv, du, duc, dol, do, LN, and MHA's Q, K, V, O
        return dense(d, I) + 2 * dense(d, d) + dense(d, I) + dense(I, d) + norm + 4 * dense(d, d);
    if (c.arch == "bert")  // Q, K, V, O; FFN; two LNs
        return 4 * dense(d, d) + dense(d, I) + dense(I, d) + 2 * norm;
    if (c.arch == "birdie")  // W_i, W_z, W_o, W_f: d → N; W_out: N → d; LN
        return 4 * dense(d, N) + dense(N, d) + norm;
    if (c.arch == "slstm")  // W: 4d→7d, U: d→7d (no bias), W_g: 2d→2d, W_f': 2d→d, gate LNs
        return dense(4 * d, 7 * d) + 7 * d * d + dense(2 * d, 2 * d) + dense(2 * d, d) +
               (c.gate_norm ? 7 * norm : 0);
    if (c.arch == "gmlp")  // U: d→I, V: I/2→d, LN(h), LN(Z2); W [n, n] depends on L (mixing term)
        return dense(d, I) + dense(I / 2, d) + norm + I;
    throw ConfigError("flops: unknown --arch '" + c.arch +
                      "' (bigs, stack_ssm, gated_att, bert, birdie, slstm, gmlp)");
}

FlopConfig flop_config_of_file(const std::string& path) {
    const FileInfo info = read_file_info(path);
    if (info.kind != FileKind::Dump && info.kind != FileKind::Checkpoint)
        throw ConfigError(path + ": neither a dump nor a checkpoint; flops needs its model");
    // The loaders' check of the version (a format_version 2 checkpoint was counted with exit 0
    // while `analyze kernels` and every other reader refused it).
    if (info.kind == FileKind::Checkpoint) require_checkpoint_format_version(path);
    FlopConfig c;
    // A dump's `config` is any JSON (docs/formats/dump.md); only a run configuration, which has a
    // "model" section, describes the model. Anything else (sample-dump's {"synthetic": true}, a
    // researcher's own script's notes) leaves the /model attributes to describe it.
    bool run_configuration = false;
    if (!info.config_json.empty()) {
        const nlohmann::json j = parse_json_text(info.config_json, path + " /model config");
        run_configuration = j.is_object() && j.contains("model");
    }
    if (run_configuration) {
        ModelConfig m;
        try {
            m = RunConfig::parse(info.config_json).model;
        } catch (const ConfigError& e) {
            throw ConfigError(path + ": the stored run configuration does not parse: " + e.what());
        }
        c.arch = m.arch;
        c.layers = m.n_layers;
        c.d_model = m.d_model;
        c.intermediate = m.inner();
        c.state = m.arch == "birdie" ? m.inner() : m.ssm.n_modes;
        c.kernels = m.ssm.n_kernels;
        c.causal = m.causal && (m.arch == "bigs" || m.arch == "stack_ssm");
        c.max_len = m.max_len;
        c.gate_norm = m.arch == "slstm" && m.slstm.gate_norm;
        return c;
    }
    c.arch = info.arch;
    c.layers = info.n_layers;
    c.d_model = info.d_model;
    // A legal dump of 0 blocks (only the embeddings; /model n_layers = 0) has no block to count:
    // said of the dump, not of --layers and --d-model, which the user did not give.
    if (c.layers < 1 || c.d_model < 1)
        throw ConfigError(path + ": /model n_layers = " + std::to_string(info.n_layers) +
                          ", d_model = " + std::to_string(info.d_model) +
                          ": no block whose FLOPs to count (a dump of the embeddings alone)");
    c.intermediate = 0;  // the architecture's defaults: widths, 64 SSM modes, Birdie's 3d state
    c.state = 0;
    try {
        block_parameters(c);
    } catch (const ConfigError&) {
        throw ConfigError(path + ": /model has no run configuration and arch '" + info.arch +
                          "' is not one the FLOP model knows; count the model it stands for "
                          "without --dump, with --arch, --layers and --d-model (and "
                          "--intermediate, --state)");
    }
    return c;
}

FlopResult flop_model(const FlopConfig& config, const std::vector<std::int64_t>& lengths) {
    if (config.layers < 1 || config.d_model < 1)
        throw ConfigError("flops: --layers and --d-model must be positive");
    if (config.intermediate < 0 || config.state < 0 || config.kernels < 0)
        throw ConfigError("flops: --intermediate and --state must be positive (0: the default)");
    if (config.arch == "gmlp" && static_cast<std::int64_t>(intermediate(config)) % 2 != 0)
        throw ConfigError(
            "flops: gmlp's intermediate width must be even (its spatial gating "
            "unit splits it in halves); --intermediate " +
            std::to_string(config.intermediate));
    if (lengths.empty()) throw ConfigError("flops: give at least one length (--lengths)");
    FlopResult result;
    result.config = config;
    const double layers = static_cast<double>(config.layers),
                 d = static_cast<double>(config.d_model);
    const double N = state_size(config);
    // Weights applied per token: every block's; S-LSTM applies its one set at every step.
    const double applied = layers * block_parameters(config);
    result.parameters = config.arch == "slstm" ? block_parameters(config) : applied;
    if (config.arch == "gmlp" && config.max_len > 0) {  // each layer's W [Lmax, Lmax] and b
        const double n = static_cast<double>(config.max_len);
        result.parameters += layers * (n * n + n);
    }
    const bool attention = config.arch == "bert" || config.arch == "gated_att";
    for (std::int64_t length : lengths) {
        if (length < 1) throw ConfigError("flops: lengths must be positive");
        const double L = static_cast<double>(length);
        FlopRow row;
        row.length = length;
        row.dense = 2 * applied * L;
        if (attention) row.attention = layers * 4 * L * L * d;
        if (config.arch == "bigs" || config.arch == "stack_ssm")
            row.mixing = layers * (config.causal ? 1 : 2) *  // forward (and backward) SSM
                         ssm_convolution(L, d, N, static_cast<double>(config.kernels));
        else if (config.arch == "gmlp")
            row.mixing =
                layers * (2 * L * L * (intermediate(config) / 2) + 2 * L * L);  // W·Z2 + W, b
        else if (config.arch == "birdie")
            row.mixing = layers * 4 * L * N;  // f⊙h + i⊙z per state channel
        else if (config.arch == "slstm")
            row.mixing =
                layers * 2 * 10 * L * d;  // the cell's five gated sums, ≈ 10 MACs per channel
        row.forward = row.dense + row.attention + row.mixing;
        row.forward_backward = 3 * row.forward;
        result.rows.push_back(row);
    }
    result.provenance.analysis = "flops";
    result.provenance.parameters = {{"arch", config.arch},
                                    {"layers", config.layers},
                                    {"d_model", config.d_model},
                                    {"intermediate", intermediate(config)},
                                    {"state", static_cast<std::int64_t>(N)},
                                    {"kernels", config.kernels},
                                    {"causal", config.causal},
                                    {"lengths", lengths}};
    return result;
}

nlohmann::json FlopResult::to_json() const {
    nlohmann::json rows_json = nlohmann::json::array();
    for (const auto& r : rows)
        rows_json.push_back({{"length", r.length},
                             {"dense", r.dense},
                             {"attention", r.attention},
                             {"mixing", r.mixing},
                             {"forward", r.forward},
                             {"forward_backward", r.forward_backward}});
    return {{"provenance", provenance.to_json()},
            {"non_embedding_parameters", parameters},
            {"note",
             "forward counts 2 FLOPs per multiply-accumulate (BiGS Table 8 convention); "
             "forward_backward = 3 x forward"},
            {"rows", rows_json}};
}

CsvTable FlopResult::table() const {
    CsvTable t;
    t.columns = {"arch",      "layers", "d_model", "length",          "dense",
                 "attention", "mixing", "forward", "forward_backward"};
    for (const auto& r : rows)
        t.rows.push_back({config.arch, config.layers, config.d_model, r.length, r.dense,
                          r.attention, r.mixing, r.forward, r.forward_backward});
    return t;
}

}  // namespace routescope::analysis
