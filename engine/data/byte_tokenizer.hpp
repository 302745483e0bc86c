#pragma once
// The byte-level tokenizer: no training, any input (TASKS.md "quick runs").
//
// Layout (docs/decisions.md, "Data: byte tokenizer layout"): ids 0..4 are the Routescope specials
// [PAD] [UNK] [CLS] [SEP] [MASK]; byte b is id 5 + b, so V = 261. Every byte string round-trips
// exactly (decode(encode(s)) == s, valid UTF-8 or not). Pieces: printable ASCII as itself, other
// bytes as "<0xNN>" (SentencePiece's byte-fallback spelling). It has no model: serialize() is
// empty and load_tokenizer("bytes", {}) rebuilds it.
#include "engine/data/tokenizer.hpp"

namespace routescope::data {

class ByteTokenizer final : public Tokenizer {
public:
    static constexpr std::int32_t kByteOffset = kFirstRegularId;
    static constexpr std::int32_t kVocabSize = kByteOffset + 256;

    std::string kind() const override { return "bytes"; }
    std::vector<std::int32_t> encode(std::string_view text) const override;
    std::string decode(std::span<const std::int32_t> ids) const override;
    std::string piece(std::int32_t id) const override;
    std::int32_t vocab_size() const override { return kVocabSize; }
    SpecialIds specials() const override { return kStandardSpecials; }
    bool is_special(std::int32_t id) const override { return id >= 0 && id < kByteOffset; }
    std::vector<std::uint8_t> serialize() const override { return {}; }
};

}  // namespace routescope::data
