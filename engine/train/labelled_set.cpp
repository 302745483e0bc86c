#include "engine/train/labelled_set.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/data/special_tokens.hpp"

namespace routescope::train {

namespace {
/// data.pair_gap's filler draws ("pairgap1"), apart from every other use of a seed.
constexpr std::uint64_t kPairGapSalt = 0x7061697267617031ULL;

// The seed of a pair's filler: FNV-1a (64-bit) over its first text, a 0xFF byte (never in the
// UTF-8 the readers accept, so "ab"+"c" and "a"+"bc" differ) and its second text. Keyed by the
// text, not by the line: the same pair gets the same filler in the training file, a validation
// or test file, a reordered copy, and for every model and train.seed compared on it.
std::uint64_t pair_seed(const std::string& a, const std::string& b) {
    std::uint64_t h = 0xCBF29CE484222325ULL;
    const auto add = [&h](unsigned char c) {
        h ^= c;
        h *= 0x100000001B3ULL;
    };
    for (const char c : a)
        add(static_cast<unsigned char>(c));
    add(0xFF);
    for (const char c : b)
        add(static_cast<unsigned char>(c));
    return h ^ kPairGapSalt;
}
}  // namespace

int LabelledSet::max_length() const {
    std::size_t n = 0;
    for (const auto& e : examples)
        n = std::max(n, e.tokens.size());
    return static_cast<int>(n);
}

LabelledSet classification_examples(const data::ClassificationSet& set,
                                    const data::Tokenizer& tokenizer, int seq_len, int pair_gap,
                                    std::string_view length_setting) {
    const std::string length_name(length_setting);
    if (pair_gap < 0)
        throw ConfigError("data.pair_gap: " + std::to_string(pair_gap) + " must be at least 0");
    // A gap between the two sentences of a file that has one: silently training without it
    // would table a "gap" result that is the no-gap one.
    if (pair_gap > 0 && !set.pairs)
        throw ConfigError("data.pair_gap: " + std::to_string(pair_gap) + " filler tokens go " +
                          "between the two sentences of a pair, but " + set.path +
                          " holds single sentences; set data.pair_gap = 0 or give a file of "
                          "pairs (e.g. QNLI's question + sentence)");
    const int framing = set.pairs ? 3 : 2;  // [CLS] a [SEP] (b [SEP])
    if (static_cast<std::int64_t>(seq_len) < framing + (set.pairs ? 2 : 1) + std::int64_t{pair_gap})
        throw ConfigError(
            pair_gap > 0
                ? "data.pair_gap: " + std::to_string(pair_gap) +
                      " filler tokens leave no room for a pair of sentences of " + set.path +
                      " at " + length_name + " = " + std::to_string(seq_len) +
                      " ([CLS] a [SEP] gap b [SEP] needs " + length_name +
                      " at least data.pair_gap + 5): give data.pair_gap at most " +
                      std::to_string(std::max(0, seq_len - 5)) + " or a longer " + length_name
                : length_name + ": " + std::to_string(seq_len) + " leaves no room for " +
                      (set.pairs ? "a pair of sentences" : "a sentence") + " of " + set.path);
    const data::SpecialIds sp = tokenizer.specials();
    // Said of the data being framed and of the vocabulary that lacks the pieces (a text corpus
    // is framed as single texts too, so not "classification examples"); this function does not
    // know the checkpoint's path (import refuses such a vocabulary, naming it).
    if (sp.cls < 0 || sp.sep < 0)
        throw ConfigError(
            "tokenizer: the " + tokenizer.kind() + " vocabulary (" +
            std::to_string(tokenizer.vocab_size()) + " pieces) has no " +
            (sp.cls < 0 && sp.sep < 0 ? std::string("[CLS] and no [SEP] pieces")
             : sp.cls < 0             ? std::string("[CLS] piece")
                                      : std::string("[SEP] piece")) +
            " to frame the inputs of " + set.path +
            " as [CLS] text [SEP]: the checkpoint's tokenizer (or the one given with --tokenizer) "
            "is not a BERT-style vocabulary");
    // The filler's pieces: every id the tokenizer does not call special ([PAD], [CLS], [SEP],
    // [MASK], [UNK], <s>, WordPiece's [unusedN]: not text), as MLM's random replacements are.
    std::vector<std::int32_t> ordinary;
    if (pair_gap > 0) {
        for (std::int32_t id = 0; id < tokenizer.vocab_size(); ++id)
            if (!tokenizer.is_special(id)) ordinary.push_back(id);
        if (ordinary.empty())
            throw ConfigError("data.pair_gap: the " + tokenizer.kind() +
                              " vocabulary has no ordinary (non-special) piece to fill the gap");
    }
    LabelledSet out;
    out.source = set.path;
    out.labels = set.labels;
    out.pair_gap = pair_gap;
    out.pad = std::max(0, sp.pad);
    out.examples.reserve(set.examples.size());
    // The gap is counted before the pair is cut: only the sentences give way.
    const auto budget = static_cast<std::size_t>(seq_len - framing - pair_gap);
    for (const auto& x : set.examples) {
        std::vector<std::int32_t> a = tokenizer.encode(x.text_a);
        std::vector<std::int32_t> b;
        if (x.text_b) b = tokenizer.encode(*x.text_b);
        // Longest first, the second sentence on a tie (BERT's _truncate_seq_pair and the
        // Hugging Face tokenizers: an odd budget leaves the spare token to the longer first).
        while (a.size() + b.size() > budget) {
            if (a.size() > b.size())
                a.pop_back();
            else
                b.pop_back();
        }
        LabelledExample e;
        e.tokens.push_back(sp.cls);
        e.tokens.insert(e.tokens.end(), a.begin(), a.end());
        e.tokens.push_back(sp.sep);
        e.types.assign(e.tokens.size(), 0);
        if (set.pairs) {
            if (pair_gap > 0) {
                data::RandomStream draw(pair_seed(x.text_a, x.text_b.value_or("")), 0, 0);
                for (int i = 0; i < pair_gap; ++i)
                    e.tokens.push_back(ordinary[draw.below(ordinary.size())]);
            }
            e.tokens.insert(e.tokens.end(), b.begin(), b.end());
            e.tokens.push_back(sp.sep);
            e.types.resize(e.tokens.size(), 1);
        }
        e.label = x.label_id;
        e.line = x.line;
        out.examples.push_back(std::move(e));
    }
    return out;
}

UnknownTokens unknown_tokens(const LabelledSet& set, const data::Tokenizer& tokenizer) {
    const data::SpecialIds sp = tokenizer.specials();
    UnknownTokens n;
    for (const LabelledExample& e : set.examples) {
        // The filler is drawn from ordinary pieces, never [UNK]: counted, it would hide a
        // tokenizer that reads all of the text as [UNK] (the model would see filler alone).
        bool after_first_sep = false;
        int filler_left = 0;
        for (const std::int32_t t : e.tokens) {
            if (filler_left > 0) {
                --filler_left;
                continue;
            }
            if (t == sp.sep && !after_first_sep) {
                after_first_sep = true;
                filler_left = set.pair_gap;
            }
            if (t == sp.cls || t == sp.sep || t == sp.pad) continue;
            ++n.words;
            n.unknown += t == sp.unk ? 1 : 0;
        }
    }
    return n;
}

LabelledSet task_examples(const data::TaskData& task, int split) {
    static const char* const names[] = {"train", "valid", "test"};
    const std::vector<data::TaskExample>* splits[] = {&task.train, &task.valid, &task.test};
    LabelledSet out;
    out.source = "task " + task.name + " (" + names[split] + ")";
    out.targets = task.n_classes == 0;
    out.metric = task.metric;
    for (int c = 0; c < task.n_classes; ++c)
        out.labels.push_back(std::to_string(c));
    for (const auto& x : *splits[split]) {
        LabelledExample e;
        e.tokens = x.input;
        e.types.assign(e.tokens.size(), 0);
        e.label = x.label;
        e.targets = x.targets;
        e.attributes = x.attributes;
        out.examples.push_back(std::move(e));
    }
    return out;
}

data::TaskParams task_params(const TaskParamsConfig& c) {
    data::TaskParams p;
    p.seed = static_cast<std::uint64_t>(c.seed);
    p.n_train = c.n_train;
    p.n_valid = c.n_valid;
    p.n_test = c.n_test;
    p.min_len = c.min_len;
    p.max_len = c.max_len;
    p.n_symbols = c.n_symbols;
    p.min_entries = c.min_entries;
    p.max_entries = c.max_entries;
    p.n_queries = c.n_queries;
    p.span_len = c.span_len;
    p.question_len = c.question_len;
    p.sentence_len = c.sentence_len;
    p.max_attractors = c.max_attractors;
    return p;
}

int split_index(const std::string& name, const std::string& what) {
    if (name == "train") return 0;
    if (name == "valid") return 1;
    if (name == "test") return 2;
    throw ConfigError(what + ": '" + name + "' is not one of train, valid, test");
}

void check_split_option(bool given, const std::string& split, const std::string& data,
                        const std::string& whole) {
    if (!given) return;
    (void)split_index(split, "--split");
    if (!data.empty())
        throw ConfigError("--split " + split +
                          ": it chooses a built-in task's split (--task, or the checkpoint's own "
                          "task); --data " +
                          data + " is " + whole);
}

}  // namespace routescope::train
