// Copying (TASKS.md, as the Birdie objective, for an encoder): [CLS] x₁ … x_n [SEP] [MASK]×n
// [SEP]; the targets at the masks are x₁ … x_n, scored by exact match. Attribute "length" = n.
#include "engine/data/task_builder.hpp"

namespace routescope::data {

TaskData generate_copying(const TaskParams& p) {
    const int v = or_default(p.n_symbols, 16);
    const int min_len = or_default(p.min_len, 8), max_len = or_default(p.max_len, 32);
    require_range("copying", "n_symbols", v, 2, 100000);
    require_range("copying", "max_len", max_len, 1, kMaxTaskLength);
    require_range("copying", "min_len", min_len, 1, max_len);
    TaskData data = make_task_data("copying", TaskMetric::ExactMatch);
    TaskVocab vocab;
    std::vector<std::int32_t> symbols;
    for (int s = 0; s < v; ++s)
        symbols.push_back(vocab.add(numbered_piece("s", s)));
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        const auto n = static_cast<std::size_t>(rng.between(min_len, max_len));
        TaskExample e;
        e.input.push_back(kClsId);
        for (std::size_t i = 0; i < n; ++i)
            e.input.push_back(symbols[rng.below(symbols.size())]);
        e.input.push_back(kSepId);
        e.targets.assign(e.input.size(), kIgnoreLabel);
        for (std::size_t i = 0; i < n; ++i) {
            e.input.push_back(kMaskId);
            e.targets.push_back(e.input[1 + i]);
        }
        e.input.push_back(kSepId);
        e.targets.push_back(kIgnoreLabel);
        e.attributes["length"] = static_cast<double>(n);
        return e;
    });
    return data;
}

}  // namespace routescope::data
