#pragma once
// PCA redundancy (ANALYSES.md §4; the S-LSTM paper's Table 6): for each sentence's centred token
// matrix H (n × d), the number of principal components k(p) that explain a fraction p of its
// variance. A larger k means the layer keeps tokens less redundant.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct PcaOptions {
    int layer = 0;
    std::vector<double> thresholds = {0.90, 0.92, 0.94, 0.96, 0.98};
    bool energy = false;             ///< σ instead of σ² (default: variance, σ²)
    std::int64_t max_sentences = 0;  ///< 0: every stored row; else a seeded sample of rows
    std::uint64_t seed = 0;
    std::int64_t bucket_width = 50;  ///< length buckets 1–50, 51–100, ...
    std::int64_t curve_points = 0;  ///< points of the mean cumulative curve (0: min(max n, d, 512))
    std::int64_t global_m = 5000;   ///< global variant: one token from each of M sentences (0: off)
    /// false: the S-LSTM paper's uncentred SVD (the spectrum of H itself, mean included).
    bool centred = true;
    /// > 0: per passage of exactly this many tokens instead of per sentence — each sentence's real
    /// tokens cut into consecutive passages from its start, a shorter rest dropped (the S-LSTM
    /// paper's passages of 100 and 300 tokens).
    std::int64_t passage = 0;
    /// > 0: a 95% percentile bootstrap interval of the overall mean k(p) over the sentences (or
    /// passages), this many resamples, seeded by `seed`.
    int bootstrap = 0;
};

/// Explained fractions, descending: σ_j² (or σ_j) of the centred (or, `centred` false, the raw)
/// rows of H, from the eigenvalues of the smaller Gram matrix (HHᵀ or HᵀH) in double. Empty when H
/// has fewer than 2 rows.
std::vector<double> component_weights(const RowMatrixF& H, bool energy, bool centred = true);
/// k(p) = min{k : Σ_{j≤k} w_j / Σ_j w_j ≥ p} for each p; 0 when the weights sum to 0.
std::vector<int> components_for(const std::vector<double>& weights,
                                const std::vector<double>& thresholds);

struct PcaGroup {
    std::string name;  ///< "all", "1-50", "n=100"
    std::int64_t lo = 0, hi = 0;
    std::int64_t sentences = 0;
    std::vector<double> mean_k;           ///< one per threshold
    std::vector<double> ci_low, ci_high;  ///< bootstrap interval of mean_k (overall; empty: none)
};

struct PcaResult {
    Provenance provenance;
    PcaOptions options;
    std::vector<std::int64_t> sampled_rows;             ///< rows considered (all, or the sample)
    std::vector<std::int64_t> rows, examples, lengths;  ///< sentences (or passages) used
    std::vector<std::int64_t> starts;  ///< each passage's first token (passage > 0 only)
    std::vector<std::vector<int>> k;   ///< [sentence][threshold]
    std::int64_t skipped = 0;  ///< rows with n < 2 or zero variance: k(p) undefined, not counted
    PcaGroup overall;
    std::vector<PcaGroup> by_bucket, by_length;
    std::vector<double> mean_curve;  ///< mean cumulative explained fraction at k = 1..curve_points
    /// The global variant (ANALYSES.md §4): the anisotropy sample's vectors pooled, one random
    /// real token of each of min(global_m, sentences) sentences, so every vector has its own
    /// context (sentence_sample.hpp).
    std::vector<std::int64_t> global_rows, global_tokens;
    std::vector<int> global_k;  ///< empty (null in the JSON) when undefined, see global_note
    std::string global_note;    ///< why k(p) is undefined: a pooled sample without variance
    nlohmann::json to_json() const;
    CsvTable table() const;
};

PcaResult pca_redundancy(const DumpReader& dump, const PcaOptions& options);

}  // namespace routescope::analysis
