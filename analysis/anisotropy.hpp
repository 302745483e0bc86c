#pragma once
// Anisotropy of a layer's representations (ANALYSES.md §3; the S-LSTM paper's Figure 6, after
// Ethayarajh 2019): the distribution of cos(h_i, h_j) over all pairs of M vectors that come from
// M different sentences, computed from one normalised Gram matrix.
#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct AnisotropyOptions {
    int layer = 0;
    bool sentence_vectors =
        false;              ///< false: one random token per sentence; true: sentence vectors
    std::int64_t m = 5000;  ///< sentences sampled (all when fewer; see sample_sentences)
    std::uint64_t seed = 0;
    int bins = 100;        ///< on [−1, 1]
    bool centred = false;  ///< subtract the sample mean before the cosines
    bool spectrum = true;  ///< PC1 variance and isotropy score (one d×d eigendecomposition)
};

/// The statistics of one set of vectors (rows of X); the part of the analysis that does not read.
struct CosineStatistics {
    std::vector<std::int64_t> histogram;  ///< `bins` counts over [−1, 1], numpy.histogram's rule
    std::int64_t pairs = 0;               ///< M(M−1)/2
    double mean = 0, median = 0, std = 0, fraction_negative = 0;
    double mean_norm = 0;     ///< of the vectors as read (before centring)
    double pc1_variance = 0;  ///< λ₁ / Σλ of XᵀX, uncentred (NaN when spectrum is off)
    double isotropy = 0;      ///< Mu & Viswanath (2018), see anisotropy.cpp (NaN when off)
};

/// Throws Error when a vector (after optional centring) has norm 0: its cosine is undefined.
CosineStatistics cosine_statistics(const RowMatrixF& vectors, int bins, bool centred,
                                   bool spectrum);

struct AnisotropyResult {
    Provenance provenance;
    AnisotropyOptions options;
    std::string vector_source;  ///< "token", "sentence dataset" or "masked mean"
    std::vector<std::int64_t> rows, tokens, examples;  ///< the sample (tokens empty for sentences)
    std::int64_t m_requested = 0, m_used = 0;
    CosineStatistics stats;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

AnisotropyResult anisotropy(const DumpReader& dump, const AnisotropyOptions& options);

/// Sentence vectors of the given rows: /layers/<l>/sentence when present, else the mean of each
/// row's real tokens. `source` receives which one was used.
RowMatrixF sentence_vectors(const DumpReader& dump, int layer,
                            const std::vector<std::int64_t>& rows, std::string* source);
/// The same in double, the means not rounded to float (representation similarity's 1e-6).
Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> sentence_vectors_double(
    const DumpReader& dump, int layer, const std::vector<std::int64_t>& rows, std::string* source);

}  // namespace routescope::analysis
