#include "engine/train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace routescope::train {

double lr_factor(std::int64_t step, const TrainConfig& t) {
    if (step < t.warmup_steps)
        return static_cast<double>(step + 1) / static_cast<double>(t.warmup_steps);
    const double x =
        std::min(1.0, static_cast<double>(step - t.warmup_steps) /
                          static_cast<double>(std::max<std::int64_t>(1, t.steps - t.warmup_steps)));
    if (t.schedule == "cosine") return 0.5 * (1.0 + std::cos(std::numbers::pi * x));
    if (t.schedule == "linear") return 1.0 - x;
    return 1.0;
}

}  // namespace routescope::train
