#pragma once
// Shared machinery of the dump and checkpoint validators: opening without throwing, collecting
// violations, and the dtype/shape/finiteness checks both formats ask for.
#include <H5Cpp.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/validation.hpp"

namespace routescope {

class FormatChecker {
public:
    FormatChecker(const std::string& path, const ValidateOptions& options,
                  ValidationReport& report);
    bool opened() const { return opened_; }
    /// Runs `fn`, turning an HDF5 failure part-way (a corrupt chunk, say) into a violation.
    void guarded(const std::function<void()>& fn);

protected:
    H5::H5File file_;
    const ValidateOptions& options_;
    ValidationReport& report_;
    bool opened_ = false;
    std::uint64_t file_size_ = 0;
    bool stopped_ =
        false;  ///< set when going on would only produce noise (wrong format, newer version)

    void add(const std::string& path, const std::string& expected, const std::string& found);
    void check_root(const std::string& format, int version);
    std::optional<std::string> require_string_attr(const H5::H5Object& obj, const std::string& path,
                                                   const std::string& name);
    std::optional<std::int64_t> require_int_attr(const H5::H5Object& obj, const std::string& path,
                                                 const std::string& name);
    /// An optional attribute holding a JSON document; reports it when it does not parse.
    void optional_json_attr(const H5::H5Object& obj, const std::string& path,
                            const std::string& name);
    /// The dataset at `path`, reporting it when missing or not a dataset.
    std::optional<H5::DataSet> require_dataset(const std::string& path);
    /// The dataset at `path` (known to exist), reporting it when it is a group.
    std::optional<H5::DataSet> dataset_at(const std::string& path);
    void expect_int32(const H5::DataSet& ds, const std::string& path);
    /// Rank and every known dimension; `text` names them ("[S, L, d]"). Returns true when they
    /// match.
    bool expect_shape(const H5::DataSet& ds, const std::string& path,
                      const std::vector<std::optional<hsize_t>>& dims, const std::string& text);
    /// Rows [r0, r0 + nrows) of a float dataset as floats (row-major, `row` values a row; values
    /// that are not finite included: scan_finite reports those), handed to a visitor by
    /// scan_finite after it checked them, so a rule on the values costs no second read. Returning
    /// false stops the visits (the finiteness scan goes on).
    using FloatBlockVisitor =
        std::function<bool(const float* values, hsize_t r0, hsize_t nrows, hsize_t row)>;
    /// float16/float32, the shape, then (when scanning) finite values, and `visit` when given.
    void check_float_dataset(const H5::DataSet& ds, const std::string& path,
                             const std::vector<std::optional<hsize_t>>& dims,
                             const std::string& text, const FloatBlockVisitor& visit = {});
    /// Reads the dataset row block by row block and reports the first NaN/Inf and how many;
    /// hands each block to `visit` when given.
    void scan_finite(const H5::DataSet& ds, const std::string& path,
                     const FloatBlockVisitor& visit = {});
    /// Reads an integer dataset block by block (never the whole of it at once) and calls
    /// `visit(value, flat index)` until it returns false. Reports (and returns false) when one
    /// block would not fit the memory limit.
    bool scan_ints(const H5::DataSet& ds, const std::string& path,
                   const std::function<bool(std::int64_t, std::uint64_t)>& visit);
};

}  // namespace routescope
