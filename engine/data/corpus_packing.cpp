#include "engine/data/corpus_packing.hpp"

#include <algorithm>
#include <string>

#include "engine/core/error.hpp"

namespace routescope::data {

SequenceSet pack_documents(const std::vector<std::vector<std::int32_t>>& documents, int seq_len,
                           const SpecialIds& specials, PackMode mode) {
    if (seq_len < 3) {
        throw ConfigError("data.seq_len: " + std::to_string(seq_len) +
                          " leaves no room for a token between [CLS] and [SEP]");
    }
    if (specials.cls < 0 || specials.sep < 0) {
        throw ConfigError("tokenizer: packing needs [CLS] and [SEP] tokens");
    }
    const auto room = static_cast<std::size_t>(seq_len - 2);
    SequenceSet out;
    std::vector<std::int32_t> seq;
    const auto flush = [&] {
        if (seq.size() > 1) {
            if (seq.back() != specials.sep) seq.push_back(specials.sep);
            out.add(seq);
        }
        seq.assign(1, specials.cls);
    };
    seq.assign(1, specials.cls);
    for (const auto& doc : documents) {
        if (doc.empty()) continue;
        // In greedy mode a document joins the open sequence when it fits between two [SEP]s.
        if (mode == PackMode::Greedy && seq.size() > 1 &&
            seq.size() + 1 + doc.size() + 1 <= static_cast<std::size_t>(seq_len)) {
            seq.push_back(specials.sep);
            seq.insert(seq.end(), doc.begin(), doc.end());
            continue;
        }
        flush();
        for (std::size_t start = 0; start < doc.size(); start += room) {
            const std::size_t n = std::min(room, doc.size() - start);
            seq.insert(seq.end(), doc.begin() + static_cast<std::ptrdiff_t>(start),
                       doc.begin() + static_cast<std::ptrdiff_t>(start + n));
            if (start + n < doc.size() || mode == PackMode::Split) flush();
        }
    }
    flush();
    return out;
}

SequenceSet pack_corpus(TextCorpus& corpus, const Tokenizer& tokenizer, int seq_len,
                        PackMode mode) {
    corpus.reset();
    std::vector<std::vector<std::int32_t>> docs;
    docs.reserve(static_cast<std::size_t>(corpus.size()));
    std::string doc;
    while (corpus.next(doc))
        docs.push_back(tokenizer.encode(doc));
    return pack_documents(docs, seq_len, tokenizer.specials(), mode);
}

}  // namespace routescope::data
