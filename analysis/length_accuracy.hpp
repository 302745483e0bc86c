#pragma once
// Accuracy by input length (ANALYSES.md §6; the BiGS paper's Figure 6): examples binned by length
// (or by any /data/attributes/<name>), per bin the accuracy with a 95% Wilson interval, Matthews
// correlation and macro F1; optionally a second model on the same examples with the per-bin
// difference and an exact McNemar p-value.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/dump_reader.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

/// The most bins a histogram or a length-accuracy binning makes (--bins, --width): more is a
/// typing error, and their tables would fill memory.
inline constexpr std::int64_t kMaxBins = 100000;

struct LengthAccuracyOptions {
    std::string variable = "length";   ///< "length" or the name of a /data/attributes dataset
    std::string binning = "quantile";  ///< quantile | edges | width
    int bins = 5;                      ///< quantile bins (equal counts up to ties)
    std::vector<double> edges;         ///< binning = edges: strictly increasing, ≥ 2
    double width = 0;                  ///< binning = width: bins [min + i·w, min + (i+1)·w)
};

/// Edges for the variable's values. Quantile edges are numpy.quantile's (linear interpolation) at
/// i/bins, duplicates removed; values are assigned as numpy.searchsorted(edges, x, 'right') − 1
/// with the last bin closed on the right.
std::vector<double> bin_edges(const std::vector<double>& values,
                              const LengthAccuracyOptions& options);

struct ClassificationScores {
    std::int64_t count = 0, correct = 0;
    double accuracy = 0, wilson_low = 0, wilson_high = 0;
    double mcc = 0;  ///< Gorodkin's multi-class R_K (binary MCC for two classes); 0 when undefined
    double macro_f1 = 0;  ///< mean F1 over the classes seen in labels or predictions
};
ClassificationScores classification_scores(const std::vector<std::int64_t>& labels,
                                           const std::vector<std::int64_t>& predictions);
/// 95% Wilson score interval of `correct` successes in `count` trials.
std::pair<double, double> wilson_interval(std::int64_t correct, std::int64_t count);
/// Two-sided exact McNemar test: 2·P(X ≤ min(b, c)) for X ~ Binomial(b + c, 1/2), capped at 1.
double mcnemar_exact_p(std::int64_t b, std::int64_t c);

struct AccuracyBin {
    double lo = 0, hi = 0;
    std::vector<std::int64_t> examples;
    ClassificationScores a;
    // Comparison with the second model (when given).
    ClassificationScores b;
    double difference = 0;  ///< accuracy(B) − accuracy(A)
    std::int64_t only_a = 0,
                 only_b = 0;  ///< discordant pairs: A right & B wrong, A wrong & B right
    double p_value = 1;
};

struct LengthAccuracyResult {
    Provenance provenance;
    LengthAccuracyOptions options;
    std::vector<double> edges;
    std::int64_t unlabelled = 0;  ///< examples with label −1 (no answer to score), left out
    std::vector<AccuracyBin> bins;
    AccuracyBin overall;
    bool compared = false;
    std::int64_t out_of_range = 0;  ///< examples outside user-given edges (not in any bin)
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// `b` may be null. Throws ConfigError when a dump has no labels or predictions, or when the two
/// dumps do not hold the same examples (S, lengths, labels, and text when both have it).
LengthAccuracyResult length_accuracy(const DumpReader& a, const DumpReader* b,
                                     const LengthAccuracyOptions& options);

/// The per-example predictions `routescope-cli eval --out preds.jsonl` writes (docs/cli.md): one
/// JSON object per line with `length`, `label`, `prediction` and `attributes`. Labels and
/// predictions are class names; they get ids in order of first appearance (labels first). Example
/// i is the file's i-th non-blank line, labelled or not.
struct PredictionFile {
    std::string path;
    std::vector<std::int64_t> lengths, labels, predictions;
    std::vector<std::string> label_names;  ///< id → name
    std::vector<std::string> text;         ///< the label and prediction of each example
    /// Per attribute one value per example: NaN where the line has none or a value that is not a
    /// finite number (that value's JSON text is in attribute_text).
    std::map<std::string, std::vector<double>> attributes;
    std::map<std::string, std::map<std::int64_t, std::string>> attribute_text;
    std::vector<std::int64_t> lines;  ///< the file's line number of each example (from 1)
    /// Lines with label null (no answer to score): examples with label and prediction −1, counted
    /// and left out of the bins.
    std::int64_t unlabelled = 0;
    /// Reads `path`; throws IoError (unreadable) or FormatError naming the line.
    static PredictionFile read(const std::string& path);
};
/// Accuracy by length (or by an attribute) of an evaluation's predictions; `b` may be null (the
/// same examples: same count, lengths and labels, else ConfigError).
LengthAccuracyResult length_accuracy(const PredictionFile& a, const PredictionFile* b,
                                     const LengthAccuracyOptions& options);

}  // namespace routescope::analysis
