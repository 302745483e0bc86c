#pragma once
// BERT's WordPiece (Devlin et al. 2019; Google's tokenization.py), for the published BiGS weights
// (BERT-large-uncased vocab.txt: [PAD]=0 [UNK]=100 [CLS]=101 [SEP]=102 [MASK]=103, MODELS.md).
//
// Basic tokenizer, as BERT-uncased: drop NUL, U+FFFD and control characters (every category C*, as
// Hugging Face's BertTokenizer: private-use and unassigned code points too), map whitespace to
// ' ', put spaces around CJK ideographs, split on whitespace, lower-case and strip accents
// (lower() → NFD → drop Mn, unicode_tables.hpp), split every punctuation character off (ASCII
// symbols count as punctuation, as in BERT). A cased vocabulary (bert-base-cased: tokenizer_config
// do_lower_case false; Casing::cased, kind "wordpiece_cased") keeps case and accents: the same
// steps without the lower-casing and accent stripping, as BertTokenizerFast's BertNormalizer with
// lowercase false and strip_accents unset (no Unicode normalisation either). The five specials
// written literally in the text
// ("[MASK]") are kept whole, as Hugging Face's tokenizer does. Then WordPiece: greedy longest
// match first, continuation pieces prefixed "##"; a word with no full segmentation, or longer than
// 100 characters, becomes [UNK].
//
// vocab.txt: one piece per line, id = line number from 0 (a repeated piece keeps its last id, as
// Hugging Face's loader does). Uncased unless built cased (the BiGS vocabulary is uncased);
// vocab.txt does not say which, the checkpoint's tokenizer kind does. serialize() returns the
// vocab.txt bytes.
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/data/tokenizer.hpp"

namespace routescope::data {

/// Whether `text` is a SentencePiece .model rather than a vocab.txt: a binary protobuf whose first
/// field (its pieces) starts with the byte 0x0A, and not UTF-8 text. The usual mix-up of the two
/// kinds, which each reader says in its own terms (train: tokenizer.kind; import: WordPiece only).
bool sentencepiece_model_bytes(std::string_view text);

/// Whether the basic tokenizer lower-cases and strips accents (BERT-uncased) or keeps both
/// (BERT-cased).
enum class Casing { uncased, cased };

class WordPieceTokenizer final : public Tokenizer {
public:
    /// From the text of a vocab.txt. FormatError when it has no [UNK] piece.
    explicit WordPieceTokenizer(std::string_view vocab_txt, Casing casing = Casing::uncased);
    static std::unique_ptr<WordPieceTokenizer> from_file(const std::string& path,
                                                         Casing casing = Casing::uncased);

    /// "wordpiece" (uncased) or "wordpiece_cased".
    std::string kind() const override {
        return casing_ == Casing::cased ? "wordpiece_cased" : "wordpiece";
    }
    Casing casing() const { return casing_; }
    std::vector<std::int32_t> encode(std::string_view text) const override;
    /// Pieces joined by spaces, "##" continuations glued to the previous piece; [PAD] skipped.
    std::string decode(std::span<const std::int32_t> ids) const override;
    std::string piece(std::int32_t id) const override;
    std::int32_t vocab_size() const override { return static_cast<std::int32_t>(pieces_.size()); }
    SpecialIds specials() const override { return specials_; }
    /// The five specials and every other bracketed piece ("[unused7]").
    bool is_special(std::int32_t id) const override;
    std::vector<std::uint8_t> serialize() const override;

    /// The basic tokenizer's words (before WordPiece), for tests and views.
    std::vector<std::string> basic_tokens(std::string_view text) const;

private:
    void wordpiece(const std::string& word, std::vector<std::int32_t>& ids) const;

    std::string vocab_txt_;
    Casing casing_ = Casing::uncased;
    std::vector<std::string> pieces_;
    std::unordered_map<std::string, std::int32_t> ids_;
    SpecialIds specials_;
};

}  // namespace routescope::data
