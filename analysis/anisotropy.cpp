#include "analysis/anisotropy.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/histogram.hpp"
#include "analysis/sentence_sample.hpp"
#include "analysis/symmetric_eigen.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

namespace {

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
void spectrum_of(const RowMatrixF& X, CosineStatistics& out) {
    const Eigen::Index m = X.rows(), d = X.cols();
    Eigen::VectorXd lambda;
    Eigen::MatrixXd projections;  // [M, r]: cᵀw_i for each eigenvector c
    if (m >= d) {
        Eigen::MatrixXf c = Eigen::MatrixXf::Zero(d, d);
        c.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
        const SymmetricEigen e = symmetric_eigen(c.cast<double>(), true);  // reads the lower half
        lambda = e.values;
        projections = X.cast<double>() * e.vectors;
    } else {
        // XXᵀ = UΛUᵀ shares the non-zero eigenvalues; c_k = Xᵀu_k/σ_k gives cᵀw_i = σ_k u_ik.
        const Eigen::MatrixXd xd = X.cast<double>();
        const SymmetricEigen e = symmetric_eigen(xd * xd.transpose(), true);
        lambda = e.values;
        projections = e.vectors * lambda.cwiseMax(0.0).cwiseSqrt().asDiagonal();
    }
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

}  // namespace

CosineStatistics cosine_statistics(const RowMatrixF& vectors, int bins, bool centred,
                                   bool spectrum) {
    if (bins < 1) throw ConfigError("bins must be at least 1 (got " + std::to_string(bins) + ")");
    const Eigen::Index m = vectors.rows();
    if (m < 2)
        throw ConfigError("anisotropy needs at least 2 vectors (got " + std::to_string(m) + ")");
    CosineStatistics out;
    out.mean_norm = vectors.cast<double>().rowwise().norm().mean();
    RowMatrixF x = vectors;
    if (centred) {
        const Eigen::RowVectorXd mean = vectors.cast<double>().colwise().mean();
        x = (vectors.cast<double>().rowwise() - mean).cast<float>();
    }
    if (spectrum)
        spectrum_of(x, out);
    else
        out.pc1_variance = out.isotropy = std::numeric_limits<double>::quiet_NaN();

    RowMatrixF normalised = x;
    for (Eigen::Index i = 0; i < m; ++i) {
        const double norm = x.row(i).cast<double>().norm();
        if (!(norm > 0))
            throw Error("vector " + std::to_string(i) + " of the sample has norm 0" +
                        (centred ? " after centring" : "") + ": its cosine is undefined");
        normalised.row(i) = (x.row(i).cast<double>() / norm).cast<float>();
    }
    // One GEMM: the lower triangle of X̂X̂ᵀ (half the flops of the full product).
    Eigen::MatrixXf gram = Eigen::MatrixXf::Zero(m, m);
    gram.selfadjointView<Eigen::Lower>().rankUpdate(normalised);

    out.pairs = m * (m - 1) / 2;
    std::vector<float> values;
    values.reserve(static_cast<std::size_t>(out.pairs));
    double sum = 0, sum_sq = 0;
    std::int64_t negative = 0;
    for (Eigen::Index j = 0; j < m; ++j) {
        const float* column = gram.col(j).data();
        for (Eigen::Index i = j + 1; i < m; ++i) {
            // Rounding can put a cosine a few ulp outside [−1, 1]; clamp so it lands in the end
            // bins.
            const float c = std::clamp(column[i], -1.0f, 1.0f);
            values.push_back(c);
            sum += c;
            sum_sq += double(c) * c;
            negative += c < 0;
        }
    }
    out.histogram = histogram_counts(values, bins, -1.0, 1.0);
    const double n = static_cast<double>(out.pairs);
    out.mean = sum / n;
    out.std = std::sqrt(std::max(0.0, sum_sq / n - out.mean * out.mean));
    out.fraction_negative = negative / n;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    double median = values[mid];
    if (values.size() % 2 == 0)
        median =
            0.5 * (median + *std::max_element(values.begin(),
                                              values.begin() + static_cast<std::ptrdiff_t>(mid)));
    out.median = median;
    return out;
}

RowMatrixF sentence_vectors(const DumpReader& dump, int layer,
                            const std::vector<std::int64_t>& rows, std::string* source) {
    if (dump.layer(layer).has_sentence) {
        if (source) *source = "sentence dataset";
        return dump.sentence_rows(layer, rows);
    }
    if (source) *source = "masked mean";
    RowMatrixF out(static_cast<Eigen::Index>(rows.size()), dump.width());
    for (std::size_t i = 0; i < rows.size(); ++i)
        out.row(static_cast<Eigen::Index>(i)) =
            dump.hidden_row(layer, rows[i]).cast<double>().colwise().mean().cast<float>();
    return out;
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
    result.stats = cosine_statistics(vectors, options.bins, options.centred, options.spectrum);
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
