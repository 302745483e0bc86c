#include "analysis/gates.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "analysis/histogram.hpp"
#include "analysis/sentence_sample.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

GateRange gate_range(const std::string& arch, const std::string& gate) {
    const double e = std::numbers::e;
    const bool softmaxed = gate == "i" || gate == "l" || gate == "r" || gate == "f" || gate == "s";
    if (arch == "slstm" && softmaxed) return {1 / (1 + 4 * e), e / (e + 4), "slstm softmax"};
    if (gate == "f" || gate == "i" || gate == "sentence_weight" || (arch == "slstm" && gate == "o"))
        return {0.0, 1.0, "sigmoid"};
    return {0.0, 0.0, "data"};
}

namespace {
bool is_forget_gate(const std::string& gate) {
    return gate == "f";
}
}  // namespace

GatesResult gate_statistics(const DumpReader& dump, const std::vector<int>& wanted,
                            const GatesOptions& options) {
    GatesResult result;
    std::vector<int> layers = wanted;
    if (layers.empty())
        for (int l : dump.layers())
            if (!dump.layer(l).gates.empty()) layers.push_back(l);
    if (layers.empty()) {
        // In the user's terms: which models have gates, and how a dump gets them.
        const std::string& arch = dump.arch();
        const std::string name = arch == "bert"        ? "BERT"
                                 : arch == "gated_att" ? "GATED/ATT"
                                 : arch == "stack_ssm" ? "STACK/SSM"
                                 : arch == "gmlp"      ? "gMLP"
                                 : arch == "bigs"      ? "BiGS"
                                 : arch == "birdie"    ? "Birdie"
                                 : arch == "slstm"     ? "S-LSTM"
                                                       : std::string();
        const bool gated = arch == "bigs" || arch == "birdie" || arch == "slstm" || arch == "gmlp";
        throw ConfigError(
            dump.path() + ": " +
            (gated ? "this " + name +
                         " dump holds no gates: dump it again with --gates (Gates in the Dump "
                         "Activations dialog)"
             : name.empty() ? "this dump holds no gates; gates come from BiGS, Birdie, S-LSTM "
                              "and gMLP dumps"
                            : name + " dumps have no gates; open a BiGS, Birdie, S-LSTM or gMLP "
                                     "dump"));
    }
    for (int layer : layers) {
        const LayerInfo& info = dump.layer(layer);
        if (info.gates.empty())
            throw ConfigError(dump.path() + ": layer " + std::to_string(layer) + " has no gates");
        const auto row_lengths = dump.row_lengths(layer);
        // A layer that stores no example (an empty example_index) has no gate value: said in
        // the dump's terms, as anisotropy says it (it was the sampler's "sample size M must be
        // at least 1 (got 0)", an option gates does not take, naming no file or layer).
        if (row_lengths.empty())
            throw ConfigError(dump.path() + ": layer " + std::to_string(layer) +
                              " stores 0 examples (its example_index is empty): no gate values "
                              "to summarise");
        const std::int64_t m =
            sentences_wanted(options.max_sentences, static_cast<std::int64_t>(row_lengths.size()));
        const std::vector<std::int64_t> rows = sample_sentences(row_lengths, m, options.seed).rows;
        for (const auto& gate : info.gates) {
            GateStats s;
            s.layer = layer;
            s.gate = gate;
            s.rows = rows;
            s.range = gate_range(dump.arch(), gate);
            const auto shape = dump.gate_shape(layer, gate);
            const std::int64_t k = shape[2];
            const bool plus_one = shape[1] == dump.padded_length() + 1;  // S-LSTM sentence_weight
            std::vector<double> values;
            std::vector<double> channel_sum(static_cast<std::size_t>(k), 0.0);
            std::int64_t positions = 0;
            for (auto r : rows) {
                const RowMatrixF g = dump.gate_row(layer, gate, r);
                const std::int64_t n = row_lengths[static_cast<std::size_t>(r)];
                auto take = [&](Eigen::Index p) {
                    ++positions;
                    for (Eigen::Index c = 0; c < k; ++c) {
                        values.push_back(g(p, c));
                        channel_sum[static_cast<std::size_t>(c)] += g(p, c);
                    }
                };
                for (Eigen::Index p = 0; p < n; ++p)
                    take(p);
                if (plus_one) take(g.rows() - 1);  // the sentence node's own weight
            }
            s.values = static_cast<std::int64_t>(values.size());
            double sum = 0, below = 0, above = 0, lossless = 0;
            for (double v : values) {
                sum += v;
                below += v < 0.1;
                above += v > 0.9;
                lossless += v > 0.99;
            }
            const double n = static_cast<double>(values.size());
            s.mean = sum / n;
            double sq = 0;
            for (double v : values)
                sq += (v - s.mean) * (v - s.mean);
            s.std = std::sqrt(sq / n);
            s.below_0_1 = below / n;
            s.above_0_9 = above / n;
            if (s.range.source == "data") {
                const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
                // All values equal: numpy.histogram's convention, [v − 0.5, v + 0.5], so the
                // value sits mid-axis (at [v, v + 1] its label met the y axis's at the corner).
                // From |v| = 2^19 on the half-width is |v|·2^-20: v ± 0.5 rounds to v in double
                // from 2^53 (an empty range), and bins of width below v's ulp would coincide.
                const double half = std::max(0.5, std::abs(*lo) * 0x1p-20);
                s.range.lo = *hi > *lo ? *lo : *lo - half;
                s.range.hi = *hi > *lo ? *hi : *lo + half;
            }
            try {
                s.histogram = histogram_counts(values, options.bins, s.range.lo, s.range.hi);
            } catch (const ConfigError& e) {
                throw ConfigError(dump.path() + ": layer " + std::to_string(layer) + ", gate " +
                                  gate + ": " + e.what());
            }
            for (double v : values) {
                s.below_range += v < s.range.lo;
                s.above_range += v > s.range.hi;
            }
            for (double c : channel_sum)
                s.channel_mean.push_back(c / static_cast<double>(positions));
            if (is_forget_gate(gate)) {
                s.above_0_99 = lossless / n;
                for (double f : s.channel_mean)
                    s.effective_memory.push_back(1.0 / (1.0 - f));
            }
            result.gates.push_back(std::move(s));
        }
    }
    result.provenance.analysis = "gates";
    result.provenance.inputs.push_back(dump_input(dump));
    result.provenance.parameters = {{"layers", layers},
                                    {"bins", options.bins},
                                    {"max_sentences", options.max_sentences},
                                    {"seed", options.seed}};
    return result;
}

nlohmann::json GatesResult::to_json() const {
    nlohmann::json out = {{"provenance", provenance.to_json()}, {"gates", nlohmann::json::array()}};
    // The sample: each entry's own rows; at the top as well where every layer shares them (a
    // dump whose layers store different examples, example_index, samples each layer's own).
    const bool shared = std::all_of(gates.begin(), gates.end(), [&](const GateStats& s) {
        return s.rows == gates.front().rows;
    });
    if (!gates.empty() && shared) out["rows"] = gates.front().rows;
    for (const auto& s : gates) {
        nlohmann::json g = {{"layer", s.layer},
                            {"gate", s.gate},
                            {"rows", s.rows},
                            {"range", {s.range.lo, s.range.hi}},
                            {"range_source", s.range.source},
                            {"values", s.values},
                            {"mean", s.mean},
                            {"std", s.std},
                            {"histogram", s.histogram},
                            {"below_range", s.below_range},
                            {"above_range", s.above_range},
                            {"fraction_below_0.1", s.below_0_1},
                            {"fraction_above_0.9", s.above_0_9},
                            {"channel_mean", s.channel_mean}};
        if (s.above_0_99 >= 0) {
            g["fraction_above_0.99"] = s.above_0_99;
            g["effective_memory"] = s.effective_memory;
        }
        out["gates"].push_back(g);
    }
    return out;
}

CsvTable GatesResult::table() const {
    CsvTable t;
    t.columns = {"layer",
                 "gate",
                 "values",
                 "mean",
                 "std",
                 "fraction_below_0.1",
                 "fraction_above_0.9",
                 "fraction_above_0.99",
                 "below_range",
                 "above_range"};
    for (const auto& s : gates)
        t.rows.push_back({s.layer, s.gate, s.values, s.mean, s.std, s.below_0_1, s.above_0_9,
                          s.above_0_99 >= 0 ? nlohmann::json(s.above_0_99) : nlohmann::json(),
                          s.below_range, s.above_range});
    return t;
}

}  // namespace routescope::analysis
