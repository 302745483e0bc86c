// Selective copying (TASKS.md): the original is the context; each of k queries shows the few
// tokens before and after a span of it, with the span's sentinel in between; the target gives the
// spans in query order, each after its sentinel, then [done].
#include <algorithm>

#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void selective_copying(std::span<const std::int32_t> original, SelectiveCopyingParams p,
                       const BirdieVocabulary& vocab, RandomStream& rng, ObjectiveSample& s) {
    const auto n = static_cast<std::int32_t>(original.size());
    s.input.assign(original.begin(), original.end());
    s.target.clear();
    for (std::int32_t q = 0; q < p.queries && n > 0; ++q) {
        const std::int32_t len =
            std::min(n, static_cast<std::int32_t>(rng.between(p.min_span, p.max_span)));
        const auto begin = static_cast<std::int32_t>(rng.between(0, n - len));
        const std::int32_t before = std::max(0, begin - p.context);
        const std::int32_t after = std::min(n, begin + len + p.context);
        s.input.push_back(vocab.query());
        s.input.insert(s.input.end(), original.begin() + before, original.begin() + begin);
        s.input.push_back(vocab.sentinel(q));
        s.input.insert(s.input.end(), original.begin() + begin + len, original.begin() + after);
        s.target.push_back(vocab.sentinel(q));
        s.target.insert(s.target.end(), original.begin() + begin, original.begin() + begin + len);
    }
    s.target.push_back(vocab.done());
}

}  // namespace routescope::data
