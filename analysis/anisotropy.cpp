#include "analysis/anisotropy.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/gram_matrix.hpp"
#include "analysis/histogram.hpp"
#include "analysis/sentence_sample.hpp"
#include "analysis/symmetric_eigen.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

namespace {

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// log Σ_i exp(s·p_i), stable for the large projections of unnormalised hidden states.
double log_sum_exp(const Eigen::VectorXd& p, double s) {
    const double top = (s * p.array()).maxCoeff();
    return top + std::log((s * p.array() - top).exp().sum());
}

/// PC1 share and isotropy score of the rows of X (uncentred, unnormalised unless the caller
/// centred them). Isotropy score (Mu & Viswanath, "All-but-the-Top", ICLR 2018):
///   I(W) = min_c Z(c) / max_c Z(c),   Z(c) = Σ_i exp(cᵀ w_i),
/// with c over the unit eigenvectors of WᵀW. An eigenvector's sign is arbitrary and Z(c) ≠ Z(−c),
/// so we take c over both signs of every eigenvector (2d directions): the score then does not
/// depend on the solver's choice of signs. When M < d the d − M null directions give Z = M.
// A sampled vector of norm 0 (a zeroed layer or token): its cosine is undefined. Input, not a
// failure of the program (exit 2); anisotropy() names the dump, layer, example and token.
class ZeroNormVector : public FormatError {
public:
    ZeroNormVector(Eigen::Index index, bool centred)
        : FormatError("vector " + std::to_string(index) + " of the sample has norm 0" +
                      (centred ? " after centring" : "") + ": its cosine is undefined"),
          index_(index),
          centred_(centred) {}
    Eigen::Index index() const { return index_; }
    bool centred() const { return centred_; }

private:
    Eigen::Index index_;
    bool centred_;
};

// The power of two that scales x to a largest |x| in [1, 2), as an exponent (0 when x is all 0).
template <typename Matrix>
int scale_exponent(const Matrix& x) {
    const double largest = x.size() > 0 ? static_cast<double>(x.cwiseAbs().maxCoeff()) : 0.0;
    return largest > 0 && std::isfinite(largest) ? std::ilogb(largest) : 0;
}

// `unscaled` is float (the vectors as read) or double (the centred vectors: x − x̄ of floats near
// ±FLT_MAX exceeds the float range, and stored back as float it became ±Inf; the spectrum of
// double rows is computed from them, not from a float rounding).
template <typename Matrix>
void spectrum_of(const Matrix& unscaled, CosineStatistics& out) {
    // The eigenproblem on X scaled by a power of two to a largest |x| in [1, 2): XᵀX in float
    // underflowed to 0 for values near 1e-44 (PC1 share undefined) and overflowed to Inf near
    // 1e37 (the solver failed). The eigenvalues and projections are scaled back (exact powers of
    // two); Z(c) sees the vectors at their own scale.
    // Double rows (centred) stay double: scaled by a power of two they are exact.
    using Scalar = typename Matrix::Scalar;
    using Rows = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const int exponent = scale_exponent(unscaled);
    const Rows X = exponent == 0
                       ? Rows(unscaled)
                       : Rows((unscaled.template cast<double>() * std::ldexp(1.0, -exponent))
                                  .template cast<Scalar>());
    const Eigen::Index m = X.rows(), d = X.cols();
    Eigen::VectorXd lambda;
    Eigen::MatrixXd projections;  // [M, r]: cᵀw_i for each eigenvector c
    if (m >= d) {
        const SymmetricEigen e = symmetric_eigen(gram_of_columns(X), true);
        lambda = e.values;
        // X·E in double, by blocks of rows over the OpenMP threads (one cast of X to double
        // before a single product took longer than the product itself).
        projections.resize(m, d);
        constexpr Eigen::Index kBlock = 256;
        const auto blocks = static_cast<std::ptrdiff_t>((m + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static)
        for (std::ptrdiff_t b = 0; b < blocks; ++b) {
            const Eigen::Index i0 = b * kBlock, h = std::min(kBlock, m - i0);
            projections.middleRows(i0, h).noalias() =
                X.middleRows(i0, h).template cast<double>() * e.vectors;
        }
    } else {
        // XXᵀ = UΛUᵀ shares the non-zero eigenvalues; c_k = Xᵀu_k/σ_k gives cᵀw_i = σ_k u_ik.
        const Eigen::MatrixXd xd = X.template cast<double>();
        const SymmetricEigen e = symmetric_eigen(xd * xd.transpose(), true);
        lambda = e.values;
        projections = e.vectors * lambda.cwiseMax(0.0).cwiseSqrt().asDiagonal();
    }
    lambda *= std::ldexp(1.0, 2 * exponent);
    projections *= std::ldexp(1.0, exponent);
    const double total = lambda.cwiseMax(0.0).sum();
    out.pc1_variance =
        total > 0 ? lambda.maxCoeff() / total : std::numeric_limits<double>::quiet_NaN();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (Eigen::Index k = 0; k < projections.cols(); ++k) {
        for (double s : {1.0, -1.0}) {
            const double z = log_sum_exp(projections.col(k), s);
            lo = std::min(lo, z);
            hi = std::max(hi, z);
        }
    }
    if (m < d) {
        lo = std::min(lo, std::log(static_cast<double>(m)));
        hi = std::max(hi, std::log(static_cast<double>(m)));
    }
    out.isotropy = std::exp(lo - hi);
}

// Rounding can put a cosine a few ulp outside [−1, 1]; clamped, it lands in the end bins.
float clamped_cosine(float c) {
    return std::clamp(c, -1.0f, 1.0f);
}

// A fine, monotone binning of [−1, 1] that locates the median's rank without sorting all pairs.
constexpr int kFineBins = 1 << 16;
int fine_bin(float c) {
    if (std::isnan(c)) return 0;  // cannot happen (the reader rejects NaN); keeps the index valid
    return std::clamp(static_cast<int>((static_cast<double>(c) + 1.0) * (kFineBins / 2.0)), 0,
                      kFineBins - 1);
}

struct PairStatistics {
    std::vector<std::int64_t> histogram;
    double sum = 0, sum_sq = 0, median = 0;
    std::int64_t negative = 0;
};

// Histogram (numpy's rule), sum, sum of squares, negatives and exact median of the strictly lower
// triangle of `gram`, clamped to [−1, 1]. Columns are cut into fixed chunks whose sums are added
// in chunk order, and the counts are integers, so the result does not depend on the thread count.
// The median: the fine bins' counts give the bin holding each middle rank; a second pass collects
// that bin's values and nth_element picks the rank inside it.
PairStatistics pair_statistics(const Eigen::MatrixXf& gram, int bins) {
    const Eigen::Index m = gram.rows();
    const std::int64_t pairs = m * (m - 1) / 2;
    const HistogramBinner binner(bins, -1.0, 1.0);
    constexpr Eigen::Index kChunk = 64;
    const auto chunks = static_cast<std::ptrdiff_t>((m + kChunk - 1) / kChunk);
    std::vector<double> chunk_sum(static_cast<std::size_t>(chunks)),
        chunk_sq(static_cast<std::size_t>(chunks));
    std::vector<std::int64_t> histogram(static_cast<std::size_t>(bins), 0),
        fine(static_cast<std::size_t>(kFineBins), 0);
    std::int64_t negative = 0;
#pragma omp parallel
    {
        std::vector<std::int64_t> my_histogram(histogram.size(), 0), my_fine(fine.size(), 0);
        std::int64_t my_negative = 0;
#pragma omp for schedule(dynamic, 1)
        for (std::ptrdiff_t k = 0; k < chunks; ++k) {
            double sum = 0, sum_sq = 0;
            for (Eigen::Index j = k * kChunk; j < std::min(m, (k + 1) * kChunk); ++j) {
                const float* column = gram.col(j).data();
                for (Eigen::Index i = j + 1; i < m; ++i) {
                    const float c = clamped_cosine(column[i]);
                    sum += c;
                    sum_sq += double(c) * c;
                    my_negative += c < 0;
                    if (const int b = binner.bin(c); b >= 0)
                        ++my_histogram[static_cast<std::size_t>(b)];
                    ++my_fine[static_cast<std::size_t>(fine_bin(c))];
                }
            }
            chunk_sum[static_cast<std::size_t>(k)] = sum;
            chunk_sq[static_cast<std::size_t>(k)] = sum_sq;
        }
#pragma omp critical
        {
            for (std::size_t b = 0; b < histogram.size(); ++b)
                histogram[b] += my_histogram[b];
            for (std::size_t b = 0; b < fine.size(); ++b)
                fine[b] += my_fine[b];
            negative += my_negative;
        }
    }
    PairStatistics out;
    out.histogram = std::move(histogram);
    out.negative = negative;
    for (std::ptrdiff_t k = 0; k < chunks; ++k) {
        out.sum += chunk_sum[static_cast<std::size_t>(k)];
        out.sum_sq += chunk_sq[static_cast<std::size_t>(k)];
    }

    // The values of the middle ranks (one for an odd count, two for an even one): the fine bin
    // holding each rank, then one pass collecting those bins' values.
    const std::int64_t mid = pairs / 2;
    std::vector<std::int64_t> ranks = {mid};
    if (pairs % 2 == 0) ranks.push_back(mid - 1);
    std::vector<int> bin_of(ranks.size());
    std::vector<std::int64_t> before_of(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        int b = 0;
        std::int64_t before = 0;
        while (before + fine[static_cast<std::size_t>(b)] <= ranks[r])
            before += fine[static_cast<std::size_t>(b++)];
        bin_of[r] = b;
        before_of[r] = before;
    }
    std::vector<std::vector<float>> in_bin(ranks.size());
    for (Eigen::Index j = 0; j < m; ++j) {
        const float* column = gram.col(j).data();
        for (Eigen::Index i = j + 1; i < m; ++i) {
            const float c = clamped_cosine(column[i]);
            const int b = fine_bin(c);
            for (std::size_t r = 0; r < ranks.size(); ++r)
                if (b == bin_of[r]) in_bin[r].push_back(c);
        }
    }
    double median = 0;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const auto at = in_bin[r].begin() + static_cast<std::ptrdiff_t>(ranks[r] - before_of[r]);
        std::nth_element(in_bin[r].begin(), at, in_bin[r].end());
        median += static_cast<double>(*at);
    }
    out.median = median / static_cast<double>(ranks.size());
    return out;
}

// The cosine statistics of the rows of x (float as read, or double after centring); the
// spectrum too when asked. `out.mean_norm` is the caller's.
template <typename Matrix>
void cosine_statistics_of(const Matrix& x, int bins, bool centred, bool spectrum,
                          CosineStatistics& out) {
    const Eigen::Index m = x.rows();
    if (spectrum)
        spectrum_of(x, out);
    else
        out.pc1_variance = out.isotropy = std::numeric_limits<double>::quiet_NaN();

    // Each row scaled by a power of two to a largest |x| in [1, 2) (exact for float rows: its
    // cosines do not change, and neither overflow nor underflow in float), the dot products of
    // those rows in float, each divided by the two norms in double. Rows normalised in float
    // first gave a cosine of about ±1e-8 for an exactly orthogonal pair (±1 vectors: 28% of the
    // pairs), half of them counted negative and put in the bin below 0.
    RowMatrixF scaled(m, x.cols());
    std::vector<double> norms(static_cast<std::size_t>(m));
    for (Eigen::Index i = 0; i < m; ++i) {
        const Eigen::RowVectorXd row = x.row(i).template cast<double>();
        const double norm = row.norm();
        if (!(norm > 0)) throw ZeroNormVector(i, centred);
        const int exponent = scale_exponent(row);
        scaled.row(i) = (row * std::ldexp(1.0, -exponent)).template cast<float>();
        norms[static_cast<std::size_t>(i)] = norm * std::ldexp(1.0, -exponent);
    }
    // The lower triangle of the scaled rows' Gram matrix (analysis/gram_matrix), as cosines.
    Eigen::MatrixXf gram = lower_gram_of_rows(scaled);
#pragma omp parallel for schedule(dynamic, 16)
    for (Eigen::Index j = 0; j < m; ++j)
        for (Eigen::Index i = j + 1; i < m; ++i)
            gram(i, j) = static_cast<float>(
                static_cast<double>(gram(i, j)) /
                (norms[static_cast<std::size_t>(i)] * norms[static_cast<std::size_t>(j)]));
    out.pairs = m * (m - 1) / 2;
    const PairStatistics p = pair_statistics(gram, bins);
    // Every cosine is finite by construction (finite rows of norm > 0, scaled); a NaN would drop
    // out of the histogram and the median unseen, so it is an error, never a silent gap.
    if (!std::isfinite(p.sum) || !std::isfinite(p.sum_sq))
        throw RuntimeFailure("a cosine of the sample is not a number (NaN or infinite)");
    out.histogram = p.histogram;
    const double n = static_cast<double>(out.pairs);
    out.mean = p.sum / n;
    out.std = std::sqrt(std::max(0.0, p.sum_sq / n - out.mean * out.mean));
    out.fraction_negative = static_cast<double>(p.negative) / n;
    out.median = p.median;
}

}  // namespace

CosineStatistics cosine_statistics(const RowMatrixF& vectors, int bins, bool centred,
                                   bool spectrum) {
    if (bins < 1) throw ConfigError("bins must be at least 1 (got " + std::to_string(bins) + ")");
    const Eigen::Index m = vectors.rows();
    if (m < 2)
        throw ConfigError("anisotropy needs at least 2 vectors (got " + std::to_string(m) + ")");
    CosineStatistics out;
    out.mean_norm = vectors.cast<double>().rowwise().norm().mean();
    if (centred) {
        // The centred vectors stay in double: x − x̄ of float values near ±FLT_MAX is finite in
        // double but not in float (stored back as float, such cosines were NaN, silently dropped).
        const Eigen::RowVectorXd mean = vectors.cast<double>().colwise().mean();
        const RowMatrixD x = vectors.cast<double>().rowwise() - mean;
        cosine_statistics_of(x, bins, true, spectrum, out);
    } else {
        cosine_statistics_of(vectors, bins, false, spectrum, out);
    }
    return out;
}

Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> sentence_vectors_double(
    const DumpReader& dump, int layer, const std::vector<std::int64_t>& rows, std::string* source) {
    if (dump.layer(layer).has_sentence) {
        if (source) *source = "sentence dataset";
        return dump.sentence_rows(layer, rows).cast<double>();
    }
    if (source) *source = "masked mean";
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> out(
        static_cast<Eigen::Index>(rows.size()), dump.width());
    for (std::size_t i = 0; i < rows.size(); ++i)
        out.row(static_cast<Eigen::Index>(i)) =
            dump.hidden_row(layer, rows[i]).cast<double>().colwise().mean();
    return out;
}

RowMatrixF sentence_vectors(const DumpReader& dump, int layer,
                            const std::vector<std::int64_t>& rows, std::string* source) {
    return sentence_vectors_double(dump, layer, rows, source).cast<float>();
}

AnisotropyResult anisotropy(const DumpReader& dump, const AnisotropyOptions& options) {
    AnisotropyResult result;
    result.options = options;
    const auto row_lengths = dump.row_lengths(options.layer);  // throws for a missing layer
    const SentenceSample sample = sample_sentences(row_lengths, options.m, options.seed);
    result.rows = sample.rows;
    result.m_requested = sample.requested;
    result.m_used = static_cast<std::int64_t>(sample.rows.size());
    const auto& example_of_row = dump.example_of_row(options.layer);
    for (auto row : sample.rows)
        result.examples.push_back(example_of_row[static_cast<std::size_t>(row)]);
    if (sample.rows.size() < 2)
        throw ConfigError(dump.path() + ": layer " + std::to_string(options.layer) + " stores " +
                          std::to_string(row_lengths.size()) + " example" +
                          (row_lengths.size() == 1 ? "" : "s") + " with " +
                          std::to_string(sample.rows.size()) +
                          " vector(s) to sample: anisotropy needs at least 2");
    RowMatrixF vectors;
    if (options.sentence_vectors) {
        vectors = sentence_vectors(dump, options.layer, sample.rows, &result.vector_source);
    } else {
        result.vector_source = "token";
        result.tokens = sample.tokens;
        std::vector<TokenRef> refs;
        for (std::size_t i = 0; i < sample.rows.size(); ++i)
            refs.push_back({sample.rows[i], sample.tokens[i]});
        vectors = dump.hidden_tokens(options.layer, refs);
    }
    try {
        result.stats = cosine_statistics(vectors, options.bins, options.centred, options.spectrum);
    } catch (const ZeroNormVector& e) {
        const auto i = static_cast<std::size_t>(e.index());
        std::string where = "example " + std::to_string(result.examples[i]);
        if (!options.sentence_vectors) where += ", token " + std::to_string(sample.tokens[i]);
        throw FormatError(dump.path() + ": layer " + std::to_string(options.layer) + ": the " +
                          (options.sentence_vectors ? "sentence" : "token") + " vector of " +
                          where + " has norm 0" + (e.centred() ? " after centring" : "") +
                          ", so its cosine is undefined (a zeroed layer? anisotropy needs "
                          "non-zero vectors)");
    } catch (const ConfigError& e) {
        throw ConfigError(dump.path() + ": layer " + std::to_string(options.layer) + ": " +
                          e.what());
    } catch (const FormatError& e) {
        throw FormatError(dump.path() + ": layer " + std::to_string(options.layer) + ": " +
                          e.what());
    } catch (const Interrupted&) {
        throw;
    } catch (const Error& e) {
        // A failure of the numerics (LAPACK) says which file and layer it was computing.
        throw RuntimeFailure(dump.path() + ": layer " + std::to_string(options.layer) +
                             ": anisotropy: " + e.what());
    }
    result.provenance.analysis = "anisotropy";
    result.provenance.inputs.push_back(dump_input(dump));
    result.provenance.parameters = {{"layer", options.layer},
                                    {"vectors", options.sentence_vectors ? "sentence" : "token"},
                                    {"m", options.m},
                                    {"seed", options.seed},
                                    {"bins", options.bins},
                                    {"centred", options.centred},
                                    {"spectrum", options.spectrum}};
    return result;
}

namespace {
nlohmann::json number_or_null(double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}
}  // namespace

nlohmann::json AnisotropyResult::to_json() const {
    const std::vector<double> edges = histogram_edges(options.bins, -1.0, 1.0);
    return {{"provenance", provenance.to_json()},
            {"layer", options.layer},
            {"vector_source", vector_source},
            {"m_requested", m_requested},
            {"m_used", m_used},
            {"sample", {{"rows", rows}, {"tokens", tokens}, {"examples", examples}}},
            {"pairs", stats.pairs},
            {"histogram", {{"edges", edges}, {"counts", stats.histogram}}},
            {"mean", stats.mean},
            {"median", stats.median},
            {"std", stats.std},
            {"fraction_negative", stats.fraction_negative},
            {"mean_norm", stats.mean_norm},
            {"pc1_variance", number_or_null(stats.pc1_variance)},
            {"isotropy", number_or_null(stats.isotropy)}};
}

CsvTable AnisotropyResult::table() const {
    CsvTable t;
    t.columns = {"layer", "bin_low", "bin_high", "count"};
    const std::vector<double> edges = histogram_edges(options.bins, -1.0, 1.0);
    for (std::size_t i = 0; i < stats.histogram.size(); ++i)
        t.rows.push_back({options.layer, edges[i], edges[i + 1], stats.histogram[i]});
    return t;
}

}  // namespace routescope::analysis
