#include "engine/train/labelled_set.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/data/special_tokens.hpp"

namespace routescope::train {

int LabelledSet::max_length() const {
    std::size_t n = 0;
    for (const auto& e : examples)
        n = std::max(n, e.tokens.size());
    return static_cast<int>(n);
}

LabelledSet classification_examples(const data::ClassificationSet& set,
                                    const data::Tokenizer& tokenizer, int seq_len) {
    const int framing = set.pairs ? 3 : 2;  // [CLS] a [SEP] (b [SEP])
    if (seq_len < framing + (set.pairs ? 2 : 1))
        throw ConfigError("data.seq_len: " + std::to_string(seq_len) + " leaves no room for " +
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
    LabelledSet out;
    out.source = set.path;
    out.labels = set.labels;
    out.examples.reserve(set.examples.size());
    const auto budget = static_cast<std::size_t>(seq_len - framing);
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
    for (const LabelledExample& e : set.examples)
        for (const std::int32_t t : e.tokens) {
            if (t == sp.cls || t == sp.sep || t == sp.pad) continue;
            ++n.words;
            n.unknown += t == sp.unk ? 1 : 0;
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

}  // namespace routescope::train
