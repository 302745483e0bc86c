#include "analysis/dump_reader.hpp"

#include <H5Cpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include "analysis/hdf5_lock.hpp"
#include "engine/core/error.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/half.hpp"
#include "engine/io/validation.hpp"

namespace routescope::analysis {

struct DumpReader::Impl {
    H5::H5File file;
    std::int64_t vocab_size = -1;  ///< V of /vocab, −1 without one
    struct stat opened {};         ///< the file as it was opened (check_unchanged)
    bool stated = false;
    /// Compressed /layers/<l>/hidden datasets kept open with their chunk cache (hidden_tokens),
    /// most recently used first, within kChunkCacheBudget bytes of cache together.
    struct CachedSet {
        std::string path;
        H5::DataSet ds;
        std::uint64_t bytes = 0;
    };
    std::vector<CachedSet> cached;
};

namespace {

/// The chunk caches of one reader's compressed hidden datasets, together: the decompressed chunks
/// of as many layers as fit stay between calls, so the streamed passes of similarity (a few hundred
/// tokens a call, every layer in turn) decompress each chunk once per pass, not once per call.
constexpr std::uint64_t kChunkCacheBudget = std::uint64_t{64} << 20;

/// "cannot read rows 4..7 of /layers/1/hidden": a read that failed names its rows along the first
/// axis, as validate does (a Fletcher-32 failure is a chunk's, and docs/formats/dump.md promises
/// its rows; "cannot read /layers/1/hidden" left the user to find example 5 alone).
std::string cannot_read(const std::string& path, hsize_t start, hsize_t count) {
    if (count == 0) return "cannot read " + path;
    return "cannot read rows " + std::to_string(start) + ".." + std::to_string(start + count - 1) +
           " of " + path;
}

/// Reads the hyperslab [start, start + count) of a float dataset into `out` as float (float16 is
/// converted by from_half, engine/io/half.hpp: HDF5's own conversion is a soft-float path at
/// ~200 ns a value, which made reading float16 dumps the bottleneck of PCA; float64 by HDF5), then
/// rejects NaN/Inf as DUMP_FORMAT.md asks of readers.
void read_slab(const H5::DataSet& ds, const std::string& file, const std::string& path,
               const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, float* out) {
    h5::quiet_errors();  // per thread: an analysis reads on worker threads
    H5::DataSpace space = ds.getSpace();
    space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
    hsize_t n = 1;
    for (hsize_t c : count)
        n *= c;
    // Memory space of the selection's own shape: a 1-D one sends HDF5 through its per-element
    // span iterator (profiled: 80% of the read time).
    H5::DataSpace memory(static_cast<int>(count.size()), count.data());
    try {
        const H5::DataType type = ds.getDataType();
        if (h5::is_binary16_le(type)) {
            thread_local std::vector<std::uint16_t> raw;
            raw.resize(n);
            ds.read(raw.data(), type, memory, space);  // the file's own type: no conversion
            from_half(raw.data(), n, out);
        } else {
            ds.read(out, H5::PredType::NATIVE_FLOAT, memory, space);
        }
    } catch (const H5::Exception&) {
        throw IoError(
            file + ": " +
            (start.empty() ? "cannot read " + path : cannot_read(path, start[0], count[0])) + ": " +
            h5::error_stack_text());
    }
    for (hsize_t i = 0; i < n; ++i) {
        if (!std::isfinite(out[i])) {
            std::string where;
            hsize_t rest = i;
            std::vector<hsize_t> index(count.size());
            for (std::size_t a = count.size(); a-- > 0;) {
                index[a] = start[a] + rest % count[a];
                rest /= count[a];
            }
            for (std::size_t a = 0; a < index.size(); ++a) {
                if (a) where += ", ";
                where += std::to_string(index[a]);
            }
            throw FormatError(file + ": " + path + " holds NaN or Inf at [" + where +
                              "]; a dump's values must be finite (docs/formats/dump.md)");
        }
    }
}

/// Bytes of a read of `dims` values into float (a float16 dataset also takes its raw halves,
/// read_slab), saturating: absurd extents must not wrap around to a small product.
std::uint64_t float_read_bytes(const std::vector<hsize_t>& dims, bool half) {
    const std::uint64_t per = sizeof(float) + (half ? sizeof(std::uint16_t) : 0);
    std::uint64_t bytes = per;
    for (hsize_t n : dims) {
        if (n != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / n)
            return std::numeric_limits<std::uint64_t>::max();
        bytes *= n;
    }
    return bytes;
}

/// Every read whose size comes from the file is checked against the read limit before anything
/// is allocated (docs/formats/dump.md: a read that would need more than a quarter of the
/// machine's memory is refused with a message): a gzip "bomb" of a few KB can declare a
/// /mixing/<l> or an example's attention of many GB.
void require_read(const H5::DataSet& ds, const std::string& file, const std::string& what,
                  const std::vector<hsize_t>& dims) {
    h5::require_memory(file, what, float_read_bytes(dims, h5::is_binary16_le(ds.getDataType())));
}

// lengths, labels, predictions, an example_index: a read that fails (a filter this library lacks,
// a checksum) names the file, the dataset and HDF5's reason, as read_slab does for the floats.
std::vector<std::int64_t> read_int_dataset(const H5::H5File& file, const std::string& path) {
    hsize_t rows = 0;
    try {
        const H5::DataSet ds = file.openDataSet(path);
        const auto shape = h5::shape_of(ds);
        rows = shape.empty() ? 0 : shape[0];
        return h5::read_ints(ds);
    } catch (const H5::Exception&) {
        throw IoError(file.getFileName() + ": " + cannot_read("/" + path, 0, rows) + ": " +
                      h5::error_stack_text());
    }
}

}  // namespace

DumpReader::DumpReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
    std::unique_lock lock(hdf5_mutex());
    h5::quiet_errors();
    ValidateOptions options;
    options.scan_values = false;  // structure only: the values we read are checked as we read them
    options.max_violations = 5;
    const ValidationReport report = validate_dump(path, options);
    if (!report.readable) {
        throw IoError(path + ": " +
                      (report.violations.empty() ? "unreadable" : report.violations.front().found));
    }
    if (!report.violations.empty()) {
        std::string text = path + ": not a valid dump (docs/formats/dump.md, version 1):";
        for (const auto& v : report.violations)
            text += "\n  " + v.text();
        throw FormatError(text);
    }
    impl_->file = h5::open_read(path);
    H5::H5File& file = impl_->file;

    H5::Group model = file.openGroup("model");
    arch_ = h5::read_string_attr(model, "arch").value_or("");
    name_ = h5::read_string_attr(model, "name").value_or("");
    n_layers_ = h5::read_int_attr(model, "n_layers").value_or(0);
    config_ = h5::read_string_attr(model, "config").value_or("");
    d_ = h5::read_int_attr(model, "d_model").value_or(0);

    const auto token_shape = h5::shape_of(file.openDataSet("data/tokens"));
    S_ = static_cast<std::int64_t>(token_shape[0]);
    L_ = static_cast<std::int64_t>(token_shape[1]);
    // Whole-array reads of S values: refused before allocating when S is absurd (the validator has
    // checked that the datasets' declared sizes fit the file).
    h5::require_memory(path,
                       "/data/lengths, labels and predictions (S = " + std::to_string(S_) + ")",
                       static_cast<std::uint64_t>(S_) * sizeof(std::int64_t) * 3);
    if (h5::is_dataset(file, "vocab"))
        impl_->vocab_size = static_cast<std::int64_t>(h5::shape_of(file.openDataSet("vocab"))[0]);
    lengths_ = read_int_dataset(file, "data/lengths");
    for (std::size_t i = 0; i < lengths_.size(); ++i) {
        // A zero-length example has no token to sample and no token matrix: the format forbids it.
        if (lengths_[i] < 1 || lengths_[i] > L_)
            throw FormatError(path + ": /data/lengths[" + std::to_string(i) +
                              "] = " + std::to_string(lengths_[i]) +
                              " is outside 1..L=" + std::to_string(L_));
    }
    if (h5::is_dataset(file, "data/labels")) labels_ = read_int_dataset(file, "data/labels");
    if (h5::is_dataset(file, "data/predictions"))
        predictions_ = read_int_dataset(file, "data/predictions");

    if (h5::is_group(file, "layers")) {
        H5::Group group = file.openGroup("layers");
        for (const auto& name : h5::children(group)) {
            LayerInfo info;
            info.index = std::stoi(name);
            const std::string base = "layers/" + name;
            if (!h5::is_dataset(file, base + "/hidden"))
                continue;  // the validator names a missing hidden; a layer without one is unusable
            info.rows =
                static_cast<std::int64_t>(h5::shape_of(file.openDataSet(base + "/hidden"))[0]);
            info.has_sentence = h5::is_dataset(file, base + "/sentence");
            if (h5::is_group(file, base + "/gates"))
                info.gates = h5::children(file.openGroup(base + "/gates"));
            std::vector<std::int64_t> index;
            if (h5::is_dataset(file, base + "/example_index")) {
                index = read_int_dataset(file, base + "/example_index");
                // Each value names one example, at most once (docs/formats/dump.md): a repeat
                // made anisotropy sample "two sentences" of one example and transitions keep
                // the last row of the two.
                std::vector<std::int64_t> first_row(static_cast<std::size_t>(S_), -1);
                for (std::size_t i = 0; i < index.size(); ++i) {
                    if (index[i] < 0 || index[i] >= S_)
                        throw FormatError(path + ": /" + base + "/example_index[" +
                                          std::to_string(i) + "] = " + std::to_string(index[i]) +
                                          " is outside 0..S-1");
                    auto& first = first_row[static_cast<std::size_t>(index[i])];
                    if (first >= 0)
                        throw FormatError(path + ": /" + base + "/example_index names example " +
                                          std::to_string(index[i]) + " twice, at [" +
                                          std::to_string(first) + "] and [" + std::to_string(i) +
                                          "]: each example is stored at most once");
                    first = static_cast<std::int64_t>(i);
                }
            } else {
                index.resize(static_cast<std::size_t>(S_));
                std::iota(index.begin(), index.end(), std::int64_t{0});
            }
            example_index_[info.index] = std::move(index);
            layers_[info.index] = std::move(info);
        }
    }
    lock.unlock();  // hashing a large dump must not hold up every other HDF5 reader
    impl_->stated = ::stat(path.c_str(), &impl_->opened) == 0;
    fingerprint_ = fingerprint_file(path);
}

// HDF5's file driver returns zeros for bytes beyond the end of the file: a dump truncated (or
// rewritten) while an analysis read it gave rows of zeros, which PCA skipped as rank 0, a silently
// shorter result. Every read of values is followed by this check.
void DumpReader::check_unchanged() const {
    if (!impl_->stated) return;
    struct stat now {};
    const auto& was = impl_->opened;
    if (::stat(path_.c_str(), &now) != 0)
        throw IoError(path_ + ": the file went away while it was read (" + std::strerror(errno) +
                      "); nothing was computed from it");
    if (now.st_size != was.st_size || now.st_ino != was.st_ino || now.st_dev != was.st_dev ||
        now.st_mtim.tv_sec != was.st_mtim.tv_sec || now.st_mtim.tv_nsec != was.st_mtim.tv_nsec)
        throw IoError(path_ + ": the file changed while it was read (" +
                      std::to_string(was.st_size) + " bytes when opened, " +
                      std::to_string(now.st_size) +
                      " now); nothing was computed from it: open it again once it is complete");
}

DumpReader::~DumpReader() {
    Hdf5Lock lock;  // closing the file is an HDF5 call too
    impl_.reset();
}

std::vector<int> DumpReader::layers() const {
    std::vector<int> out;
    for (const auto& [index, info] : layers_)
        out.push_back(index);
    return out;
}

const LayerInfo& DumpReader::layer(int index) const {
    auto it = layers_.find(index);
    if (it == layers_.end()) {
        std::string present;
        for (int l : layers()) {
            if (!present.empty()) present += ", ";
            present += std::to_string(l);
        }
        throw ConfigError(
            path_ + ": layer " + std::to_string(index) +
            " is not in the dump (layers present: " + (present.empty() ? "none" : present) + ")");
    }
    return it->second;
}

const std::vector<std::int64_t>& DumpReader::example_of_row(int index) const {
    layer(index);
    return example_index_.at(index);
}

std::vector<std::int64_t> DumpReader::row_lengths(int index) const {
    const auto& examples = example_of_row(index);
    std::vector<std::int64_t> out(examples.size());
    for (std::size_t i = 0; i < examples.size(); ++i)
        out[i] = lengths_[static_cast<std::size_t>(examples[i])];
    return out;
}

const std::vector<std::int64_t>& DumpReader::labels() const {
    if (!labels_) throw ConfigError(path_ + ": the dump has no /data/labels");
    return *labels_;
}

const std::vector<std::int64_t>& DumpReader::predictions() const {
    if (!predictions_) throw ConfigError(path_ + ": the dump has no /data/predictions");
    return *predictions_;
}

std::vector<std::string> DumpReader::attribute_names() const {
    Hdf5Lock lock;
    if (!h5::is_group(impl_->file, "data/attributes")) return {};
    return h5::children(impl_->file.openGroup("data/attributes"));
}

std::vector<double> DumpReader::attribute(const std::string& name) const {
    Hdf5Lock lock;
    const std::string path = "data/attributes/" + name;
    if (!h5::is_dataset(impl_->file, path)) {
        std::string present;
        if (h5::is_group(impl_->file, "data/attributes"))
            for (const auto& n : h5::children(impl_->file.openGroup("data/attributes"))) {
                if (!present.empty()) present += ", ";
                present += n;
            }
        throw ConfigError(path_ + ": no attribute /" + path +
                          " (attributes present: " + (present.empty() ? "none" : present) + ")");
    }
    H5::DataSet ds = impl_->file.openDataSet(path);
    std::vector<double> out(static_cast<std::size_t>(S_));
    ds.read(out.data(), H5::PredType::NATIVE_DOUBLE);
    for (std::size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out[i]))
            throw FormatError(path_ + ": /" + path + " holds NaN or Inf at [" + std::to_string(i) +
                              "]");
    return out;
}

bool DumpReader::has_text() const {
    Hdf5Lock lock;
    return h5::is_dataset(impl_->file, "data/text");
}

std::vector<std::string> DumpReader::text() const {
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, "data/text")) return {};
    hsize_t rows = 0;
    try {
        const H5::DataSet ds = impl_->file.openDataSet("data/text");
        const auto shape = h5::shape_of(ds);
        rows = shape.empty() ? 0 : shape[0];
        return h5::read_strings(ds);
    } catch (const H5::Exception&) {
        throw IoError(path_ + ": " + cannot_read("/data/text", 0, rows) + ": " +
                      h5::error_stack_text());
    }
}

std::vector<std::string> DumpReader::vocab() const {
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, "vocab")) return {};
    hsize_t rows = 0;
    try {
        const H5::DataSet ds = impl_->file.openDataSet("vocab");
        const auto shape = h5::shape_of(ds);
        rows = shape.empty() ? 0 : shape[0];
        return h5::read_strings(ds);
    } catch (const H5::Exception&) {
        throw IoError(path_ + ": " + cannot_read("/vocab", 0, rows) + ": " +
                      h5::error_stack_text());
    }
}

std::vector<std::int32_t> DumpReader::tokens(std::int64_t example) const {
    Hdf5Lock lock;
    if (example < 0 || example >= S_)
        throw ConfigError(path_ + ": example " + std::to_string(example) + " outside /data");
    H5::DataSet ds = impl_->file.openDataSet("data/tokens");
    H5::DataSpace space = ds.getSpace();
    const hsize_t start[2] = {static_cast<hsize_t>(example), 0};
    const hsize_t count[2] = {1, static_cast<hsize_t>(L_)};
    space.selectHyperslab(H5S_SELECT_SET, count, start);
    H5::DataSpace memory(1, &count[1]);
    h5::require_memory(path_, "a row of /data/tokens (L = " + std::to_string(L_) + ")",
                       float_read_bytes({count[1]}, false));  // int32: as many bytes as float
    std::vector<std::int32_t> out(static_cast<std::size_t>(L_));
    try {
        ds.read(out.data(), H5::PredType::NATIVE_INT32, memory, space);
    } catch (const H5::Exception&) {
        throw IoError(path_ + ": cannot read /data/tokens[" + std::to_string(example) +
                      "]: " + h5::error_stack_text());
    }
    // The validator's rule (dump_validator.cpp, check_tokens): ids index the vocabulary.
    for (std::size_t t = 0; t < out.size(); ++t)
        if (out[t] < 0 || (impl_->vocab_size >= 0 && out[t] >= impl_->vocab_size))
            throw FormatError(
                path_ + ": /data/tokens[" + std::to_string(example) + ", " + std::to_string(t) +
                "] = " + std::to_string(out[t]) +
                (out[t] < 0 ? " is negative"
                            : " is outside 0..V-1 (V = " + std::to_string(impl_->vocab_size) +
                                  " from /vocab)"));
    return out;
}

std::vector<std::string> DumpReader::token_pieces(std::int64_t example) const {
    std::vector<std::string> vocab;
    try {
        vocab = this->vocab();
    } catch (const Error&) {
        // No /vocab: token ids along the axis.
    }
    std::vector<std::string> out;
    for (std::int32_t id : tokens(example))
        out.push_back(id >= 0 && static_cast<std::size_t>(id) < vocab.size()
                          ? vocab[static_cast<std::size_t>(id)]
                          : std::to_string(id));
    return out;
}

std::vector<std::int32_t> DumpReader::reset_mask(std::int64_t example) const {
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, "data/reset_mask")) return {};
    if (example < 0 || example >= static_cast<std::int64_t>(lengths_.size()))
        throw ConfigError(path_ + ": example " + std::to_string(example) + " outside /data");
    H5::DataSet ds = impl_->file.openDataSet("data/reset_mask");
    const auto shape = h5::shape_of(ds);
    if (shape.size() != 2 || shape[1] != static_cast<hsize_t>(L_) ||
        shape[0] != static_cast<hsize_t>(lengths_.size()))
        throw FormatError(path_ + ": /data/reset_mask has shape " + h5::shape_text(shape) +
                          ", expected [S, L]");
    H5::DataSpace space = ds.getSpace();
    const hsize_t start[2] = {static_cast<hsize_t>(example), 0};
    const hsize_t count[2] = {1, static_cast<hsize_t>(L_)};
    space.selectHyperslab(H5S_SELECT_SET, count, start);
    H5::DataSpace memory(1, &count[1]);
    h5::require_memory(path_, "a row of /data/reset_mask (L = " + std::to_string(L_) + ")",
                       float_read_bytes({count[1]}, false));  // int32: as many bytes as float
    std::vector<std::int32_t> out(static_cast<std::size_t>(L_));
    try {
        ds.read(out.data(), H5::PredType::NATIVE_INT32, memory, space);
    } catch (const H5::Exception&) {
        throw IoError(path_ + ": " +
                      cannot_read("/data/reset_mask", static_cast<hsize_t>(example), 1) + ": " +
                      h5::error_stack_text());
    }
    for (std::size_t t = 0; t < out.size(); ++t)
        if (out[t] < 0 || out[t] > 3)
            throw FormatError(path_ + ": /data/reset_mask[" + std::to_string(example) + ", " +
                              std::to_string(t) + "] = " + std::to_string(out[t]) +
                              " is outside 0..3");
    return out;
}

std::int64_t DumpReader::prefix_end(std::int64_t example) const {
    const auto mask = reset_mask(example);
    if (mask.empty()) return -1;
    const std::int64_t n = lengths_.at(static_cast<std::size_t>(example));
    for (std::int64_t t = 0; t < n; ++t)
        if (mask[static_cast<std::size_t>(t)] & 2) return t;  // bit 2: causal region
    return -1;
}

int DumpReader::gate_reverse_from(int index) const {
    Hdf5Lock lock;
    const std::string path = "layers/" + std::to_string(index) + "/gates";
    if (!h5::is_group(impl_->file, path)) return -1;
    const H5::Group g = impl_->file.openGroup(path);
    if (!h5::has_attr(g, "reverse_from")) return -1;
    const auto v = h5::read_int_attr(g, "reverse_from");
    return v && *v >= 1 ? static_cast<int>(*v) : -1;
}

RowMatrixF DumpReader::hidden_row(int index, std::int64_t row) const {
    const LayerInfo& info = layer(index);
    if (row < 0 || row >= info.rows)
        throw ConfigError(path_ + ": row " + std::to_string(row) + " outside layer");
    const std::int64_t n =
        lengths_[static_cast<std::size_t>(example_index_.at(index)[static_cast<std::size_t>(row)])];
    Hdf5Lock lock;
    const std::string path = "/layers/" + std::to_string(index) + "/hidden";
    const H5::DataSet ds = impl_->file.openDataSet(path);
    const std::vector<hsize_t> count{1, static_cast<hsize_t>(n), static_cast<hsize_t>(d_)};
    require_read(
        ds, path_,
        "a row of " + path + " (" + std::to_string(n) + " x " + std::to_string(d_) + " values)",
        count);
    RowMatrixF out(n, d_);
    read_slab(ds, path_, path, {static_cast<hsize_t>(row), 0, 0}, count, out.data());
    check_unchanged();
    return out;
}

RowMatrixF DumpReader::hidden_tokens(int index, const std::vector<TokenRef>& tokens) const {
    const LayerInfo& info = layer(index);
    // Read in file order (row, then token) so consecutive reads hit the same or the next chunk.
    std::vector<std::size_t> order(tokens.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return tokens[a].row != tokens[b].row ? tokens[a].row < tokens[b].row
                                              : tokens[a].token < tokens[b].token;
    });
    const std::string path = "/layers/" + std::to_string(index) + "/hidden";
    Hdf5Lock lock;
    H5::DataSet ds = impl_->file.openDataSet(path);
    require_read(ds, path_, std::to_string(tokens.size()) + " token vectors of " + path,
                 {static_cast<hsize_t>(tokens.size()), static_cast<hsize_t>(d_)});
    auto& cached = impl_->cached;
    const auto hit = std::find_if(cached.begin(), cached.end(),
                                  [&](const Impl::CachedSet& c) { return c.path == path; });
    if (hit != cached.end()) std::rotate(cached.begin(), hit, hit + 1);  // most recent first
    H5::DSetAccPropList access;
    std::uint64_t cache_bytes = 0;
    const H5::DSetCreatPropList create = ds.getCreatePlist();
    if (create.getLayout() == H5D_CHUNKED && create.getNfilters() > 0) {
        // A filtered (compressed) chunk is decompressed whole for any read from it: without a
        // cache, every sampled token decompressed its [1, L, d] chunk again (minutes for a gzip
        // dump that reads in seconds uncompressed). The tokens are read grouped by chunk, with a
        // cache of the chunks one group spans (those across d), so each chunk is decompressed
        // once per call (and, kept open within kChunkCacheBudget, once per pass). Bounded by the
        // chunking, not by the number of tokens; a chunk larger than the read limit is refused,
        // since HDF5 must hold it whole to read any value of it.
        const auto shape = h5::shape_of(ds);
        std::vector<hsize_t> chunk(shape.size());
        create.getChunk(static_cast<int>(chunk.size()), chunk.data());
        if (chunk.size() == 3 && chunk[0] > 0 && chunk[1] > 0 && chunk[2] > 0) {
            std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                const auto key = [&](const TokenRef& t) {
                    return std::make_tuple(static_cast<hsize_t>(t.row) / chunk[0],
                                           static_cast<hsize_t>(t.token) / chunk[1], t.row,
                                           t.token);
                };
                return key(tokens[a]) < key(tokens[b]);
            });
            const std::size_t value = ds.getDataType().getSize();
            const hsize_t across = (static_cast<hsize_t>(d_) + chunk[2] - 1) / chunk[2];
            const std::uint64_t one =
                float_read_bytes({chunk[0], chunk[1], chunk[2]}, false) / sizeof(float) * value;
            h5::require_memory(path_, "a compressed chunk of " + path, one);
            const std::uint64_t group = one > h5::read_memory_limit() / across ? one : one * across;
            access.setChunkCache(10007, static_cast<std::size_t>(group), 0.75);
            cache_bytes = group;
        }
    } else {
        // No chunk cache: HDF5 then reads just the d values of each token from an uncompressed
        // chunk instead of the whole [1, L, d] chunk.
        access.setChunkCache(0, 0, 0.75);
    }
    if (hit != cached.end()) {
        ds = cached.front().ds;
    } else {
        // Closed first: HDF5 shares one dataset object (and its chunk cache) among the handles
        // of an open dataset, so reopening while the first handle lives would keep its cache.
        ds.close();
        ds = impl_->file.openDataSet(path, access);
        if (cache_bytes > 0) {
            cached.insert(cached.begin(), {path, ds, cache_bytes});
            // The least recently used go first; the one just opened always stays.
            std::uint64_t total = 0;
            for (const auto& c : cached)
                total += c.bytes;
            while (cached.size() > 1 && total > kChunkCacheBudget) {
                total -= cached.back().bytes;
                cached.pop_back();
            }
        }
    }
    RowMatrixF out(static_cast<Eigen::Index>(tokens.size()), d_);
    for (std::size_t i : order) {
        const TokenRef& t = tokens[i];
        if (t.row < 0 || t.row >= info.rows || t.token < 0 || t.token >= L_)
            throw ConfigError(path_ + ": token (" + std::to_string(t.row) + ", " +
                              std::to_string(t.token) + ") outside " + path);
        read_slab(ds, path_, path, {static_cast<hsize_t>(t.row), static_cast<hsize_t>(t.token), 0},
                  {1, 1, static_cast<hsize_t>(d_)}, out.row(static_cast<Eigen::Index>(i)).data());
    }
    check_unchanged();
    return out;
}

RowMatrixF DumpReader::sentence_rows(int index, const std::vector<std::int64_t>& rows) const {
    const LayerInfo& info = layer(index);
    const std::string path = "/layers/" + std::to_string(index) + "/sentence";
    if (!info.has_sentence)
        throw ConfigError(path_ + ": layer " + std::to_string(index) +
                          " has no sentence vectors (only S-LSTM dumps record its sentence node)");
    Hdf5Lock lock;
    H5::DataSet ds = impl_->file.openDataSet(path);
    require_read(ds, path_, std::to_string(rows.size()) + " rows of " + path,
                 {static_cast<hsize_t>(rows.size()), static_cast<hsize_t>(d_)});
    RowMatrixF out(static_cast<Eigen::Index>(rows.size()), d_);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0 || rows[i] >= info.rows) throw ConfigError(path_ + ": row outside " + path);
        read_slab(ds, path_, path, {static_cast<hsize_t>(rows[i]), 0},
                  {1, static_cast<hsize_t>(d_)}, out.row(static_cast<Eigen::Index>(i)).data());
    }
    check_unchanged();
    return out;
}

std::vector<std::int64_t> DumpReader::gate_shape(int index, const std::string& gate) const {
    const LayerInfo& info = layer(index);
    if (std::find(info.gates.begin(), info.gates.end(), gate) == info.gates.end()) {
        std::string have;
        for (const std::string& g : info.gates)
            have += (have.empty() ? "" : ", ") + g;
        throw ConfigError(path_ + ": layer " + std::to_string(index) + " has no gate '" + gate +
                          "' (" + (have.empty() ? "it records no gates" : "its gates: " + have) +
                          ")");
    }
    Hdf5Lock lock;
    const auto shape =
        h5::shape_of(impl_->file.openDataSet("layers/" + std::to_string(index) + "/gates/" + gate));
    return {shape.begin(), shape.end()};
}

RowMatrixF DumpReader::gate_row(int index, const std::string& gate, std::int64_t row) const {
    const auto shape = gate_shape(index, gate);
    const std::string path = "/layers/" + std::to_string(index) + "/gates/" + gate;
    // The example's real positions p < n and, for a gate of L + 1 positions (S-LSTM's sentence
    // node), its last one; the padding is never read (docs/analyses.md), so it is left 0 here:
    // a NaN there stopped `analyze gates` (exit 2) where every hidden-state analysis ignores it.
    const std::int64_t n = std::min<std::int64_t>(
        shape[1], lengths_[static_cast<std::size_t>(
                      example_index_.at(index).at(static_cast<std::size_t>(row)))]);
    Hdf5Lock lock;
    const H5::DataSet ds = impl_->file.openDataSet(path);
    require_read(ds, path_, "a row of " + path,
                 {static_cast<hsize_t>(shape[1]), static_cast<hsize_t>(shape[2])});
    RowMatrixF out = RowMatrixF::Zero(shape[1], shape[2]);
    const auto k = static_cast<hsize_t>(shape[2]);
    if (n > 0)
        read_slab(ds, path_, path, {static_cast<hsize_t>(row), 0, 0},
                  {1, static_cast<hsize_t>(n), k}, out.data());
    if (shape[1] > L_ && n < shape[1])
        read_slab(ds, path_, path,
                  {static_cast<hsize_t>(row), static_cast<hsize_t>(shape[1] - 1), 0}, {1, 1, k},
                  out.row(shape[1] - 1).data());
    check_unchanged();
    return out;
}

int DumpReader::attention_heads(int index) const {
    const std::string path = "layers/" + std::to_string(index) + "/attention";
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, path)) return 0;
    const auto shape = h5::shape_of(impl_->file.openDataSet("/" + path));
    if (shape.size() != 4 || shape[2] != shape[3] || static_cast<std::int64_t>(shape[2]) != L_)
        throw FormatError(path_ + ": /" + path + " is " + h5::shape_text(shape) +
                          ", expected [S, H, L, L] with L = " + std::to_string(L_));
    return static_cast<int>(shape[1]);
}

RowMatrixF DumpReader::attention_row(int index, std::int64_t row) const {
    const int heads = attention_heads(index);
    const std::string path = "/layers/" + std::to_string(index) + "/attention";
    if (heads == 0)
        throw ConfigError(path_ + ": layer " + std::to_string(index) +
                          " has no attention probabilities (dump --attention)");
    Hdf5Lock lock;
    const H5::DataSet ds = impl_->file.openDataSet(path);
    const std::vector<hsize_t> count{1, static_cast<hsize_t>(heads), static_cast<hsize_t>(L_),
                                     static_cast<hsize_t>(L_)};
    require_read(ds, path_,
                 "one example's " + path + " (H = " + std::to_string(heads) +
                     ", L = " + std::to_string(L_) + ")",
                 count);
    RowMatrixF out(static_cast<Eigen::Index>(heads) * L_, L_);
    read_slab(ds, path_, path, {static_cast<hsize_t>(row), 0, 0, 0}, count, out.data());
    check_unchanged();
    return out;
}

std::vector<int> DumpReader::kernel_layers() const {
    Hdf5Lock lock;
    std::vector<int> out;
    if (!h5::is_group(impl_->file, "kernels")) return out;
    for (const auto& name : h5::children(impl_->file.openGroup("kernels")))
        out.push_back(std::stoi(name));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<float> DumpReader::kernel(int index, bool forward) const {
    const std::string path =
        "/kernels/" + std::to_string(index) + (forward ? "/forward" : "/backward");
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, path.substr(1))) return {};
    H5::DataSet ds = impl_->file.openDataSet(path);
    const auto shape = h5::shape_of(ds);
    if (shape.empty() || shape[0] == 0)  // as validate says it (docs/formats/dump.md)
        throw FormatError(path_ + ": " + path + ": a kernel of no taps (at least one is needed)");
    require_read(ds, path_, path, {shape[0]});
    std::vector<float> out(shape[0]);
    read_slab(ds, path_, path, {0}, {shape[0]}, out.data());
    return out;
}

double DumpReader::kernel_skip(int index, bool forward) const {
    Hdf5Lock lock;
    const std::string path = "kernels/" + std::to_string(index);
    if (!h5::is_group(impl_->file, path)) return 0.0;
    return h5::read_float_attr(impl_->file.openGroup(path), forward ? "D_forward" : "D_backward")
        .value_or(0.0);
}

namespace {
std::string kernel_groups_path(int index, bool forward) {
    return "/kernels/" + std::to_string(index) + (forward ? "/forward_groups" : "/backward_groups");
}
}  // namespace

std::pair<std::int64_t, std::int64_t> DumpReader::kernel_groups_shape(int index,
                                                                      bool forward) const {
    const std::string path = kernel_groups_path(index, forward);
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, path.substr(1))) return {0, 0};
    const auto shape = h5::shape_of(impl_->file.openDataSet(path));
    if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1 ||
        d_ % static_cast<std::int64_t>(shape[0]))
        throw FormatError(path_ + ": " + path + " has shape " + h5::shape_text(shape) +
                          ", expected [H, Lk] with H dividing d_model = " + std::to_string(d_));
    return {static_cast<std::int64_t>(shape[0]), static_cast<std::int64_t>(shape[1])};
}

std::int64_t DumpReader::kernel_group_count(int index, bool forward) const {
    return kernel_groups_shape(index, forward).first;
}

RowMatrixF DumpReader::kernel_groups(int index, bool forward) const {
    const std::string path = kernel_groups_path(index, forward);
    const auto [groups, taps] = kernel_groups_shape(index, forward);
    if (groups == 0) return {};
    const std::vector<hsize_t> shape{static_cast<hsize_t>(groups), static_cast<hsize_t>(taps)};
    Hdf5Lock lock;
    H5::DataSet ds = impl_->file.openDataSet(path);
    // Saturating: absurd extents must not wrap around to a small product.
    const std::uint64_t limit = h5::read_memory_limit();
    h5::require_memory(path_, path,
                       shape[1] > limit / (sizeof(float) * shape[0])
                           ? std::numeric_limits<std::uint64_t>::max()
                           : shape[0] * shape[1] * sizeof(float));
    RowMatrixF out(static_cast<Eigen::Index>(shape[0]), static_cast<Eigen::Index>(shape[1]));
    read_slab(ds, path_, path, {0, 0}, {shape[0], shape[1]}, out.data());
    return out;
}

std::vector<double> DumpReader::kernel_group_skips(int index, bool forward) const {
    const std::string path = "/kernels/" + std::to_string(index) +
                             (forward ? "/D_forward_groups" : "/D_backward_groups");
    const std::int64_t H = kernel_group_count(index, forward);  // the groups' shape only
    if (H == 0) return {};
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, path.substr(1)))
        throw FormatError(path_ + ": " + path + " is missing beside the kernel groups");
    H5::DataSet ds = impl_->file.openDataSet(path);
    const auto shape = h5::shape_of(ds);
    if (shape.size() != 1 || static_cast<std::int64_t>(shape[0]) != H)
        throw FormatError(path_ + ": " + path + " has shape " + h5::shape_text(shape) +
                          ", expected [" + std::to_string(H) + "]");
    std::vector<double> out(shape[0]);
    ds.read(out.data(), H5::PredType::NATIVE_DOUBLE);
    for (std::size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out[i]))
            throw FormatError(path_ + ": " + path + "[" + std::to_string(i) + "] = " +
                              (std::isnan(out[i]) ? "NaN"
                               : out[i] > 0       ? "Inf"
                                                  : "-Inf") +
                              ": the skips must be finite");
    return out;
}

std::vector<int> DumpReader::mixing_layers() const {
    Hdf5Lock lock;
    std::vector<int> out;
    if (!h5::is_group(impl_->file, "mixing")) return out;
    for (const auto& name : h5::children(impl_->file.openGroup("mixing")))
        out.push_back(std::stoi(name));
    std::sort(out.begin(), out.end());
    return out;
}

RowMatrixF DumpReader::mixing(int index) const {
    const std::string path = "/mixing/" + std::to_string(index);
    Hdf5Lock lock;
    if (!h5::is_dataset(impl_->file, path.substr(1)))
        throw ConfigError(path_ + ": the dump has no " + path);
    H5::DataSet ds = impl_->file.openDataSet(path);
    const auto shape = h5::shape_of(ds);
    if (shape.size() != 2)  // as validate says it (docs/formats/dump.md)
        throw FormatError(path_ + ": " + path + " has shape " + h5::shape_text(shape) +
                          ", expected a square [n, n]");
    require_read(ds, path_,
                 path + " (" + std::to_string(shape[0]) + " x " + std::to_string(shape[1]) + ")",
                 {shape[0], shape[1]});
    RowMatrixF out(static_cast<Eigen::Index>(shape[0]), static_cast<Eigen::Index>(shape[1]));
    read_slab(ds, path_, path, {0, 0}, {shape[0], shape[1]}, out.data());
    check_unchanged();
    return out;
}

}  // namespace routescope::analysis
