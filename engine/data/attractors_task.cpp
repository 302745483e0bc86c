// Agreement with attractors (Linzen, Dupoux & Goldberg 2016): "the N_subj (prep the N_attr)×k
// [MASK] ADJ ." where every attractor noun has the opposite grammatical number of the subject;
// the target at [MASK] is "is" for a singular subject and "are" for a plural one, predicted by
// the MLM head; accuracy. Attribute "attractors" = k, drawn uniformly from 0..max_attractors (4).
#include <array>

#include "engine/data/task_builder.hpp"

namespace routescope::data {

namespace {
// Nouns with regular and irregular plurals, so the number is not read off a final "s" alone.
const std::array<std::pair<const char*, const char*>, 12> kNouns = {{
    {"dog", "dogs"},
    {"key", "keys"},
    {"author", "authors"},
    {"child", "children"},
    {"cabinet", "cabinets"},
    {"woman", "women"},
    {"pilot", "pilots"},
    {"mouse", "mice"},
    {"senator", "senators"},
    {"box", "boxes"},
    {"painting", "paintings"},
    {"person", "people"},
}};
const std::array<const char*, 6> kPreps = {"of", "near", "behind", "with", "beside", "for"};
const std::array<const char*, 6> kAdjectives = {"old", "red", "here", "ready", "missing", "quiet"};
}  // namespace

TaskData generate_attractors(const TaskParams& p) {
    const int max_k = p.max_attractors > 0 ? p.max_attractors : 4;
    require_range("attractors", "max_attractors", max_k, 0, 32);
    TaskData data = make_task_data("attractors", TaskMetric::Accuracy);
    TaskVocab vocab;
    const std::int32_t the = vocab.add("the");
    std::vector<std::int32_t> singular, plural, preps, adjectives;
    for (const auto& [sg, pl] : kNouns) {
        singular.push_back(vocab.add(sg));
        plural.push_back(vocab.add(pl));
    }
    for (const char* w : kPreps)
        preps.push_back(vocab.add(w));
    for (const char* w : kAdjectives)
        adjectives.push_back(vocab.add(w));
    const std::int32_t is = vocab.add("is"), are = vocab.add("are"), stop = vocab.add(".");
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        const auto k = static_cast<int>(rng.between(0, max_k));
        const bool subject_plural = rng.chance(0.5);
        const auto& subj_nouns = subject_plural ? plural : singular;
        const auto& attr_nouns = subject_plural ? singular : plural;
        TaskExample e;
        e.input = {kClsId, the, subj_nouns[rng.below(subj_nouns.size())]};
        for (int a = 0; a < k; ++a) {
            e.input.push_back(preps[rng.below(preps.size())]);
            e.input.push_back(the);
            e.input.push_back(attr_nouns[rng.below(attr_nouns.size())]);
        }
        e.targets.assign(e.input.size(), kIgnoreLabel);
        e.input.push_back(kMaskId);
        e.targets.push_back(subject_plural ? are : is);
        for (const std::int32_t t : {adjectives[rng.below(adjectives.size())], stop, kSepId}) {
            e.input.push_back(t);
            e.targets.push_back(kIgnoreLabel);
        }
        e.attributes["attractors"] = k;
        return e;
    });
    return data;
}

}  // namespace routescope::data
