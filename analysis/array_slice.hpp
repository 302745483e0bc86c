#pragma once
// The array browser's reader (issue 28): every numeric dataset of a dump or checkpoint with its
// shape and named axes, and two-dimensional slices of any of them read as one hyperslab (only the
// cells shown are read, so a 20 GB dataset browses as fast as a small one). Non-finite values are
// returned as they are (NaN, ±Inf) for the browser to mark, not refused as the analyses do.
#include <cstdint>
#include <string>
#include <vector>

namespace routescope::analysis {

struct DatasetEntry {
    std::string path;   ///< "/layers/3/hidden"
    std::string dtype;  ///< "float16", "int32", ...
    std::vector<std::int64_t> shape;
    std::vector<std::string> axes;  ///< "examples", "positions", "channels", ... or "axis k"
};

/// Every numeric (integer or float) dataset of the HDF5 file, in path order. Throws IoError
/// naming the file when it cannot be read.
std::vector<DatasetEntry> list_datasets(const std::string& file);

struct SliceRequest {
    std::string dataset;
    int row_axis = 0, column_axis = 1;  ///< the same axis twice is an error; a rank-1 dataset
                                        ///< has one row (row_axis −1) and its axis as columns
    std::vector<std::int64_t> index;    ///< per axis: the fixed index of the axes not shown
    std::int64_t row0 = 0, rows = -1;   ///< window of the row axis (−1: to the end)
    std::int64_t column0 = 0, columns = -1;
};

struct Slice {
    std::int64_t rows = 0, columns = 0;
    std::vector<double> values;  ///< row-major
    std::int64_t non_finite = 0;
};

/// ConfigError naming the dataset for an axis or index out of range; IoError for a read failure.
Slice read_slice(const std::string& file, const SliceRequest& request);

/// Cells beyond `k` standard deviations of the slice's finite values from their mean (k ≤ 0: none).
std::vector<bool> outliers(const Slice& slice, double k);

}  // namespace routescope::analysis
