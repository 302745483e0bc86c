#pragma once
// BERT's masked-language-model corruption (Devlin et al. 2019; TASKS.md "Objectives"): each
// non-special position of a sequence is chosen with probability 15%; a chosen position becomes
// [MASK] with probability 80%, a random token with 10% (drawn uniformly from the non-special ids,
// never a special), and stays unchanged with 10%. Labels hold the original id at chosen positions
// and −100 (ignored) everywhere else. A sequence with at least one non-special token always gets
// at least one chosen position (the one with the smallest choice draw): a sequence without a
// target would contribute nothing to the loss (docs/decisions.md, "Data: MLM masking").
//
// Every draw is Philox4x32-10 keyed by (seed ⊕ kMlmSalt) with counter (position, example, step):
// one block per position gives the choice, the replacement kind and the random token, so the
// masks of a batch are a pure function of (seed, step, example) for any thread count.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/tokenizer.hpp"

namespace routescope::data {

struct MlmRates {
    double choose = 0.15;    ///< train.mask_prob
    double to_mask = 0.8;    ///< of the chosen: [MASK]
    double to_random = 0.1;  ///< of the chosen: a random non-special token; the rest unchanged
};

class MlmMasker {
public:
    /// The vocabulary of `tokenizer`; ConfigError when it has no [MASK] token.
    MlmMasker(const Tokenizer& tokenizer, MlmRates rates = {});
    /// An explicit vocabulary (the built-in tasks): special[id] marks ids never chosen or drawn.
    MlmMasker(std::int32_t mask_id, std::vector<bool> special, MlmRates rates = {});

    /// Corrupts one sequence: ids[0..length) are real tokens (the rest padding, never chosen);
    /// writes inputs (same size as ids) and labels (−100 except chosen positions).
    void apply(std::span<const std::int32_t> ids, std::int32_t length,
               std::span<std::int32_t> inputs, std::span<std::int32_t> labels, std::uint64_t seed,
               std::uint32_t step, std::uint32_t example) const;

    /// A batch [B, L] row by row; row b is example first_example + b.
    void apply_batch(const std::int32_t* ids, const std::int32_t* lengths, int batch, int len,
                     std::int32_t* inputs, std::int32_t* labels, std::uint64_t seed,
                     std::uint32_t step, std::uint32_t first_example = 0) const;

    const std::vector<std::int32_t>& replacement_ids() const { return replacements_; }

private:
    void check_rates() const;

    std::int32_t mask_id_;
    std::vector<bool> special_;
    std::vector<std::int32_t> replacements_;
    MlmRates rates_;
};

}  // namespace routescope::data
