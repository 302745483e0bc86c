#pragma once
// Classification data (TASKS.md): GLUE-style TSV (or CSV) with a header, or JSON Lines. The text is
// `sentence` (or `text`), or a pair — `sentence1` + `sentence2` (RTE, WNLI, MNLI), `question` +
// `sentence` (QNLI), `question1` + `question2` (QQP), `#1 String` + `#2 String` (MRPC), `premise` +
// `hypothesis` — as GLUE's files are distributed; the label `label`, or `gold_label` (MNLI, SNLI;
// "-" rows left out), `is_duplicate` (QQP), `Quality` (MRPC); other columns (index, ids, parses,
// the annotators' votes) are ignored. JSON Lines: {"text": …, "label": …} or {"text_a": …,
// "text_b": …, "label": …}, or the same field names as the TSV columns (Hugging Face datasets'
// to_json); a file whose every label is −1 (a test split there) is unlabelled. Every problem is a
// FormatError naming the file and the line: a row with the wrong number of fields, invalid JSON
// or UTF-8, a missing text or label.
//
// The label set is read from the data: the distinct labels, sorted numerically when every label
// is an integer ("0", "1", "10", "+1", or JSON numbers) and as strings otherwise, then numbered
// 0..K−1 in that order (docs/decisions.md, "Data: classification labels"). A validation file is
// numbered with the training file's label set; a label the training set lacks is an error.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace routescope::data {

struct ClassificationExample {
    std::string text_a;
    std::optional<std::string> text_b;  ///< second sentence of a pair
    std::string label;                  ///< as written ("entailment", "1"); empty when unlabelled
    std::int64_t line = 0;              ///< 1-based line in the file
    std::int32_t label_id = -1;         ///< index into ClassificationSet::labels
};

struct ClassificationSet {
    std::string path;
    bool pairs = false;
    std::vector<ClassificationExample> examples;
    std::vector<std::string> labels;  ///< the label set, in id order
    /// Rows left out because their gold_label is "-" (no annotator consensus: SNLI's convention,
    /// which every NLI loader drops).
    std::int64_t no_consensus = 0;
    /// A table with a 'score' column and no label column (GLUE's STS-B): the column's name. Its
    /// gold values are a regression target, which a classifier cannot score.
    std::string regression_column;
};

enum class ClassificationFormat { tsv, csv, json_lines };
/// The format a file's name gives (.tsv, .csv, .jsonl or .json, any case); none for other names
/// and for directories (what dump and eval then read as a text corpus).
std::optional<ClassificationFormat> classification_format(const std::string& path);

/// TSV when the name ends in .tsv, CSV for .csv, JSON Lines when it ends in .jsonl or .json.
/// `require_labels` false accepts unlabelled rows (prediction only; label_id −1). Labels are
/// numbered from the file's own label set. A file whose every label is −1 is a split without
/// gold labels (Hugging Face's test splits), read as unlabelled, unless `minus_one_is_class`:
/// read against a label set with −1 as a class (a classifier of {−1, +1}), where it is scored.
ClassificationSet read_classification(const std::string& path, bool require_labels = true,
                                      bool minus_one_is_class = false);
ClassificationSet read_classification_tsv(const std::string& path, bool require_labels = true,
                                          bool minus_one_is_class = false);
/// Comma-separated values (RFC 4180 quoting, as pandas' and Hugging Face datasets' to_csv write)
/// with the TSV's header rules; a record's line is the line it ends on.
ClassificationSet read_classification_csv(const std::string& path, bool require_labels = true,
                                          bool minus_one_is_class = false);
ClassificationSet read_classification_jsonl(const std::string& path, bool require_labels = true,
                                            bool minus_one_is_class = false);

/// The sorted label set of some examples (see above).
std::vector<std::string> label_set(const std::vector<ClassificationExample>& examples);

/// Numbers `set` with another set's labels (validation with the training labels). FormatError
/// naming file and line for a label outside `labels`.
void assign_label_ids(ClassificationSet& set, const std::vector<std::string>& labels);

}  // namespace routescope::data
