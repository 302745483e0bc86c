// Selective copying (TASKS.md's Birdie objective, for an encoder): a context of n random symbols,
// then k queries, each the c = 2 symbols before a span of s symbols, s × [MASK], and the c
// symbols after it. The targets at the masks are the spans, in query order; exact match.
// The surroundings of each span occur exactly once in the context (contexts are redrawn until
// they do), so every answer is recoverable. Input:
//   [CLS] context [SEP] (before [MASK]×s after [SEP])×k
// Attribute "length" = n. (Birdie's trailing [done] is left out: an encoder predicts in place.)
#include "engine/data/task_builder.hpp"

namespace routescope::data {

namespace {
constexpr int kWindow = 2;  // symbols of surroundings on each side of a span
}

TaskData generate_selective_copying(const TaskParams& p) {
    const int v = or_default(p.n_symbols, 16);
    const int min_len = or_default(p.min_len, 32), max_len = or_default(p.max_len, 64);
    const int k = or_default(p.n_queries, 2), s = or_default(p.span_len, 3);
    require_range("selective-copying", "n_symbols", v, 4, 100000);
    require_range("selective-copying", "n_queries", k, 1, 64);
    require_range("selective-copying", "max_len", max_len, 1, kMaxTaskLength);
    require_range("selective-copying", "min_len", min_len, k * (s + 2 * kWindow) + 1, max_len);
    TaskData data = make_task_data("selective-copying", TaskMetric::ExactMatch);
    TaskVocab vocab;
    std::vector<std::int32_t> symbols;
    for (int i = 0; i < v; ++i)
        symbols.push_back(vocab.add(numbered_piece("s", i)));
    data.vocab = vocab.pieces();
    generate_splits(data, p, [&](RandomStream& rng) {
        const auto n = static_cast<int>(rng.between(min_len, max_len));
        std::vector<std::int32_t> ctx(static_cast<std::size_t>(n));
        std::vector<int> starts;
        const auto at = [&](int i) { return ctx[static_cast<std::size_t>(i)]; };
        const auto matches = [&](int start, int probe) {  // same surroundings around probe?
            for (int d = 1; d <= kWindow; ++d) {
                if (at(probe - d) != at(start - d) ||
                    at(probe + s - 1 + d) != at(start + s - 1 + d))
                    return false;
            }
            return true;
        };
        for (bool ok = false; !ok;) {
            for (auto& t : ctx)
                t = symbols[rng.below(symbols.size())];
            starts.clear();
            while (static_cast<int>(starts.size()) < k) {
                const auto st = static_cast<int>(rng.between(kWindow, n - s - kWindow));
                bool overlaps = false;
                for (const int o : starts)
                    overlaps |= st < o + s && o < st + s;
                if (!overlaps) starts.push_back(st);
            }
            ok = true;
            for (const int st : starts)
                for (int probe = kWindow; probe <= n - s - kWindow && ok; ++probe)
                    if (probe != st && matches(st, probe)) ok = false;
        }
        TaskExample e;
        e.input.push_back(kClsId);
        e.input.insert(e.input.end(), ctx.begin(), ctx.end());
        e.input.push_back(kSepId);
        e.targets.assign(e.input.size(), kIgnoreLabel);
        for (const int st : starts) {
            for (int d = kWindow; d >= 1; --d) {
                e.input.push_back(at(st - d));
                e.targets.push_back(kIgnoreLabel);
            }
            for (int j = 0; j < s; ++j) {
                e.input.push_back(kMaskId);
                e.targets.push_back(at(st + j));
            }
            for (int d = 1; d <= kWindow; ++d) {
                e.input.push_back(at(st + s - 1 + d));
                e.targets.push_back(kIgnoreLabel);
            }
            e.input.push_back(kSepId);
            e.targets.push_back(kIgnoreLabel);
        }
        e.attributes["length"] = n;
        return e;
    });
    return data;
}

}  // namespace routescope::data
