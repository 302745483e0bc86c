// Autoencoding (full span corruption; TASKS.md): the input is corrupted as in infilling, the
// target is the whole original, so the model rebuilds the kept tokens too.
#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void autoencoding(std::span<const std::int32_t> original, SpanParams p,
                  const BirdieVocabulary& vocab, RandomStream& rng, ObjectiveSample& s) {
    infilling(original, p, vocab, rng, s);
    s.target.assign(original.begin(), original.end());
}

}  // namespace routescope::data
