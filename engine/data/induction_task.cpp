// Induction (H3, Fu et al. 2023, "synthetic induction head"): a random sequence over v symbols in
// which a trigger token appears twice; the position after the second trigger is [MASK] and its
// target is the symbol that followed the first trigger. As in H3 the query sits at the end of the
// content: content positions 0..n−1 hold trigger at p1 ∈ [0, n−4], the answer at p1 + 1, the
// second trigger at n − 2 and [MASK] at n − 1. Attribute "distance" = (n − 2) − p1, the gap
// between the triggers (2 … n − 2).
#include "engine/data/task_builder.hpp"

namespace routescope::data {

TaskData generate_induction(const TaskParams& p) {
    const int v = or_default(p.n_symbols, 16);
    const int min_len = or_default(p.min_len, 64), max_len = or_default(p.max_len, 64);
    require_range("induction", "n_symbols", v, 2, 100000);
    require_range("induction", "max_len", max_len, 1, kMaxTaskLength);
    require_range("induction", "min_len", min_len, 4, max_len);
    TaskData data = make_task_data("induction", TaskMetric::Accuracy);
    TaskVocab vocab;
    std::vector<std::int32_t> symbols;
    for (int s = 0; s < v; ++s)
        symbols.push_back(vocab.add(numbered_piece("s", s)));
    const std::int32_t trigger = vocab.add("trigger");
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        const auto n = static_cast<int>(rng.between(min_len, max_len));
        std::vector<std::int32_t> content(static_cast<std::size_t>(n));
        for (auto& t : content)
            t = symbols[rng.below(symbols.size())];
        const auto p1 = static_cast<int>(rng.between(0, n - 4));
        const int p2 = n - 2;
        content[static_cast<std::size_t>(p1)] = trigger;
        content[static_cast<std::size_t>(p2)] = trigger;
        const std::int32_t answer = content[static_cast<std::size_t>(p1 + 1)];
        TaskExample e;
        e.input.push_back(kClsId);
        e.input.insert(e.input.end(), content.begin(), content.end());
        e.input.push_back(kSepId);
        e.targets.assign(e.input.size(), kIgnoreLabel);
        e.input[static_cast<std::size_t>(n)] = kMaskId;  // content position n − 1, after [CLS]
        e.targets[static_cast<std::size_t>(n)] = answer;
        e.attributes["distance"] = p2 - p1;
        return e;
    });
    return data;
}

}  // namespace routescope::data
