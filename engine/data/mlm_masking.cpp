#include "engine/data/mlm_masking.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "engine/core/error.hpp"
#include "engine/core/philox.hpp"
#include "engine/data/random_stream.hpp"

namespace routescope::data {

namespace {
std::vector<bool> special_flags(const Tokenizer& t) {
    std::vector<bool> special(static_cast<std::size_t>(t.vocab_size()));
    for (std::int32_t id = 0; id < t.vocab_size(); ++id)
        special[static_cast<std::size_t>(id)] = t.is_special(id);
    return special;
}

std::int32_t require_mask(const Tokenizer& t) {
    if (t.specials().mask < 0) {
        throw ConfigError("train.objective: mlm needs a [MASK] token, and the " + t.kind() +
                          " tokenizer has none");
    }
    return t.specials().mask;
}

// Exact comparison of a 32-bit draw with a probability: u < p  ⇔  bits < p·2^32.
std::uint64_t threshold(double p) {
    return static_cast<std::uint64_t>(std::llround(std::clamp(p, 0.0, 1.0) * 4294967296.0));
}
}  // namespace

MlmMasker::MlmMasker(const Tokenizer& tokenizer, MlmRates rates)
    : MlmMasker(require_mask(tokenizer), special_flags(tokenizer), rates) {}

MlmMasker::MlmMasker(std::int32_t mask_id, std::vector<bool> special, MlmRates rates)
    : mask_id_(mask_id), special_(std::move(special)), rates_(rates) {
    check_rates();
    for (std::size_t id = 0; id < special_.size(); ++id)
        if (!special_[id]) replacements_.push_back(static_cast<std::int32_t>(id));
    if (mask_id_ < 0 || static_cast<std::size_t>(mask_id_) >= special_.size()) {
        throw ConfigError("mlm: [MASK] id " + std::to_string(mask_id_) +
                          " is outside the vocabulary of " + std::to_string(special_.size()));
    }
    if (replacements_.empty()) throw ConfigError("mlm: the vocabulary has no non-special token");
}

void MlmMasker::check_rates() const {
    // 0 would choose no position: a sequence would then get only the at-least-one position
    // (apply), a rate of 1/length instead of the one asked for (docs/config.md "Ranges").
    if (!(rates_.choose > 0.0 && rates_.choose <= 1.0)) {
        std::ostringstream value;
        value << rates_.choose;
        throw ConfigError("train.mask_prob: " + value.str() +
                          " is outside (0, 1]: MLM learns from the positions it masks, and at 0 "
                          "it would mask none");
    }
    if (rates_.to_mask < 0.0 || rates_.to_random < 0.0 || rates_.to_mask + rates_.to_random > 1.0) {
        throw ConfigError("mlm: replacement rates must be ≥ 0 and sum to at most 1");
    }
}

void MlmMasker::apply(std::span<const std::int32_t> ids, std::int32_t length,
                      std::span<std::int32_t> inputs, std::span<std::int32_t> labels,
                      std::uint64_t seed, std::uint32_t step, std::uint32_t example) const {
    if (inputs.size() != ids.size() || labels.size() != ids.size() || length < 0 ||
        static_cast<std::size_t>(length) > ids.size()) {
        throw Error("mlm: sequence of " + std::to_string(ids.size()) + " ids with length " +
                    std::to_string(length) + " and outputs of " + std::to_string(inputs.size()) +
                    "/" + std::to_string(labels.size()));
    }
    const std::uint64_t key_seed = seed ^ kMlmSalt;
    const PhiloxKey key = {static_cast<std::uint32_t>(key_seed),
                           static_cast<std::uint32_t>(key_seed >> 32)};
    const std::uint64_t t_choose = threshold(rates_.choose);
    const std::uint64_t t_mask = threshold(rates_.to_mask);
    const std::uint64_t t_random = threshold(rates_.to_mask + rates_.to_random);
    const auto n_repl = static_cast<std::uint64_t>(replacements_.size());

    const auto corrupt = [&](std::size_t j, const PhiloxCounter& draw) {
        labels[j] = ids[j];
        if (draw[1] < t_mask) {
            inputs[j] = mask_id_;
        } else if (draw[1] < t_random) {
            inputs[j] = replacements_[static_cast<std::size_t>((draw[2] * n_repl) >> 32)];
        }
    };

    bool any_chosen = false;
    std::size_t best = ids.size();
    std::uint32_t best_draw = 0;
    PhiloxCounter best_block{};
    for (std::size_t j = 0; j < ids.size(); ++j) {
        inputs[j] = ids[j];
        labels[j] = kIgnoreLabel;
        if (static_cast<std::int32_t>(j) >= length) continue;
        const std::int32_t id = ids[j];
        if (id < 0 || static_cast<std::size_t>(id) >= special_.size()) {
            throw Error("mlm: token id " + std::to_string(id) + " at position " +
                        std::to_string(j) + " is outside the vocabulary of " +
                        std::to_string(special_.size()));
        }
        if (special_[static_cast<std::size_t>(id)]) continue;
        const PhiloxCounter draw =
            philox4x32_10({static_cast<std::uint32_t>(j),
                           static_cast<std::uint32_t>(std::uint64_t(j) >> 32), example, step},
                          key);
        if (draw[0] < t_choose) {
            corrupt(j, draw);
            any_chosen = true;
        } else if (best == ids.size() || draw[0] < best_draw) {
            best = j;
            best_draw = draw[0];
            best_block = draw;
        }
    }
    if (!any_chosen && best < ids.size()) corrupt(best, best_block);
}

void MlmMasker::apply_batch(const std::int32_t* ids, const std::int32_t* lengths, int batch,
                            int len, std::int32_t* inputs, std::int32_t* labels, std::uint64_t seed,
                            std::uint32_t step, std::uint32_t first_example) const {
    const auto L = static_cast<std::size_t>(len);
    for (int b = 0; b < batch; ++b) {
        const std::size_t off = static_cast<std::size_t>(b) * L;
        apply({ids + off, L}, lengths[b], {inputs + off, L}, {labels + off, L}, seed, step,
              first_example + static_cast<std::uint32_t>(b));
    }
}

}  // namespace routescope::data
