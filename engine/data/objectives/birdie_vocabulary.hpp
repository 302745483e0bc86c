#pragma once
// The special tokens of the Birdie objectives (TASKS.md "Objectives"; docs/decisions.md "Birdie
// objectives: special tokens"). They are appended after the tokenizer's vocabulary of V ids, so
// the tokenizer and its five standard specials ([PAD]=0 … [MASK]=4 in Routescope's layout) keep
// their ids and the model's vocabulary is V + kBirdieSpecialCount when train.objective = birdie:
//
//   V + 0 … V + 6   paradigm tokens, one per objective, in Paradigm order
//   V + 7           [start]   the target begins after it
//   V + 8           [done]    ends a selective-copying target
//   V + 9           [query]   opens a selective-copying query
//   V + 10 …        sentinels [S0] … [S31], reused cyclically past 32 spans (the order of the
//                   spans, not the sentinel's number, says which span fills which gap)
#include <cstdint>
#include <string>

namespace routescope::data {

/// The seven Birdie objectives, each announced by its own paradigm token.
enum class Paradigm : std::int32_t {
    infilling = 0,
    autoencoding = 1,
    deshuffling = 2,
    copying = 3,
    selective_copying = 4,
    prefix_lm = 5,
    next_token = 6,
};
inline constexpr std::int32_t kParadigmCount = 7;
inline constexpr std::int32_t kBirdieSentinels = 32;
inline constexpr std::int32_t kBirdieSpecialCount = kParadigmCount + 3 + kBirdieSentinels;

/// The Birdie specials of a tokenizer vocabulary of `base` ids.
struct BirdieVocabulary {
    std::int32_t base = 0;  ///< the tokenizer's vocabulary size V: the first Birdie id

    std::int32_t paradigm(Paradigm p) const { return base + static_cast<std::int32_t>(p); }
    std::int32_t start() const { return base + kParadigmCount; }
    std::int32_t done() const { return base + kParadigmCount + 1; }
    std::int32_t query() const { return base + kParadigmCount + 2; }
    /// Sentinel of the k-th span (k ≥ 0), cyclic over kBirdieSentinels.
    std::int32_t sentinel(std::int32_t k) const {
        return base + kParadigmCount + 3 + k % kBirdieSentinels;
    }
    bool is_sentinel(std::int32_t id) const {
        return id >= base + kParadigmCount + 3 && id < base + kBirdieSpecialCount;
    }
    /// The model's vocabulary size: V + kBirdieSpecialCount.
    std::int32_t size() const { return base + kBirdieSpecialCount; }
};

/// The ids a training objective adds after the tokenizer's (kBirdieSpecialCount for "birdie",
/// 0 otherwise): a checkpoint's model.vocab_size is the tokenizer's plus this.
inline std::int32_t objective_extra_ids(const std::string& objective) {
    return objective == "birdie" ? kBirdieSpecialCount : 0;
}

/// "[infill]", "[start]", "[S3]", … for an id of the Birdie block (views, logs); "" otherwise.
std::string birdie_piece(const BirdieVocabulary& v, std::int32_t id);

}  // namespace routescope::data
