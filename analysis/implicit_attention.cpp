#include "analysis/implicit_attention.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"

namespace routescope::analysis {

std::vector<double> toeplitz_attention(const std::vector<double>& kernel, double skip,
                                       std::int64_t n, bool forward) {
    if (static_cast<std::int64_t>(kernel.size()) < n)
        throw ConfigError("implicit attention: the kernel has " + std::to_string(kernel.size()) +
                          " taps, fewer than the example's " + std::to_string(n) + " tokens");
    std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t s = 0; s < n; ++s) {
            const std::int64_t lag = forward ? t - s : s - t;
            if (lag < 0) continue;
            a[static_cast<std::size_t>(t * n + s)] =
                kernel[static_cast<std::size_t>(lag)] + (lag == 0 ? skip : 0.0);
        }
    return a;
}

std::vector<double> decay_attention(const RowMatrixF& f, Eigen::Index channel, std::int64_t n,
                                    bool forward, const std::vector<std::int32_t>& reset_mask,
                                    bool prefix) {
    if (n > f.rows())
        throw ConfigError("implicit attention: " + std::to_string(n) + " positions asked of " +
                          std::to_string(f.rows()) + " gate rows");
    if (!reset_mask.empty() && static_cast<std::int64_t>(reset_mask.size()) < n)
        throw ConfigError("implicit attention: a reset mask of " +
                          std::to_string(reset_mask.size()) + " positions for " +
                          std::to_string(n) + " tokens");
    // The model's carry cuts (docs/models.md, engine/models/birdie_block.cpp birdie_carry_masks):
    // left to right, nothing flows into a position whose bit 1 (a new sample) is set; right to
    // left, nothing flows into k from k + 1 when k + 1 starts a sample, nor in a prefix layer when
    // k or k + 1 lies in the causal region (bit 2).
    const auto bits = [&](std::int64_t k) {
        return reset_mask.empty() ? 0 : reset_mask[static_cast<std::size_t>(k)];
    };
    constexpr std::int32_t kNewSample = 1, kCausal = 2;
    std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t t = 0; t < n; ++t) {
        a[static_cast<std::size_t>(t * n + t)] = 1.0;
        double prod = 1.0;
        if (forward) {
            for (std::int64_t s = t - 1; s >= 0; --s) {
                if (bits(s + 1) & kNewSample) break;  // no carry into s + 1 from s
                prod *= static_cast<double>(f(s + 1, channel));
                a[static_cast<std::size_t>(t * n + s)] = prod;
            }
        } else {
            for (std::int64_t s = t + 1; s < n; ++s) {
                // no carry into s − 1 from s
                if (bits(s) & kNewSample) break;
                if (prefix && ((bits(s - 1) | bits(s)) & kCausal)) break;
                prod *= static_cast<double>(f(s - 1, channel));
                a[static_cast<std::size_t>(t * n + s)] = prod;
            }
        }
    }
    return a;
}

namespace {

void normalise_rows(std::vector<double>& m, std::int64_t n, const std::string& how) {
    if (how == "raw") return;
    for (std::int64_t t = 0; t < n; ++t) {
        double* row = m.data() + t * n;
        for (std::int64_t s = 0; s < n; ++s)
            row[s] = std::abs(row[s]);
        if (how == "minmax") {
            const auto [lo, hi] = std::minmax_element(row, row + n);
            const double a = *lo, span = *hi - *lo;
            for (std::int64_t s = 0; s < n; ++s)
                row[s] = span > 0 ? (row[s] - a) / span : 0.0;
        } else {  // rownorm
            double sum = 0;
            for (std::int64_t s = 0; s < n; ++s)
                sum += row[s];
            for (std::int64_t s = 0; s < n; ++s)
                row[s] = sum > 0 ? row[s] / sum : 0.0;
        }
    }
}

std::vector<double> as_double(const std::vector<float>& v) {
    return {v.begin(), v.end()};
}

}  // namespace

namespace {
/// What each entry of the n × n result takes at the peak besides the working matrices: the
/// result's matrix, its JSON values (the result's and the command's copy), its CSV rows (five
/// cells each, two copies) and their text. Measured: a 314 MB peak for n = 1024 (mode sum).
constexpr double kResultBytesPerEntry = 300;

/// ConfigError naming the example's length and the memory its matrices need when that is more
/// than the process may use (a 65,536-token example asked for 32 GB of doubles alone and ended
/// in a bare bad_alloc, or, below the process's limit but above the machine's free memory, in
/// the OOM killer). `working`: the n × n double matrices held beside the result.
void require_matrix_memory(const DumpReader& dump, std::int64_t example, std::int64_t n,
                           double working) {
    const double entries = static_cast<double>(n) * static_cast<double>(n);
    const double bytes = entries * (kResultBytesPerEntry + 8 * working);
    if (const MemoryLimit limit = memory_limit(); limit.bytes > 0 && bytes > limit.bytes)
        throw ConfigError(dump.path() + ": example " + std::to_string(example) + " has " +
                          std::to_string(n) + " tokens: its " + std::to_string(n) + " × " +
                          std::to_string(n) +
                          " implicit attention matrix (with its JSON and CSV rows) would need "
                          "about " +
                          bytes_text(bytes) + ", more than " + limit.text() +
                          ": choose a shorter example (--example)");
}

/// The example's real tokens; ConfigError when it is out of range or empty, or when its n × n
/// matrix and two working matrices would not fit in memory (require_matrix_memory).
std::int64_t example_length(const DumpReader& dump, std::int64_t example) {
    if (example < 0 || example >= dump.examples())
        throw ConfigError(dump.path() + ": example " + std::to_string(example) + " is outside 0.." +
                          std::to_string(dump.examples() - 1));
    const std::int64_t n = dump.lengths()[static_cast<std::size_t>(example)];
    if (n < 1)
        throw ConfigError(dump.path() + ": example " + std::to_string(example) + " is empty");
    require_matrix_memory(dump, example, n, 2);
    return n;
}

/// The dump's row of `example` in `layer`; ConfigError when it is not stored there.
std::int64_t row_of(const DumpReader& dump, int layer, std::int64_t example) {
    const auto& rows = dump.example_of_row(layer);
    const auto it = std::find(rows.begin(), rows.end(), example);
    if (it == rows.end())
        throw ConfigError(dump.path() + ": layer " + std::to_string(layer) +
                          " does not store example " + std::to_string(example));
    return static_cast<std::int64_t>(it - rows.begin());
}

/// What every source ends with: the rows normalised, the example's tokens, the provenance.
ImplicitAttentionResult& finish(ImplicitAttentionResult& r, const DumpReader& dump,
                                nlohmann::json parameters) {
    normalise_rows(r.matrix, r.length, r.options.normalise);
    const auto pieces = dump.token_pieces(r.options.example);
    r.tokens.assign(pieces.begin(), pieces.begin() + r.length);
    r.provenance.analysis = "implicit-attention";
    r.provenance.inputs.push_back(dump_input(dump));
    r.provenance.parameters = std::move(parameters);
    return r;
}

/// The layer's own attention probabilities for the example: head `o.head`, or the heads' mean.
ImplicitAttentionResult real_attention(const DumpReader& dump, const ImplicitAttentionOptions& o,
                                       int heads) {
    if (o.head < -1 || o.head >= heads)
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) + " has " +
                          std::to_string(heads) + " attention heads (0.." +
                          std::to_string(heads - 1) + ", or −1 for their mean), not head " +
                          std::to_string(o.head));
    const std::int64_t n = example_length(dump, o.example);
    const RowMatrixF p = dump.attention_row(o.layer, row_of(dump, o.layer, o.example));
    const std::int64_t L = dump.padded_length();
    ImplicitAttentionResult r;
    r.options = o;
    r.length = n;
    r.source = "attention";
    r.heads = heads;
    r.matrix.assign(static_cast<std::size_t>(n * n), 0.0);
    const int h0 = o.head < 0 ? 0 : o.head, h1 = o.head < 0 ? heads : o.head + 1;
    for (int h = h0; h < h1; ++h)
        for (std::int64_t t = 0; t < n; ++t)
            for (std::int64_t s = 0; s < n; ++s)
                r.matrix[static_cast<std::size_t>(t * n + s)] +=
                    static_cast<double>(p(h * L + t, s)) / (h1 - h0);
    return finish(r, dump,
                  {{"layer", o.layer},
                   {"example", o.example},
                   {"source", "attention"},
                   {"head", o.head},
                   {"normalise", o.normalise}});
}

/// A Birdie layer's forget-gate decay (the header's A_c), from its dumped gates.
ImplicitAttentionResult birdie_attention(const DumpReader& dump,
                                         const ImplicitAttentionOptions& o) {
    const LayerInfo& info = dump.layer(o.layer);
    const auto has = [&](const char* g) {
        return std::find(info.gates.begin(), info.gates.end(), g) != info.gates.end();
    };
    if (!has("f"))
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " has no forget gates f, so no implicit attention (a Birdie dump written "
                          "with --gates has them)");
    if (o.mode == "gated" && !(has("i") && has("z") && has("o")))
        throw ConfigError(dump.path() + ": mode gated needs the gates i, z and o of layer " +
                          std::to_string(o.layer) + " (a dump written with --gates)");
    const std::int64_t n = example_length(dump, o.example);
    const std::int64_t row = row_of(dump, o.layer, o.example);
    const RowMatrixF f = dump.gate_row(o.layer, "f", row);
    const Eigen::Index N = f.cols();
    // The dump says which channels scan right to left (attr reverse_from; none: a causal layer),
    // and a prefix model's rows carry a reset mask whose causal region stops the reverse carry.
    const int reverse_from = dump.gate_reverse_from(o.layer);
    const Eigen::Index nf = reverse_from < 0 ? N : std::min<Eigen::Index>(reverse_from, N);
    if (o.mode == "backward" && nf == N)
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " is a causal Birdie layer: it has no reverse scan (modes forward, sum, "
                          "gated)");
    // The row's reset mask cuts the carries as the model's scans do: at every sample start
    // (bit 1) in both directions, and, in a prefix layer, out of the causal region (bit 2). A
    // dump holds a reset mask only for a model with prefix layers, whose reverse-scanning layers
    // are all prefix layers (docs/formats/dump.md).
    const std::vector<std::int32_t> mask = dump.reset_mask(o.example);
    const bool prefix = nf < N && !mask.empty();
    const std::int64_t prefix_end = prefix ? dump.prefix_end(o.example) : -1;
    const std::string mode = nf == N ? "causal" : prefix_end >= 0 ? "prefix" : "bidirectional";
    const Eigen::Index c0 = o.mode == "backward" ? nf : 0;
    const Eigen::Index c1 = o.mode == "forward" ? nf : N;
    RowMatrixF ig, zg, og;
    if (o.mode == "gated") {
        ig = dump.gate_row(o.layer, "i", row);
        zg = dump.gate_row(o.layer, "z", row);
        og = dump.gate_row(o.layer, "o", row);
    }
    ImplicitAttentionResult r;
    r.options = o;
    r.length = n;
    r.source = "decay";
    r.matrix.assign(static_cast<std::size_t>(n * n), 0.0);
    const double share = 1.0 / static_cast<double>(std::max<Eigen::Index>(1, c1 - c0));
    for (Eigen::Index c = c0; c < c1; ++c) {
        const auto a = decay_attention(f, c, n, c < nf, mask, prefix);
        for (std::int64_t t = 0; t < n; ++t)
            for (std::int64_t s = 0; s < n; ++s) {
                const auto i = static_cast<std::size_t>(t * n + s);
                if (o.mode == "gated")
                    r.matrix[i] += share * std::abs(static_cast<double>(og(t, c)) * a[i] *
                                                    static_cast<double>(ig(s, c)) *
                                                    static_cast<double>(zg(s, c)));
                else
                    r.matrix[i] += share * a[i];
            }
    }
    return finish(r, dump,
                  {{"layer", o.layer},
                   {"example", o.example},
                   {"mode", o.mode},
                   {"normalise", o.normalise},
                   {"source", "decay"},
                   {"layer_mode", mode},
                   {"reverse_from", nf},
                   {"channels", c1 - c0}});
}

/// A gMLP layer's spatial weight W (/mixing/<l>, W[:L, :L]) over the example's n tokens.
ImplicitAttentionResult gmlp_attention(const DumpReader& dump, const ImplicitAttentionOptions& o) {
    const auto have = dump.mixing_layers();
    if (std::find(have.begin(), have.end(), o.layer) == have.end())
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " has no spatial matrix in /mixing (gMLP blocks are layers 1.." +
                          std::to_string(dump.n_layers()) + ")");
    if (o.mode == "gated")
        throw ConfigError(dump.path() +
                          ": mode gated is for BiGS and Birdie; a gMLP layer's token mixing is its "
                          "spatial weight W (modes sum, forward = its lower triangle, backward = "
                          "its upper triangle)");
    const std::int64_t n = example_length(dump, o.example);
    const RowMatrixF w = dump.mixing(o.layer);
    if (n > w.rows())
        throw ConfigError(dump.path() + ": example " + std::to_string(o.example) + " has " +
                          std::to_string(n) + " tokens; the spatial matrix covers " +
                          std::to_string(w.rows()));
    ImplicitAttentionResult r;
    r.options = o;
    r.length = n;
    r.source = "spatial";
    r.matrix.assign(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t t = 0; t < n; ++t)
        for (std::int64_t s = 0; s < n; ++s) {
            if ((o.mode == "forward" && s > t) || (o.mode == "backward" && s < t)) continue;
            r.matrix[static_cast<std::size_t>(t * n + s)] = static_cast<double>(w(t, s));
        }
    return finish(r, dump,
                  {{"layer", o.layer},
                   {"example", o.example},
                   {"mode", o.mode},
                   {"normalise", o.normalise},
                   {"source", "spatial"}});
}

}  // namespace

ImplicitAttentionResult implicit_attention(const DumpReader& dump,
                                           const ImplicitAttentionOptions& o) {
    static const std::vector<std::string> modes = {"forward", "backward", "sum", "gated"};
    static const std::vector<std::string> norms = {"raw", "minmax", "rownorm"};
    if (std::find(modes.begin(), modes.end(), o.mode) == modes.end())
        throw ConfigError("implicit attention: mode '" + o.mode +
                          "' is not forward, backward, sum or gated");
    if (std::find(norms.begin(), norms.end(), o.normalise) == norms.end())
        throw ConfigError("implicit attention: normalisation '" + o.normalise +
                          "' is not raw, minmax or rownorm");
    if (const int heads = dump.attention_heads(o.layer); heads > 0)
        return real_attention(dump, o, heads);
    if (dump.arch() == "birdie") return birdie_attention(dump, o);
    if (dump.arch() == "gmlp") return gmlp_attention(dump, o);
    // kb empty: a causal layer (model.causal), whose SSM reads left to right only: A_b = 0.
    const auto kf = dump.kernel(o.layer, true), kb = dump.kernel(o.layer, false);
    const bool causal = !kf.empty() && kb.empty();
    if (causal && o.mode == "backward")
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " is causal (forward SSM only): it has no backward kernel; forward, sum "
                          "or gated show what it mixes");
    if (kf.empty() && (dump.arch() == "bert" || dump.arch() == "gated_att"))
        throw ConfigError(dump.path() + ": this " + dump.arch() +
                          " dump holds no attention probabilities (layer " +
                          std::to_string(o.layer) +
                          "): dump the checkpoint again with `routescope-cli dump --attention` "
                          "to show its attention beside an SSM's implicit attention");
    if (kf.empty()) {
        const auto have = dump.kernel_layers();
        // The layer's kernel group is there, its forward kernel is not (absent or of no taps).
        if (std::find(have.begin(), have.end(), o.layer) != have.end())
            throw ConfigError(dump.path() + ": /kernels/" + std::to_string(o.layer) +
                              " holds no forward kernel (absent or empty), so no implicit "
                              "attention: every SSM layer has a forward kernel, a causal one "
                              "only that");
        std::string list;
        for (int l : have)
            list += (list.empty() ? "" : ", ") + std::to_string(l);
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " has no SSM kernels in this dump, so no implicit attention" +
                          (have.empty()
                               ? std::string(" (BiGS and STACK/SSM dumps carry kernels, Birdie "
                                             "dumps with --gates give the decay of their forget "
                                             "gates; BERT's attention is its own)")
                               : " (layers with kernels: " + list + ")"));
    }
    const std::int64_t n = example_length(dump, o.example);
    // One direction's Toeplitz matrix per channel group (a model with H > 1 kernels per SSM has
    // /kernels/<l>/<direction>_groups: group g acts on channels [g·d/H, (g+1)·d/H)); one group, the
    // dumped kernel, otherwise. Empty for a causal layer's backward direction.
    const auto group_matrices = [&](bool forward) {
        std::vector<std::vector<double>> out;
        if (!forward && causal) return out;
        const RowMatrixF k = dump.kernel_groups(o.layer, forward);
        // A tap per token (lags 0..n−1), said with the dataset it is read from.
        const auto taps = k.size() == 0 ? static_cast<std::int64_t>((forward ? kf : kb).size())
                                        : static_cast<std::int64_t>(k.cols());
        if (taps < n)
            throw ConfigError(dump.path() + ": /kernels/" + std::to_string(o.layer) + "/" +
                              (forward ? "forward" : "backward") +
                              (k.size() == 0 ? "" : "_groups") + " has " + std::to_string(taps) +
                              " taps, fewer than the " + std::to_string(n) + " tokens of example " +
                              std::to_string(o.example) +
                              ": implicit attention needs a tap for every distance");
        if (k.size() == 0) {
            out.push_back(toeplitz_attention(as_double(forward ? kf : kb),
                                             dump.kernel_skip(o.layer, forward), n, forward));
            return out;
        }
        const auto skips = dump.kernel_group_skips(o.layer, forward);
        for (Eigen::Index g = 0; g < k.rows(); ++g) {
            const std::vector<double> kernel(k.row(g).begin(), k.row(g).end());
            out.push_back(
                toeplitz_attention(kernel, skips[static_cast<std::size_t>(g)], n, forward));
        }
        return out;
    };
    // Each direction holds one matrix per channel group, and modes other than gated their two
    // means: checked before any is built.
    const auto n_groups = std::max<Eigen::Index>(1, dump.kernel_groups(o.layer, true).rows());
    require_matrix_memory(
        dump, o.example, n,
        static_cast<double>((causal ? 1 : 2) * n_groups) + (o.mode == "gated" ? 0.0 : 2.0));
    const auto gf = group_matrices(true), gb = group_matrices(false);
    // The mean over the channels (groups are of equal size): what modes forward, backward and sum
    // show (gated weighs each group by its own channels' inputs instead).
    const auto channel_mean = [&](const std::vector<std::vector<double>>& groups) {
        std::vector<double> m(static_cast<std::size_t>(n * n), 0.0);
        for (const auto& a : groups)
            for (std::size_t i = 0; i < m.size(); ++i)
                m[i] += a[i] / static_cast<double>(groups.size());
        return m;
    };
    const bool gated = o.mode == "gated";
    const auto af = gated ? std::vector<double>{} : channel_mean(gf);
    const auto ab = gated ? std::vector<double>{} : channel_mean(gb);

    ImplicitAttentionResult r;
    r.options = o;
    r.length = n;
    r.causal = causal;
    r.matrix.assign(static_cast<std::size_t>(n * n), 0.0);
    if (o.mode == "forward") {
        r.matrix = af;
    } else if (o.mode == "backward") {
        r.matrix = ab;
    } else if (o.mode == "sum") {
        for (std::size_t i = 0; i < r.matrix.size(); ++i)
            r.matrix[i] = af[i] + ab[i];
    } else {  // gated: the channel-averaged magnitude of each source token's contribution
        const LayerInfo& info = dump.layer(o.layer);
        auto holds = [&](const char* g) {
            return std::find(info.gates.begin(), info.gates.end(), g) != info.gates.end();
        };
        if (!holds("u_f") || (!causal && !holds("u_b")))
            throw ConfigError(dump.path() + ": mode gated needs the SSM inputs " +
                              (causal ? "u_f" : "u_f and u_b") + " of layer " +
                              std::to_string(o.layer) +
                              " (a BiGS dump written with --gates); sum shows the kernels alone");
        const std::int64_t row = row_of(dump, o.layer, o.example);
        const RowMatrixF uf = dump.gate_row(o.layer, "u_f", row);
        const RowMatrixF ub = causal ? RowMatrixF() : dump.gate_row(o.layer, "u_b", row);
        const Eigen::Index channels = uf.cols();
        // mean_c |A_g(c)[t, s] u_c[s]| = Σ_g |A_g[t, s]| · Σ_{c in g} |u_c[s]| / d: per group the
        // |·| of a product of one scalar per (t, s) and one per channel.
        const auto add = [&](const std::vector<std::vector<double>>& groups, const RowMatrixF& u) {
            const auto H = static_cast<Eigen::Index>(groups.size());
            const Eigen::Index per = channels / H;
            for (Eigen::Index g = 0; g < H; ++g) {
                std::vector<double> m(static_cast<std::size_t>(n));
                for (std::int64_t s = 0; s < n; ++s)
                    m[static_cast<std::size_t>(s)] =
                        u.row(s).segment(g * per, per).cast<double>().cwiseAbs().sum() / channels;
                const auto& a = groups[static_cast<std::size_t>(g)];
                for (std::int64_t t = 0; t < n; ++t)
                    for (std::int64_t s = 0; s < n; ++s) {
                        const auto i = static_cast<std::size_t>(t * n + s);
                        r.matrix[i] += std::abs(a[i]) * m[static_cast<std::size_t>(s)];
                    }
            }
        };
        add(gf, uf);
        if (!causal) add(gb, ub);
    }
    // Finite kernels and skips whose combination is not (|D| near 1.8e308): an error naming the
    // file, not a matrix of null in the JSON and inf in the CSV.
    for (const double v : r.matrix)
        if (!std::isfinite(v))
            throw FormatError(dump.path() + ": /kernels/" + std::to_string(o.layer) +
                              ": its kernels and skips combine beyond a double's range (the "
                              "matrix holds Inf); a real model's are many orders smaller");
    return finish(
        r, dump,
        {{"layer", o.layer}, {"example", o.example}, {"mode", o.mode}, {"normalise", o.normalise}});
}

nlohmann::json ImplicitAttentionResult::to_json() const {
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t t = 0; t < length; ++t)
        rows.push_back(
            std::vector<double>(matrix.begin() + t * length, matrix.begin() + (t + 1) * length));
    return {{"provenance", provenance.to_json()},
            {"layer", options.layer},
            {"example", options.example},
            // A mode applies to the mixing an SSM, Birdie or gMLP layer realises, a head to real
            // attention probabilities: null where it did not apply (the result said "mode":
            // "gated" of a BERT layer's probabilities, "head": 3 of a BiGS layer).
            {"mode", source == "attention" ? nlohmann::json() : nlohmann::json(options.mode)},
            {"normalise", options.normalise},
            {"source", source},
            {"causal", causal},
            {"head", source == "attention" ? nlohmann::json(options.head) : nlohmann::json()},
            {"length", length},
            {"tokens", tokens},
            {"matrix", rows}};
}

CsvTable ImplicitAttentionResult::table() const {
    CsvTable t;
    t.columns = {"layer", "example", "query", "source", "value"};
    for (std::int64_t q = 0; q < length; ++q)
        for (std::int64_t s = 0; s < length; ++s)
            t.rows.push_back({options.layer, options.example, q, s,
                              matrix[static_cast<std::size_t>(q * length + s)]});
    return t;
}

}  // namespace routescope::analysis
