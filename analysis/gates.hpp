#pragma once
// Gate statistics (ANALYSES.md §2): per layer and gate, over the real (non-pad) positions of the
// dump's /layers/<l>/gates/<g>: mean, std, a histogram on the gate's range, saturation fractions
// and, for forget gates, the effective memory 1/(1 − f̄) of each channel.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct GatesOptions {
    int bins = 50;
    std::int64_t max_sentences = 0;  ///< 0: every stored row
    std::uint64_t seed = 0;
};

/// The histogram range of a gate: S-LSTM's softmaxed gates (i, l, r, f, s) lie in
/// [1/(1+4e), e/(e+4)] (each is σ/Σσ of five sigmoids); sigmoid gates (Birdie f, i; S-LSTM o;
/// sentence_weight) in [0, 1]; anything else (Birdie z, o; BiGS u_f, u_b, v; gMLP) over the data's
/// own [min, max]. `source` says which.
struct GateRange {
    double lo = 0, hi = 1;
    std::string source;  ///< "slstm softmax", "sigmoid", "data"
};
GateRange gate_range(const std::string& arch, const std::string& gate);

struct GateStats {
    int layer = 0;
    std::string gate;
    GateRange range;
    std::int64_t values = 0;
    double mean = 0, std = 0;
    std::vector<std::int64_t> histogram;
    /// Values outside a fixed range (the S-LSTM softmax's, the sigmoid's [0, 1]), which the
    /// histogram cannot show: a dump whose gates are not what its arch says (0 for a real one).
    std::int64_t below_range = 0, above_range = 0;
    double below_0_1 = 0, above_0_9 = 0;
    double above_0_99 = -1;  ///< forget gates only ("lossless transfer", the Birdie paper); else −1
    std::vector<double> channel_mean;
    std::vector<double> effective_memory;  ///< forget gates only: 1/(1 − f̄_c)
    std::vector<std::int64_t> rows;        ///< the rows of /layers/<layer> it was computed on
};

struct GatesResult {
    Provenance provenance;
    std::vector<GateStats> gates;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// `layers` empty: every layer with gates.
GatesResult gate_statistics(const DumpReader& dump, const std::vector<int>& layers,
                            const GatesOptions& options);

}  // namespace routescope::analysis
