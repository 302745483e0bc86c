// Infilling (T5's span corruption; TASKS.md): every sampled span becomes one sentinel in the
// input; the target lists each span after its sentinel, in order.
#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void infilling(std::span<const std::int32_t> original, SpanParams p, const BirdieVocabulary& vocab,
               RandomStream& rng, ObjectiveSample& s) {
    const auto n = static_cast<std::int32_t>(original.size());
    thread_local std::vector<Span> spans;        // reused: a training step allocates nothing here
    spans.reserve(static_cast<std::size_t>(n));  // at most n spans
    sample_spans(n, p, rng, spans);
    s.input.clear();
    s.target.clear();
    std::int32_t pos = 0, k = 0;
    for (const Span& sp : spans) {
        s.input.insert(s.input.end(), original.begin() + pos, original.begin() + sp.begin);
        s.input.push_back(vocab.sentinel(k));
        s.target.push_back(vocab.sentinel(k));
        s.target.insert(s.target.end(), original.begin() + sp.begin,
                        original.begin() + sp.begin + sp.length);
        pos = sp.begin + sp.length;
        ++k;
    }
    s.input.insert(s.input.end(), original.begin() + pos, original.end());
}

}  // namespace routescope::data
