#pragma once
// Measured inference time per sequence against L (ANALYSES.md §7, "Measured"), as
// `routescope-cli bench forward` reports it: its last output line is a JSON object
// {"lengths": [L...], "<arch>_ms": [ms per L...], ..., "crossover": L}. The Efficiency view reads a
// file holding that output (the whole stdout or only the line) to draw measured time beside FLOPs.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct ForwardTimingSeries {
    std::string arch;
    std::vector<std::int64_t> lengths;
    std::vector<double> ms;  ///< median time of one sequence at each length
};

struct ForwardTimings {
    Provenance provenance;
    std::vector<ForwardTimingSeries> series;  ///< one per "<arch>_ms" key, by architecture name
    std::int64_t crossover = -1;  ///< the first L where the first arch is faster; −1 none
    /// Columns arch, length, measured_ms.
    CsvTable table() const;
    /// The measured time of `arch` at `length`, or NaN.
    double ms_at(const std::string& arch, std::int64_t length) const;
};

/// Reads the last line of `path` that is a JSON object with "lengths". Throws IoError (unreadable)
/// or FormatError naming the file and the key (no such line, an "<arch>_ms" list whose size is not
/// that of "lengths", a non-number).
ForwardTimings read_forward_timings(const std::string& path);

}  // namespace routescope::analysis
