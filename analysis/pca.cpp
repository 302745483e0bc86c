#include "analysis/pca.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "analysis/sentence_sample.hpp"
#include "engine/core/config.hpp"
#include "engine/core/error.hpp"

namespace routescope::analysis {

std::vector<double> component_weights(const RowMatrixF& H, bool energy, bool centre) {
    if (H.rows() < 2) return {};
    const Eigen::MatrixXd x = H.cast<double>();
    const Eigen::MatrixXd centred = centre ? Eigen::MatrixXd(x.rowwise() - x.colwise().mean()) : x;
    // σ_j² are the eigenvalues of HHᵀ or HᵀH, whichever is smaller: n ≤ 300 rows against d = 1024
    // makes this a 300×300 eigenproblem instead of a 300×1024 SVD.
    Eigen::MatrixXd gram;
    if (centred.rows() <= centred.cols()) {
        gram = Eigen::MatrixXd::Zero(centred.rows(), centred.rows());
        gram.selfadjointView<Eigen::Lower>().rankUpdate(centred);
    } else {
        gram = Eigen::MatrixXd::Zero(centred.cols(), centred.cols());
        gram.selfadjointView<Eigen::Lower>().rankUpdate(centred.transpose());
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(gram, Eigen::EigenvaluesOnly);
    std::vector<double> w(solver.eigenvalues().data(),
                          solver.eigenvalues().data() + solver.eigenvalues().size());
    // Rounding leaves the null space eigenvalues of order ε·λ_max, of either sign: those below
    // numpy's rank tolerance (λ_max · size · ε, matrix_rank's for a symmetric matrix) are zero,
    // so that k(p = 1) is the rank, not the rank and a component of rounding noise.
    const double largest = w.empty() ? 0.0 : *std::max_element(w.begin(), w.end());
    const double tolerance =
        largest * static_cast<double>(gram.rows()) * std::numeric_limits<double>::epsilon();
    for (double& v : w)
        if (!(v > tolerance)) v = 0.0;
    std::sort(w.begin(), w.end(), std::greater<>());
    if (energy)
        for (double& v : w)
            v = std::sqrt(v);
    return w;
}

std::vector<int> components_for(const std::vector<double>& weights,
                                const std::vector<double>& thresholds) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<int> k(thresholds.size(), 0);
    if (!(total > 0)) return k;
    for (std::size_t t = 0; t < thresholds.size(); ++t) {
        double cumulative = 0;
        int j = 0;
        for (; j < static_cast<int>(weights.size()); ++j) {
            cumulative += weights[static_cast<std::size_t>(j)];
            if (cumulative / total >= thresholds[t]) break;
        }
        k[t] = std::min(j + 1, static_cast<int>(weights.size()));
    }
    return k;
}

namespace {

PcaGroup make_group(std::string name, std::int64_t lo, std::int64_t hi,
                    const std::vector<std::size_t>& members, const std::vector<std::vector<int>>& k,
                    std::size_t thresholds) {
    PcaGroup g{std::move(name), lo, hi, static_cast<std::int64_t>(members.size()),
               std::vector<double>(thresholds, 0.0)};
    for (std::size_t s : members)
        for (std::size_t t = 0; t < thresholds; ++t)
            g.mean_k[t] += k[s][t];
    for (double& v : g.mean_k)
        v /= std::max<std::size_t>(members.size(), 1);
    return g;
}

}  // namespace

PcaResult pca_redundancy(const DumpReader& dump, const PcaOptions& options) {
    for (double p : options.thresholds)
        if (!(p > 0 && p <= 1))
            throw ConfigError("pca threshold " + number_text(p) + " is outside (0, 1]");
    if (options.bucket_width < 1) throw ConfigError("pca bucket width must be at least 1");
    if (options.passage < 0 || options.passage == 1)
        throw ConfigError("pca passage length must be 0 (whole sentences) or at least 2");
    if (options.bootstrap < 0) throw ConfigError("pca bootstrap resamples cannot be negative");
    PcaResult result;
    result.options = options;
    const auto row_lengths = dump.row_lengths(options.layer);
    const auto& example_of_row = dump.example_of_row(options.layer);
    // Every stored row, or a seeded sample of them (sample_sentences takes all when M ≥ rows).
    const std::int64_t wanted =
        sentences_wanted(options.max_sentences, static_cast<std::int64_t>(row_lengths.size()));
    const std::vector<std::int64_t> rows =
        sample_sentences(row_lengths, std::max<std::int64_t>(wanted, 1), options.seed).rows;

    result.sampled_rows = rows;
    // The units: every sampled sentence, or each of its passages of options.passage tokens.
    struct Unit {
        std::int64_t row = 0, start = 0, length = 0;
    };
    std::vector<Unit> units;
    for (const std::int64_t r : rows) {
        const std::int64_t n = row_lengths[static_cast<std::size_t>(r)];
        if (options.passage == 0) {
            units.push_back({r, 0, n});
            continue;
        }
        for (std::int64_t s = 0; s + options.passage <= n; s += options.passage)
            units.push_back({r, s, options.passage});
    }
    const auto n_units = static_cast<std::ptrdiff_t>(units.size());
    std::vector<std::vector<double>> weights(units.size());
    std::exception_ptr failure;
    // Units are independent: one per thread (reads serialise on the HDF5 lock, the eigenproblems
    // run in parallel).
#pragma omp parallel for schedule(dynamic, 4)
    for (std::ptrdiff_t i = 0; i < n_units; ++i) {
        try {
            const Unit& u = units[static_cast<std::size_t>(i)];
            const RowMatrixF h = dump.hidden_row(options.layer, u.row);
            weights[static_cast<std::size_t>(i)] = component_weights(
                options.passage > 0 ? RowMatrixF(h.middleRows(u.start, u.length)) : h,
                options.energy, options.centred);
        } catch (...) {
#pragma omp critical
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);

    std::int64_t max_n = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
        const std::vector<double>& w = weights[i];
        if (w.empty() || !(std::accumulate(w.begin(), w.end(), 0.0) > 0)) {
            ++result.skipped;
            continue;
        }
        const Unit& u = units[i];
        result.rows.push_back(u.row);
        result.examples.push_back(example_of_row[static_cast<std::size_t>(u.row)]);
        result.lengths.push_back(u.length);
        if (options.passage > 0) result.starts.push_back(u.start);
        result.k.push_back(components_for(w, options.thresholds));
        max_n = std::max(max_n, u.length);
    }
    if (units.empty())
        throw FormatError(
            dump.path() + ": layer " + std::to_string(options.layer) + " stores no example" +
            (options.passage > 0
                 ? " long enough for a passage of " + std::to_string(options.passage) + " tokens"
                 : std::string()) +
            "; PCA redundancy needs at least one");
    if (result.rows.empty())
        throw FormatError(
            dump.path() + ": no " +
            (options.passage > 0 ? "passage of " + std::to_string(options.passage) + " tokens"
                                 : std::string("sentence")) +
            " of layer " + std::to_string(options.layer) +
            " has 2 or more tokens with non-zero variance; PCA redundancy is undefined");

    // Mean cumulative curve; a sentence of rank r contributes 1 beyond k = r.
    std::int64_t points = options.curve_points > 0
                              ? options.curve_points
                              : std::min<std::int64_t>({max_n, dump.width(), 512});
    result.mean_curve.assign(static_cast<std::size_t>(points), 0.0);
    for (std::size_t i = 0, used = 0; i < units.size(); ++i) {
        const std::vector<double>& w = weights[i];
        const double total = std::accumulate(w.begin(), w.end(), 0.0);
        if (w.empty() || !(total > 0)) continue;
        double cumulative = 0;
        for (std::int64_t k = 0; k < points; ++k) {
            if (k < static_cast<std::int64_t>(w.size()))
                cumulative += w[static_cast<std::size_t>(k)];
            result.mean_curve[static_cast<std::size_t>(k)] +=
                k < static_cast<std::int64_t>(w.size()) ? cumulative / total : 1.0;
        }
        ++used;
    }
    for (double& v : result.mean_curve)
        v /= static_cast<double>(result.rows.size());

    const std::size_t nt = options.thresholds.size();
    std::vector<std::size_t> all(result.rows.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    // The group's range is the data's, shortest to longest (it said 1 for any shortest).
    result.overall =
        make_group("all", *std::min_element(result.lengths.begin(), result.lengths.end()), max_n,
                   all, result.k, nt);
    if (options.bootstrap > 0) {
        // Percentile bootstrap of the overall mean k(p): the units resampled with replacement.
        std::mt19937_64 rng(options.seed + 0x9e3779b97f4a7c15ULL);
        const std::size_t n = result.k.size();
        std::vector<std::vector<double>> means(nt);
        for (int b = 0; b < options.bootstrap; ++b) {
            std::vector<double> sum(nt, 0.0);
            for (std::size_t j = 0; j < n; ++j) {
                const auto& k = result.k[static_cast<std::size_t>(rng() % n)];
                for (std::size_t t = 0; t < nt; ++t)
                    sum[t] += k[t];
            }
            for (std::size_t t = 0; t < nt; ++t)
                means[t].push_back(sum[t] / static_cast<double>(n));
        }
        for (std::size_t t = 0; t < nt; ++t) {
            std::sort(means[t].begin(), means[t].end());
            const auto at = [&](double q) {
                const double pos = q * static_cast<double>(means[t].size() - 1);
                const auto lo = static_cast<std::size_t>(std::floor(pos));
                const auto hi = std::min(lo + 1, means[t].size() - 1);
                return means[t][lo] +
                       (pos - static_cast<double>(lo)) * (means[t][hi] - means[t][lo]);
            };
            result.overall.ci_low.push_back(at(0.025));
            result.overall.ci_high.push_back(at(0.975));
        }
    }
    std::map<std::int64_t, std::vector<std::size_t>> buckets, exact;
    for (std::size_t s = 0; s < result.rows.size(); ++s) {
        buckets[(result.lengths[s] - 1) / options.bucket_width].push_back(s);
        exact[result.lengths[s]].push_back(s);
    }
    for (const auto& [b, members] : buckets) {
        const std::int64_t lo = b * options.bucket_width + 1, hi = (b + 1) * options.bucket_width;
        result.by_bucket.push_back(make_group(std::to_string(lo) + "-" + std::to_string(hi), lo, hi,
                                              members, result.k, nt));
    }
    for (const auto& [n, members] : exact)
        result.by_length.push_back(
            make_group("n=" + std::to_string(n), n, n, members, result.k, nt));

    if (options.global_m > 0) {
        const SentenceSample sample = sample_sentences(row_lengths, options.global_m, options.seed);
        std::vector<TokenRef> refs;
        for (std::size_t i = 0; i < sample.rows.size(); ++i)
            refs.push_back({sample.rows[i], sample.tokens[i]});
        result.global_rows = sample.rows;
        result.global_tokens = sample.tokens;
        const std::vector<double> w = component_weights(dump.hidden_tokens(options.layer, refs),
                                                        options.energy, options.centred);
        // k(p) = min{k ≥ 1 : …} does not exist for a spectrum of zeros (one vector, centred; or
        // vectors all alike): null with the reason, as a sentence without variance is skipped.
        if (std::accumulate(w.begin(), w.end(), 0.0) > 0)
            result.global_k = components_for(w, options.thresholds);
        else
            result.global_note =
                "the pooled sample of " + std::to_string(refs.size()) + " token vector" +
                (refs.size() == 1 ? "" : "s") + " has no variance" +
                (options.centred ? " about its mean" : "") +
                ": k(p) is undefined (it needs 2 or more different vectors; --global-m draws "
                "one token from each of that many sentences)";
    }

    result.provenance.analysis = "pca";
    result.provenance.inputs.push_back(dump_input(dump));
    result.provenance.parameters = {
        {"layer", options.layer},        {"thresholds", options.thresholds},
        {"energy", options.energy},      {"max_sentences", options.max_sentences},
        {"seed", options.seed},          {"bucket_width", options.bucket_width},
        {"curve_points", points},        {"global_m", options.global_m},
        {"centred", options.centred},    {"passage", options.passage},
        {"bootstrap", options.bootstrap}};
    return result;
}

namespace {
nlohmann::json group_json(const PcaGroup& g) {
    nlohmann::json j = {{"name", g.name},
                        {"lo", g.lo},
                        {"hi", g.hi},
                        {"sentences", g.sentences},
                        {"mean_k", g.mean_k}};
    if (!g.ci_low.empty()) {
        j["ci_low"] = g.ci_low;
        j["ci_high"] = g.ci_high;
    }
    return j;
}
}  // namespace

nlohmann::json PcaResult::to_json() const {
    nlohmann::json buckets = nlohmann::json::array(), exact = nlohmann::json::array();
    for (const auto& g : by_bucket)
        buckets.push_back(group_json(g));
    for (const auto& g : by_length)
        exact.push_back(group_json(g));
    nlohmann::json out = {{"provenance", provenance.to_json()},
                          {"layer", options.layer},
                          {"thresholds", options.thresholds},
                          {"weights", options.energy ? "sigma" : "sigma^2"},
                          {"sampled_rows", sampled_rows},
                          {"sentences", options.passage > 0 ? nlohmann::json{{"rows", rows},
                                                                             {"examples", examples},
                                                                             {"lengths", lengths},
                                                                             {"starts", starts},
                                                                             {"k", k}}
                                                            : nlohmann::json{{"rows", rows},
                                                                             {"examples", examples},
                                                                             {"lengths", lengths},
                                                                             {"k", k}}},
                          {"skipped", skipped},
                          {"overall", group_json(overall)},
                          {"by_bucket", buckets},
                          {"by_length", exact},
                          {"mean_curve", mean_curve}};
    // --global-m 0 leaves the global variant out (docs/analyses.md): no "global" entry at all.
    if (options.global_m > 0)
        out["global"] =
            global_note.empty()
                ? nlohmann::json{{"rows", global_rows}, {"tokens", global_tokens}, {"k", global_k}}
                : nlohmann::json{{"rows", global_rows},
                                 {"tokens", global_tokens},
                                 {"k", nullptr},
                                 {"note", global_note}};
    return out;
}

CsvTable PcaResult::table() const {
    CsvTable t;
    t.columns = {"layer", "group", "length_lo", "length_hi", "sentences"};
    for (double p : options.thresholds)
        t.columns.push_back("mean_k@" + std::to_string(p).substr(0, 4));
    auto add = [&](const PcaGroup& g) {
        std::vector<nlohmann::json> row = {options.layer, g.name, g.lo, g.hi, g.sentences};
        for (double v : g.mean_k)
            row.push_back(v);
        t.rows.push_back(row);
    };
    add(overall);
    for (const auto& g : by_bucket)
        add(g);
    for (const auto& g : by_length)
        add(g);
    return t;
}

}  // namespace routescope::analysis
