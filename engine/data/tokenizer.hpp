#pragma once
// A tokenizer turns text into token ids and back. Three kinds (TASKS.md): "bytes" (no training),
// "sentencepiece" (unigram or BPE, trained by the engine or loaded from a .model file) and
// "wordpiece" (BERT's vocab.txt, uncased, for the published BiGS weights) or "wordpiece_cased"
// (a cased BERT's, bert-base-cased).
//
// encode() never adds [CLS]/[SEP]: framing a sequence is its user's job, so the same ids serve
// packing (engine/train/packed_sequences.hpp), classification pairs and the built-in tasks.
// serialize() gives the bytes a checkpoint stores in /tokenizer/model (CHECKPOINT_FORMAT.md) and
// load_tokenizer() rebuilds the tokenizer from them and the kind, so a checkpoint is
// self-contained.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/data/special_tokens.hpp"

namespace routescope::data {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    /// "bytes" | "sentencepiece" | "wordpiece" | "wordpiece_cased" (the /tokenizer attr `kind`).
    virtual std::string kind() const = 0;
    /// Token ids of `text`, without any framing specials.
    virtual std::vector<std::int32_t> encode(std::string_view text) const = 0;
    /// Text of `ids`; [PAD] is skipped, other specials are written as their pieces ("[MASK]")
    /// except where a kind documents otherwise. Error for an id outside [0, vocab_size).
    virtual std::string decode(std::span<const std::int32_t> ids) const = 0;
    /// The piece of one id as the vocabulary writes it (for /vocab and token-aligned views).
    virtual std::string piece(std::int32_t id) const = 0;
    virtual std::int32_t vocab_size() const = 0;
    virtual SpecialIds specials() const = 0;
    /// True for ids that are not text: [PAD] [UNK] [CLS] [SEP] [MASK], <s> </s> and other
    /// control pieces. MLM masking never chooses them and never draws them as random tokens.
    virtual bool is_special(std::int32_t id) const = 0;
    /// The bytes a checkpoint stores; load_tokenizer(kind(), serialize()) is the same tokenizer.
    virtual std::vector<std::uint8_t> serialize() const = 0;

    /// Every piece in id order (what a dump's /vocab holds).
    std::vector<std::string> vocabulary() const;
};

/// Rebuilds a tokenizer from a checkpoint's /tokenizer kind and model bytes. ConfigError for an
/// unknown kind, FormatError when the bytes are not a model of that kind.
std::unique_ptr<Tokenizer> load_tokenizer(std::string_view kind,
                                          std::span<const std::uint8_t> model);

/// Loads a tokenizer from a file: a SentencePiece .model or a WordPiece vocab.txt; "bytes" needs
/// no file (path ignored). IoError when the file cannot be read.
std::unique_ptr<Tokenizer> load_tokenizer_file(std::string_view kind, const std::string& path);

}  // namespace routescope::data
