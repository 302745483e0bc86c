#include "analysis/induction_heads.hpp"

#include <algorithm>

#include "analysis/implicit_attention.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {
namespace {

/// The heads' mean of p(·, query → s) for s in 0..query, from one attention row [H · L, L].
std::vector<double> mean_row(const RowMatrixF& p, int heads, std::int64_t L, std::int64_t query) {
    std::vector<double> row(static_cast<std::size_t>(query + 1), 0.0);
    for (int h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s <= query; ++s)
            row[static_cast<std::size_t>(s)] += static_cast<double>(p(h * L + query, s)) / heads;
    return row;
}

bool largest_at(const std::vector<double>& row, std::int64_t at) {
    return std::max_element(row.begin(), row.end()) - row.begin() == at;
}

}  // namespace

InductionHeadsResult induction_heads(const DumpReader& dump, const std::string& marker) {
    const auto vocab = dump.vocab();
    const auto found = std::find(vocab.begin(), vocab.end(), marker);
    if (found == vocab.end())
        throw ConfigError(dump.path() + ": /vocab has no piece '" + marker +
                          "', so the induction heads cannot be located (a dump of the induction "
                          "task has 'trigger')");
    const auto marker_id = static_cast<std::int32_t>(found - vocab.begin());
    InductionHeadsResult r;
    r.marker = marker;
    const std::int64_t L = dump.padded_length();
    for (int layer : dump.layers()) {
        const int heads = dump.attention_heads(layer);
        // A causal SSM layer with its SSM inputs: the gated implicit attention's row shares.
        const auto& gates = dump.layer(layer).gates;
        const bool ssm = heads <= 0 && layer >= 1 && !dump.kernel(layer, true).empty() &&
                         dump.kernel(layer, false).empty() &&
                         std::find(gates.begin(), gates.end(), "u_f") != gates.end();
        if (heads <= 0 && !ssm) continue;
        InductionHeadsLayer out;
        out.layer = layer;
        out.heads = std::max(heads, 0);
        out.source = ssm ? "gated convolution" : "attention";
        const auto& examples = dump.example_of_row(layer);
        const auto lengths = dump.row_lengths(layer);
        std::int64_t n = 0;
        for (std::size_t row = 0; row < examples.size(); ++row) {
            const auto tokens = dump.tokens(examples[row]);
            std::vector<std::int64_t> at;
            for (std::int64_t t = 0; t < lengths[row]; ++t)
                if (tokens[static_cast<std::size_t>(t)] == marker_id) at.push_back(t);
            if (at.size() < 2 || at.front() + 1 >= at.back()) continue;
            const std::int64_t first = at.front(), copied = first + 1, query = at.back();
            std::vector<double> prev, ind;
            if (ssm) {
                ImplicitAttentionOptions o;
                o.layer = layer;
                o.example = examples[row];
                o.mode = "gated";
                o.normalise = "rownorm";
                const auto a = implicit_attention(dump, o);
                const auto row_of = [&](std::int64_t t) {
                    const auto begin = a.matrix.begin() + t * a.length;
                    return std::vector<double>(begin, begin + t + 1);
                };
                prev = row_of(copied);
                ind = row_of(query);
            } else {
                const RowMatrixF p = dump.attention_row(layer, static_cast<std::int64_t>(row));
                prev = mean_row(p, heads, L, copied);
                ind = mean_row(p, heads, L, query);
            }
            out.previous_token += prev[static_cast<std::size_t>(first)];
            out.previous_uniform += 1.0 / static_cast<double>(copied + 1);
            out.previous_largest += largest_at(prev, first) ? 1.0 : 0.0;
            out.induction += ind[static_cast<std::size_t>(copied)];
            out.induction_uniform += 1.0 / static_cast<double>(query + 1);
            out.induction_largest += largest_at(ind, copied) ? 1.0 : 0.0;
            ++n;
        }
        if (n == 0)
            throw ConfigError(dump.path() + ": no example of layer " + std::to_string(layer) +
                              " holds two '" + marker + "' tokens with a symbol between them");
        for (double* v : {&out.previous_token, &out.previous_uniform, &out.previous_largest,
                          &out.induction, &out.induction_uniform, &out.induction_largest})
            *v /= static_cast<double>(n);
        r.examples = n;
        r.layers.push_back(out);
    }
    if (r.layers.empty())
        throw ConfigError(dump.path() +
                          ": the dump has no attention probabilities (dump a BERT or GATED/ATT "
                          "checkpoint with --attention) and no causal SSM layer with its gates "
                          "(dump a causal BiGS with --gates)");
    r.provenance.analysis = "induction-heads";
    r.provenance.inputs.push_back(dump_input(dump));
    r.provenance.parameters = {{"marker", marker}};
    return r;
}

nlohmann::json InductionHeadsResult::to_json() const {
    nlohmann::json layers_json = nlohmann::json::array();
    for (const auto& l : layers)
        layers_json.push_back({{"layer", l.layer},
                               {"heads", l.heads},
                               {"source", l.source},
                               {"previous_token", l.previous_token},
                               {"previous_uniform", l.previous_uniform},
                               {"previous_largest", l.previous_largest},
                               {"induction", l.induction},
                               {"induction_uniform", l.induction_uniform},
                               {"induction_largest", l.induction_largest}});
    return {{"provenance", provenance.to_json()},
            {"marker", marker},
            {"examples", examples},
            {"layers", layers_json}};
}

CsvTable InductionHeadsResult::table() const {
    CsvTable t;
    t.columns = {"layer",
                 "source",
                 "heads",
                 "previous_token",
                 "previous_uniform",
                 "previous_largest",
                 "induction",
                 "induction_uniform",
                 "induction_largest"};
    for (const auto& l : layers)
        t.rows.push_back({l.layer, l.source, l.heads, l.previous_token, l.previous_uniform,
                          l.previous_largest, l.induction, l.induction_uniform,
                          l.induction_largest});
    return t;
}

}  // namespace routescope::analysis
