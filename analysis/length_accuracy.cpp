#include "analysis/length_accuracy.hpp"

#include <fstream>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/core/config.hpp"
#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"

namespace routescope::analysis {

std::vector<double> bin_edges(const std::vector<double>& values,
                              const LengthAccuracyOptions& options) {
    if (values.empty()) throw ConfigError("length-accuracy: no examples to bin");
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> edges;
    if (options.binning == "quantile") {
        if (options.bins < 1) throw ConfigError("length-accuracy: --bins must be at least 1");
        const auto n = static_cast<double>(sorted.size());
        for (int i = 0; i <= options.bins; ++i) {
            // numpy.quantile's default ("linear"): virtual index (n − 1)·q.
            const double position = (n - 1) * (static_cast<double>(i) / options.bins);
            const auto below = static_cast<std::size_t>(std::floor(position));
            const std::size_t above = std::min(below + 1, sorted.size() - 1);
            const double frac = position - static_cast<double>(below);
            edges.push_back(sorted[below] + (sorted[above] - sorted[below]) * frac);
        }
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        if (edges.size() == 1) edges.push_back(edges.front());  // every value equal: one closed bin
    } else if (options.binning == "edges") {
        edges = options.edges;
        if (edges.size() < 2)
            throw ConfigError("length-accuracy: --edges needs at least two values");
        for (std::size_t i = 1; i < edges.size(); ++i)
            if (!(edges[i] > edges[i - 1]))
                throw ConfigError("length-accuracy: --edges must increase strictly");
        // ±inf would read back as null, the JSON's "no value", and -inf and inf as the same.
        for (const double e : edges)
            if (!std::isfinite(e))
                throw ConfigError("length-accuracy: --edges must be finite numbers (got " +
                                  number_text(e) + "); give the data's bounds instead");
    } else if (options.binning == "width") {
        if (!(options.width > 0)) throw ConfigError("length-accuracy: --width must be positive");
        const double lo = sorted.front(), hi = sorted.back();
        const double bins = (hi - lo) / options.width;
        if (!std::isfinite(hi - lo))
            throw ConfigError("length-accuracy: the values' range (" + number_text(lo) + " to " +
                              number_text(hi) +
                              ") overflows a double; give --edges instead of --width");
        if (!(bins <= kMaxBins))
            throw ConfigError("length-accuracy: --width " + number_text(options.width) + " makes " +
                              number_text(bins) + " bins of the range " + number_text(lo) + " to " +
                              number_text(hi) + " (at most " + std::to_string(kMaxBins) + ")");
        edges.push_back(lo);
        for (int i = 1; edges.back() <= hi; ++i) {
            volatile double offset =
                i * options.width;  // rounded as numpy does (no fused multiply-add)
            edges.push_back(lo + offset);
        }
    } else {
        throw ConfigError("length-accuracy: binning '" + options.binning +
                          "' is not quantile, edges or width");
    }
    return edges;
}

std::pair<double, double> wilson_interval(std::int64_t correct, std::int64_t count) {
    if (count == 0) return {0.0, 1.0};
    const double z = 1.959963984540054;  // the 97.5% quantile of the standard normal
    const double n = static_cast<double>(count), p = correct / n;
    const double denominator = 1 + z * z / n;
    const double centre = (p + z * z / (2 * n)) / denominator;
    const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator;
    // The interval of 0 of n starts at 0 and that of n of n ends at 1 exactly (centre ∓ half
    // there is 0 or 1 up to rounding: 5.6e-17 and 1.0000000000000002 were written).
    return {correct == 0 ? 0.0 : std::max(0.0, centre - half),
            correct == count ? 1.0 : std::min(1.0, centre + half)};
}

ClassificationScores classification_scores(const std::vector<std::int64_t>& labels,
                                           const std::vector<std::int64_t>& predictions) {
    ClassificationScores s;
    s.count = static_cast<std::int64_t>(labels.size());
    std::set<std::int64_t> classes(labels.begin(), labels.end());
    classes.insert(predictions.begin(), predictions.end());
    std::map<std::int64_t, double> true_count, predicted_count, true_positive;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        true_count[labels[i]] += 1;
        predicted_count[predictions[i]] += 1;
        if (labels[i] == predictions[i]) {
            ++s.correct;
            true_positive[labels[i]] += 1;
        }
    }
    // A bin without examples has no accuracy, MCC or F1 (NaN: null in JSON, an empty CSV cell);
    // its Wilson interval is the whole [0, 1].
    const double none = std::numeric_limits<double>::quiet_NaN();
    s.accuracy = s.count ? static_cast<double>(s.correct) / s.count : none;
    std::tie(s.wilson_low, s.wilson_high) = wilson_interval(s.correct, s.count);
    // Gorodkin (2004): R_K = (c·s − Σ p_k t_k) / √((s² − Σ p_k²)(s² − Σ t_k²)).
    const double n = static_cast<double>(s.count), c = static_cast<double>(s.correct);
    double pt = 0, pp = 0, tt = 0, f1 = 0;
    for (std::int64_t k : classes) {
        const double t = true_count[k], p = predicted_count[k], tp = true_positive[k];
        pt += p * t;
        pp += p * p;
        tt += t * t;
        f1 += 2 * tp / (t + p);  // 2TP / (2TP + FP + FN); t + p > 0 for a class that was seen
    }
    const double denominator = std::sqrt((n * n - pp) * (n * n - tt));
    s.mcc = s.count == 0 ? none : denominator > 0 ? (c * n - pt) / denominator : 0.0;
    s.macro_f1 = classes.empty() ? none : f1 / static_cast<double>(classes.size());
    return s;
}

double mcnemar_exact_p(std::int64_t b, std::int64_t c) {
    const std::int64_t n = b + c;
    if (n == 0) return 1.0;
    const std::int64_t k = std::min(b, c);
    double tail = 0;
    for (std::int64_t i = 0; i <= k; ++i)
        tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                         n * std::log(2.0));
    return std::min(1.0, 2 * tail);
}

namespace {

void require_same_examples(const DumpReader& a, const DumpReader& b) {
    const std::string what = a.path() + " and " + b.path() + " do not hold the same examples: ";
    if (a.examples() != b.examples())
        throw ConfigError(what + std::to_string(a.examples()) + " against " +
                          std::to_string(b.examples()) + " examples");
    for (std::size_t i = 0; i < a.lengths().size(); ++i)
        if (a.lengths()[i] != b.lengths()[i])
            throw ConfigError(what + "/data/lengths differ at example " + std::to_string(i));
    for (std::size_t i = 0; i < a.labels().size(); ++i)
        if (a.labels()[i] != b.labels()[i])
            throw ConfigError(what + "/data/labels differ at example " + std::to_string(i));
    if (a.has_text() && b.has_text() && a.text() != b.text())
        throw ConfigError(what + "/data/text differs");
}

void score_bin(AccuracyBin& bin, const std::vector<std::int64_t>& labels,
               const std::vector<std::int64_t>& pa, const std::vector<std::int64_t>* pb) {
    std::vector<std::int64_t> y, ya, yb;
    for (auto e : bin.examples) {
        const auto i = static_cast<std::size_t>(e);
        y.push_back(labels[i]);
        ya.push_back(pa[i]);
        if (pb) {
            yb.push_back((*pb)[i]);
            const bool right_a = pa[i] == labels[i], right_b = (*pb)[i] == labels[i];
            bin.only_a += right_a && !right_b;
            bin.only_b += !right_a && right_b;
        }
    }
    bin.a = classification_scores(y, ya);
    if (pb) {
        bin.b = classification_scores(y, yb);
        bin.difference = bin.b.accuracy - bin.a.accuracy;
        bin.p_value = mcnemar_exact_p(bin.only_a, bin.only_b);
    }
}

}  // namespace

namespace {
/// Bins the examples by `x` and scores each bin (the common part of the dump and file versions).
LengthAccuracyResult bin_and_score(const std::vector<double>& x,
                                   const std::vector<std::int64_t>& labels,
                                   const std::vector<std::int64_t>& pa,
                                   const std::vector<std::int64_t>* pb,
                                   const LengthAccuracyOptions& options) {
    LengthAccuracyResult result;
    result.options = options;
    result.compared = pb != nullptr;
    // An example without a label (−1 in a dump: a test split without answers) has no accuracy:
    // it is counted, left out of the bins, and does not shape the quantile edges.
    std::vector<double> labelled;
    for (std::size_t e = 0; e < x.size(); ++e) {
        if (e < labels.size() && labels[e] < 0)
            ++result.unlabelled;
        else
            labelled.push_back(x[e]);
    }
    if (labelled.empty())
        throw ConfigError("length-accuracy: no example has a label (all " +
                          std::to_string(result.unlabelled) + " are unlabelled, −1)");
    result.edges = bin_edges(labelled, options);
    const auto& edges = result.edges;
    result.bins.resize(edges.size() - 1);
    for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
        result.bins[i].lo = edges[i];
        result.bins[i].hi = edges[i + 1];
    }
    for (std::size_t e = 0; e < x.size(); ++e) {
        if (e < labels.size() && labels[e] < 0) continue;
        if (x[e] < edges.front() || x[e] > edges.back()) {
            ++result.out_of_range;
            continue;
        }
        auto index = static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x[e]) -
                                              edges.begin()) -
                     1;
        index = std::min(index, result.bins.size() - 1);  // x == last edge: the closed last bin
        result.bins[index].examples.push_back(static_cast<std::int64_t>(e));
        result.overall.examples.push_back(static_cast<std::int64_t>(e));
    }
    result.overall.lo = edges.front();
    result.overall.hi = edges.back();
    for (auto& bin : result.bins)
        score_bin(bin, labels, pa, pb);
    score_bin(result.overall, labels, pa, pb);
    result.provenance.analysis = "length-accuracy";
    result.provenance.parameters = {{"variable", options.variable},
                                    {"binning", options.binning},
                                    {"bins", options.bins},
                                    {"edges", options.edges},
                                    {"width", options.width}};
    return result;
}
}  // namespace

LengthAccuracyResult length_accuracy(const DumpReader& a, const DumpReader* b,
                                     const LengthAccuracyOptions& options) {
    if (!a.has_labels() || !a.has_predictions())
        throw ConfigError(
            a.path() + ": length-accuracy needs /data/labels and /data/predictions; the dump has " +
            (a.has_labels()        ? "no predictions"
             : a.has_predictions() ? "no labels"
                                   : "neither"));
    if (b) {
        if (!b->has_labels() || !b->has_predictions())
            throw ConfigError(b->path() +
                              ": length-accuracy needs /data/labels and /data/predictions");
        require_same_examples(a, *b);
    }
    std::vector<double> x;
    if (options.variable == "length") {
        for (auto n : a.lengths())
            x.push_back(static_cast<double>(n));
    } else {
        x = a.attribute(options.variable);
    }
    LengthAccuracyResult result =
        bin_and_score(x, a.labels(), a.predictions(), b ? &b->predictions() : nullptr, options);
    result.provenance.inputs.push_back(dump_input(a, "dump"));
    if (b) result.provenance.inputs.push_back(dump_input(*b, "dump_b"));
    return result;
}

PredictionFile PredictionFile::read(const std::string& path) {
    data::require_regular_file(path, "predictions");
    std::ifstream in(path);
    if (!in) throw IoError(path + ": cannot open");
    PredictionFile f;
    f.path = path;
    std::map<std::string, std::int64_t> ids;
    auto id = [&](const std::string& name) {
        auto [it, added] = ids.emplace(name, static_cast<std::int64_t>(ids.size()));
        if (added) f.label_names.push_back(name);
        return it->second;
    };
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            const auto j = parse_json_text(line, path + ":" + std::to_string(number));
            // An example without a label (a test split without answers: eval writes null) has
            // no accuracy: it keeps its place (example indices are the file's examples), gets
            // label and prediction −1, and is counted in `unlabelled` and left out of the bins.
            const bool unlabelled = j.contains("label") && j["label"].is_null();
            const std::string label = unlabelled ? std::string() : j.at("label").get<std::string>();
            const std::string prediction =
                unlabelled && !(j.contains("prediction") && j["prediction"].is_string())
                    ? std::string()
                    : j.at("prediction").get<std::string>();
            // A length is a count of tokens: a positive integer (get<int64> would wrap 2^64 + 5
            // and truncate 10.5).
            const auto& length = j.at("length");
            if (!length.is_number_integer() ||
                (length.is_number_unsigned() && length.get<std::uint64_t>() > (1ULL << 40)) ||
                length.get<std::int64_t>() < 1)
                throw FormatError(path + ":" + std::to_string(number) +
                                  ": length must be a positive integer (tokens), got " +
                                  length.dump());
            const auto example = static_cast<std::int64_t>(f.lengths.size());
            f.lengths.push_back(length.get<std::int64_t>());
            f.labels.push_back(unlabelled ? -1 : id(label));
            f.predictions.push_back(unlabelled ? -1 : id(prediction));
            f.text.push_back((unlabelled ? std::string("(no label)") : label) + " → " + prediction);
            f.lines.push_back(static_cast<std::int64_t>(number));
            if (unlabelled) ++f.unlabelled;
            // Each attribute's column has one value per example: NaN where the line has none or
            // a value that is not a finite number (length_accuracy refuses those when it bins by
            // that attribute, naming the line).
            if (j.contains("attributes") && j["attributes"].is_object())
                for (const auto& [k, v] : j["attributes"].items()) {
                    auto& column = f.attributes[k];
                    column.resize(static_cast<std::size_t>(example),
                                  std::numeric_limits<double>::quiet_NaN());
                    const bool finite = v.is_number() && std::isfinite(v.get<double>());
                    column.push_back(finite ? v.get<double>()
                                            : std::numeric_limits<double>::quiet_NaN());
                    if (!finite) f.attribute_text[k][example] = v.dump();
                }
        } catch (const nlohmann::json::exception& e) {
            throw FormatError(path + ":" + std::to_string(number) +
                              ": not an eval prediction line (" + e.what() + ")");
        }
    }
    for (auto& [name, column] : f.attributes)
        column.resize(f.lengths.size(), std::numeric_limits<double>::quiet_NaN());
    if (f.lengths.size() == static_cast<std::size_t>(f.unlabelled))
        throw FormatError(path +
                          (f.unlabelled > 0
                               ? ": no labelled predictions (all " + std::to_string(f.unlabelled) +
                                     " examples have label null: the evaluated data had no "
                                     "labels, so there is no accuracy to show)"
                               : ": no predictions"));
    return f;
}

LengthAccuracyResult length_accuracy(const PredictionFile& a, const PredictionFile* b,
                                     const LengthAccuracyOptions& options) {
    // B's predictions in A's class ids (each file numbers the names it meets).
    std::vector<std::int64_t> b_predictions;
    if (b) {
        bool same = b->lengths == a.lengths;
        std::map<std::string, std::int64_t> ids;
        for (std::size_t i = 0; i < a.label_names.size(); ++i)
            ids[a.label_names[i]] = static_cast<std::int64_t>(i);
        // Labels by name; an unlabelled example (−1) matches only an unlabelled one.
        const auto name = [](const PredictionFile& f, std::int64_t k) {
            return k < 0 ? std::string() : "=" + f.label_names[static_cast<std::size_t>(k)];
        };
        for (std::size_t i = 0; same && i < a.labels.size(); ++i)
            same = name(a, a.labels[i]) == name(*b, b->labels[i]);
        if (!same) throw ConfigError(a.path + " and " + b->path + " do not hold the same examples");
        for (auto p : b->predictions)
            b_predictions.push_back(p < 0 ? -1
                                          : ids.emplace(b->label_names[static_cast<std::size_t>(p)],
                                                        static_cast<std::int64_t>(ids.size()))
                                                .first->second);
    }
    std::vector<double> x;
    if (options.variable == "length") {
        x.assign(a.lengths.begin(), a.lengths.end());
    } else {
        const auto it = a.attributes.find(options.variable);
        if (it == a.attributes.end())
            throw ConfigError(a.path + ": no attribute '" + options.variable + "'");
        x = it->second;
        // Every labelled example needs the value (a missing one read as 0 was binned as 0): as a
        // dump's attribute must be finite for every example, the first line without it is named.
        const auto text = a.attribute_text.find(options.variable);
        for (std::size_t e = 0; e < x.size(); ++e) {
            if (a.labels[e] < 0 || std::isfinite(x[e])) continue;
            const std::string where = a.path + ":" + std::to_string(a.lines[e]) + " (example " +
                                      std::to_string(e) + "): attribute '" + options.variable +
                                      "' ";
            if (text != a.attribute_text.end() && text->second.count(static_cast<std::int64_t>(e)))
                throw FormatError(where + "is " + text->second.at(static_cast<std::int64_t>(e)) +
                                  ", not a finite number");
            throw FormatError(where + "is missing (--variable " + options.variable +
                              " needs it on every labelled line)");
        }
    }
    LengthAccuracyResult result =
        bin_and_score(x, a.labels, a.predictions, b ? &b_predictions : nullptr, options);
    result.provenance.inputs.push_back(file_input(a.path, "predictions"));
    if (b) result.provenance.inputs.push_back(file_input(b->path, "predictions_b"));
    return result;
}

namespace {

nlohmann::json scores_json(const ClassificationScores& s) {
    return {{"count", s.count},           {"correct", s.correct},         {"accuracy", s.accuracy},
            {"wilson_low", s.wilson_low}, {"wilson_high", s.wilson_high}, {"mcc", s.mcc},
            {"macro_f1", s.macro_f1}};
}

nlohmann::json bin_json(const AccuracyBin& bin, bool compared) {
    nlohmann::json j = {
        {"lo", bin.lo}, {"hi", bin.hi}, {"examples", bin.examples}, {"a", scores_json(bin.a)}};
    if (compared) {
        j["b"] = scores_json(bin.b);
        j["difference"] = bin.difference;
        j["only_a_correct"] = bin.only_a;
        j["only_b_correct"] = bin.only_b;
        j["mcnemar_p"] = bin.p_value;
    }
    return j;
}

}  // namespace

nlohmann::json LengthAccuracyResult::to_json() const {
    nlohmann::json j = {{"provenance", provenance.to_json()},
                        {"variable", options.variable},
                        {"edges", edges},
                        {"out_of_range", out_of_range},
                        {"unlabelled", unlabelled},
                        {"compared", compared},
                        {"overall", bin_json(overall, compared)}};
    j["bins"] = nlohmann::json::array();
    for (const auto& bin : bins)
        j["bins"].push_back(bin_json(bin, compared));
    return j;
}

CsvTable LengthAccuracyResult::table() const {
    CsvTable t;
    t.columns = {"bin_low",    "bin_high",    "count", "accuracy",
                 "wilson_low", "wilson_high", "mcc",   "macro_f1"};
    if (compared)
        for (const char* c : {"accuracy_b", "difference", "only_a_correct", "only_b_correct",
                              "mcnemar_p", "wilson_low_b", "wilson_high_b", "mcc_b", "macro_f1_b"})
            t.columns.push_back(c);
    auto add = [&](const AccuracyBin& bin) {
        std::vector<nlohmann::json> row = {bin.lo,         bin.hi,           bin.a.count,
                                           bin.a.accuracy, bin.a.wilson_low, bin.a.wilson_high,
                                           bin.a.mcc,      bin.a.macro_f1};
        if (compared)
            for (nlohmann::json v : {nlohmann::json(bin.b.accuracy), nlohmann::json(bin.difference),
                                     nlohmann::json(bin.only_a), nlohmann::json(bin.only_b),
                                     nlohmann::json(bin.p_value), nlohmann::json(bin.b.wilson_low),
                                     nlohmann::json(bin.b.wilson_high), nlohmann::json(bin.b.mcc),
                                     nlohmann::json(bin.b.macro_f1)})
                row.push_back(v);
        t.rows.push_back(row);
    };
    for (const auto& bin : bins)
        add(bin);
    return t;
}

}  // namespace routescope::analysis
