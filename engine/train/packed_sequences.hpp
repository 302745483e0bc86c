#pragma once
// The MLM training data of a run: a text corpus (TASKS.md) tokenized once and packed BERT-style
// into fixed-length sequences, split into a training and a held-out part.
//
// Packing: the documents' ids are concatenated, each document followed by [SEP]; the stream is cut
// into chunks of seq_len − 1 ids and every sequence is [CLS] + chunk, so no position is wasted on
// padding except in the very last sequence (BERT's "full sentences" packing, Liu et al. 2019,
// RoBERTa §4.2). Held-out split when data.valid is null: every 20th document (index 19, 39, ...)
// goes to the held-out part, or the last document when there are fewer than 20 (and none with a
// single document: evaluation then reuses the training sequences; docs/decisions.md).
//
// Order: sequence number k of the run (k counts every sequence drawn, over epochs) is training
// sequence perm_e[k mod n] with e = k / n and perm_e a Fisher–Yates shuffle from Philox keyed by
// (train.seed ⊕ kShuffleSalt, epoch e): a pure function of (seed, k), so resuming at
// data_position = k gives exactly the batches an uninterrupted run sees.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/data/tokenizer.hpp"

namespace routescope::train {

/// Sequences of one split, each seq_len ids (padded with [PAD]) and its real length.
class SequenceSet {
public:
    SequenceSet() = default;
    SequenceSet(int seq_len, std::int32_t pad) : L_(seq_len), pad_(pad) {}

    /// Packs documents' ids (see the file comment) and appends the sequences.
    void pack(const std::vector<std::vector<std::int32_t>>& docs, std::int32_t cls,
              std::int32_t sep);
    /// Appends one whole sequence (already framed), padded to seq_len. Error when it is longer.
    void add(const std::vector<std::int32_t>& sequence);

    std::int64_t size() const { return static_cast<std::int64_t>(lengths_.size()); }
    int seq_len() const { return L_; }
    /// The id the sequences are padded with.
    std::int32_t pad() const { return pad_; }
    std::int64_t tokens() const;
    const std::int32_t* ids(std::int64_t i) const { return ids_.data() + i * L_; }
    std::int32_t length(std::int64_t i) const { return lengths_[static_cast<std::size_t>(i)]; }

private:
    int L_ = 0;
    std::int32_t pad_ = 0;
    std::vector<std::int32_t> ids_;
    std::vector<std::int32_t> lengths_;
};

struct PackedCorpus {
    SequenceSet train;
    SequenceSet valid;
    std::int64_t train_documents = 0;
    std::int64_t valid_documents = 0;
    bool valid_is_train = false;  ///< a one-document corpus: evaluation reuses the training set
};

/// Reads data.train (and data.valid when set) with `tokenizer`. IoError / FormatError from the
/// corpus reader (missing path, invalid UTF-8, no document: each names the path); ConfigError
/// when the tokenizer has no [CLS]/[SEP]/[PAD] or a corpus yields no sequence.
PackedCorpus pack_corpus(const std::string& train_path, const std::string* valid_path,
                         const std::string& doc_sep, int seq_len, const data::Tokenizer& tokenizer);

/// Every document of one corpus packed into one set (evaluation data: no split).
SequenceSet pack_documents(const std::string& path, const std::string& doc_sep, int seq_len,
                           const data::Tokenizer& tokenizer);

/// The training-sequence index of the run's k-th sequence (file comment).
class SequenceOrder {
public:
    SequenceOrder(std::int64_t n, std::uint64_t seed) : n_(n), seed_(seed) {}
    std::int64_t at(std::int64_t k);

private:
    std::int64_t n_;
    std::uint64_t seed_;
    std::int64_t epoch_ = -1;
    std::vector<std::int64_t> perm_;
};

}  // namespace routescope::train
