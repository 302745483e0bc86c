#include "engine/train/packed_sequences.hpp"

#include <algorithm>
#include <numeric>

#include "engine/core/error.hpp"
#include "engine/data/random_stream.hpp"
#include "engine/data/text_corpus.hpp"

namespace routescope::train {

void SequenceSet::pack(const std::vector<std::vector<std::int32_t>>& docs, std::int32_t cls,
                       std::int32_t sep) {
    const auto chunk = static_cast<std::size_t>(L_ - 1);
    std::vector<std::int32_t> stream;
    for (const auto& d : docs) {
        stream.insert(stream.end(), d.begin(), d.end());
        stream.push_back(sep);
    }
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
        const std::size_t n = std::min(chunk, stream.size() - at);
        ids_.push_back(cls);
        ids_.insert(ids_.end(), stream.begin() + static_cast<std::ptrdiff_t>(at),
                    stream.begin() + static_cast<std::ptrdiff_t>(at + n));
        ids_.insert(ids_.end(), chunk - n, pad_);
        lengths_.push_back(static_cast<std::int32_t>(n + 1));
    }
}

void SequenceSet::add(const std::vector<std::int32_t>& sequence) {
    const auto n = static_cast<int>(sequence.size());
    if (n < 1 || n > L_)
        throw Error("a sequence of " + std::to_string(n) +
                    " tokens does not fit data.seq_len = " + std::to_string(L_));
    ids_.insert(ids_.end(), sequence.begin(), sequence.end());
    ids_.insert(ids_.end(), static_cast<std::size_t>(L_ - n), pad_);
    lengths_.push_back(n);
}

std::int64_t SequenceSet::tokens() const {
    return std::accumulate(lengths_.begin(), lengths_.end(), std::int64_t{0});
}

namespace {

std::vector<std::vector<std::int32_t>> encode_all(const std::vector<std::string>& docs,
                                                  const data::Tokenizer& tokenizer) {
    std::vector<std::vector<std::int32_t>> out;
    out.reserve(docs.size());
    for (const auto& d : docs)
        out.push_back(tokenizer.encode(d));
    return out;
}

// Whether some sequence holds a token the MLM objective can predict (not [UNK], not a special):
// a corpus the tokenizer reads as [UNK] alone trained and evaluated with "loss 0.0" on 0 targets.
void require_predictable(const SequenceSet& set, const data::Tokenizer& tokenizer,
                         const std::string& what) {
    for (std::int64_t i = 0; i < set.size(); ++i)
        for (std::int32_t t = 0; t < set.length(i); ++t)
            if (!tokenizer.is_special(set.ids(i)[t])) return;
    throw ConfigError(what + ": every token is [UNK] or a special token of the " +
                      tokenizer.kind() +
                      " tokenizer, so nothing is left to predict (is the tokenizer this "
                      "corpus's language?)");
}

// [CLS], [SEP] and [PAD] frame and fill every packed sequence; a model without them (a
// SentencePiece model trained with the library's defaults has <unk>, <s>, </s> and no pad) is
// named with the pieces it lacks.
void require_packing_specials(const data::Tokenizer& tokenizer) {
    const auto sp = tokenizer.specials();
    std::string missing;
    for (const auto& [id, piece] :
         {std::pair{sp.cls, "[CLS]"}, {sp.sep, "[SEP]"}, {sp.pad, "[PAD]"}})
        if (id < 0) missing += std::string(missing.empty() ? "" : ", ") + piece;
    if (!missing.empty())
        throw ConfigError(
            "tokenizer.model: MLM packing frames sequences with [CLS] and [SEP] and "
            "pads with [PAD], and this " +
            tokenizer.kind() + " tokenizer has no " + missing +
            " (`routescope-cli tokenizer train` writes a model that has them)");
}

}  // namespace

PackedCorpus pack_corpus(const std::string& train_path, const std::string* valid_path,
                         const std::string& doc_sep, int seq_len,
                         const data::Tokenizer& tokenizer) {
    const auto sp = tokenizer.specials();
    require_packing_specials(tokenizer);
    if (seq_len < 2) throw ConfigError("data.seq_len: must be at least 2 ([CLS] and one token)");
    const auto separator = data::parse_doc_separator(doc_sep);

    data::TextCorpus corpus(train_path, separator);
    std::vector<std::string> docs = corpus.read_all();
    std::vector<std::string> train_docs, valid_docs;
    PackedCorpus out;
    if (valid_path) {
        train_docs = std::move(docs);
        data::TextCorpus valid(*valid_path, separator);
        valid_docs = valid.read_all();
    } else if (docs.size() == 1) {
        train_docs = std::move(docs);
        out.valid_is_train = true;
    } else {
        const bool every_20th = docs.size() >= 20;
        for (std::size_t i = 0; i < docs.size(); ++i) {
            const bool held_out = every_20th ? i % 20 == 19 : i + 1 == docs.size();
            (held_out ? valid_docs : train_docs).push_back(std::move(docs[i]));
        }
    }
    out.train = SequenceSet(seq_len, sp.pad);
    out.valid = SequenceSet(seq_len, sp.pad);
    out.train.pack(encode_all(train_docs, tokenizer), sp.cls, sp.sep);
    out.train_documents = static_cast<std::int64_t>(train_docs.size());
    if (out.valid_is_train) {
        out.valid = out.train;
        out.valid_documents = out.train_documents;
    } else {
        out.valid.pack(encode_all(valid_docs, tokenizer), sp.cls, sp.sep);
        out.valid_documents = static_cast<std::int64_t>(valid_docs.size());
    }
    if (out.train.size() == 0)
        throw ConfigError("data.train: " + train_path + " gives no sequence");
    require_predictable(out.train, tokenizer, "data.train: " + train_path);
    return out;
}

SequenceSet pack_documents(const std::string& path, const std::string& doc_sep, int seq_len,
                           const data::Tokenizer& tokenizer) {
    const auto sp = tokenizer.specials();
    require_packing_specials(tokenizer);
    if (seq_len < 2) throw ConfigError("data.seq_len: must be at least 2 ([CLS] and one token)");
    data::TextCorpus corpus(path, data::parse_doc_separator(doc_sep));
    SequenceSet set(seq_len, sp.pad);
    set.pack(encode_all(corpus.read_all(), tokenizer), sp.cls, sp.sep);
    require_predictable(set, tokenizer, path);
    return set;
}

std::int64_t SequenceOrder::at(std::int64_t k) {
    const std::int64_t epoch = k / n_;
    if (epoch != epoch_) {
        perm_.resize(static_cast<std::size_t>(n_));
        std::iota(perm_.begin(), perm_.end(), std::int64_t{0});
        data::RandomStream rng(seed_ ^ data::kShuffleSalt, static_cast<std::uint32_t>(epoch), 0);
        rng.shuffle(perm_);
        epoch_ = epoch;
    }
    return perm_[static_cast<std::size_t>(k % n_)];
}

}  // namespace routescope::train
