// Selective copying (TASKS.md's Birdie objective, for an encoder): a context of n random symbols,
// then k queries, each the c = 2 symbols before a span of s symbols, s × [MASK], and the c
// symbols after it. The targets at the masks are the spans, in query order; exact match.
// The surroundings of each span occur exactly once in the context (contexts are redrawn until
// they do), so every answer is recoverable. Input:
//   [CLS] context [SEP] (before [MASK]×s after [SEP])×k
// Attribute "length" = n. (Birdie's trailing [done] is left out: an encoder predicts in place.)
#include <algorithm>
#include <cmath>

#include "engine/data/task_builder.hpp"

namespace routescope::data {

namespace {
constexpr int kWindow = 2;  // symbols of surroundings on each side of a span
// A context is redrawn until no span's surroundings (2·kWindow symbols, v^4 kinds) recur in it:
// about k·n / v^4 recurrences are expected, so a draw succeeds with probability about
// exp(−k·n / v^4). Beyond this many expected recurrences (about e^4 ≈ 55 draws an example) the
// generator is refused instead of redrawing for ever (n_symbols = 16 at max_len = 2^20: e^32).
constexpr double kMaxRecurrences = 4.0;
}  // namespace

TaskData generate_selective_copying(const TaskParams& p) {
    const int v = or_default(p.n_symbols, 16);
    const int min_len = or_default(p.min_len, 32), max_len = or_default(p.max_len, 64);
    const int k = or_default(p.n_queries, 2), s = or_default(p.span_len, 3);
    require_range("selective-copying", "n_symbols", v, 4, 100000);
    require_range("selective-copying", "n_queries", k, 1, 64);
    require_range("selective-copying", "max_len", max_len, 1, kMaxTaskLength);
    // Each parameter against its own bound before any arithmetic on it (span_len = 2^30 made
    // k·(s + 4) + 1 overflow, and a too long span was blamed on min_len with an empty range):
    // k spans with their surroundings fit in a context of min_len ≤ max_len symbols.
    const std::string queries = "n_queries = " + std::to_string(k);
    if (max_len < k * (1 + 2 * kWindow) + 1)
        throw ConfigError("task selective-copying: data.task_params.max_len = " +
                          std::to_string(max_len) + " leaves no room for " + queries +
                          " (a span of at least 1 symbol and " + std::to_string(2 * kWindow) +
                          " of surroundings each): it must be at "
                          "least " +
                          std::to_string(k * (1 + 2 * kWindow) + 1));
    const int longest_span = (max_len - 1) / k - 2 * kWindow;
    if (s > longest_span)
        throw ConfigError(
            "task selective-copying: data.task_params.span_len = " + std::to_string(s) +
            " is outside [1, " + std::to_string(longest_span) + "]: " + queries + " spans with " +
            std::to_string(2 * kWindow) +
            " symbols of surroundings each fit in max_len = " + std::to_string(max_len));
    require_range("selective-copying", "min_len", min_len, k * (s + 2 * kWindow) + 1, max_len);
    // k spans, each compared with every other start of the longest contexts.
    const double probes = static_cast<double>(k) * (max_len - s - 2 * kWindow);
    const double recurrences = probes / std::pow(static_cast<double>(v), 2 * kWindow);
    if (recurrences > kMaxRecurrences) {
        const auto least =
            static_cast<int>(std::ceil(std::pow(probes / kMaxRecurrences, 1.0 / (2 * kWindow))));
        throw ConfigError(
            "task selective-copying: data.task_params.n_symbols = " + std::to_string(v) +
            " is too few for " + queries + " in contexts of max_len = " + std::to_string(max_len) +
            ": a span's surroundings would recur about " +
            std::to_string(static_cast<long long>(std::llround(recurrences))) +
            " times in a context, which is redrawn until they recur nowhere; give n_symbols of "
            "at least " +
            std::to_string(least) + " or a shorter max_len");
    }
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
        // Is there a start in [kWindow, n − s − kWindow] whose span overlaps none of `placed`?
        const auto room_for_a_span = [&](std::vector<int> placed) {
            std::sort(placed.begin(), placed.end());
            int free_from = kWindow;
            for (const int o : placed) {
                if (o - free_from >= s) return true;
                free_from = std::max(free_from, o + s);
            }
            return free_from <= n - s - kWindow;
        };
        // k non-overlapping spans in one draw: k sorted offsets in the slack, in a random order.
        const auto spans_at_once = [&](RandomStream& r) {
            const int slack = n - 2 * kWindow - k * s;  // ≥ 0: n ≥ min_len ≥ k·(s + 4) + 1
            std::vector<int> offsets(static_cast<std::size_t>(k));
            for (auto& g : offsets)
                g = static_cast<int>(r.between(0, slack));
            std::sort(offsets.begin(), offsets.end());
            std::vector<int> placed;
            for (int i = 0; i < k; ++i)
                placed.push_back(kWindow + offsets[static_cast<std::size_t>(i)] + i * s);
            r.shuffle(placed);
            return placed;
        };
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
                if (!overlaps) {
                    starts.push_back(st);
                } else if (!room_for_a_span(starts)) {
                    // The spans placed so far leave no gap of s (2 spans of 100 in 209 symbols,
                    // the first in the middle): drawing on never ended. Only then, the k spans
                    // are placed at once, uniformly among the orders of k spans and the slack.
                    starts = spans_at_once(rng);
                }
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
