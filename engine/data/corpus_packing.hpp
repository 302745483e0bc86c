#pragma once
// Packing a tokenized corpus into sequences of at most seq_len tokens, each framed
// [CLS] … [SEP] (padding is added per batch). Two modes (docs/decisions.md, "Data: packing"):
//  - Split: one document per sequence; a document longer than seq_len − 2 tokens continues in the
//    next sequence(s). Lengths vary with the documents (what accuracy-by-length views want).
//  - Greedy: consecutive documents share a sequence, separated by [SEP], while they fit; a
//    document that does not fit starts the next sequence (split as above if it is too long).
//    Little padding (what pretraining wants).
// Documents that tokenize to nothing are skipped.
#include "engine/data/sequence_set.hpp"
#include "engine/data/text_corpus.hpp"
#include "engine/data/tokenizer.hpp"

namespace routescope::data {

enum class PackMode { Split, Greedy };

/// Packs documents already tokenized. Error when seq_len < 3 or the tokenizer lacks [CLS]/[SEP].
SequenceSet pack_documents(const std::vector<std::vector<std::int32_t>>& documents, int seq_len,
                           const SpecialIds& specials, PackMode mode);

/// Tokenizes every document of `corpus` (from its start) and packs it.
SequenceSet pack_corpus(TextCorpus& corpus, const Tokenizer& tokenizer, int seq_len, PackMode mode);

}  // namespace routescope::data
