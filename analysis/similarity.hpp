#pragma once
// Representation similarity between the layers of two models dumped on the same examples (issue
// 28): for every pair (layer i of A, layer j of B), on the same token (or sentence) vectors,
//   linear CKA            Kornblith et al. 2019, ‖X̃ᵀỸ‖²_F / (‖X̃ᵀX̃‖_F ‖ỸᵀỸ‖_F), X̃ centred;
//   linear CKA, unbiased  the same with the unbiased HSIC estimator of Song et al. 2012;
//   RBF CKA               Gaussian kernels, bandwidth σ = the median pairwise distance (σ² = the
//                         median of the squared distances, diagonal included), on the Gram sample;
//   SVCCA                 Raghu et al. 2017: keep the principal directions holding 99% of the
//                         variance, then the mean canonical correlation;
//   PWCCA                 Morcos et al. 2018: canonical correlations weighted by how much of the
//                         representation (of the side with fewer dimensions) each variate accounts
//                         for;
//   Procrustes            Ding et al. 2021: 2 − 2‖X̂ᵀŶ‖_* with X̂ = X̃/‖X̃‖_F (0 = same shape).
// Everything but RBF CKA comes from d×d statistics accumulated over the vectors in chunks (never an
// N×N matrix), so N = 100,000 tokens at d = 1024 runs in bounded memory. The Gram sample (n
// vectors, one per example) carries the Gram-matrix statistics: RBF CKA, and for linear and RBF
// CKA a permutation null (which example of B pairs with which of A) and a bootstrap interval over
// examples. docs/analyses.md, "Representation similarity", states every definition.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

/// Thrown by representation_similarity when its options' `cancelled` hook said so: the run stopped
/// at a loop boundary and has no result.
class Cancelled : public Error {
public:
    using Error::Error;
};

/// The measures, in the order results list them.
const std::vector<std::string>& similarity_measures();

struct SimilarityOptions {
    bool sentence_vectors = false;      ///< false: token vectors; true: one vector per example
    std::int64_t max_vectors = 100000;  ///< M: vectors sampled uniformly without replacement
    std::uint64_t seed = 0;
    std::vector<int> layers_a, layers_b;  ///< empty: every layer of the dump
    std::vector<std::string> measures;    ///< empty: all of similarity_measures()
    std::int64_t gram_m = 1000;           ///< n: the Gram sample (one vector per example)
    int permutations = 100;               ///< K of the permutation null (0: none)
    int bootstrap = 100;                  ///< B bootstrap resamples of the Gram sample (0: none)
    double svcca_variance = 0.99;         ///< share of the variance SVCCA keeps
    std::int64_t chunk = 512;             ///< vectors per streamed chunk
    std::int64_t accumulator_bytes = std::int64_t{512} << 20;  ///< per pass over the data
    /// Only examples of min_length … max_length real tokens (0: no bound): one bin of
    /// `analyze similarity --length-bins` (length_bins below).
    std::int64_t min_length = 0, max_length = 0;
    /// Write the length columns (min_length, max_length) in the table even without bounds: the
    /// unbinned result beside its bins.
    bool length_columns = false;
    /// Asked at every loop boundary (each streamed chunk and each job of one, each layer pair, each
    /// layer's Gram, each permutation and bootstrap resample); once it returns true the run stops
    /// by throwing Cancelled. It may be called from several threads at once (the jobs of a chunk
    /// run in parallel). Empty: never cancelled. Not kept in the result's options.
    std::function<bool()> cancelled;
    /// Told (steps done, steps in all) at the same boundaries, on the calling thread; `done` rises
    /// to `total` (known once the sample is drawn: no report before). It may throw to stop the
    /// run (the exception passes through). Empty: no report. Not kept in the result's options.
    std::function<void(std::int64_t done, std::int64_t total)> progress;
};

/// The bins of input length that `--length-bins k` compares separately: the examples' real-token
/// counts (of dump `a`, > 0) split at their k-quantiles into at most k non-empty, non-overlapping
/// ranges [lo, hi] of lengths (ties keep a length in one bin, so there may be fewer than k).
std::vector<std::pair<std::int64_t, std::int64_t>> length_bins(const DumpReader& a, int k);

/// A len(layers_a) × len(layers_b) matrix of one statistic, row-major.
using LayerMatrix = std::vector<std::vector<double>>;

struct GramStatistics {
    LayerMatrix observed, null_mean, null_std, p_value, ci_low, ci_high;
};

struct SimilarityResult {
    Provenance provenance;
    SimilarityOptions options;
    std::string vector_source_a, vector_source_b;  ///< "token", "sentence dataset", "masked mean"
    std::vector<int> layers_a, layers_b;
    std::int64_t available = 0;                     ///< vectors available before sampling
    std::vector<std::int64_t> examples, positions;  ///< the sample (positions empty: sentences)
    std::vector<std::int64_t> gram_sample;          ///< indices into the sample
    std::vector<std::string> measures;
    std::vector<LayerMatrix> values;  ///< one per measure
    std::vector<int> svcca_dims_a, svcca_dims_b;
    bool has_linear_gram = false, has_rbf_gram = false;
    GramStatistics linear_gram, rbf_gram;
    std::vector<std::string> notes;  ///< measures left out and why
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// Throws ConfigError (naming the file and the example) when the dumps do not hold the same
/// examples, a requested layer is absent, or the sample is too small for a measure (CCA needs
/// more vectors than d_A + d_B); Cancelled when options.cancelled returns true.
SimilarityResult representation_similarity(const DumpReader& a, const DumpReader& b,
                                           const SimilarityOptions& options);

/// One cell of the layers × layers matrix seen as points (the Similarity view's scatter, `analyze
/// similarity --scatter LA,LB`): the vectors of layer_a of A and layer_b of B on (up to
/// max_points evenly spaced entries of) the result's sample, each side centred and reduced to the
/// principal directions holding options.svcca_variance of its variance (as SVCCA), then the first
/// canonical pair: x_i = X̃_i P_A Λ_A^{−1/2} u, y_i = Ỹ_i P_B Λ_B^{−1/2} v with (u, v) the leading
/// singular pair of the whitened cross-covariance and ρ its singular value, the first canonical
/// correlation (= corr(x, y)). x and y are scaled to unit variance (mean 0); the pair's sign makes
/// x's largest value positive.
struct CanonicalScatter {
    int layer_a = 0, layer_b = 0;
    std::vector<std::int64_t> entries;  ///< indices into the result's sample (examples/positions)
    std::vector<double> x, y;
    double rho = 0;
    int dims_a = 0, dims_b = 0;  ///< principal directions kept on each side
    nlohmann::json to_json(const SimilarityResult& r) const;
};

/// Throws ConfigError when a layer is not among the result's, or the points are not more than
/// dims_a + dims_b (the first canonical correlation would be 1 by construction).
CanonicalScatter canonical_scatter(const DumpReader& a, const DumpReader& b,
                                   const SimilarityResult& r, int layer_a, int layer_b,
                                   std::int64_t max_points = 5000);

}  // namespace routescope::analysis
