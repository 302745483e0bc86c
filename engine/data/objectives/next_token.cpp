// Next-token prediction inside the Birdie mixture (TASKS.md): nothing before [start], the whole
// original as target.
#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

void next_token(std::span<const std::int32_t> original, ObjectiveSample& s) {
    s.input.clear();
    s.target.assign(original.begin(), original.end());
}

}  // namespace routescope::data
