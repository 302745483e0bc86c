#pragma once
// The two heads of an induction circuit (Olsson et al. 2022, "In-context learning and induction
// heads"), read from a dump's attention probabilities (`dump --attention`, BERT / GATED-ATT) over
// the induction task, whose examples are "… m x … m x" (m the marker, "trigger"; x the copied
// symbol; a causal checkpoint's rows hold x after the second m: docs/formats/dump.md):
//   previous-token head  the copied symbol's first occurrence (the token after the first m)
//                        attends to the m before it: it can learn "my predecessor is m";
//   induction head       the query — the last m, whose next-token logits answer — attends to
//                        that first occurrence of x and copies it.
// Per layer, averaged over the examples (and over the heads: each head's probabilities, then
// their mean): the weight of each, the uniform weight of the row's causal part (1/(t + 1) for a
// query at position t: every position a causal model can read), and the share of examples in
// which it is the largest weight among positions 0..t (the first one on a tie). Examples with
// fewer than two markers, or with the first marker right before the last, are skipped.
//
// A causal SSM layer (a causal BiGS dump written with --gates: forward kernels and u_f) has no
// probabilities; in their place the same two readings come from its gated implicit attention
// (implicit_attention.hpp, mode gated: mean_c |A_c[t, s] u_c[s]|, what token s contributes to
// the forward SSM's outputs at t) with each row divided by its sum (rownorm), so a value is the
// share of the row. Other layers (bidirectional SSMs, a dump without gates) are left out.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct InductionHeadsLayer {
    int layer = 0;
    int heads = 0;  ///< attention heads; 0 for an SSM layer
    /// "attention" (the probabilities) or "gated convolution" (an SSM layer's row shares).
    std::string source = "attention";
    double previous_token = 0, previous_uniform = 0, previous_largest = 0;
    double induction = 0, induction_uniform = 0, induction_largest = 0;
};

struct InductionHeadsResult {
    Provenance provenance;
    std::string marker;
    std::int64_t examples = 0;  ///< examples read (two markers, the copied symbol before the query)
    std::vector<InductionHeadsLayer> layers;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// ConfigError naming the file when the dump has no attention probabilities, no /vocab piece
/// `marker`, or no example with two markers.
InductionHeadsResult induction_heads(const DumpReader& dump, const std::string& marker = "trigger");

}  // namespace routescope::analysis
