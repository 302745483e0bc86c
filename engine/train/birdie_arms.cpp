#include "engine/train/birdie_arms.hpp"

#include <algorithm>
#include <set>

#include "engine/core/error.hpp"

namespace routescope::train {

using data::Paradigm;

const std::vector<BirdieArm>& birdie_arm_catalogue() {
    static const std::vector<BirdieArm> arms = {
        {"infilling", Paradigm::infilling, {0.15, 3.0}, 1.0},
        {"infilling_long", Paradigm::infilling, {0.5, 8.0}, 1.0},
        {"autoencoding", Paradigm::autoencoding, {0.15, 3.0}, 1.0},
        {"deshuffling_50", Paradigm::deshuffling, {}, 0.5},
        {"deshuffling_100", Paradigm::deshuffling, {}, 1.0},
        {"copying", Paradigm::copying, {}, 1.0},
        {"selective_copying", Paradigm::selective_copying, {}, 1.0},
        {"prefix_lm", Paradigm::prefix_lm, {}, 1.0},
        {"next_token", Paradigm::next_token, {}, 1.0},
    };
    return arms;
}

std::vector<BirdieArm> birdie_arms(const std::optional<std::vector<std::string>>& names) {
    const auto& all = birdie_arm_catalogue();
    if (!names) return all;
    if (names->empty()) throw ConfigError("train.birdie.arms: the list is empty (null = all arms)");
    std::vector<BirdieArm> chosen;
    std::set<std::string> seen;
    for (const auto& n : *names) {
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const auto& a) { return a.name == n; });
        if (it == all.end()) {
            std::string list;
            for (const auto& a : all)
                list += (list.empty() ? "" : ", ") + a.name;
            throw ConfigError("train.birdie.arms: '" + n + "' is not one of " + list);
        }
        if (!seen.insert(n).second)
            throw ConfigError("train.birdie.arms: '" + n + "' is listed twice");
        chosen.push_back(*it);
    }
    return chosen;
}

std::int32_t birdie_arm_row(const BirdieArm& arm, const std::int32_t* ids, std::int32_t length,
                            const data::BirdieVocabulary& vocab, double prefix_fraction,
                            std::int32_t pad, data::RandomStream& rng, RowView row) {
    const std::int32_t room = std::max(0, row.L - 2);
    const std::int32_t available = std::max(0, length - 1);  // without the leading [CLS]
    const auto original = [&](std::int32_t n) {
        return std::span<const std::int32_t>(ids + 1,
                                             static_cast<std::size_t>(std::clamp(n, 0, available)));
    };
    thread_local data::ObjectiveSample s;  // reused: a training step allocates nothing here
    // Every transform's input and target fit twice the row (their sizes are bounded by it).
    s.input.reserve(2 * static_cast<std::size_t>(row.L));
    s.target.reserve(2 * static_cast<std::size_t>(row.L));
    switch (arm.paradigm) {
        case Paradigm::infilling:
            data::infilling(original(room / 2), arm.spans, vocab, rng, s);
            break;
        case Paradigm::autoencoding:
            data::autoencoding(original(room / 2), arm.spans, vocab, rng, s);
            break;
        case Paradigm::deshuffling:
            data::deshuffling(original(room / 2), arm.fraction, rng, s);
            break;
        case Paradigm::copying:
            data::copying(original(room / 2), s);
            break;
        case Paradigm::selective_copying: {
            data::SelectiveCopyingParams p;
            const std::int32_t per_query = 2 * p.context + 2 + p.max_span + 1;
            p.queries = std::clamp(room / 40, 1, 3);
            data::selective_copying(original(std::max(1, room - p.queries * per_query - 1)), p,
                                    vocab, rng, s);
            break;
        }
        case Paradigm::prefix_lm:
            data::prefix_lm(original(room), prefix_fraction, rng, s);
            break;
        case Paradigm::next_token:
            data::next_token(original(room), s);
            break;
    }
    return birdie_row(s, vocab.paradigm(arm.paradigm), vocab.start(), pad, row);
}

}  // namespace routescope::train
