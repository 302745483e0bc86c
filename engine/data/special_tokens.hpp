#pragma once
// The special tokens every tokenizer and every built-in task vocabulary names. A missing special
// is -1 (a SentencePiece model trained elsewhere may have no [MASK]; the byte tokenizer has no
// BOS).
//
// Routescope's own vocabularies (the byte tokenizer, SentencePiece models the engine trains, the
// built-in tasks) all start with the same five ids, so an id means the same special everywhere:
// [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 (docs/decisions.md, "Data: special-token layout").
// The published BiGS (BERT WordPiece) uses [PAD]=0 [UNK]=100 [CLS]=101 [SEP]=102 [MASK]=103
// (MODELS.md); the WordPiece tokenizer reads those from vocab.txt.
#include <array>
#include <cstdint>
#include <string_view>

namespace routescope::data {

struct SpecialIds {
    std::int32_t pad = -1;
    std::int32_t unk = -1;
    std::int32_t cls = -1;
    std::int32_t sep = -1;
    std::int32_t mask = -1;
    std::int32_t bos = -1;  ///< SentencePiece <s> where the model has one
    std::int32_t eos = -1;  ///< SentencePiece </s> where the model has one
};

/// The five specials at the start of every Routescope vocabulary, in id order.
inline constexpr std::array<std::string_view, 5> kSpecialPieces = {"[PAD]", "[UNK]", "[CLS]",
                                                                   "[SEP]", "[MASK]"};
inline constexpr std::int32_t kPadId = 0;
inline constexpr std::int32_t kUnkId = 1;
inline constexpr std::int32_t kClsId = 2;
inline constexpr std::int32_t kSepId = 3;
inline constexpr std::int32_t kMaskId = 4;
inline constexpr std::int32_t kFirstRegularId = 5;

/// The specials of the Routescope layout above.
inline constexpr SpecialIds kStandardSpecials{kPadId, kUnkId, kClsId, kSepId, kMaskId, -1, -1};

/// MLM and cross-entropy label of a position that is not scored (PyTorch's ignore_index).
inline constexpr std::int32_t kIgnoreLabel = -100;

}  // namespace routescope::data
