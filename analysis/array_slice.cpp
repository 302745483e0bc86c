#include "analysis/array_slice.hpp"

#include <H5Cpp.h>

#include <cmath>
#include <functional>
#include <set>

#include "analysis/hdf5_lock.hpp"
#include "engine/core/error.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/half.hpp"

namespace routescope::analysis {
namespace {

namespace h5 = routescope::h5;

/// Axis names from the dataset's place in a dump or checkpoint (docs/formats/).
std::vector<std::string> axis_names(const std::string& path, std::size_t rank) {
    std::vector<std::string> out;
    auto ends = [&](const std::string& s) {
        return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    if (path.rfind("/layers/", 0) == 0 &&
        (ends("/hidden") || path.find("/gates/") != std::string::npos))
        out = {"rows", "positions", "channels"};
    else if (path.rfind("/layers/", 0) == 0 && ends("/sentence"))
        out = {"rows", "channels"};
    else if (path == "/data/tokens" || path == "/data/reset_mask")
        out = {"examples", "positions"};
    else if (path.rfind("/data/", 0) == 0)
        out = {"examples"};
    else if (path.rfind("/kernels/", 0) == 0)
        out = {"lag"};
    else if (path.rfind("/mixing/", 0) == 0)
        out = {"positions", "positions"};
    if (out.size() != rank) {
        out.clear();
        for (std::size_t k = 0; k < rank; ++k)
            out.push_back("axis " + std::to_string(k));
    }
    return out;
}

// Groups nested deeper than this are not listed: no file Routescope reads nests more than three,
// and a recursion bounded by the file alone could exhaust the stack.
constexpr int kMaxGroupDepth = 64;

// Lists the float and integer datasets under `group`, each group once: a hard link back to a
// group being walked (h5py's `f['layers/1/loop'] = f['layers']`, which `validate` rightly
// ignores) made the walk recurse until the workbench died of a stack overflow after 3.6 GB.
void walk(const H5::Group& group, const std::string& prefix, std::vector<DatasetEntry>& out,
          std::set<std::string>& visited, int depth) {
    if (depth > kMaxGroupDepth) return;
    for (const auto& name : h5::children(group)) {
        const std::string path = prefix + "/" + name;
        // Never an external link: following one opens whatever file it names.
        H5L_info_t link;
        if (H5Lget_info(group.getId(), name.c_str(), &link, H5P_DEFAULT) < 0 ||
            link.type == H5L_TYPE_EXTERNAL) {
            H5Eclear2(H5E_DEFAULT);
            continue;
        }
        H5O_type_t type = H5O_TYPE_UNKNOWN;
        try {
            type = group.childObjType(name);
        } catch (const H5::Exception&) {
            H5Eclear2(H5E_DEFAULT);  // a dangling soft link: nothing to list
            continue;
        }
        if (type == H5O_TYPE_GROUP) {
            H5::Group child = group.openGroup(name);
            const auto id = h5::object_identity(child.getId());
            if (!id || !visited.insert(*id).second) continue;  // seen: a cycle or a second link
            walk(child, path, out, visited, depth + 1);
        } else if (type == H5O_TYPE_DATASET) {
            H5::DataSet ds = group.openDataSet(name);
            const H5T_class_t cls = ds.getTypeClass();
            if (cls != H5T_FLOAT && cls != H5T_INTEGER) continue;
            DatasetEntry e;
            e.path = path;
            e.dtype = h5::type_name(ds.getDataType());
            for (hsize_t s : h5::shape_of(ds))
                e.shape.push_back(static_cast<std::int64_t>(s));
            e.axes = axis_names(path, e.shape.size());
            out.push_back(std::move(e));
        }
    }
}

}  // namespace

std::vector<DatasetEntry> list_datasets(const std::string& file) {
    Hdf5Lock lock;
    std::vector<DatasetEntry> out;
    try {
        H5::H5File f = h5::open_read(file);
        H5::Group root = f.openGroup("/");
        std::set<std::string> visited;
        if (const auto id = h5::object_identity(root.getId())) visited.insert(*id);
        walk(root, "", out, visited, 0);
    } catch (const H5::Exception&) {
        throw IoError(file + ": cannot list its datasets: " + h5::error_stack_text());
    }
    return out;
}

Slice read_slice(const std::string& file, const SliceRequest& r) {
    Hdf5Lock lock;
    Slice out;
    try {
        H5::H5File f = h5::open_read(file);
        if (!h5::is_dataset(f, r.dataset.substr(r.dataset.rfind('/', 0) == 0 ? 1 : 0)))
            throw ConfigError(file + ": no dataset " + r.dataset);
        H5::DataSet ds = f.openDataSet(r.dataset);
        const auto shape = h5::shape_of(ds);
        const int rank = static_cast<int>(shape.size());
        if (rank == 0) throw ConfigError(file + ": " + r.dataset + " is a scalar, not an array");
        const int row_axis = rank == 1 ? -1 : r.row_axis;
        const int column_axis = rank == 1 ? 0 : r.column_axis;
        if (column_axis < 0 || column_axis >= rank || row_axis >= rank ||
            (rank > 1 && (row_axis < 0 || row_axis == column_axis)))
            throw ConfigError(file + ": " + r.dataset + " has " + std::to_string(rank) +
                              " axes; rows and columns must be two different ones of 0.." +
                              std::to_string(rank - 1));
        std::vector<hsize_t> start(rank, 0), count(rank, 1);
        for (int a = 0; a < rank; ++a) {
            if (a == row_axis || a == column_axis) continue;
            const std::int64_t i = a < static_cast<int>(r.index.size()) ? r.index[a] : 0;
            if (i < 0 || i >= static_cast<std::int64_t>(shape[a]))
                throw ConfigError(file + ": " + r.dataset + ": index " + std::to_string(i) +
                                  " of axis " + std::to_string(a) + " is outside 0.." +
                                  std::to_string(shape[a] - 1));
            start[a] = static_cast<hsize_t>(i);
        }
        auto window = [&](int axis, std::int64_t first, std::int64_t n) {
            const auto size = static_cast<std::int64_t>(shape[axis]);
            first = std::clamp<std::int64_t>(first, 0, std::max<std::int64_t>(0, size - 1));
            n = n < 0 ? size - first : std::min(n, size - first);
            start[axis] = static_cast<hsize_t>(first);
            count[axis] = static_cast<hsize_t>(std::max<std::int64_t>(0, n));
            return std::max<std::int64_t>(0, n);
        };
        out.rows = row_axis < 0 ? 1 : window(row_axis, r.row0, r.rows);
        out.columns = window(column_axis, r.column0, r.columns);
        const auto n = static_cast<std::size_t>(out.rows * out.columns);
        out.values.assign(n, 0.0);
        if (n == 0) return out;
        H5::DataSpace space = ds.getSpace();
        space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
        H5::DataSpace memory(rank, count.data());
        std::vector<double> raw(n);
        const H5::DataType type = ds.getDataType();
        if (h5::is_binary16_le(type)) {
            // Read as stored and converted here (engine/io/half.hpp: HDF5's own float16
            // conversion is a soft-float path, ~200 ns a value); any other 2-byte float (bfloat16,
            // big-endian) goes through HDF5.
            std::vector<std::uint16_t> half(n);
            ds.read(half.data(), type, memory, space);
            for (std::size_t i = 0; i < n; ++i)
                raw[i] = half_to_float(half[i]);
        } else {
            ds.read(raw.data(), H5::PredType::NATIVE_DOUBLE, memory, space);
        }
        // The selection is read in the dataset's axis order: transpose when rows come after
        // columns.
        const bool transposed = row_axis > column_axis;
        for (std::int64_t i = 0; i < out.rows; ++i)
            for (std::int64_t j = 0; j < out.columns; ++j) {
                const double v = transposed ? raw[static_cast<std::size_t>(j * out.rows + i)]
                                            : raw[static_cast<std::size_t>(i * out.columns + j)];
                out.values[static_cast<std::size_t>(i * out.columns + j)] = v;
                out.non_finite += std::isfinite(v) ? 0 : 1;
            }
    } catch (const H5::Exception&) {
        throw IoError(file + ": cannot read " + r.dataset + ": " + h5::error_stack_text());
    }
    return out;
}

std::vector<bool> outliers(const Slice& slice, double k) {
    std::vector<bool> out(slice.values.size(), false);
    if (!(k > 0)) return out;
    double sum = 0, sum_sq = 0;
    std::int64_t n = 0;
    for (double v : slice.values)
        if (std::isfinite(v)) {
            sum += v;
            sum_sq += v * v;
            ++n;
        }
    if (n < 2) return out;
    const double mean = sum / n;
    const double sd = std::sqrt(std::max(0.0, sum_sq / n - mean * mean));
    if (!(sd > 0)) return out;
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = std::isfinite(slice.values[i]) && std::abs(slice.values[i] - mean) > k * sd;
    return out;
}

}  // namespace routescope::analysis
