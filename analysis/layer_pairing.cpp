#include "analysis/layer_pairing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace routescope::analysis {

double relative_depth(int layer, std::int64_t n_layers) {
    return static_cast<double>(layer) / static_cast<double>(std::max<std::int64_t>(1, n_layers));
}

int nearest_depth_layer(int layer, std::int64_t n_from, const std::vector<int>& candidates,
                        std::int64_t n_to) {
    const double target = relative_depth(layer, n_from);
    double best = std::numeric_limits<double>::infinity();
    int out = -1;
    for (int l : candidates) {
        const double d = std::abs(relative_depth(l, n_to) - target);
        if (d < best - 1e-12) {
            best = d;
            out = l;
        }
    }
    return out;
}

}  // namespace routescope::analysis
