#include "engine/data/classification_set.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include <csv.h>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/utf8.hpp"

namespace routescope::data {

namespace {
constexpr const char* kRegression =
    "a regression target (such as STS-B's similarity score); Routescope fine-tunes classifiers "
    "only";

std::string where(const std::string& path, std::int64_t line) {
    return path + ":" + std::to_string(line) + ": ";
}

// docs/decisions.md "Labels with surrounding spaces": rejected, not stripped. "yes " and "yes"
// would otherwise be two classes (or an eval label missing from the training set) without a word.
void check_label_spaces(const std::string& label, const std::string& path, std::int64_t line) {
    if (label.empty()) return;
    const auto space = [](char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
    };
    if (space(label.front()) || space(label.back()))
        throw FormatError(where(path, line) + "label '" + label +
                          "' has leading or trailing spaces (labels are compared exactly; remove "
                          "the spaces)");
}

// An integer as a label is written: an optional sign ('+' too: "+1" / "-1", LIBSVM's sentiment
// labels), then decimal digits, of any size (a JSON Lines label 18446744073709551615 is one).
bool is_integer(const std::string& s) {
    const std::size_t digits = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    return s.size() > digits && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(digits),
                                            s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The order of two integers written as is_integer accepts them, by value; the same value written
// two ways ("1", "+1", "01") is ordered by its text, so that the label set is one order.
bool integer_less(const std::string& a, const std::string& b) {
    const auto split = [](const std::string& s) {
        const bool sign = s[0] == '+' || s[0] == '-';
        std::string_view magnitude(s);
        magnitude.remove_prefix(sign ? 1 : 0);
        magnitude.remove_prefix(std::min(magnitude.find_first_not_of('0'), magnitude.size()));
        return std::pair{s[0] == '-' && !magnitude.empty(), magnitude};
    };
    const auto [neg_a, mag_a] = split(a);
    const auto [neg_b, mag_b] = split(b);
    if (neg_a != neg_b) return neg_a;
    if (mag_a != mag_b) {
        const bool smaller =
            mag_a.size() != mag_b.size() ? mag_a.size() < mag_b.size() : mag_a < mag_b;
        return neg_a ? !smaller : smaller;
    }
    return a < b;
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
        const std::size_t tab = line.find('\t', start);
        fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
        if (tab == std::string::npos) return fields;
        start = tab + 1;
    }
}

// A file without any LF whose first "line" holds two CRs or more: lines ended by CR alone (classic
// Mac OS, an old Excel export), which read as one line ("header has no label column", "no
// examples", or every CSV record numbered line 1); said as what it is, with the conversion.
void refuse_cr_alone(const std::string& path, const std::string& first_line, bool at_eof) {
    if (!at_eof || std::count(first_line.begin(), first_line.end(), '\r') < 2) return;
    throw FormatError(path +
                      ": its lines end in CR alone (classic Mac OS), so it reads as one line: "
                      "convert them, e.g. `tr '\\r' '\\n' < " +
                      path + " > converted" + std::filesystem::path(path).extension().string() +
                      "`");
}

// Reads lines with their numbers; UTF-8 is checked here so both formats report it alike.
template <class F>
void for_each_line(const std::string& path, F&& fn) {
    require_regular_file(path, "classification");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot open classification file");
    std::string line;
    std::int64_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (n == 1) refuse_cr_alone(path, line, in.eof());
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
        if (n == 1)
            if (const std::string wide = wide_unicode_text(line, path); !wide.empty())
                throw FormatError(path + ": " + wide);
        if (const auto bad = first_invalid_utf8(line)) {
            throw FormatError(where(path, n) + "invalid UTF-8 at byte " + std::to_string(*bad + 1) +
                              kOtherEncoding);
        }
        fn(line, n);
    }
    if (in.bad()) throw IoError(path + ": read error");
}

// Hugging Face datasets label a split without gold labels (GLUE's test sets) −1 throughout, and
// so do its to_csv and to_json exports: a table whose every label reads -1 is unlabelled (as the
// JSON Lines reader decides). −1 among other labels is a class ({−1, 0, 1} sentiment).
void unlabel_minus_one_split(ClassificationSet& set, bool require_labels, bool minus_one_is_class) {
    if (minus_one_is_class) return;
    bool any = false;
    for (const auto& e : set.examples) {
        if (e.label.empty()) continue;
        if (e.label != "-1") return;
        any = true;
    }
    if (!any) return;
    if (require_labels)
        throw FormatError(where(set.path, set.examples.front().line) +
                          "missing label (every label in the file is -1: a split without gold "
                          "labels)");
    for (auto& e : set.examples)
        e.label.clear();
}

// Labels that read as real numbers, one of them not an integer ("3.8", "0.5"): a regression
// target (STS-B's similarity as Hugging Face exports it, under "label"), which a classifier
// would take for as many classes as there are distinct scores.
void refuse_regression_labels(const ClassificationSet& set) {
    const ClassificationExample* fractional = nullptr;
    for (const auto& e : set.examples) {
        if (e.label.empty()) continue;
        char* end = nullptr;
        const double v = std::strtod(e.label.c_str(), &end);
        if (end != e.label.c_str() + e.label.size() || !std::isfinite(v)) return;  // a name
        if (!fractional && v != std::trunc(v)) fractional = &e;
    }
    if (fractional)
        throw FormatError(where(set.path, fractional->line) + "label '" + fractional->label +
                          "' is a real number, as every label of the file is: " + kRegression);
}

// 2^63: whole numbers below it in magnitude are 64-bit integers (a double's whole values there
// are exact integers).
constexpr double kInt64Bound = 9223372036854775808.0;

// A table's labels that all read as whole numbers written as reals ("0.0", "1.0": pandas' to_csv
// of a float column) are the classes 0 and 1, as a JSON Lines file's 1.0 is: the same data in
// either format gives the same label names (a model trained on one evaluated the other with
// "label '1.0' is not in the training label set"). Any label that is a name leaves them as they
// are; a fractional one is a regression target (refuse_regression_labels).
void integral_labels_as_integers(ClassificationSet& set) {
    for (const auto& e : set.examples) {
        if (e.label.empty()) continue;
        char* end = nullptr;
        const double v = std::strtod(e.label.c_str(), &end);
        if (end != e.label.c_str() + e.label.size() || !std::isfinite(v) || v != std::trunc(v) ||
            std::abs(v) >= kInt64Bound)
            return;
    }
    for (auto& e : set.examples) {
        if (e.label.empty() || e.label.find_first_of(".eE") == std::string::npos) continue;
        e.label = std::to_string(static_cast<long long>(std::strtod(e.label.c_str(), nullptr)));
    }
}

// The text of the number a JSON object's top-level `key` holds, as the line writes it ("1e20"):
// nlohmann keeps a real's lexeme only through its SAX interface. The last of duplicate keys, as
// the parsed object keeps.
std::string number_as_written(const std::string& line, const std::string& key) {
    struct Sax : nlohmann::json_sax<nlohmann::json> {
        const std::string& wanted;
        int depth = 0;
        bool at_key = false;
        std::string found;
        explicit Sax(const std::string& k) : wanted(k) {}
        bool value() {
            at_key = false;
            return true;
        }
        bool null() override { return value(); }
        bool boolean(bool) override { return value(); }
        bool number_integer(number_integer_t v) override {
            if (at_key) found = std::to_string(v);
            return value();
        }
        bool number_unsigned(number_unsigned_t v) override {
            if (at_key) found = std::to_string(v);
            return value();
        }
        bool number_float(number_float_t, const string_t& s) override {
            if (at_key) found = s;
            return value();
        }
        bool string(string_t&) override { return value(); }
        bool binary(binary_t&) override { return value(); }
        bool start_object(std::size_t) override {
            at_key = false;
            ++depth;
            return true;
        }
        bool key(string_t& k) override {
            at_key = depth == 1 && k == wanted;
            return true;
        }
        bool end_object() override {
            --depth;
            return true;
        }
        bool start_array(std::size_t) override {
            at_key = false;
            ++depth;
            return true;
        }
        bool end_array() override {
            --depth;
            return true;
        }
        bool parse_error(std::size_t, const std::string&,
                         const nlohmann::detail::exception&) override {
            return false;
        }
    } sax(key);
    nlohmann::json::sax_parse(line, &sax);
    return sax.found;
}

void finish(ClassificationSet& set) {
    if (set.examples.empty()) throw FormatError(set.path + ": no examples");
    refuse_regression_labels(set);
    set.labels = label_set(set.examples);
    assign_label_ids(set, set.labels);
}
}  // namespace

std::vector<std::string> label_set(const std::vector<ClassificationExample>& examples) {
    std::set<std::string> distinct;
    for (const auto& e : examples)
        if (!e.label.empty()) distinct.insert(e.label);
    std::vector<std::string> labels(distinct.begin(), distinct.end());
    if (std::all_of(labels.begin(), labels.end(),
                    [](const std::string& s) { return is_integer(s); }))
        std::sort(labels.begin(), labels.end(), integer_less);
    return labels;
}

void assign_label_ids(ClassificationSet& set, const std::vector<std::string>& labels) {
    for (auto& e : set.examples) {
        if (e.label.empty()) {
            e.label_id = -1;
            continue;
        }
        const auto it = std::find(labels.begin(), labels.end(), e.label);
        if (it == labels.end()) {
            throw FormatError(where(set.path, e.line) + "label '" + e.label +
                              "' is not in the training label set");
        }
        e.label_id = static_cast<std::int32_t>(it - labels.begin());
    }
}

namespace {
// The text columns of GLUE's files as distributed and of the common exports, in order of
// preference: a pair when both of its columns are present, else a single text. QNLI's header is
// index/question/sentence/label: reading `sentence` alone would drop the question.
constexpr std::pair<const char*, const char*> kPairColumns[] = {
    {"sentence1", "sentence2"},  // RTE, WNLI, MNLI, SNLI
    {"question", "sentence"},    // QNLI
    {"question", "passage"},     // BoolQ (SuperGLUE)
    {"question1", "question2"},  // QQP
    {"#1 String", "#2 String"},  // MRPC
    {"premise", "hypothesis"},   // ANLI, SNLI and MNLI as Hugging Face datasets export them
    {"text_a", "text_b"}};       // the JSON Lines names
constexpr const char* kSingleColumns[] = {"sentence", "text", "sentence1", "text_a"};
// The label column: GLUE's `label`; MNLI's and SNLI's `gold_label` (beside label1…label5, the
// annotators' votes); QQP's `is_duplicate`; MRPC's `Quality`.
constexpr const char* kLabelColumns[] = {"label", "gold_label", "is_duplicate", "Quality"};
}  // namespace

namespace {
// The header and rows of a table (TSV or CSV) as examples: the columns found by name (above),
// every row as wide as the header. `kind` names the separator in messages.
class TableReader {
public:
    TableReader(ClassificationSet& set, bool require_labels, const char* kind)
        : set_(set), require_labels_(require_labels), kind_(kind) {}

    void row(const std::vector<std::string>& fields, std::int64_t n) {
        if (header_.empty()) return read_header(fields, n);
        if (fields.size() != header_.size()) {
            throw FormatError(where(set_.path, n) + "expected " + std::to_string(header_.size()) +
                              " " + kind_ + " fields (as the header), found " +
                              std::to_string(fields.size()));
        }
        ClassificationExample e;
        e.line = n;
        e.text_a = fields[static_cast<std::size_t>(col_a_)];
        if (col_b_ >= 0) e.text_b = fields[static_cast<std::size_t>(col_b_)];
        if (col_label_ >= 0) e.label = fields[static_cast<std::size_t>(col_label_)];
        if (gold_ && e.label == "-") {  // no annotator consensus (SNLI): the row is left out
            ++set_.no_consensus;
            return;
        }
        check_label_spaces(e.label, set_.path, n);
        if (e.label.empty() && require_labels_)
            throw FormatError(where(set_.path, n) + "missing label");
        set_.examples.push_back(std::move(e));
    }
    bool have_header() const { return !header_.empty(); }

private:
    void read_header(const std::vector<std::string>& header, std::int64_t n) {
        header_ = header;
        const auto column = [&](const char* name) {
            int found = -1;
            for (int c = 0; c < static_cast<int>(header_.size()); ++c)
                if (header_[static_cast<std::size_t>(c)] == name) {
                    if (found >= 0)
                        throw FormatError(where(set_.path, n) + "the header names column '" + name +
                                          "' twice");
                    found = c;
                }
            return found;
        };
        for (const auto& [a, b] : kPairColumns) {
            const int ca = column(a), cb = column(b);
            if (ca >= 0 && cb >= 0) {
                col_a_ = ca;
                col_b_ = cb;
                break;
            }
        }
        for (const char* name : kSingleColumns) {
            if (col_a_ >= 0) break;
            col_a_ = column(name);
        }
        for (const char* name : kLabelColumns) {
            col_label_ = column(name);
            if (col_label_ >= 0) {
                gold_ = std::string(name) == "gold_label";
                break;
            }
        }
        if (col_a_ < 0) {
            const bool cola = header_.size() == 4 && is_integer(header_[1]);
            throw FormatError(
                where(set_.path, n) +
                "header has no text column ('sentence', 'text', or a pair: 'sentence1' + "
                "'sentence2', 'question' + 'sentence' or 'passage', 'question1' + 'question2', "
                "'#1 String' + '#2 String', 'premise' + 'hypothesis')" +
                (cola ? "; GLUE's CoLA train and dev files have no header: add a first line "
                        "naming the four columns source, label, label_orig and sentence"
                      : ""));
        }
        if (col_label_ < 0 && require_labels_) {
            throw FormatError(where(set_.path, n) + "header has no label column ('label', " +
                              "'gold_label', 'is_duplicate' or 'Quality')" +
                              (column("score") >= 0 ? "; a 'score' column is a regression "
                                                      "target (STS-B), and Routescope "
                                                      "fine-tunes classifiers only"
                                                    : ""));
        }
        // GLUE's STS-B dev file read for prediction (eval, dump): its 'score' column is the gold
        // value, a regression target; a classifier's caller refuses it (run_inputs.cpp), as a
        // real-number 'label' is refused. Read as an unlabelled file it was "scored 0" unsaid.
        if (col_label_ < 0 && column("score") >= 0) set_.regression_column = "score";
        set_.pairs = col_b_ >= 0;
    }

    ClassificationSet& set_;
    bool require_labels_;
    const char* kind_;
    std::vector<std::string> header_;
    int col_a_ = -1, col_b_ = -1, col_label_ = -1;
    bool gold_ = false;
};
}  // namespace

ClassificationSet read_classification_tsv(const std::string& path, bool require_labels,
                                          bool minus_one_is_class) {
    ClassificationSet set;
    set.path = path;
    TableReader table(set, require_labels, "tab-separated");
    for_each_line(path, [&](const std::string& line, std::int64_t n) {
        if (line.empty() && table.have_header()) return;
        table.row(split_tabs(line), n);
    });
    if (!table.have_header()) throw FormatError(path + ": empty file (no header)");
    integral_labels_as_integers(set);
    unlabel_minus_one_split(set, require_labels, minus_one_is_class);
    finish(set);
    return set;
}

ClassificationSet read_classification_csv(const std::string& path, bool require_labels,
                                          bool minus_one_is_class) {
    ClassificationSet set;
    set.path = path;
    TableReader table(set, require_labels, "comma-separated");
    // libcsv (RFC 4180: quoted fields with "" for a quote, commas and line breaks inside quotes),
    // fed a line at a time so that each record knows the line it ends on. Fields are kept as
    // written (no trimming of spaces, as Python's csv module and pandas read them); blank lines
    // are skipped; an unterminated quote at the end of the file is an error, not a swallowed tail.
    struct State {
        std::vector<std::string> fields;
        std::vector<std::vector<std::string>> done;
        std::vector<std::int64_t> lines;
        std::int64_t line = 0;
        std::int64_t record_start = 1;  // the line the record being read starts on
    } st;
    csv_parser parser{};
    if (csv_init(&parser, CSV_APPEND_NULL) != 0)
        throw Error(path + ": cannot start the CSV parser");
    csv_set_space_func(&parser, [](unsigned char) { return 0; });
    const auto on_field = [](void* data, std::size_t len, void* state) {
        static_cast<State*>(state)->fields.emplace_back(static_cast<const char*>(data), len);
    };
    const auto on_record = [](int, void* state) {
        auto& s = *static_cast<State*>(state);
        s.done.push_back(std::move(s.fields));
        s.lines.push_back(s.record_start);  // a record is named by the line it starts on
        s.fields.clear();
    };
    const auto drain = [&] {
        for (std::size_t r = 0; r < st.done.size(); ++r) {
            for (const auto& f : st.done[r])
                if (const auto bad = first_invalid_utf8(f))
                    throw FormatError(where(path, st.lines[r]) + "invalid UTF-8 in a field" +
                                      kOtherEncoding);
            table.row(st.done[r], st.lines[r]);
        }
        st.done.clear();
        st.lines.clear();
    };
    try {
        require_regular_file(path, "classification");
        std::ifstream in(path, std::ios::binary);
        if (!in) throw IoError(path + ": cannot open classification file");
        std::string line;
        while (std::getline(in, line)) {
            ++st.line;
            // libcsv ends a record at a lone CR too: such a file's records were all "line 1".
            if (st.line == 1) refuse_cr_alone(path, line, in.eof());
            if (st.line == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
            if (st.line == 1)
                if (const std::string wide = wide_unicode_text(line, path); !wide.empty())
                    throw FormatError(path + ": " + wide);
            line.push_back('\n');
            // libcsv's ROW_NOT_BEGUN (0): this line starts a record (or is blank).
            if (parser.pstate == 0) st.record_start = st.line;
            if (csv_parse(&parser, line.data(), line.size(), on_field, on_record, &st) !=
                line.size())
                throw FormatError(where(path, st.line) +
                                  "CSV: " + csv_strerror(csv_error(&parser)));
            drain();
        }
        if (in.bad()) throw IoError(path + ": read error");
        // Inside a quoted field at the end (libcsv's FIELD_BEGUN state, 2, with `quoted` set; its
        // CSV_STRICT_FINI needs CSV_STRICT, which would also refuse a stray quote inside an
        // unquoted field that Python's csv reads as written): an unclosed quote.
        // Said at the line where the record starts: the field opened there is still open (a
        // quote inside it not doubled, or text after its closing quote — `"abc" ,1` — which
        // this reader takes as part of the field).
        if (parser.pstate == 2 && parser.quoted)
            throw FormatError(where(path, st.record_start) +
                              "CSV: a quoted field of the record starting here is never closed "
                              "(a quote inside a quoted field must be doubled, \"\"; text after "
                              "a closing quote, as in \"abc\" ,1, keeps the field open)");
        if (csv_fini(&parser, on_field, on_record, &st) != 0)
            throw FormatError(where(path, st.line) + "CSV: " + csv_strerror(csv_error(&parser)));
        drain();
    } catch (...) {
        csv_free(&parser);
        throw;
    }
    csv_free(&parser);
    if (!table.have_header()) throw FormatError(path + ": empty file (no header)");
    integral_labels_as_integers(set);
    unlabel_minus_one_split(set, require_labels, minus_one_is_class);
    finish(set);
    return set;
}

ClassificationSet read_classification_jsonl(const std::string& path, bool require_labels,
                                            bool minus_one_is_class) {
    ClassificationSet set;
    set.path = path;
    // The text fields, chosen by the first record: "text", or "text_a" with an optional "text_b"
    // (TASKS.md), or one of the pairs / single texts of kPairColumns and kSingleColumns (Hugging
    // Face datasets' to_json of GLUE: sentence, question + sentence, premise + hypothesis, …).
    std::string key_a, key_b;
    bool b_optional = false;
    bool all_minus_one = true;  // every label the integer −1: a test split, unlabelled
    std::int64_t first_label_line = 0;
    for_each_line(path, [&](const std::string& line, std::int64_t n) {
        if (line.find_first_not_of(" \t") == std::string::npos) return;
        // json.dump(records, indent=2): the array's "[" alone on the first line.
        if (n == 1 && line.find_first_not_of(" \t[") == std::string::npos)
            throw FormatError(where(path, n) +
                              "one JSON array spread over many lines, not one record per line "
                              "(JSON Lines: e.g. pandas' to_json(\"train.jsonl\", "
                              "orient=\"records\", lines=True))");
        const nlohmann::json j = parse_json_text(line, path + ":" + std::to_string(n));
        if (!j.is_object())
            throw FormatError(where(path, n) +
                              (j.is_array() ? "a JSON array, not one record per line (JSON Lines: "
                                              "write each record on its own line)"
                                            : "not a JSON object"));
        const auto text = [&](const std::string& key) -> std::optional<std::string> {
            if (!j.contains(key)) return std::nullopt;
            if (!j[key].is_string()) {
                throw FormatError(where(path, n) + "'" + key + "' is not a string");
            }
            return j[key].get<std::string>();
        };
        if (key_a.empty()) {
            if (j.contains("text")) {
                key_a = "text";
            } else if (j.contains("text_a")) {
                key_a = "text_a";
                key_b = "text_b";
                b_optional = true;
                set.pairs = j.contains("text_b");
            } else {
                for (const auto& [a, b] : kPairColumns)
                    if (j.contains(a) && j.contains(b)) {
                        key_a = a;
                        key_b = b;
                        set.pairs = true;
                        break;
                    }
                for (const char* name : kSingleColumns)
                    if (key_a.empty() && j.contains(name)) key_a = name;
            }
            if (key_a.empty())
                throw FormatError(
                    where(path, n) +
                    "no text field ('text', 'text_a' [+ 'text_b'], 'sentence', or "
                    "a pair: 'sentence1' + 'sentence2', 'question' + 'sentence' or 'passage', "
                    "'question1' + 'question2', 'premise' + 'hypothesis')");
        }
        ClassificationExample e;
        e.line = n;
        const auto a = text(key_a);
        if (!a) throw FormatError(where(path, n) + "no '" + key_a + "' field");
        e.text_a = *a;
        if (!key_b.empty()) {
            e.text_b = text(key_b);
            if (!b_optional && !e.text_b)
                throw FormatError(where(path, n) + "no '" + key_b + "' field");
        }
        if (e.text_b.has_value() != set.pairs) {
            throw FormatError(where(path, n) + (set.pairs ? "no 'text_b' field in a file of pairs"
                                                          : "'text_b' in a file of single texts"));
        }
        // "label", or SNLI's and MultiNLI's own JSON Lines "gold_label" ("-": no annotator
        // consensus, the record left out and counted, as in their TSVs).
        const char* label_key = j.contains("label")        ? "label"
                                : j.contains("gold_label") ? "gold_label"
                                                           : nullptr;
        if (label_key && std::string_view(label_key) == "gold_label" && j[label_key] == "-") {
            ++set.no_consensus;
            return;
        }
        if (label_key && !j[label_key].is_null()) {
            const auto& l = j[label_key];
            if (l.is_string()) {
                e.label = l.get<std::string>();
            } else if (l.is_number_unsigned()) {  // 0 and up, to 18446744073709551615
                e.label = std::to_string(l.get<std::uint64_t>());
            } else if (l.is_number_integer()) {
                e.label = std::to_string(l.get<std::int64_t>());
            } else if (l.is_boolean()) {
                e.label = l.get<bool>() ? "1" : "0";
            } else if (l.is_number_float() && l.get<double>() == std::trunc(l.get<double>())) {
                // 1.0: class 1, 1e16: class 10000000000000000. A whole number beyond the 64-bit
                // integers (1e20, or an integer of more digits, which the parser reads as a real)
                // is kept as written, as the TSV reader keeps it: 1e20 and 2e20 are two classes,
                // not one overflowed cast.
                const double v = l.get<double>();
                if (std::abs(v) < kInt64Bound) {
                    e.label = std::to_string(static_cast<long long>(v));
                } else {
                    e.label = number_as_written(line, label_key);
                    if (e.label.empty()) e.label = l.dump();
                }
            } else if (l.is_number_float()) {
                throw FormatError(where(path, n) + "'" + label_key + "' is " + l.dump() +
                                  ", a real number: " + kRegression);
            } else {
                throw FormatError(where(path, n) + "'" + label_key +
                                  "' is not a string, an integer or a boolean");
            }
            if (!first_label_line) first_label_line = n;
            if (!(l.is_number_integer() && !l.is_number_unsigned() && l.get<std::int64_t>() == -1))
                all_minus_one = false;
        }
        check_label_spaces(e.label, path, n);
        set.examples.push_back(std::move(e));
    });
    // Hugging Face datasets label a split without gold labels (GLUE's test sets) −1 throughout.
    // Only a file whose every label is the integer −1 is read as unlabelled: −1 among other labels
    // is a class ({−1, 0, 1} sentiment).
    if (minus_one_is_class) all_minus_one = false;
    if (first_label_line && all_minus_one)
        for (auto& e : set.examples)
            e.label.clear();
    if (require_labels)
        for (const auto& e : set.examples)
            if (e.label.empty())
                throw FormatError(where(path, e.line) +
                                  (first_label_line && all_minus_one
                                       ? "missing label (every label in the file is -1: a split "
                                         "without gold labels)"
                                       : "missing label"));
    finish(set);
    return set;
}

std::optional<ClassificationFormat> classification_format(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return std::nullopt;
    std::string ext = std::filesystem::path(path).extension().string();
    for (char& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".tsv") return ClassificationFormat::tsv;
    if (ext == ".csv") return ClassificationFormat::csv;
    if (ext == ".jsonl" || ext == ".json") return ClassificationFormat::json_lines;
    return std::nullopt;
}

ClassificationSet read_classification(const std::string& path, bool require_labels,
                                      bool minus_one_is_class) {
    if (const auto format = classification_format(path)) {
        switch (*format) {
            case ClassificationFormat::tsv:
                return read_classification_tsv(path, require_labels, minus_one_is_class);
            case ClassificationFormat::csv:
                return read_classification_csv(path, require_labels, minus_one_is_class);
            case ClassificationFormat::json_lines:
                return read_classification_jsonl(path, require_labels, minus_one_is_class);
        }
    }
    if (std::error_code ec; std::filesystem::is_directory(path, ec))
        throw IoError(path + ": a directory, not a classification file (.tsv, .csv or .jsonl)");
    const auto ends = [&](const char* ext) {
        const std::string e(ext);
        return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
    };
    // CSV, not TSV: pandas quotes a field holding a quote or a newline in either, and the TSV
    // reader takes GLUE's files literally (their quotes are text), so only CSV reads it back.
    if (ends(".parquet") || ends(".arrow"))
        throw FormatError(path +
                          ": a Hugging Face datasets file (Parquet or Arrow), which is not read; "
                          "export the split with dataset.to_json(\"train.jsonl\") or "
                          "to_csv(\"train.csv\", index=False)");
    if (ends(".gz") || ends(".bz2") || ends(".xz") || ends(".zst") || ends(".zip"))
        throw FormatError(path +
                          ": a compressed file, which is not read; decompress it first (e.g. "
                          "gunzip -k FILE), keeping its .tsv, .csv or .jsonl name");
    throw FormatError(path +
                      ": unknown classification format (expected .tsv, .csv, .jsonl or .json)");
}

}  // namespace routescope::data
