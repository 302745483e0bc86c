#include "engine/data/objectives/birdie_vocabulary.hpp"

#include <array>

namespace routescope::data {

std::string birdie_piece(const BirdieVocabulary& v, std::int32_t id) {
    static constexpr std::array<const char*, kParadigmCount> kParadigms = {
        "[infill]", "[autoencode]", "[deshuffle]", "[copy]", "[select]", "[prefix]", "[next]"};
    const std::int32_t k = id - v.base;
    if (k < 0 || k >= kBirdieSpecialCount) return {};
    if (k < kParadigmCount) return kParadigms[static_cast<std::size_t>(k)];
    if (id == v.start()) return "[start]";
    if (id == v.done()) return "[done]";
    if (id == v.query()) return "[query]";
    return "[S" + std::to_string(k - kParadigmCount - 3) + "]";
}

}  // namespace routescope::data
