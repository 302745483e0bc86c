#include "analysis/implicit_attention.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"

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
/// The layer's own attention probabilities for the example: head `o.head`, or the heads' mean.
ImplicitAttentionResult real_attention(const DumpReader& dump, const ImplicitAttentionOptions& o,
                                       int heads) {
    if (o.head < -1 || o.head >= heads)
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) + " has " +
                          std::to_string(heads) + " attention heads (0.." +
                          std::to_string(heads - 1) + ", or −1 for their mean), not head " +
                          std::to_string(o.head));
    if (o.example < 0 || o.example >= dump.examples())
        throw ConfigError(dump.path() + ": example " + std::to_string(o.example) +
                          " is outside 0.." + std::to_string(dump.examples() - 1));
    const auto& rows = dump.example_of_row(o.layer);
    const auto it = std::find(rows.begin(), rows.end(), o.example);
    if (it == rows.end())
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " does not store example " + std::to_string(o.example));
    const std::int64_t n = dump.lengths()[static_cast<std::size_t>(o.example)];
    if (n < 1)
        throw ConfigError(dump.path() + ": example " + std::to_string(o.example) + " is empty");
    const RowMatrixF p = dump.attention_row(o.layer, static_cast<std::int64_t>(it - rows.begin()));
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
    normalise_rows(r.matrix, n, o.normalise);
    const auto pieces = dump.token_pieces(o.example);
    r.tokens.assign(pieces.begin(), pieces.begin() + n);
    r.provenance.analysis = "implicit-attention";
    r.provenance.inputs.push_back(dump_input(dump));
    r.provenance.parameters = {{"layer", o.layer},
                               {"example", o.example},
                               {"source", "attention"},
                               {"head", o.head},
                               {"normalise", o.normalise}};
    return r;
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
    const auto kf = dump.kernel(o.layer, true), kb = dump.kernel(o.layer, false);
    if (kf.empty() || kb.empty()) {
        const auto have = dump.kernel_layers();
        std::string list;
        for (int l : have)
            list += (list.empty() ? "" : ", ") + std::to_string(l);
        throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                          " has no SSM kernels in this dump, so no implicit attention" +
                          (have.empty()
                               ? std::string(" (only bidirectional BiGS and STACK/SSM dumps carry "
                                             "kernels; BERT's attention is its own)")
                               : " (layers with kernels: " + list + ")"));
    }
    if (o.example < 0 || o.example >= dump.examples())
        throw ConfigError(dump.path() + ": example " + std::to_string(o.example) +
                          " is outside 0.." + std::to_string(dump.examples() - 1));
    const std::int64_t n = dump.lengths()[static_cast<std::size_t>(o.example)];
    if (n < 1)
        throw ConfigError(dump.path() + ": example " + std::to_string(o.example) + " is empty");
    const double df = dump.kernel_skip(o.layer, true), db = dump.kernel_skip(o.layer, false);
    const auto af = toeplitz_attention(as_double(kf), df, n, true);
    const auto ab = toeplitz_attention(as_double(kb), db, n, false);

    ImplicitAttentionResult r;
    r.options = o;
    r.length = n;
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
        const bool has =
            std::find(info.gates.begin(), info.gates.end(), "u_f") != info.gates.end() &&
            std::find(info.gates.begin(), info.gates.end(), "u_b") != info.gates.end();
        if (!has)
            throw ConfigError(dump.path() +
                              ": mode gated needs the SSM inputs u_f and u_b of layer " +
                              std::to_string(o.layer) +
                              " (a BiGS dump written with --gates); sum shows the kernels alone");
        const auto& rows = dump.example_of_row(o.layer);
        const auto it = std::find(rows.begin(), rows.end(), o.example);
        if (it == rows.end())
            throw ConfigError(dump.path() + ": layer " + std::to_string(o.layer) +
                              " does not store example " + std::to_string(o.example));
        const auto row = static_cast<std::int64_t>(it - rows.begin());
        const RowMatrixF uf = dump.gate_row(o.layer, "u_f", row);
        const RowMatrixF ub = dump.gate_row(o.layer, "u_b", row);
        const Eigen::Index channels = uf.cols();
        // |A[t, s]| · mean_c |u_c[s]|: the |·| of a product of one scalar per (t, s) and one per c.
        std::vector<double> mf(static_cast<std::size_t>(n)), mb(static_cast<std::size_t>(n));
        for (std::int64_t s = 0; s < n; ++s) {
            mf[static_cast<std::size_t>(s)] = uf.row(s).cast<double>().cwiseAbs().sum() / channels;
            mb[static_cast<std::size_t>(s)] = ub.row(s).cast<double>().cwiseAbs().sum() / channels;
        }
        for (std::int64_t t = 0; t < n; ++t)
            for (std::int64_t s = 0; s < n; ++s) {
                const auto i = static_cast<std::size_t>(t * n + s);
                r.matrix[i] = std::abs(af[i]) * mf[static_cast<std::size_t>(s)] +
                              std::abs(ab[i]) * mb[static_cast<std::size_t>(s)];
            }
    }
    normalise_rows(r.matrix, n, o.normalise);
    const auto pieces = dump.token_pieces(o.example);
    r.tokens.assign(pieces.begin(), pieces.begin() + n);
    r.provenance.analysis = "implicit-attention";
    r.provenance.inputs.push_back(dump_input(dump));
    r.provenance.parameters = {
        {"layer", o.layer}, {"example", o.example}, {"mode", o.mode}, {"normalise", o.normalise}};
    return r;
}

nlohmann::json ImplicitAttentionResult::to_json() const {
    nlohmann::json rows = nlohmann::json::array();
    for (std::int64_t t = 0; t < length; ++t)
        rows.push_back(
            std::vector<double>(matrix.begin() + t * length, matrix.begin() + (t + 1) * length));
    return {{"provenance", provenance.to_json()},
            {"layer", options.layer},
            {"example", options.example},
            {"mode", options.mode},
            {"normalise", options.normalise},
            {"source", source},
            {"head", options.head},
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
