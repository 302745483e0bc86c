#pragma once
// Pairing the layers of two models of different depth: by relative depth ℓ / n_layers, the
// alignment the gates view, the similarity view's diagonal and the transitions view use.
#include <cstdint>
#include <vector>

namespace routescope::analysis {

/// Relative depth of layer ℓ of a model with n_layers blocks: ℓ / max(1, n_layers).
double relative_depth(int layer, std::int64_t n_layers);

/// The layer among `candidates` (layers of a model with `n_to` blocks) whose relative depth is
/// nearest to that of `layer` in a model with `n_from` blocks; the first such on ties, −1 when
/// there are no candidates.
int nearest_depth_layer(int layer, std::int64_t n_from, const std::vector<int>& candidates,
                        std::int64_t n_to);

}  // namespace routescope::analysis
