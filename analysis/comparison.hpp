#pragma once
// Comparison arithmetic of two models' matrices (issue 26: the A − B panels of the kernels and
// gates views compute nothing themselves). Layer pairing by relative depth is layer_pairing.hpp.
#include <cstdint>
#include <optional>
#include <vector>

namespace routescope::analysis {

/// A row-major matrix of one model, as a view shows it.
struct Grid {
    std::int64_t rows = 0, columns = 0;
    const std::vector<double>* values = nullptr;  ///< rows × columns
};

/// A − B element by element, or nothing when the two differ in shape (or a grid's values do not
/// fill its shape): a difference of unlike matrices is undefined, not zero-padded. NaN in either
/// gives NaN.
std::optional<std::vector<double>> difference(const Grid& a, const Grid& b);

}  // namespace routescope::analysis
