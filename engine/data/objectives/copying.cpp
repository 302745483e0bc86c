// Copying (TASKS.md): the target is the input.
#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void copying(std::span<const std::int32_t> original, ObjectiveSample& s) {
    s.input.assign(original.begin(), original.end());
    s.target.assign(original.begin(), original.end());
}

}  // namespace routescope::data
