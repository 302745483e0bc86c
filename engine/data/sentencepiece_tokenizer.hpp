#pragma once
// SentencePiece (Kudo & Richardson 2018), through the library itself so ids are identical to
// Python's `sentencepiece` for the same model (tests/data/test_sentencepiece_tokenizer.cpp).
//
// Models the engine trains use the Routescope layout: [PAD]=0 (pad_id) [UNK]=1 (unk_id), then the
// user-defined symbols [CLS]=2 [SEP]=3 [MASK]=4; no <s>/</s>. User-defined symbols are matched in
// input text, so a literal "[MASK]" encodes to the mask id (as BERT tokenizers do). A model
// trained elsewhere keeps its own ids: specials are found by piece ("[CLS]", "[SEP]", "[MASK]",
// "[PAD]"), else <s> serves as [CLS] and </s> as [SEP]; a missing one is -1.
#include <memory>
#include <string>

#include "engine/data/tokenizer.hpp"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace routescope::data {

class TextCorpus;

class SentencePieceTokenizer final : public Tokenizer {
public:
    /// From a serialized ModelProto (the bytes of a .model file). FormatError when not a model.
    explicit SentencePieceTokenizer(std::string_view serialized_model);
    ~SentencePieceTokenizer() override;

    /// Reads a .model file. IoError when it cannot be read, FormatError when it is not a model.
    static std::unique_ptr<SentencePieceTokenizer> from_file(const std::string& path);

    std::string kind() const override { return "sentencepiece"; }
    std::vector<std::int32_t> encode(std::string_view text) const override;
    /// The library's decoding: control pieces ([PAD], <s>, </s>) vanish, user-defined specials
    /// ([CLS] [SEP] [MASK]) are written as themselves.
    std::string decode(std::span<const std::int32_t> ids) const override;
    std::string piece(std::int32_t id) const override;
    std::int32_t vocab_size() const override;
    SpecialIds specials() const override { return specials_; }
    bool is_special(std::int32_t id) const override;
    std::vector<std::uint8_t> serialize() const override;

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
    SpecialIds specials_;
};

/// What `routescope-cli tokenizer train` and a run with tokenizer.kind = sentencepiece train.
struct SentencePieceTraining {
    std::int32_t vocab_size = 8000;
    std::string model_type = "unigram";  ///< unigram | bpe
    double character_coverage = 0.9995;  ///< the library's default
    std::int64_t max_sentences = 0;      ///< documents sampled for training; 0 = all
    int threads = 1;
};

/// The most pieces train_sentencepiece accepts (tokenizer.vocab_size, `tokenizer train
/// --vocab-size`).
inline constexpr int kMaxSentencePieces = 1 << 24;

/// Trains a model with the library's SentencePieceTrainer on every document of `corpus` (from its
/// start; the corpus is left at its end) and returns the tokenizer. ConfigError with the library's
/// message when training fails (e.g. a vocabulary larger than the corpus supports).
std::unique_ptr<SentencePieceTokenizer> train_sentencepiece(TextCorpus& corpus,
                                                            const SentencePieceTraining& options);

}  // namespace routescope::data
