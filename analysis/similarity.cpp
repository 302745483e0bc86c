#include "analysis/similarity.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <unordered_set>

#include "analysis/anisotropy.hpp"
#include "analysis/blas_threads.hpp"
#include "analysis/symmetric_eigen.hpp"
#include "engine/backend/cpu/blas.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using MatrixXdR = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

const std::vector<std::string> kMeasures = {"linear_cka", "linear_cka_unbiased", "rbf_cka", "svcca",
                                            "pwcca",      "procrustes"};

bool wants(const std::vector<std::string>& measures, const std::string& m) {
    return std::find(measures.begin(), measures.end(), m) != measures.end();
}

std::string str(std::int64_t v) {
    return std::to_string(v);
}

// ------------------------------------------------------------------ the examples and the sample

/// The same examples: equal counts, and per example the same text (when both dumps have text) or
/// the same tokens; token vectors also need the same lengths and tokens.
void check_same_examples(const DumpReader& a, const DumpReader& b, bool token_vectors) {
    const std::string both = a.path() + " and " + b.path();
    if (a.examples() != b.examples())
        throw ConfigError(both + " do not hold the same examples: " + str(a.examples()) +
                          " against " + str(b.examples()) +
                          " (dump both models on the same input file)");
    const bool by_text = !token_vectors && a.has_text() && b.has_text();
    if (by_text) {
        const auto ta = a.text(), tb = b.text();
        for (std::size_t e = 0; e < ta.size() && e < tb.size(); ++e)
            if (ta[e] != tb[e])
                throw ConfigError(both + " do not hold the same examples: example " +
                                  std::to_string(e) + " has another text");
        return;
    }
    for (std::int64_t e = 0; e < a.examples(); ++e) {
        const auto la = a.lengths()[static_cast<std::size_t>(e)];
        const auto lb = b.lengths()[static_cast<std::size_t>(e)];
        if (la != lb)
            throw ConfigError(both + " do not hold the same examples: example " + str(e) + " is " +
                              str(la) + " tokens long in the first and " + str(lb) +
                              " in the second" +
                              (token_vectors ? " (token vectors need the same tokenisation; "
                                               "--vectors sentence compares examples)"
                                             : ""));
        const auto xa = a.tokens(e), xb = b.tokens(e);
        for (std::int64_t t = 0; t < la; ++t)
            if (xa[static_cast<std::size_t>(t)] != xb[static_cast<std::size_t>(t)])
                throw ConfigError(both + " do not hold the same examples: example " + str(e) +
                                  " differs at token " + str(t) + " (id " +
                                  std::to_string(xa[static_cast<std::size_t>(t)]) + " against " +
                                  std::to_string(xb[static_cast<std::size_t>(t)]) + ")");
    }
}

std::vector<int> chosen_layers(const DumpReader& dump, const std::vector<int>& requested) {
    if (requested.empty()) {
        auto all = dump.layers();
        if (all.empty()) throw ConfigError(dump.path() + ": the dump has no layers");
        return all;
    }
    for (int l : requested)
        dump.layer(l);  // throws naming the file and the layers present
    return requested;
}

/// Row of each example in a layer (−1 when the layer does not store it).
std::vector<std::int64_t> rows_of_examples(const DumpReader& dump, int layer) {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(dump.examples()), -1);
    const auto& ex = dump.example_of_row(layer);
    for (std::size_t r = 0; r < ex.size(); ++r)
        if (ex[r] >= 0 && ex[r] < dump.examples())
            rows[static_cast<std::size_t>(ex[r])] = static_cast<std::int64_t>(r);
    return rows;
}

/// m distinct values of 0..total−1, ascending (Floyd's algorithm; `rng() % n` as in
/// sentence_sample.hpp, so the draw is the same with every standard library).
std::vector<std::int64_t> sample_indices(std::int64_t total, std::int64_t m, std::mt19937_64& rng) {
    std::vector<std::int64_t> out;
    if (m >= total) {
        out.resize(static_cast<std::size_t>(total));
        std::iota(out.begin(), out.end(), std::int64_t{0});
        return out;
    }
    std::unordered_set<std::int64_t> chosen;
    chosen.reserve(static_cast<std::size_t>(m) * 2);
    for (std::int64_t j = total - m; j < total; ++j) {
        const auto t = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(j + 1));
        chosen.insert(chosen.count(t) ? j : t);
    }
    out.assign(chosen.begin(), chosen.end());
    std::sort(out.begin(), out.end());
    return out;
}

/// One layer's vectors: which dump, which layer, which row holds each example.
struct LayerSource {
    const DumpReader* dump = nullptr;
    int layer = 0;
    std::vector<std::int64_t> row_of;
    std::int64_t d = 0;
};

/// The vectors of sample entries [begin, end), in double: token vectors as stored, or sentence
/// vectors (/layers/<l>/sentence, else the mean of the example's real tokens, taken in double).
MatrixXdR read_vectors(const LayerSource& src, const SimilarityResult& r, std::size_t begin,
                       std::size_t end, std::string* source) {
    std::vector<std::int64_t> rows;
    for (std::size_t i = begin; i < end; ++i)
        rows.push_back(src.row_of[static_cast<std::size_t>(r.examples[i])]);
    if (r.positions.empty()) return sentence_vectors_double(*src.dump, src.layer, rows, source);
    std::vector<TokenRef> refs;
    refs.reserve(rows.size());
    for (std::size_t i = begin; i < end; ++i)
        refs.push_back({rows[i - begin], r.positions[i]});
    if (source) *source = "token";
    return src.dump->hidden_tokens(src.layer, refs).cast<double>();
}

MatrixXdR read_gram_vectors(const LayerSource& src, const SimilarityResult& r) {
    // The Gram sample's entries, read one by one (n is small).
    MatrixXdR out(static_cast<Index>(r.gram_sample.size()), src.d);
    for (std::size_t i = 0; i < r.gram_sample.size(); ++i) {
        const auto k = static_cast<std::size_t>(r.gram_sample[i]);
        out.row(static_cast<Index>(i)) = read_vectors(src, r, k, k + 1, nullptr).row(0);
    }
    return out;
}

void check_finite(const MatrixXdR& x, const LayerSource& src) {
    if (!x.allFinite())
        throw FormatError(src.dump->path() + ": layer " + std::to_string(src.layer) +
                          " holds NaN or ±Inf among the sampled vectors; similarity needs finite "
                          "values (routescope-cli validate names them)");
}

// ------------------------------------------------------------------ streamed statistics

/// Per layer: vectors shifted by m0 (the first chunk's mean, so the sums see nearly centred data
/// and the centring at the end does not cancel); a = x − m0, s = ‖a‖².
struct LayerAccumulator {
    VectorXd shift;    ///< m0
    VectorXd sum;      ///< Σ a
    MatrixXd cross;    ///< Σ a aᵀ
    double sum_s = 0;  ///< Σ s
    double sum_ss = 0;
    VectorXd sum_sa;  ///< Σ s a
    bool started = false;
};

/// Per pair (x of A, y of B): Σ a bᵀ, Σ s t, Σ s b, Σ t a.
struct PairAccumulator {
    MatrixXd cross;
    double sum_st = 0;
    VectorXd sum_sb, sum_ta;
};

struct Chunk {
    MatrixXdR a;  ///< shifted vectors, in double
    VectorXd s;   ///< ‖a_i‖²
};

Chunk shifted_chunk(const MatrixXdR& x, LayerAccumulator& acc) {
    const Index d = x.cols();
    if (!acc.started) {
        acc.shift = x.colwise().mean().transpose();
        acc.sum = VectorXd::Zero(d);
        acc.cross = MatrixXd::Zero(d, d);
        acc.sum_sa = VectorXd::Zero(d);
        acc.started = true;
    }
    Chunk c;
    c.a = x.rowwise() - acc.shift.transpose();
    c.s = c.a.rowwise().squaredNorm();
    return c;
}

/// Σ over the chunk of aᵀb, added to a double accumulator by OpenBLAS's dgemm (beta = 1). In
/// double: with float products the unbiased CKA of nearly unrelated layers, a difference of
/// nearly equal sums, lost its sixth digit (measured against numpy).
void add_cross(MatrixXd& cross, const MatrixXdR& a, const MatrixXdR& b) {
    // cross is column-major [da, db], i.e. row-major [db, da]: cross += aᵀb ⇔ crossᵀ += bᵀa.
    cpu::gemm<double>(cpu::Trans::yes, cpu::Trans::no, b.cols(), a.cols(), a.rows(), 1.0, b.data(),
                      b.cols(), a.data(), a.cols(), 1.0, cross.data(), a.cols());
}

void accumulate_layer(LayerAccumulator& acc, const Chunk& c) {
    acc.sum += c.a.colwise().sum().transpose();
    add_cross(acc.cross, c.a, c.a);
    acc.sum_s += c.s.sum();
    acc.sum_ss += c.s.squaredNorm();
    acc.sum_sa += c.a.transpose() * c.s;
}

void accumulate_pair(PairAccumulator& p, const Chunk& x, const Chunk& y) {
    if (p.cross.size() == 0) {
        p.cross = MatrixXd::Zero(x.a.cols(), y.a.cols());
        p.sum_sb = VectorXd::Zero(y.a.cols());
        p.sum_ta = VectorXd::Zero(x.a.cols());
    }
    add_cross(p.cross, x.a, y.a);
    p.sum_st += x.s.dot(y.s);
    p.sum_sb += y.a.transpose() * x.s;
    p.sum_ta += x.a.transpose() * y.s;
}

/// The centred statistics of one layer, and the eigendecomposition CCA needs.
struct LayerMoments {
    VectorXd delta;    ///< mean of a (the true mean minus m0)
    MatrixXd cov;      ///< Σ x̃ x̃ᵀ (centred scatter, not divided by N)
    double trace = 0;  ///< ‖X̃‖²_F
    double sum_s = 0, sum_ss = 0;
    VectorXd sum_sa, sum;
    VectorXd eigenvalues;  ///< descending
    MatrixXd eigenvectors;
};

LayerMoments finish_layer(const LayerAccumulator& acc, double n, bool with_eigen) {
    LayerMoments m;
    m.delta = acc.sum / n;
    m.cov = acc.cross - n * m.delta * m.delta.transpose();
    m.cov = 0.5 * (m.cov + m.cov.transpose()).eval();
    m.trace = m.cov.trace();
    m.sum_s = acc.sum_s;
    m.sum_ss = acc.sum_ss;
    m.sum_sa = acc.sum_sa;
    m.sum = acc.sum;
    if (with_eigen) {
        SymmetricEigen e = symmetric_eigen(m.cov, true);
        m.eigenvalues = e.values.reverse();
        m.eigenvectors = e.vectors.rowwise().reverse();
    }
    return m;
}

/// Σ_i r^x_i r^y_i, r_i = ‖x̃_i‖², from the shifted sums (issue 28's debiased CKA; the expansion of
/// (s − 2a·δx + |δx|²)(t − 2b·δy + |δy|²) summed over i, with Σa = Nδx and Σb = Nδy).
double sum_rr(const LayerMoments& x, const LayerMoments& y, double sum_st, const VectorXd& sum_sb,
              const VectorXd& sum_ta, const MatrixXd& cross_ab, double n) {
    const double dx2 = x.delta.squaredNorm(), dy2 = y.delta.squaredNorm();
    return sum_st - 2 * y.delta.dot(sum_sb) + dy2 * x.sum_s - 2 * x.delta.dot(sum_ta) +
           4 * x.delta.dot(cross_ab * y.delta) + dx2 * y.sum_s - 3 * n * dx2 * dy2;
}

/// Kornblith et al.'s feature-space form of the unbiased HSIC (up to the 1/(n(n−3)) that cancels),
/// and a bound on its rounding: the three terms are of order ‖x‖⁴ and their difference can be far
/// smaller, so what double loses is 2·10⁻¹⁴ of the largest term (about a hundred ulps: each term
/// is a sum over the vectors). An outlier of 10⁸ among values of order 1 made that two digits of
/// a score, 10¹² all of them. The biased linear CKA has no such difference.
struct UnbiasedHsic {
    double value, rounding;
};
UnbiasedHsic hsic_unbiased(double xty_sq, double rr, double tx, double ty, double n) {
    const double first = xty_sq, second = n / (n - 2) * rr, third = tx * ty / ((n - 1) * (n - 2));
    return {first - second + third,
            2e-14 * std::max({std::abs(first), std::abs(second), std::abs(third)})};
}

/// The unbiased CKA, or NaN where rounding could move it by more than 10⁻⁶: HSIC(X, X) or
/// HSIC(Y, Y) not resolved to 10⁻⁶ of itself, or HSIC(X, Y) not to 10⁻⁶ of their geometric mean
/// (a cross term near 0, two unrelated layers, is a score near 0, not a loss of precision).
double cka_unbiased(const UnbiasedHsic& xy, const UnbiasedHsic& xx, const UnbiasedHsic& yy) {
    // The geometric mean as √a·√b: a·b overflows for vectors of order 10³⁸ (HSIC(X, X) ~ ‖X‖⁴)
    // and underflows into double's subnormals for vectors of order 10⁻⁴⁰.
    const double scale = std::sqrt(xx.value) * std::sqrt(yy.value);
    if (!(xx.rounding <= 1e-6 * xx.value) || !(yy.rounding <= 1e-6 * yy.value) ||
        !(xy.rounding <= 1e-6 * scale))
        return std::numeric_limits<double>::quiet_NaN();
    return xy.value / scale;
}

/// Whitening on the leading directions: columns v_k / sqrt(λ_k), k < count.
MatrixXd whitening(const LayerMoments& m, Index count) {
    return m.eigenvectors.leftCols(count) *
           m.eigenvalues.head(count).cwiseSqrt().cwiseInverse().asDiagonal();
}

/// An eigenvalue not above this share of the largest is a direction without variance (rounding
/// noise of a constant or duplicated unit): SVCCA, PWCCA and the canonical scatter leave it out.
constexpr double kNoVarianceShare = 1e-10;

/// The directions SVCCA keeps: the leading ones that reach `share` of the variance, less any
/// without variance (at share 1 a rank-deficient layer's rounding eigenvalue was kept, and its
/// meaningless canonical correlation entered the mean); 0 for a layer without variance (every
/// eigenvalue 0), whose whitening would divide by 0 and whose scores are null.
Index svcca_dims(const LayerMoments& m, double share) {
    const double total = m.eigenvalues.cwiseMax(0.0).sum();
    if (!(total > 0) || !(m.trace > 0)) return 0;
    const double top = m.eigenvalues[0];
    double cum = 0;
    Index k = 0;
    while (k < m.eigenvalues.size()) {
        cum += std::max(0.0, m.eigenvalues[k]);
        ++k;
        if (cum >= share * total) break;
    }
    while (k > 0 && !(m.eigenvalues[k - 1] > kNoVarianceShare * top))
        --k;
    return k;
}

Index rank_of(const LayerMoments& m) {
    const double top = m.eigenvalues.size() ? m.eigenvalues[0] : 0.0;
    Index r = 0;
    while (r < m.eigenvalues.size() && m.eigenvalues[r] > kNoVarianceShare * top)
        ++r;
    return r;
}

/// PWCCA from the covariances: whiten each side on its range, M = Wxᵀ C Wy; canonical variates of
/// the side with fewer dimensions (x when equal) h_i = X̃ u_i (unit norm); their loadings on the
/// side's centred columns are C_xx u_i = V Λ^{1/2} U_i.
double pwcca_of(const LayerMoments& x, const LayerMoments& y, const MatrixXd& cxy) {
    const bool x_side = x.cov.rows() <= y.cov.rows();
    const LayerMoments& side = x_side ? x : y;
    const Index rx = rank_of(x), ry = rank_of(y);
    if (rx == 0 || ry == 0) return std::numeric_limits<double>::quiet_NaN();
    const MatrixXd m = whitening(x, rx).transpose() * cxy * whitening(y, ry);
    const MatrixXd g = x_side ? MatrixXd(m * m.transpose()) : MatrixXd(m.transpose() * m);
    const SymmetricEigen e = symmetric_eigen(g, true);  // ascending
    const Index count = std::min(rx, ry), size = g.rows();
    const Index r_side = x_side ? rx : ry;
    const MatrixXd loadings = side.eigenvectors.leftCols(r_side) *
                              side.eigenvalues.head(r_side).cwiseSqrt().asDiagonal() *
                              e.vectors.rightCols(count);
    double num = 0, den = 0;
    for (Index i = 0; i < count; ++i) {
        const double rho = std::sqrt(std::max(0.0, e.values[size - count + i]));
        const double alpha = loadings.col(i).cwiseAbs().sum();
        num += alpha * rho;
        den += alpha;
    }
    return num / den;
}

// ------------------------------------------------------------------ cancel and progress

/// The run's steps (chunks, layer pairs, Grams, resamples) against options.cancelled and
/// options.progress.
class Steps {
public:
    explicit Steps(const SimilarityOptions& o) : o_(o) {}
    /// Throws Cancelled when the hook says so (any thread).
    void check() const {
        if (o_.cancelled && o_.cancelled()) throw Cancelled("similarity: cancelled");
    }
    /// Whether the run is cancelled, for the jobs of a parallel loop (which must not throw).
    bool cancelled() const { return o_.cancelled && o_.cancelled(); }
    void set_total(std::int64_t total) {
        total_ = std::max<std::int64_t>(1, total);
        report();
    }
    /// One step done (calling thread only): reported, then the cancel checked.
    void step(std::int64_t k = 1) {
        done_ = std::min(total_, done_ + k);
        report();
        check();
    }

private:
    void report() const {
        if (o_.progress) o_.progress(done_, total_);
    }
    const SimilarityOptions& o_;
    std::int64_t done_ = 0, total_ = 1;
};

// ------------------------------------------------------------------ Gram-sample statistics

/// The Gram matrix of the n Gram-sample vectors, centred (H K H), as one column of n² values.
/// For the RBF kernel, `no_bandwidth` is set (and the column is all zeros, so every score of the
/// layer is null) when the median squared distance is 0 while some vectors differ.
VectorXd centred_gram(const MatrixXdR& x, bool rbf, bool* no_bandwidth = nullptr) {
    const Index n = x.rows();
    // Centred first for both kernels: the RBF's distances ‖x‖² + ‖y‖² − 2xᵀy of vectors far from
    // the origin (a coordinate of 1e5 beside a spread of 1e-3) cancelled to noise; the distances
    // themselves do not change.
    const MatrixXd xd = x;
    const MatrixXd c = xd.rowwise() - xd.colwise().mean();
    MatrixXd k;
    if (!rbf) {
        k = c * c.transpose();
    } else {
        const VectorXd sq = c.rowwise().squaredNorm();
        MatrixXd dist = -2.0 * c * c.transpose();
        dist.colwise() += sq;
        dist.rowwise() += sq.transpose();
        dist = dist.cwiseMax(0.0);
        dist.diagonal().setZero();
        // ‖x‖² + ‖y‖² − 2xᵀy of two equal vectors rounds to ~1e-16 of their norms, not 0: a
        // median of such pairs was rounding noise taken as the bandwidth. Distances that small
        // are taken again as ‖x − y‖², exact for equal vectors (few pairs, so little work).
        for (Index i = 0; i < n; ++i)
            for (Index j = 0; j < i; ++j)
                if (dist(i, j) <= 1e-9 * (sq[i] + sq[j]))
                    dist(i, j) = dist(j, i) = (c.row(i) - c.row(j)).squaredNorm();
        std::vector<double> all(dist.data(), dist.data() + dist.size());
        // numpy.median of n² values: the mean of the two middle ones when n² is even.
        const std::size_t half = all.size() / 2;
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(half), all.end());
        double median = all[half];
        if (all.size() % 2 == 0)
            median =
                0.5 * (median + *std::max_element(all.begin(),
                                                  all.begin() + static_cast<std::ptrdiff_t>(half)));
        // σ² = 0: K = exp(−D/0) is undefined. With every vector equal (D = 0) any σ gives the
        // all-ones K, centred to 0; with more than half the pairs coinciding but some not (an
        // embedding layer of repeated tokens), a stand-in σ² = 1 gave a finite score that changed
        // with the layer's scale (RBF CKA of A and 1000·A: 0.66): the layer's column is zero, so
        // its scores are null, and the caller says why.
        if (!(median > 0)) {
            if (dist.maxCoeff() > 0) {
                if (no_bandwidth) *no_bandwidth = true;
                return VectorXd::Zero(n * n);
            }
            median = 1.0;
        }
        k = (-dist / (2.0 * median)).array().exp().matrix();
    }
    const VectorXd row_mean = k.rowwise().mean();
    const double grand = row_mean.mean();
    k.colwise() -= row_mean;
    k.rowwise() -= row_mean.transpose();
    k.array() += grand;
    return Eigen::Map<const VectorXd>(k.data(), n * n);
}

double percentile(std::vector<double> v, double q) {
    // numpy.percentile's default (linear interpolation between the closest ranks).
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

/// Observed CKA, the permutation null and the bootstrap interval for every layer pair, from the
/// stacked centred Grams of A (n² × |A|) and B (n² × |B|).
GramStatistics gram_statistics(const MatrixXd& ga, const MatrixXd& gb, Index n, int permutations,
                               int bootstrap, std::uint64_t seed, Steps& steps) {
    const Index na = ga.cols(), nb = gb.cols();
    const VectorXd norm_a = ga.colwise().norm().transpose(),
                   norm_b = gb.colwise().norm().transpose();
    auto cka = [&](const MatrixXd& dots) {
        MatrixXd out(na, nb);
        for (Index i = 0; i < na; ++i)
            for (Index j = 0; j < nb; ++j) {
                const double den = norm_a[i] * norm_b[j];
                // In [0, 1] (an inner product of two centred kernel matrices over their norms):
                // rounding put X against itself at 1.0000000000000002.
                out(i, j) = den > 0 ? std::clamp(dots(i, j) / den, 0.0, 1.0)
                                    : std::numeric_limits<double>::quiet_NaN();
            }
        return out;
    };
    const MatrixXd observed = cka(ga.transpose() * gb);
    GramStatistics s;
    auto as_rows = [&](const MatrixXd& m) {
        LayerMatrix out(static_cast<std::size_t>(na),
                        std::vector<double>(static_cast<std::size_t>(nb)));
        for (Index i = 0; i < na; ++i)
            for (Index j = 0; j < nb; ++j)
                out[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = m(i, j);
        return out;
    };
    s.observed = as_rows(observed);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::mt19937_64 rng(seed ^ 0x5133a5e5u);
    // Null: B's Grams with rows and columns permuted together (π applied to the examples).
    MatrixXd sum = MatrixXd::Zero(na, nb), sum_sq = MatrixXd::Zero(na, nb),
             exceed = MatrixXd::Zero(na, nb);
    MatrixXd permuted(n * n, nb);
    std::vector<Index> pi(static_cast<std::size_t>(n));
    for (int k = 0; k < permutations; ++k) {
        std::iota(pi.begin(), pi.end(), Index{0});
        for (Index i = n - 1; i > 0; --i)  // Fisher–Yates with rng() % (i + 1)
            std::swap(pi[static_cast<std::size_t>(i)],
                      pi[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(i + 1))]);
        for (Index c = 0; c < nb; ++c)
            for (Index j = 0; j < n; ++j) {
                const Index pj = pi[static_cast<std::size_t>(j)];
                for (Index i = 0; i < n; ++i)
                    permuted(j * n + i, c) = gb(pj * n + pi[static_cast<std::size_t>(i)], c);
            }
        const MatrixXd null = cka(ga.transpose() * permuted);
        sum += null;
        sum_sq += null.cwiseProduct(null);
        exceed += (null.array() >= observed.array()).cast<double>().matrix();
        steps.step();
    }
    if (permutations > 0) {
        const double k = permutations;
        const MatrixXd mean = sum / k;
        const MatrixXd var = (sum_sq / k - mean.cwiseProduct(mean)).cwiseMax(0.0);
        s.null_mean = as_rows(mean);
        s.null_std = as_rows(var.cwiseSqrt());
        // No p-value for a score that does not exist (a layer without variance).
        s.p_value =
            as_rows(observed.array().isNaN().select(nan, (exceed.array() + 1.0) / (k + 1.0)));
    } else {
        s.null_mean = s.null_std = s.p_value = as_rows(MatrixXd::Constant(na, nb, nan));
    }
    // Bootstrap: resample the n examples with replacement (weights w); for a centred Gram K the
    // resample recentred is H K[idx, idx] H, and ⟨HKH, HLH⟩ = Σ w_u w_v K_uv L_uv − (2/n) Σ_u w_u
    // (Kw)_u (Lw)_u + (wᵀKw)(wᵀLw)/n².
    std::vector<MatrixXd> boot;
    if (bootstrap > 0) {
        VectorXd w(n);
        MatrixXd wa(n * n, na);
        for (int b = 0; b < bootstrap; ++b) {
            w.setZero();
            for (Index i = 0; i < n; ++i)
                w[static_cast<Index>(rng() % static_cast<std::uint64_t>(n))] += 1.0;
            const VectorXd ww =
                Eigen::Map<const VectorXd>(MatrixXd(w * w.transpose()).data(), n * n);
            for (Index c = 0; c < na; ++c)
                wa.col(c) = ga.col(c).cwiseProduct(ww);
            const MatrixXd cross = wa.transpose() * gb;  // Σ w_u w_v K_uv L_uv
            auto terms = [&](const MatrixXd& g, Index cols, VectorXd& self) {
                MatrixXd kw(n, cols);
                self.resize(cols);
                for (Index c = 0; c < cols; ++c) {
                    const Eigen::Map<const MatrixXd> k(g.col(c).data(), n, n);
                    kw.col(c) = k * w;
                    self[c] = (g.col(c).array().square() * ww.array()).sum();
                }
                return kw;
            };
            VectorXd self_a, self_b;
            const MatrixXd kwa = terms(ga, na, self_a), kwb = terms(gb, nb, self_b);
            const double nn = static_cast<double>(n);
            auto centred_dot = [&](double direct, const VectorXd& ka, const VectorXd& kb) {
                return direct - 2.0 / nn * (w.array() * ka.array() * kb.array()).sum() +
                       w.dot(ka) * w.dot(kb) / (nn * nn);
            };
            MatrixXd value(na, nb);
            for (Index i = 0; i < na; ++i) {
                const double xx = centred_dot(self_a[i], kwa.col(i), kwa.col(i));
                for (Index j = 0; j < nb; ++j) {
                    const double yy = centred_dot(self_b[j], kwb.col(j), kwb.col(j));
                    const double xy = centred_dot(cross(i, j), kwa.col(i), kwb.col(j));
                    value(i, j) = xx > 0 && yy > 0
                                      ? std::clamp(xy / (std::sqrt(xx) * std::sqrt(yy)), 0.0, 1.0)
                                      : nan;
                }
            }
            boot.push_back(value);
            steps.step();
        }
    }
    s.ci_low = s.ci_high = as_rows(MatrixXd::Constant(na, nb, nan));
    if (!boot.empty())
        for (Index i = 0; i < na; ++i)
            for (Index j = 0; j < nb; ++j) {
                std::vector<double> v;
                for (const auto& m : boot)
                    if (std::isfinite(m(i, j))) v.push_back(m(i, j));
                if (v.empty()) continue;
                s.ci_low[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
                    percentile(v, 0.025);
                s.ci_high[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
                    percentile(v, 0.975);
            }
    return s;
}

nlohmann::json number_or_null(double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

nlohmann::json matrix_json(const LayerMatrix& m) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : m) {
        nlohmann::json r = nlohmann::json::array();
        for (double v : row)
            r.push_back(number_or_null(v));
        out.push_back(r);
    }
    return out;
}

// "layer 3 of A (FILE)" or "layers 1, 2 of A (FILE)": the layers `picked` (indices into `sources`)
// of one dump, as a note names them.
std::string layers_of_dump(const char* which, const std::vector<LayerSource>& sources,
                           const std::vector<std::size_t>& picked) {
    std::string layers;
    for (const std::size_t k : picked)
        layers += (layers.empty() ? "" : ", ") + str(sources[k].layer);
    return std::string(picked.size() == 1 ? "layer " : "layers ") + layers + " of " + which + " (" +
           sources.front().dump->path() + ")";
}

nlohmann::json gram_json(const GramStatistics& g) {
    return {{"observed", matrix_json(g.observed)}, {"null_mean", matrix_json(g.null_mean)},
            {"null_std", matrix_json(g.null_std)}, {"p_value", matrix_json(g.p_value)},
            {"ci_low", matrix_json(g.ci_low)},     {"ci_high", matrix_json(g.ci_high)}};
}

}  // namespace

const std::vector<std::string>& similarity_measures() {
    return kMeasures;
}

SimilarityResult representation_similarity(const DumpReader& a, const DumpReader& b,
                                           const SimilarityOptions& options) {
    use_one_blas_thread();
    Steps steps(options);
    steps.check();
    SimilarityResult r;
    r.options = options;
    r.options.cancelled = nullptr;  // the caller's hooks, which may not outlive the call
    r.options.progress = nullptr;
    r.measures = options.measures.empty() ? kMeasures : options.measures;
    for (std::size_t k = 0; k < r.measures.size(); ++k) {
        const std::string& m = r.measures[k];
        if (!wants(kMeasures, m))
            throw ConfigError("similarity: unknown measure '" + m +
                              "' (linear_cka, linear_cka_unbiased, rbf_cka, svcca, pwcca, "
                              "procrustes)");
        // Named twice, the second entry's matrix stayed null while the first got the scores
        // (the JSON, keyed by name, kept the null): refused, as a list option's repeats are.
        if (std::find(r.measures.begin(), r.measures.begin() + static_cast<std::ptrdiff_t>(k), m) !=
            r.measures.begin() + static_cast<std::ptrdiff_t>(k))
            throw ConfigError("similarity: --measures names '" + m + "' twice; name each once");
    }
    if (options.max_vectors < 4) throw ConfigError("similarity: --max-vectors must be at least 4");
    if (!(options.svcca_variance > 0 && options.svcca_variance <= 1))
        throw ConfigError("similarity: --svcca-variance must lie in (0, 1]");
    if (options.permutations < 0 || options.bootstrap < 0)
        throw ConfigError("similarity: --permutations and --bootstrap cannot be negative");
    // As the two above (-1 was taken for 0, with a note, exit 0).
    if (options.gram_m < 0) throw ConfigError("similarity: --gram-m cannot be negative");
    const bool tokens = !options.sentence_vectors;
    check_same_examples(a, b, tokens);
    r.layers_a = chosen_layers(a, options.layers_a);
    r.layers_b = chosen_layers(b, options.layers_b);

    std::vector<LayerSource> src_a, src_b;
    for (int l : r.layers_a)
        src_a.push_back({&a, l, rows_of_examples(a, l), a.width()});
    for (int l : r.layers_b)
        src_b.push_back({&b, l, rows_of_examples(b, l), b.width()});
    if (options.min_length < 0 || options.max_length < 0 ||
        (options.max_length > 0 && options.max_length < options.min_length))
        throw ConfigError("similarity: the length range " + str(options.min_length) + ".." +
                          str(options.max_length) + " is empty");
    // Examples stored by every chosen layer of both dumps, with at least one real token (and
    // within the length range when one is given).
    std::vector<std::int64_t> common;
    for (std::int64_t e = 0; e < a.examples(); ++e) {
        const std::int64_t len = a.lengths()[static_cast<std::size_t>(e)];
        bool in_all = len > 0 && len >= options.min_length &&
                      (options.max_length == 0 || len <= options.max_length);
        for (const auto* list : {&src_a, &src_b})
            for (const auto& s : *list)
                in_all = in_all && s.row_of[static_cast<std::size_t>(e)] >= 0;
        if (in_all) common.push_back(e);
    }
    std::mt19937_64 rng(options.seed);
    if (tokens) {
        std::vector<std::int64_t> starts{0};
        for (auto e : common)
            starts.push_back(starts.back() + a.lengths()[static_cast<std::size_t>(e)]);
        r.available = starts.back();
        for (auto flat : sample_indices(r.available, options.max_vectors, rng)) {
            const auto k = static_cast<std::size_t>(
                std::upper_bound(starts.begin(), starts.end(), flat) - starts.begin() - 1);
            r.examples.push_back(common[k]);
            r.positions.push_back(flat - starts[k]);
        }
    } else {
        r.available = static_cast<std::int64_t>(common.size());
        for (auto k : sample_indices(r.available, options.max_vectors, rng))
            r.examples.push_back(common[static_cast<std::size_t>(k)]);
    }
    const auto n_vectors = static_cast<std::int64_t>(r.examples.size());
    const double n = static_cast<double>(n_vectors);
    if (n_vectors < 4)
        throw ConfigError(a.path() + " and " + b.path() + ": only " + str(n_vectors) +
                          " vectors are common to the chosen layers" +
                          (options.min_length > 0 || options.max_length > 0
                               ? " among the examples of lengths " + str(options.min_length) +
                                     " to " + str(options.max_length)
                               : std::string()) +
                          "; similarity needs at least 4");
    bool cca = wants(r.measures, "svcca") || wants(r.measures, "pwcca");
    if (cca && n_vectors <= a.width() + b.width() && options.measures.empty()) {
        // Not asked for by name: the other measures run, and the result says why these did not.
        r.notes.push_back("SVCCA and PWCCA left out: " + str(n_vectors) +
                          " vectors are not more than d = " + str(a.width()) + " + " +
                          str(b.width()) +
                          " (their canonical correlations would be 1 by "
                          "construction)");
        std::erase_if(r.measures,
                      [](const std::string& m) { return m == "svcca" || m == "pwcca"; });
        cca = false;
    }
    if (cca && n_vectors <= a.width() + b.width())
        throw ConfigError(
            "similarity: SVCCA and PWCCA need more vectors than dimensions, and there "
            "are fewer: " +
            str(n_vectors) + " vectors against d = " + str(a.width()) + " + " + str(b.width()) +
            " (sample more with --max-vectors, dump more examples, or leave them "
            "out with --measures linear_cka,linear_cka_unbiased,rbf_cka,procrustes)");

    // The Gram sample: one entry per example, examples in random order, the first n kept.
    {
        std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> by_example;
        for (std::int64_t i = 0; i < n_vectors; ++i) {
            const auto e = r.examples[static_cast<std::size_t>(i)];
            if (by_example.empty() || by_example.back().first != e) by_example.push_back({e, {}});
            by_example.back().second.push_back(i);
        }
        for (std::size_t i = by_example.size(); i > 1; --i)
            std::swap(by_example[i - 1], by_example[rng() % i]);
        const auto keep = std::min<std::size_t>(
            by_example.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, options.gram_m)));
        for (std::size_t i = 0; i < keep; ++i) {
            const auto& entries = by_example[i].second;
            r.gram_sample.push_back(entries[rng() % entries.size()]);
        }
        std::sort(r.gram_sample.begin(), r.gram_sample.end());
    }

    steps.check();

    // ---- streamed pass(es): layers of A in groups whose pair accumulators fit the budget.
    const bool feature_measures = wants(r.measures, "linear_cka") ||
                                  wants(r.measures, "linear_cka_unbiased") || cca ||
                                  wants(r.measures, "procrustes");
    const std::size_t na = src_a.size(), nb = src_b.size();
    const auto gn = static_cast<Index>(r.gram_sample.size());
    // Fewer than 4 examples for the Gram sample: RBF CKA, when not asked for by name, is left out
    // with a note, as SVCCA and PWCCA are (a 3-example dump was refused outright, with advice,
    // --gram-m, that could not help).
    const std::string gram_short =
        "the Gram sample has " + str(gn) + " examples, fewer than 4 (" +
        (gn < options.gram_m ? "the dumps hold no more in common: dump more examples"
                             : "raise --gram-m") +
        ")";
    if (gn < 4 && wants(r.measures, "rbf_cka") && options.measures.empty()) {
        r.notes.push_back("RBF CKA left out: " + gram_short);
        std::erase_if(r.measures, [](const std::string& m) { return m == "rbf_cka"; });
    }
    // The observed score on the Gram sample (gram.linear_cka.observed) is part of the result
    // whether or not a null or an interval is asked for, as RBF CKA's is.
    const bool linear_gram = wants(r.measures, "linear_cka") && gn >= 4;
    const bool rbf = wants(r.measures, "rbf_cka");
    const std::size_t chunk = static_cast<std::size_t>(std::max<std::int64_t>(16, options.chunk));
    const double pair_bytes_per_a = 8.0 * static_cast<double>(a.width() * b.width()) * nb;
    const auto per_group = static_cast<std::size_t>(std::max(
        1.0, std::floor(static_cast<double>(options.accumulator_bytes) / pair_bytes_per_a)));
    {
        // The steps: every chunk of every pass, every layer pair; each Gram, permutation and
        // resample of the linear and the RBF Gram statistics.
        std::int64_t total = 0;
        if (feature_measures) {
            const auto passes = static_cast<std::int64_t>((na + per_group - 1) / per_group);
            const auto chunks = static_cast<std::int64_t>((r.examples.size() + chunk - 1) / chunk);
            total += passes * chunks + static_cast<std::int64_t>(na * nb);
        }
        const std::int64_t per_gram =
            static_cast<std::int64_t>(na + nb) + options.permutations + options.bootstrap;
        total += (linear_gram && gn >= 4 ? per_gram : 0) + (rbf && gn >= 4 ? per_gram : 0);
        steps.set_total(total);
    }
    r.values.assign(
        r.measures.size(),
        LayerMatrix(na, std::vector<double>(nb, std::numeric_limits<double>::quiet_NaN())));
    auto set_value = [&](const std::string& m, std::size_t i, std::size_t j, double v) {
        const auto k = static_cast<std::size_t>(std::find(r.measures.begin(), r.measures.end(), m) -
                                                r.measures.begin());
        if (k < r.measures.size()) r.values[k][i][j] = v;
    };
    if (feature_measures) {
        std::vector<LayerMoments> moments_b(nb);
        std::vector<LayerAccumulator> acc_b(nb);
        std::vector<std::size_t> constant_a, constant_b;  // layers without variance
        std::int64_t cancelled_unbiased = 0;  // pairs whose unbiased HSIC double cannot resolve
        for (std::size_t g0 = 0; g0 < na; g0 += per_group) {
            const std::size_t g1 = std::min(na, g0 + per_group);
            const bool first_pass = g0 == 0;
            std::vector<LayerAccumulator> acc_a(g1 - g0);
            std::vector<PairAccumulator> pairs((g1 - g0) * nb);
            for (std::size_t begin = 0; begin < r.examples.size(); begin += chunk) {
                const std::size_t end = std::min(r.examples.size(), begin + chunk);
                std::vector<Chunk> xa, xb;
                for (std::size_t i = g0; i < g1; ++i) {
                    const MatrixXdR v = read_vectors(src_a[i], r, begin, end,
                                                     begin == 0 ? &r.vector_source_a : nullptr);
                    check_finite(v, src_a[i]);
                    xa.push_back(shifted_chunk(v, acc_a[i - g0]));
                }
                for (std::size_t j = 0; j < nb; ++j) {
                    const MatrixXdR v = read_vectors(src_b[j], r, begin, end,
                                                     begin == 0 ? &r.vector_source_b : nullptr);
                    check_finite(v, src_b[j]);
                    xb.push_back(shifted_chunk(v, acc_b[j]));
                }
                const auto jobs = static_cast<std::int64_t>(xa.size() * nb);
                const auto self_jobs = static_cast<std::int64_t>(xa.size() + (first_pass ? nb : 0));
                std::atomic<bool> stop{false};  // a job that saw the cancel skips the rest
#pragma omp parallel for schedule(dynamic)
                for (std::int64_t k = 0; k < jobs + self_jobs; ++k) {
                    if (stop.load(std::memory_order_relaxed)) continue;
                    if (steps.cancelled()) {
                        stop = true;
                        continue;
                    }
                    if (k < jobs) {
                        const auto i = static_cast<std::size_t>(k) / nb,
                                   j = static_cast<std::size_t>(k) % nb;
                        accumulate_pair(pairs[static_cast<std::size_t>(k)], xa[i], xb[j]);
                    } else if (const auto s = static_cast<std::size_t>(k - jobs); s < xa.size()) {
                        accumulate_layer(acc_a[s], xa[s]);
                    } else {
                        accumulate_layer(acc_b[s - xa.size()], xb[s - xa.size()]);
                    }
                }
                if (stop) throw Cancelled("similarity: cancelled");
                steps.step();
            }
            if (first_pass)
                for (std::size_t j = 0; j < nb; ++j) {
                    steps.check();
                    moments_b[j] = finish_layer(acc_b[j], n, cca);
                }
            if (first_pass)
                for (std::size_t j = 0; j < nb; ++j)
                    if (!(moments_b[j].trace > 0)) constant_b.push_back(j);
            for (std::size_t i = g0; i < g1; ++i) {
                steps.check();
                const LayerMoments x = finish_layer(acc_a[i - g0], n, cca);
                if (!(x.trace > 0)) constant_a.push_back(i);
                for (std::size_t j = 0; j < nb; ++j) {
                    const LayerMoments& y = moments_b[j];
                    const PairAccumulator& p = pairs[(i - g0) * nb + j];
                    const MatrixXd cxy = p.cross - n * x.delta * y.delta.transpose();
                    const double xty = cxy.squaredNorm();
                    const double xx = x.cov.norm(), yy = y.cov.norm();
                    set_value("linear_cka", i, j, std::clamp(xty / (xx * yy), 0.0, 1.0));
                    if (wants(r.measures, "linear_cka_unbiased")) {
                        const double rxy = sum_rr(x, y, p.sum_st, p.sum_sb, p.sum_ta, p.cross, n);
                        const double rxx = sum_rr(x, x, x.sum_ss, x.sum_sa, x.sum_sa,
                                                  x.cov + n * x.delta * x.delta.transpose(), n);
                        const double ryy = sum_rr(y, y, y.sum_ss, y.sum_sa, y.sum_sa,
                                                  y.cov + n * y.delta * y.delta.transpose(), n);
                        const double v =
                            cka_unbiased(hsic_unbiased(xty, rxy, x.trace, y.trace, n),
                                         hsic_unbiased(xx * xx, rxx, x.trace, x.trace, n),
                                         hsic_unbiased(yy * yy, ryy, y.trace, y.trace, n));
                        // (a constant layer's NaN is said by the note on constant layers)
                        if (std::isnan(v) && x.trace > 0 && y.trace > 0) ++cancelled_unbiased;
                        set_value("linear_cka_unbiased", i, j, v);
                    }
                    if (wants(r.measures, "procrustes"))
                        // Clamped to [0, 2]: the square roots of rounded eigenvalues of a
                        // rank-deficient CᵀC can push the identical case a hair below 0.
                        set_value("procrustes", i, j,
                                  std::clamp(2.0 - 2.0 * singular_values(cxy).sum() /
                                                       (std::sqrt(x.trace) * std::sqrt(y.trace)),
                                             0.0, 2.0));
                    if (wants(r.measures, "svcca")) {
                        const Index kx = svcca_dims(x, options.svcca_variance),
                                    ky = svcca_dims(y, options.svcca_variance);
                        if (j == 0) r.svcca_dims_a.push_back(static_cast<int>(kx));
                        if (i == 0) r.svcca_dims_b.push_back(static_cast<int>(ky));
                        // A layer without variance keeps no direction: its score is null, said
                        // by the note on constant layers (the whitening divided by 0, and dgesdd
                        // refused the NaNs: "info -4").
                        if (kx > 0 && ky > 0) {
                            const VectorXd rho = singular_values(whitening(x, kx).transpose() *
                                                                 cxy * whitening(y, ky));
                            set_value("svcca", i, j, rho.head(std::min(kx, ky)).mean());
                        }
                    }
                    if (wants(r.measures, "pwcca")) set_value("pwcca", i, j, pwcca_of(x, y, cxy));
                    steps.step();
                }
            }
        }
        if (cancelled_unbiased > 0)
            r.notes.push_back(
                "linear_cka_unbiased of " + str(cancelled_unbiased) +
                (cancelled_unbiased == 1 ? " pair" : " pairs") +
                " not reported (null): the unbiased HSIC is a difference of terms that cancel "
                "beyond the precision of double here (values of very different magnitudes, such "
                "as an outlier); linear_cka is not affected");
        // A layer whose sampled vectors are all equal (a zeroed or constant layer) has no
        // similarity to anything: its scores are null, said here rather than left unexplained.
        // One note per dump, listing its layers.
        for (const auto& [which, sources, constant] :
             {std::tuple{"A", &src_a, &constant_a}, std::tuple{"B", &src_b, &constant_b}}) {
            if (constant->empty()) continue;
            const bool one = constant->size() == 1;
            r.notes.push_back(layers_of_dump(which, *sources, *constant) + " " +
                              (one ? "has" : "have") +
                              " no variance: " + (one ? "its " : "each one's ") + str(n_vectors) +
                              " sampled vectors are all equal, so " + (one ? "its" : "their") +
                              " scores are undefined (null)");
        }
    } else {
        r.vector_source_a = r.vector_source_b = tokens ? "token" : "";
    }

    // ---- the Gram sample: RBF CKA, and the null and bootstrap of linear and RBF CKA.
    if (wants(r.measures, "linear_cka") && gn < 4)
        r.notes.push_back("no permutation null or bootstrap interval: " + gram_short);
    if ((linear_gram || rbf) && gn < 4)
        throw ConfigError("similarity: RBF CKA needs at least 4 examples in its Gram sample: " +
                          gram_short);
    for (const bool use_rbf : {false, true}) {
        if (use_rbf ? !rbf : !linear_gram) continue;
        MatrixXd ga(gn * gn, static_cast<Index>(na)), gb(gn * gn, static_cast<Index>(nb));
        std::vector<std::size_t> no_bandwidth_a, no_bandwidth_b;
        for (std::size_t i = 0; i < na; ++i) {
            const MatrixXdR v = read_gram_vectors(src_a[i], r);
            check_finite(v, src_a[i]);
            bool none = false;
            ga.col(static_cast<Index>(i)) = centred_gram(v, use_rbf, &none);
            if (none) no_bandwidth_a.push_back(i);
            steps.step();
        }
        for (std::size_t j = 0; j < nb; ++j) {
            const MatrixXdR v = read_gram_vectors(src_b[j], r);
            check_finite(v, src_b[j]);
            bool none = false;
            gb.col(static_cast<Index>(j)) = centred_gram(v, use_rbf, &none);
            if (none) no_bandwidth_b.push_back(j);
            steps.step();
        }
        for (const auto& [which, sources, layers_of] :
             {std::tuple{"A", &src_a, &no_bandwidth_a}, std::tuple{"B", &src_b, &no_bandwidth_b}}) {
            if (layers_of->empty()) continue;
            r.notes.push_back("rbf_cka: " + layers_of_dump(which, *sources, *layers_of) +
                              ": more than half the pairs of the " + str(gn) +
                              " Gram-sample vectors coincide, so the median squared distance "
                              "(the RBF bandwidth σ²) is 0 and RBF CKA is undefined (null)");
        }
        GramStatistics g = gram_statistics(ga, gb, gn, options.permutations, options.bootstrap,
                                           options.seed + (use_rbf ? 1 : 0), steps);
        // Resampling with replacement repeats examples, and a repeated example agrees with
        // itself: the resampled CKA runs above the score, the more so the fewer the examples (a
        // probe's 16 examples put 622 of 624 scores below their whole interval). Said where it
        // happens, so the interval is not read as a confidence interval of the score.
        std::size_t outside = 0, cells = 0;
        for (std::size_t i = 0; i < na; ++i)
            for (std::size_t j = 0; j < nb; ++j) {
                const double x = g.observed[i][j], lo = g.ci_low[i][j], hi = g.ci_high[i][j];
                if (!std::isfinite(x) || !std::isfinite(lo) || !std::isfinite(hi)) continue;
                ++cells;
                // Beyond rounding (a score of 1 − 1.4e-15 under an interval from 1 − 1.3e-15).
                outside += x < lo - 1e-12 || x > hi + 1e-12;
            }
        if (outside > 0)
            r.notes.push_back(std::string(use_rbf ? "rbf_cka" : "linear_cka") +
                              ": the score lies outside its bootstrap interval in " +
                              std::to_string(outside) + " of " + std::to_string(cells) +
                              " layer pairs (resamples of " + std::to_string(gn) +
                              " examples repeat some, raising CKA; docs/analyses.md)");
        if (use_rbf) {
            for (std::size_t i = 0; i < na; ++i)
                for (std::size_t j = 0; j < nb; ++j)
                    set_value("rbf_cka", i, j, g.observed[i][j]);
            r.rbf_gram = std::move(g);
            r.has_rbf_gram = true;
        } else {
            r.linear_gram = std::move(g);
            r.has_linear_gram = true;
        }
    }

    r.provenance.analysis = "similarity";
    r.provenance.inputs.push_back(dump_input(a, "dump_a"));
    r.provenance.inputs.push_back(dump_input(b, "dump_b"));
    r.provenance.parameters = {{"vectors", tokens ? "token" : "sentence"},
                               {"max_vectors", options.max_vectors},
                               {"seed", options.seed},
                               {"layers_a", r.layers_a},
                               {"layers_b", r.layers_b},
                               {"measures", r.measures},
                               {"gram_m", options.gram_m},
                               {"permutations", options.permutations},
                               {"bootstrap", options.bootstrap},
                               {"svcca_variance", options.svcca_variance},
                               {"min_length", options.min_length},
                               {"max_length", options.max_length},
                               {"rbf_bandwidth", "median pairwise distance"},
                               {"interval", "bootstrap percentile 2.5-97.5 over examples"}};
    return r;
}

std::vector<std::pair<std::int64_t, std::int64_t>> length_bins(const DumpReader& a, int k) {
    if (k < 1) throw ConfigError("similarity: --length-bins must be at least 1");
    std::vector<std::int64_t> lens;
    for (auto l : a.lengths())
        if (l > 0) lens.push_back(l);
    if (lens.empty()) throw ConfigError(a.path() + ": no example has a real token");
    std::sort(lens.begin(), lens.end());
    const auto n = static_cast<std::int64_t>(lens.size());
    std::vector<std::pair<std::int64_t, std::int64_t>> bins;
    std::int64_t lo = lens.front();
    for (int b = 1; b <= k; ++b) {
        // The upper edge: the length at the b-th k-quantile; a bin ends below the next bin's
        // first length, so equal lengths stay together.
        const std::int64_t at = std::min(n - 1, (static_cast<std::int64_t>(b) * n) / k);
        const std::int64_t next = b == k ? lens.back() + 1 : lens[static_cast<std::size_t>(at)];
        if (next <= lo) continue;
        bins.emplace_back(lo, next - 1);
        lo = next;
    }
    if (bins.empty() || bins.back().second < lens.back()) bins.emplace_back(lo, lens.back());
    return bins;
}

nlohmann::json SimilarityResult::to_json() const {
    nlohmann::json measures_json = nlohmann::json::object();
    for (std::size_t k = 0; k < measures.size(); ++k)
        measures_json[measures[k]] = matrix_json(values[k]);
    nlohmann::json sample = {{"examples", examples}};
    if (!positions.empty()) sample["positions"] = positions;
    nlohmann::json gram = nlohmann::json::object();
    if (has_linear_gram) gram["linear_cka"] = gram_json(linear_gram);
    if (has_rbf_gram) gram["rbf_cka"] = gram_json(rbf_gram);
    return {{"analysis", "similarity"},
            {"provenance", provenance.to_json()},
            {"options", provenance.parameters},
            {"vectors", options.sentence_vectors ? "sentence" : "token"},
            {"vector_source_a", vector_source_a},
            {"vector_source_b", vector_source_b},
            {"layers_a", layers_a},
            {"layers_b", layers_b},
            {"available", available},
            {"n", static_cast<std::int64_t>(examples.size())},
            {"sample", sample},
            {"gram_sample", gram_sample},
            {"measures", measures_json},
            {"svcca_dims_a", svcca_dims_a},
            {"svcca_dims_b", svcca_dims_b},
            {"gram", gram},
            {"notes", notes},
            {"length_range", options.min_length > 0 || options.max_length > 0
                                 ? nlohmann::json{options.min_length, options.max_length}
                                 : nlohmann::json()}};
}

CsvTable SimilarityResult::table() const {
    CsvTable t;
    // value: the full sample; gram_value, null_mean, p_value and the interval: the Gram sample.
    t.columns = {"layer_a",   "layer_b", "measure", "value",  "gram_value",
                 "null_mean", "p_value", "ci_low",  "ci_high"};
    const bool lengths = options.length_columns || options.min_length > 0 || options.max_length > 0;
    if (lengths) {
        t.columns.push_back("min_length");
        t.columns.push_back("max_length");
    }
    for (std::size_t k = 0; k < measures.size(); ++k) {
        const GramStatistics* g = measures[k] == "linear_cka" && has_linear_gram ? &linear_gram
                                  : measures[k] == "rbf_cka" && has_rbf_gram     ? &rbf_gram
                                                                                 : nullptr;
        for (std::size_t i = 0; i < layers_a.size(); ++i)
            for (std::size_t j = 0; j < layers_b.size(); ++j) {
                auto cell = [&](const LayerMatrix& m) {
                    return g && !m.empty() ? number_or_null(m[i][j]) : nlohmann::json();
                };
                t.rows.push_back({layers_a[i], layers_b[j], measures[k],
                                  number_or_null(values[k][i][j]),
                                  g ? cell(g->observed) : nlohmann::json(),
                                  g ? cell(g->null_mean) : nlohmann::json(),
                                  g ? cell(g->p_value) : nlohmann::json(),
                                  g ? cell(g->ci_low) : nlohmann::json(),
                                  g ? cell(g->ci_high) : nlohmann::json()});
                if (lengths) {
                    t.rows.back().push_back(options.min_length > 0
                                                ? nlohmann::json(options.min_length)
                                                : nlohmann::json());
                    t.rows.back().push_back(options.max_length > 0
                                                ? nlohmann::json(options.max_length)
                                                : nlohmann::json());
                }
            }
    }
    return t;
}

namespace {

/// Centred vectors reduced to the principal directions holding `share` of their variance, then
/// whitened: columns of unit norm, orthogonal (X̃ P Λ^{−1/2}).
MatrixXd reduced_whitened(const MatrixXdR& x, double share, int* dims) {
    const MatrixXd centred = x.rowwise() - x.colwise().mean();
    const MatrixXd cov = centred.transpose() * centred;
    const SymmetricEigen e = symmetric_eigen(cov, true);  // ascending
    const VectorXd values = e.values.reverse().cwiseMax(0.0);
    const MatrixXd vectors = e.vectors.rowwise().reverse();
    const double total = values.sum(), top = values.size() ? values[0] : 0.0;
    Index k = 0;
    for (double cum = 0; k < values.size();) {
        cum += values[k];
        ++k;
        if (cum >= share * total) break;
    }
    while (k > 0 && !(values[k - 1] > kNoVarianceShare * top))  // directions without variance
        --k;
    *dims = static_cast<int>(k);
    return centred * vectors.leftCols(k) * values.head(k).cwiseSqrt().cwiseInverse().asDiagonal();
}

}  // namespace

CanonicalScatter canonical_scatter(const DumpReader& a, const DumpReader& b,
                                   const SimilarityResult& r, int layer_a, int layer_b,
                                   std::int64_t max_points) {
    for (const auto& [layers, layer, dump] :
         {std::tuple{&r.layers_a, layer_a, &a}, std::tuple{&r.layers_b, layer_b, &b}})
        if (std::find(layers->begin(), layers->end(), layer) == layers->end())
            throw ConfigError(dump->path() + ": layer " + str(layer) +
                              " is not among the layers compared");
    CanonicalScatter s;
    s.layer_a = layer_a;
    s.layer_b = layer_b;
    // Up to max_points entries of the sample, evenly spaced (the sample is uniform already).
    const auto total = static_cast<std::int64_t>(r.examples.size());
    const std::int64_t n = std::min(total, std::max<std::int64_t>(1, max_points));
    SimilarityResult part;
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t entry = k * total / n;
        s.entries.push_back(entry);
        part.examples.push_back(r.examples[static_cast<std::size_t>(entry)]);
        if (!r.positions.empty())
            part.positions.push_back(r.positions[static_cast<std::size_t>(entry)]);
    }
    const LayerSource src_a{&a, layer_a, rows_of_examples(a, layer_a), a.width()};
    const LayerSource src_b{&b, layer_b, rows_of_examples(b, layer_b), b.width()};
    const MatrixXdR xa = read_vectors(src_a, part, 0, part.examples.size(), nullptr);
    const MatrixXdR xb = read_vectors(src_b, part, 0, part.examples.size(), nullptr);
    check_finite(xa, src_a);
    check_finite(xb, src_b);
    const double share = r.options.svcca_variance;
    const MatrixXd wa = reduced_whitened(xa, share, &s.dims_a);
    const MatrixXd wb = reduced_whitened(xb, share, &s.dims_b);
    if (s.dims_a == 0 || s.dims_b == 0)
        throw ConfigError("similarity scatter of layers " + str(layer_a) + " and " + str(layer_b) +
                          ": layer " +
                          (s.dims_a == 0 ? str(layer_a) + " of A" : str(layer_b) + " of B") +
                          " has no variance over these vectors (every vector alike), "
                          "so no canonical direction");
    if (n <= s.dims_a + s.dims_b)
        throw ConfigError("similarity scatter of layers " + str(layer_a) + " and " + str(layer_b) +
                          ": " + str(n) + " vectors are not more than the directions kept (" +
                          str(s.dims_a) + " + " + str(s.dims_b) +
                          "); the first canonical correlation would be 1 by construction");
    const MatrixXd m = wa.transpose() * wb;
    // The leading singular pair of m through the eigenvectors of m mᵀ (dims_a × dims_a).
    const SymmetricEigen e = symmetric_eigen(m * m.transpose(), true);
    const Index last = e.values.size() - 1;
    VectorXd u = e.vectors.col(last);
    s.rho = std::sqrt(std::max(0.0, e.values[last]));
    VectorXd v = m.transpose() * u;
    v /= v.norm() > 0 ? v.norm() : 1.0;
    VectorXd x = wa * u, y = wb * v;
    Index big = 0;
    x.cwiseAbs().maxCoeff(&big);
    if (x[big] < 0) {
        x = -x;
        y = -y;
    }
    const double scale = std::sqrt(static_cast<double>(n));  // unit norm → unit variance
    for (Index i = 0; i < x.size(); ++i) {
        s.x.push_back(x[i] * scale);
        s.y.push_back(y[i] * scale);
    }
    return s;
}

nlohmann::json CanonicalScatter::to_json(const SimilarityResult& r) const {
    nlohmann::json examples = nlohmann::json::array(), positions = nlohmann::json::array();
    for (const auto k : entries) {
        examples.push_back(r.examples[static_cast<std::size_t>(k)]);
        if (!r.positions.empty()) positions.push_back(r.positions[static_cast<std::size_t>(k)]);
    }
    nlohmann::json j = {
        {"layer_a", layer_a}, {"layer_b", layer_b},   {"rho", rho}, {"dims_a", dims_a},
        {"dims_b", dims_b},   {"examples", examples}, {"x", x},     {"y", y},
        {"points", x.size()}};
    if (!r.positions.empty()) j["positions"] = positions;
    return j;
}

}  // namespace routescope::analysis
