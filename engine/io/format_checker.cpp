#include "engine/io/format_checker.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>

#include "engine/core/json_text.hpp"
#include "engine/io/contained_validation.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/half.hpp"

namespace routescope {
namespace {
struct TooManyViolations {};
}  // namespace

FormatChecker::FormatChecker(const std::string& path, const ValidateOptions& options,
                             ValidationReport& report)
    : options_(options), report_(report) {
    if (auto why = h5::unreadable_reason(path)) {
        report_.readable = false;
        report_.violations.push_back({"/", "an HDF5 file", *why});
        return;
    }
    try {
        file_ = H5::H5File(path, H5F_ACC_RDONLY);
        std::error_code ec;
        file_size_ = std::filesystem::file_size(path, ec);
        opened_ = true;
    } catch (const H5::Exception& e) {
        report_.readable = false;
        report_.violations.push_back(
            {"/", "an HDF5 file", "an unreadable file (" + e.getDetailMsg() + ")"});
    }
}

void FormatChecker::guarded(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const TooManyViolations&) {
        report_.violations.push_back(
            {"/", "fewer violations",
             "more than " + std::to_string(options_.max_violations) + " (stopped checking)"});
    } catch (const H5::Exception& e) {
        report_.violations.push_back({"/", "readable HDF5 objects",
                                      "an HDF5 read error (" + e.getFuncName() + ": " +
                                          e.getDetailMsg() + "; " + h5::error_stack_text() + ")"});
    } catch (const std::exception& e) {
        report_.violations.push_back(
            {"/", "a well-formed file", std::string("an error: ") + e.what()});
    }
}

void FormatChecker::add(const std::string& path, const std::string& expected,
                        const std::string& found) {
    if (report_.violations.size() >= options_.max_violations) throw TooManyViolations{};
    report_.violations.push_back({path, expected, found});
}

void FormatChecker::check_root(const std::string& format, int version) {
    auto fmt = h5::read_string_attr(file_, "format");
    if (!fmt) {
        add("/", "attr format = \"" + format + "\"",
            h5::has_attr(file_, "format") ? h5::attr_type_name(file_, "format")
                                          : "no format attribute");
    } else if (*fmt != format) {
        add("/", "attr format = \"" + format + "\"", "\"" + *fmt + "\"");
        stopped_ = true;
        return;
    }
    auto v = h5::read_int_attr(file_, "format_version");
    if (!v) {
        add("/", "attr format_version an integer",
            h5::has_attr(file_, "format_version") ? h5::attr_type_name(file_, "format_version")
                                                  : "nothing");
    } else if (*v > version) {
        add("/",
            "attr format_version ≤ " + std::to_string(version) + " (the newest this build reads)",
            h5::int_attr_text(file_, "format_version"));
        stopped_ = true;
        return;
    } else if (*v < 1) {
        add("/", "attr format_version ≥ 1", std::to_string(*v));
    }
    require_string_attr(file_, "/", "producer");
    require_string_attr(file_, "/", "created");
}

std::optional<std::string> FormatChecker::require_string_attr(const H5::H5Object& obj,
                                                              const std::string& path,
                                                              const std::string& name) {
    if (!h5::has_attr(obj, name)) {
        add(path, "attr " + name + " (string)", "nothing");
        return std::nullopt;
    }
    auto v = h5::read_string_attr(obj, name);
    if (!v) add(path, "attr " + name + " a string", h5::attr_type_name(obj, name));
    return v;
}

std::optional<std::int64_t> FormatChecker::require_int_attr(const H5::H5Object& obj,
                                                            const std::string& path,
                                                            const std::string& name) {
    if (!h5::has_attr(obj, name)) {
        add(path, "attr " + name + " (integer)", "nothing");
        return std::nullopt;
    }
    auto v = h5::read_int_attr(obj, name);
    if (!v) add(path, "attr " + name + " an integer", h5::attr_type_name(obj, name));
    return v;
}

void FormatChecker::optional_json_attr(const H5::H5Object& obj, const std::string& path,
                                       const std::string& name) {
    if (!h5::has_attr(obj, name)) return;
    auto text = h5::read_string_attr(obj, name);
    if (!text) {
        add(path, "attr " + name + " a JSON string", h5::attr_type_name(obj, name));
        return;
    }
    // As the readers parse it (parse_json_text): JSON nested at most kJsonMaxDepth deep. A config
    // nested deeper passed here and was refused by `analyze flops`.
    if (const std::string problem = json_text_problem(*text); !problem.empty())
        add(path,
            "attr " + name + " valid JSON nested at most " + std::to_string(kJsonMaxDepth) +
                " levels deep",
            !nlohmann::json::accept(*text) ? std::string("text that does not parse as JSON")
                                           : problem);
}

std::optional<H5::DataSet> FormatChecker::require_dataset(const std::string& path) {
    if (!h5::exists(file_, path.substr(1))) {
        add(path, "a dataset", "nothing");
        return std::nullopt;
    }
    return dataset_at(path);
}

std::optional<H5::DataSet> FormatChecker::dataset_at(const std::string& path) {
    if (!h5::is_dataset(file_, path.substr(1))) {
        // "nothing" for an empty /layers/<l> group; a dangling link names its target.
        add(path, "a dataset", h5::describe_path(file_, path.substr(1)));
        return std::nullopt;
    }
    h5::breadcrumb(path);
    H5::DataSet ds = file_.openDataSet(path.substr(1));
    // Declared sizes are untrusted: a dataset that cannot be what the file holds is reported and
    // never scanned (docs/decisions.md, "Declared sizes are checked before reading").
    if (auto why = h5::storage_problem(ds, file_size_)) {
        add(path, "a dataset whose declared size the file can hold", *why);
        return std::nullopt;
    }
    return ds;
}

bool FormatChecker::scan_ints(const H5::DataSet& ds, const std::string& path,
                              const std::function<bool(std::int64_t, std::uint64_t)>& visit) {
    const auto shape = h5::shape_of(ds);
    if (shape.empty()) return true;
    std::uint64_t row = 1;
    for (std::size_t i = 1; i < shape.size(); ++i)
        row *= shape[i];  // storage_problem has bounded the product by the file's size
    if (row == 0 || shape[0] == 0) return true;
    const std::uint64_t row_bytes = row * sizeof(std::int64_t);
    if (row_bytes > h5::read_memory_limit()) {
        add(path, "rows that fit in memory",
            "one row of " + h5::bytes_text(row_bytes) + " (limit " +
                h5::bytes_text(h5::read_memory_limit()) + ")");
        return false;
    }
    const hsize_t rows_per_block = std::max<hsize_t>(1, (8u << 20) / row_bytes);
    H5::DataSpace file_space = ds.getSpace();
    std::vector<std::int64_t> buffer;
    // Reads rows [r0, r0 + nrows) into the buffer; false on an HDF5 read error.
    const auto read_rows = [&](hsize_t r0, hsize_t nrows) {
        std::vector<hsize_t> start(shape.size(), 0), count = shape;
        start[0] = r0;
        count[0] = nrows;
        file_space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
        H5::DataSpace mem_space(static_cast<int>(count.size()), count.data());
        buffer.resize(nrows * row);
        try {
            ds.read(buffer.data(), H5::PredType::NATIVE_INT64, mem_space, file_space);
        } catch (const H5::Exception&) {
            return false;
        }
        return true;
    };
    for (hsize_t r0 = 0; r0 < shape[0]; r0 += rows_per_block) {
        const hsize_t nrows = std::min<hsize_t>(rows_per_block, shape[0] - r0);
        if (!read_rows(r0, nrows)) {
            const std::string why = h5::error_stack_text();
            // The rows that fail, as scan_finite narrows them (a damaged chunk is a few rows of
            // the block, and "rows 0..11" pointed at none of them): the first failing rows and
            // the run of failing rows after them. Read a chunk's rows at a time (a chunk reads
            // or fails whole; the [S] arrays hold a million rows a block), one row at a time
            // when the dataset is not chunked.
            hsize_t unit = 1;
            try {
                const H5::DSetCreatPropList plist = ds.getCreatePlist();
                std::vector<hsize_t> chunk(shape.size());
                const int rank = static_cast<int>(shape.size());
                if (plist.getLayout() == H5D_CHUNKED &&
                    plist.getChunk(rank, chunk.data()) == rank && chunk[0] > 0)
                    unit = chunk[0];
            } catch (const H5::Exception&) {
            }
            const hsize_t end = r0 + nrows;
            const auto piece = [&](hsize_t r) { return std::min(end, (r / unit + 1) * unit) - r; };
            // At most kMaxProbes reads: a million one-row chunks behind a filter the library
            // lacks all fail, and a read per chunk (each with its error stack) outran the
            // checker's time; the run is then said to go on beyond the rows probed.
            constexpr int kMaxProbes = 4096;
            int probes = 0;
            const auto fails = [&](hsize_t r) { return ++probes, !read_rows(r, piece(r)); };
            hsize_t first_bad = r0, last_bad = end - 1;
            bool beyond = false;
            for (hsize_t r = r0; r < end && probes < kMaxProbes; r += piece(r))
                if (fails(r)) {
                    first_bad = r;
                    last_bad = r + piece(r) - 1;
                    while (last_bad + 1 < end && probes < kMaxProbes && fails(last_bad + 1))
                        last_bad += piece(last_bad + 1);
                    beyond = last_bad + 1 < end && probes >= kMaxProbes;
                    break;
                }
            (void)h5::error_stack_text();  // the probes' own errors: cleared
            // Said of this dataset (a filter the library lacks, a failed checksum), not of "/".
            add(path, "readable values",
                "an HDF5 read error at rows " + std::to_string(first_bad) + ".." +
                    std::to_string(last_bad) +
                    (beyond ? " and perhaps beyond (probing stopped after " +
                                  std::to_string(kMaxProbes) + " reads)"
                            : "") +
                    " (" + why + ")");
            return false;
        }
        for (std::size_t i = 0; i < buffer.size(); ++i)
            if (!visit(buffer[i], r0 * row + i)) return true;
    }
    return true;
}

void FormatChecker::expect_int32(const H5::DataSet& ds, const std::string& path) {
    if (!h5::is_int(ds.getDataType(), 4)) add(path, "dtype int32", h5::type_name(ds.getDataType()));
}

bool FormatChecker::expect_shape(const H5::DataSet& ds, const std::string& path,
                                 const std::vector<std::optional<hsize_t>>& dims,
                                 const std::string& text) {
    const auto shape = h5::shape_of(ds);
    if (shape.size() != dims.size()) {
        add(path, "rank " + std::to_string(dims.size()) + " " + text,
            "rank " + std::to_string(shape.size()) + " " + h5::shape_text(shape));
        return false;
    }
    bool ok = true;
    std::string want = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i) want += ", ";
        want += dims[i] ? std::to_string(*dims[i]) : "*";
        if (dims[i] && *dims[i] != shape[i]) ok = false;
    }
    want += "]";
    if (!ok) add(path, "shape " + text + " = " + want, h5::shape_text(shape));
    return ok;
}

void FormatChecker::check_float_dataset(const H5::DataSet& ds, const std::string& path,
                                        const std::vector<std::optional<hsize_t>>& dims,
                                        const std::string& text, const FloatBlockVisitor& visit) {
    const H5::DataType type = ds.getDataType();
    const bool float_ok = h5::is_float(type) && (type.getSize() == 2 || type.getSize() == 4);
    if (!float_ok) add(path, "dtype float16 or float32", h5::type_name(type));
    if (expect_shape(ds, path, dims, text) && float_ok) scan_finite(ds, path, visit);
}

void FormatChecker::scan_finite(const H5::DataSet& ds, const std::string& path,
                                const FloatBlockVisitor& visit) {
    if (!options_.scan_values) return;
    const auto shape = h5::shape_of(ds);
    if (shape.empty()) return;
    hsize_t row = 1;
    for (std::size_t i = 1; i < shape.size(); ++i)
        row *= shape[i];  // storage_problem has bounded the product by the file's size
    if (row == 0 || shape[0] == 0) return;
    if (row * sizeof(double) > h5::read_memory_limit()) {
        add(path, "rows that fit in memory",
            "one row of " + h5::bytes_text(row * sizeof(double)) + " (limit " +
                h5::bytes_text(h5::read_memory_limit()) + ")");
        return;
    }
    // About 8 MB a block: one example per chunk in dumps, so whole rows are the natural unit. A
    // float16 dataset is read as its bits (a half is non-finite when its exponent is all ones:
    // HDF5's own half → double conversion is a soft path at ~200 ns a value, an hour for a
    // published-size dump) and a float32 one as floats; anything else as doubles.
    const H5::DataType type = ds.getDataType();
    enum class As {
        half,
        single,
        twice
    } as = h5::is_binary16_le(type)                    ? As::half
           : h5::is_float(type) && type.getSize() == 4 ? As::single
                                                       : As::twice;
    const hsize_t rows_per_block = std::max<hsize_t>(1, (8u << 20) / (sizeof(double) * row));
    H5::DataSpace file_space = ds.getSpace();
    std::vector<double> doubles;
    std::vector<float> floats;
    std::vector<std::uint16_t> halves;
    std::vector<float> visited;  // a half or double block as floats, for `visit`
    bool visiting = static_cast<bool>(visit);
    std::size_t bad = 0;
    std::string first;
    // Reads rows [r0, r0 + nrows) into the buffer of its kind; false on an HDF5 read error.
    const auto read_rows = [&](hsize_t r0, hsize_t nrows) {
        std::vector<hsize_t> start(shape.size(), 0), count = shape;
        start[0] = r0;
        count[0] = nrows;
        file_space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
        H5::DataSpace mem_space(static_cast<int>(count.size()), count.data());
        const std::size_t n = static_cast<std::size_t>(nrows * row);
        try {
            if (as == As::half) {
                halves.resize(n);
                ds.read(halves.data(), type, mem_space, file_space);
            } else if (as == As::single) {
                floats.resize(n);
                ds.read(floats.data(), H5::PredType::NATIVE_FLOAT, mem_space, file_space);
            } else {
                doubles.resize(n);
                ds.read(doubles.data(), H5::PredType::NATIVE_DOUBLE, mem_space, file_space);
            }
        } catch (const H5::Exception&) {
            return false;
        }
        return true;
    };
    for (hsize_t r0 = 0; r0 < shape[0]; r0 += rows_per_block) {
        const hsize_t nrows = std::min(rows_per_block, shape[0] - r0);
        const std::size_t n = static_cast<std::size_t>(nrows * row);
        if (!read_rows(r0, nrows)) {
            const std::string why = h5::error_stack_text();
            // The rows that fail, read one at a time (a damaged chunk is a few rows of the block):
            // the first failing row and the run of failing rows after it.
            hsize_t first_bad = r0, last_bad = r0 + nrows - 1;
            for (hsize_t r = r0; r < r0 + nrows; ++r)
                if (!read_rows(r, 1)) {
                    first_bad = last_bad = r;
                    while (last_bad + 1 < r0 + nrows && !read_rows(last_bad + 1, 1))
                        ++last_bad;
                    break;
                }
            (void)h5::error_stack_text();  // the probes' own errors: cleared
            add(path, "readable values",
                "an HDF5 read error at rows " + std::to_string(first_bad) + ".." +
                    std::to_string(last_bad) + " (" + why + ")");
            return;
        }
        for (std::size_t i = 0; i < n; ++i) {
            bool nan = false;
            if (as == As::half) {
                if ((halves[i] & 0x7C00u) != 0x7C00u) continue;
                nan = (halves[i] & 0x3FFu) != 0;
            } else if (as == As::single) {
                if (std::isfinite(floats[i])) continue;
                nan = std::isnan(floats[i]);
            } else {
                if (std::isfinite(doubles[i])) continue;
                nan = std::isnan(doubles[i]);
            }
            if (bad++ == 0) {
                // Unravel the flat index into the dataset's coordinates.
                std::vector<hsize_t> idx(shape.size());
                std::size_t flat = i;
                for (std::size_t k = shape.size(); k-- > 1;) {
                    idx[k] = flat % shape[k];
                    flat /= shape[k];
                }
                idx[0] = r0 + flat;
                first = std::string(nan ? "NaN" : "Inf") + " at " + h5::shape_text(idx);
            }
        }
        if (visiting) {
            const float* values = floats.data();
            if (as != As::single) {
                visited.resize(n);
                if (as == As::half)
                    from_half(halves.data(), n, visited.data());
                else
                    for (std::size_t i = 0; i < n; ++i)
                        visited[i] = static_cast<float>(doubles[i]);
                values = visited.data();
            }
            visiting = visit(values, r0, nrows, row);
        }
    }
    if (bad) add(path, "finite values", first + " (" + std::to_string(bad) + " non-finite values)");
}

}  // namespace routescope
