// Next-token prediction inside the Birdie mixture (TASKS.md): nothing before [start], the whole
// original as target.
#include "engine/data/objectives/birdie_objectives.hpp"

namespace routescope::data {

ObjectiveSample next_token(std::span<const std::int32_t> original) {
    ObjectiveSample s;
    s.target.assign(original.begin(), original.end());
    return s;
}

}  // namespace routescope::data
