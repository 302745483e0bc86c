#pragma once
// Layer transitions (ANALYSES.md §5; the S-LSTM paper's Figure 7, ALBERT's Figure 1): how far each
// layer moves the representations, per token and per sentence vector; and, per layer (S-LSTM:
// recurrent step) ℓ and position t, the mean ‖h^(ℓ)_t − h^(ℓ−1)_t‖₂ over the examples that have
// a real token at t (the step × position change heatmap of the transitions view).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct TransitionsOptions {
    std::int64_t max_sentences = 0;  ///< 0: every stored row
    std::uint64_t seed = 0;
};

struct TransitionStats {
    std::int64_t count = 0;
    std::int64_t zero_norm =
        0;  ///< vectors with ‖h^(ℓ−1)‖ = 0 or ‖h^(ℓ)‖ = 0: left out of relative/angle
    double l2 = 0;  ///< mean ‖h^(ℓ) − h^(ℓ−1)‖₂
    double relative = 0;  ///< mean ‖h^(ℓ) − h^(ℓ−1)‖₂ / ‖h^(ℓ−1)‖₂ (NaN: all left out)
    double angle_degrees = 0;  ///< mean arccos(cos(h^(ℓ), h^(ℓ−1))) in degrees (NaN: all left out)
};

struct TransitionRow {
    int from_layer = 0,
        layer = 0;  ///< consecutive layers present in the dump (from = ℓ−1 when dense)
    std::vector<std::int64_t> examples;  ///< examples used (common to both layers, maybe sampled)
    TransitionStats tokens, sentences;
    std::string sentence_source;
    /// Per position t < L: mean ‖h^(ℓ)_t − h^(ℓ−1)_t‖₂ over the examples with length > t (0 where
    /// none), and how many examples that is.
    std::vector<double> position_l2;
    std::vector<std::int64_t> position_count;
};

struct TransitionsResult {
    Provenance provenance;
    std::string arch;  ///< the dump's /model arch (S-LSTM layers are recurrent steps)
    std::vector<TransitionRow> layers;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// Pairs each present layer ℓ ≥ 1 with the previous present layer (a dump may hold every fourth
/// layer), over the examples both layers store (example_index may differ between layers).
TransitionsResult layer_transitions(const DumpReader& dump, const TransitionsOptions& options);

}  // namespace routescope::analysis
