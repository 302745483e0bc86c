#include "analysis/transitions.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include "analysis/anisotropy.hpp"
#include "analysis/sentence_sample.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {
namespace {

struct Accumulator {
    TransitionStats s;
    double l2 = 0, relative = 0, angle = 0;
    std::int64_t with_angle = 0;
    void add(const Eigen::VectorXd& before, const Eigen::VectorXd& after) {
        const double step = (after - before).norm(), nb = before.norm(), na = after.norm();
        ++s.count;
        l2 += step;
        if (!(nb > 0) || !(na > 0)) {
            ++s.zero_norm;
            return;
        }
        ++with_angle;
        relative += step / nb;
        angle += std::acos(std::clamp(before.dot(after) / (nb * na), -1.0, 1.0)) * 180.0 /
                 std::numbers::pi;
    }
    TransitionStats finish() {
        s.l2 = s.count ? l2 / static_cast<double>(s.count) : 0;
        // Every vector left out (a zero layer): no mean, and not 0, which reads as "no change"
        // (NaN; null in the JSON, an empty CSV cell, no point on the chart).
        const double none = std::numeric_limits<double>::quiet_NaN();
        s.relative = with_angle ? relative / static_cast<double>(with_angle) : none;
        s.angle_degrees = with_angle ? angle / static_cast<double>(with_angle) : none;
        return s;
    }
};

}  // namespace

TransitionsResult layer_transitions(const DumpReader& dump, const TransitionsOptions& options) {
    const std::vector<int> present = dump.layers();
    if (present.size() < 2)
        throw ConfigError(dump.path() + ": layer transitions need two layers in the dump");
    TransitionsResult result;
    for (std::size_t i = 1; i < present.size(); ++i) {
        const int from = present[i - 1], to = present[i];
        // Layers may store different subsets of the examples (example_index): use the common ones.
        const auto& ex_from = dump.example_of_row(from);
        const auto& ex_to = dump.example_of_row(to);
        std::map<std::int64_t, std::int64_t> row_to;
        for (std::size_t r = 0; r < ex_to.size(); ++r)
            row_to[ex_to[r]] = static_cast<std::int64_t>(r);
        std::vector<std::int64_t> common_from, common_to, common_lengths;
        for (std::size_t r = 0; r < ex_from.size(); ++r) {
            auto it = row_to.find(ex_from[r]);
            if (it == row_to.end()) continue;
            common_from.push_back(static_cast<std::int64_t>(r));
            common_to.push_back(it->second);
            common_lengths.push_back(dump.lengths()[static_cast<std::size_t>(ex_from[r])]);
        }
        if (common_from.empty())
            throw ConfigError(dump.path() + ": layers " + std::to_string(from) + " and " +
                              std::to_string(to) + " store no example in common (example_index)");
        const std::int64_t wanted =
            sentences_wanted(options.max_sentences, static_cast<std::int64_t>(common_from.size()));
        std::vector<std::int64_t> rows_from, rows_to;
        for (auto c : sample_sentences(common_lengths, wanted, options.seed).rows) {
            rows_from.push_back(common_from[static_cast<std::size_t>(c)]);
            rows_to.push_back(common_to[static_cast<std::size_t>(c)]);
        }
        TransitionRow row;
        row.from_layer = from;
        row.layer = to;
        for (auto r : rows_from)
            row.examples.push_back(ex_from[static_cast<std::size_t>(r)]);
        Accumulator tokens, sentences;
        std::vector<double> position_sum(static_cast<std::size_t>(dump.padded_length()), 0.0);
        row.position_count.assign(position_sum.size(), 0);
        for (std::size_t j = 0; j < rows_from.size(); ++j) {
            const RowMatrixF a = dump.hidden_row(from, rows_from[j]),
                             b = dump.hidden_row(to, rows_to[j]);
            for (Eigen::Index t = 0; t < a.rows(); ++t) {
                const Eigen::VectorXd before = a.row(t).cast<double>().transpose(),
                                      after = b.row(t).cast<double>().transpose();
                tokens.add(before, after);
                position_sum[static_cast<std::size_t>(t)] += (after - before).norm();
                ++row.position_count[static_cast<std::size_t>(t)];
            }
        }
        row.position_l2.resize(position_sum.size());
        for (std::size_t t = 0; t < position_sum.size(); ++t)
            row.position_l2[t] =
                row.position_count[t] ? position_sum[t] / double(row.position_count[t]) : 0.0;
        std::string source_from, source_to;
        // In double: the masked means are not rounded to float (docs/analyses.md, "All in
        // double from the stored floats").
        const auto sa = sentence_vectors_double(dump, from, rows_from, &source_from);
        const auto sb = sentence_vectors_double(dump, to, rows_to, &source_to);
        for (Eigen::Index s = 0; s < sa.rows(); ++s)
            sentences.add(sa.row(s).transpose(), sb.row(s).transpose());
        row.tokens = tokens.finish();
        row.sentences = sentences.finish();
        row.sentence_source =
            source_from == source_to ? source_from : source_from + " -> " + source_to;
        result.layers.push_back(row);
    }
    result.arch = dump.arch();
    result.provenance.analysis = "transitions";
    result.provenance.inputs.push_back(dump_input(dump));
    result.provenance.parameters = {{"max_sentences", options.max_sentences},
                                    {"seed", options.seed}};
    return result;
}

namespace {
nlohmann::json stats_json(const TransitionStats& s) {
    return {{"count", s.count},
            {"zero_norm", s.zero_norm},
            {"l2", s.l2},
            {"relative", s.relative},
            {"angle_degrees", s.angle_degrees}};
}
}  // namespace

nlohmann::json TransitionsResult::to_json() const {
    nlohmann::json out = {{"provenance", provenance.to_json()},
                          {"layers", nlohmann::json::array()}};
    for (const auto& l : layers)
        out["layers"].push_back({{"from_layer", l.from_layer},
                                 {"layer", l.layer},
                                 {"examples", l.examples},
                                 {"tokens", stats_json(l.tokens)},
                                 {"sentences", stats_json(l.sentences)},
                                 {"sentence_source", l.sentence_source},
                                 {"position_l2", l.position_l2},
                                 {"position_count", l.position_count}});
    return out;
}

CsvTable TransitionsResult::table() const {
    CsvTable t;
    t.columns = {
        "from_layer",      "layer",     "tokens",      "token_l2",          "token_relative",
        "token_angle_deg", "sentences", "sentence_l2", "sentence_relative", "sentence_angle_deg"};
    for (const auto& l : layers)
        t.rows.push_back({l.from_layer, l.layer, l.tokens.count, l.tokens.l2, l.tokens.relative,
                          l.tokens.angle_degrees, l.sentences.count, l.sentences.l2,
                          l.sentences.relative, l.sentences.angle_degrees});
    return t;
}

}  // namespace routescope::analysis
