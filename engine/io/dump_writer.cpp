#include "engine/io/dump_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/h5_reserve.hpp"
#include "engine/io/half.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/io/validation.hpp"

namespace routescope {

H5::FloatType float16_type() {
    H5::FloatType t(H5::PredType::IEEE_F32LE);
    // sign bit 15, exponent bits 10..14, mantissa bits 0..9, bias 15 (IEEE 754 binary16).
    t.setFields(15, 10, 5, 0, 10);
    t.setSize(2);
    t.setEbias(15);
    return t;
}

DumpWriter::DumpWriter(std::string final_path, DumpSpec spec)
    : final_path_(atomic_write_target(final_path)), spec_(std::move(spec)) {
    h5::quiet_errors();
    if (spec_.examples < 1 || spec_.length < 1 || spec_.d_model < 1)
        throw FormatError(final_path_ + ": a dump needs S ≥ 1, L ≥ 1 and d ≥ 1");
    const auto dir = std::filesystem::path(final_path_).parent_path();
    temp_path_ = temporary_path_for(final_path_);
    remove_stale_temporaries(final_path_);
    temp_guard_ = std::make_unique<TemporaryFileGuard>(temp_path_);
    if (const int error = h5::probe_create(temp_path_, 64u << 10))
        throw IoError(final_path_ + ": cannot create (in " + (dir.empty() ? "." : dir.string()) +
                      "): " + std::strerror(error));
    try {
        file_ = H5::H5File(temp_path_, H5F_ACC_TRUNC);
    } catch (const H5::Exception& e) {
        throw IoError(final_path_ + ": cannot create (in " + (dir.empty() ? "." : dir.string()) +
                      "): " + h5::error_stack_text());
    }
    half_type_ = float16_type();
    float_type_ = spec_.float16 ? H5::DataType(half_type_) : H5::DataType(H5::PredType::IEEE_F32LE);
    try {
        h5::write_string_attr(file_, "format", "routescope-dump");
        h5::write_int_attr(file_, "format_version", kDumpFormatVersion);
        h5::write_string_attr(file_, "producer", spec_.producer);
        h5::write_string_attr(file_, "created", h5::iso8601_now());
        if (!spec_.device.empty()) h5::write_string_attr(file_, "device", spec_.device);
        H5::Group model = file_.createGroup("model");
        h5::write_string_attr(model, "arch", spec_.arch);
        h5::write_string_attr(model, "name", spec_.name);
        h5::write_int_attr(model, "n_layers", spec_.n_layers);
        h5::write_int_attr(model, "d_model", spec_.d_model);
        if (!spec_.config_json.empty()) h5::write_string_attr(model, "config", spec_.config_json);
        if (!spec_.checkpoint.empty()) h5::write_string_attr(model, "checkpoint", spec_.checkpoint);
        if (!spec_.checkpoint_sha256.empty())
            h5::write_string_attr(model, "checkpoint_sha256", spec_.checkpoint_sha256);

        const hsize_t S = spec_.examples, L = spec_.length, d = spec_.d_model;
        file_.createGroup("data");
        auto create = [&](const std::string& path, const H5::DataType& type,
                          std::vector<hsize_t> dims, std::vector<hsize_t> chunk) {
            H5::DSetCreatPropList plist;
            plist.setChunk(static_cast<int>(chunk.size()), chunk.data());
            sets_[path] = file_.createDataSet(
                path, type, H5::DataSpace(static_cast<int>(dims.size()), dims.data()), plist);
        };
        const hsize_t row_chunk = std::min<hsize_t>(S, 4096);
        create("data/tokens", H5::PredType::STD_I32LE, {S, L}, {std::min<hsize_t>(S, 64), L});
        create("data/lengths", H5::PredType::STD_I32LE, {S}, {row_chunk});
        if (spec_.labels) create("data/labels", H5::PredType::STD_I32LE, {S}, {row_chunk});
        if (spec_.predictions)
            create("data/predictions", H5::PredType::STD_I32LE, {S}, {row_chunk});
        if (spec_.reset_mask)
            create("data/reset_mask", H5::PredType::STD_I8LE, {S, L},
                   {std::min<hsize_t>(S, 64), L});
        if (spec_.text) {
            H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
            st.setCset(H5T_CSET_UTF8);
            create("data/text", st, {S}, {std::min<hsize_t>(S, 1024)});
        }
        if (!spec_.attributes.empty()) file_.createGroup("data/attributes");
        for (const auto& a : spec_.attributes)
            create("data/attributes/" + a, H5::PredType::IEEE_F64LE, {S}, {row_chunk});
        if (!spec_.vocab.empty()) {
            H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
            st.setCset(H5T_CSET_UTF8);
            const hsize_t V = spec_.vocab.size();
            H5::DataSet vocab = file_.createDataSet("vocab", st, H5::DataSpace(1, &V));
            std::vector<const char*> ptrs;
            for (const auto& p : spec_.vocab)
                ptrs.push_back(p.c_str());
            vocab.write(ptrs.data(), st);
        }
        if (!spec_.layers.empty()) file_.createGroup("layers");
        for (int l : spec_.layers) {
            const std::string base = "layers/" + std::to_string(l);
            file_.createGroup(base);
            create_float(base + "/hidden", {S, L, d}, {1, L, d});
            if (spec_.sentence)
                create_float(base + "/sentence", {S, d}, {std::min<hsize_t>(S, 256), d});
            if (l >= 1 && spec_.attention_heads > 0) {
                const auto H = static_cast<hsize_t>(spec_.attention_heads);
                create_float(base + "/attention", {S, H, L, L}, {1, 1, L, L});
            }
            if (l >= 1 && !spec_.gates.empty()) {
                H5::Group gates = file_.createGroup(base + "/gates");
                if (const auto r = spec_.reverse_from.find(l); r != spec_.reverse_from.end())
                    h5::write_int_attr(gates, "reverse_from", r->second);
                for (const auto& g : spec_.gates) {
                    const auto own = spec_.gate_channels_of.find(g);
                    const hsize_t k =
                        own != spec_.gate_channels_of.end() ? own->second : spec_.gate_channels;
                    // S-LSTM's sentence_weight [S, L + 1, k]: the token weights, then the
                    // sentence node's own (DUMP_FORMAT.md).
                    const hsize_t rows = g == "sentence_weight" ? L + 1 : L;
                    create_float(base + "/gates/" + g, {S, rows, k}, {1, rows, k});
                }
            }
        }
    } catch (const H5::Exception& e) {
        fail("cannot lay out the dump", e);
    }
    reserve_space();
}

// The bytes every laid-out dataset will hold, plus room for HDF5's metadata and what is written
// later (kernels, mixing matrices, variable-length text), reserved on disk now (fallocate). A
// full disk is then found here, before anything is written, and said as such: HDF5 1.10 cannot
// close a file whose metadata flush failed ("slist already enabled?"), and closing it again
// crashed (a dump that filled the disk in its last kB died with SIGSEGV). The reserve is given
// back once the file is closed (h5::give_back_reserve).
void DumpWriter::reserve_space() {
    std::uint64_t bytes = 1u << 20;
    try {
        for (auto& [path, ds] : sets_) {
            const H5::DataType type = ds.getDataType();
            const std::uint64_t element = type.isVariableStr() ? 64 : type.getSize();
            bytes += static_cast<std::uint64_t>(ds.getSpace().getSimpleExtentNpoints()) * element;
        }
    } catch (const H5::Exception& e) {
        fail("cannot lay out the dump", e);
    }
    bytes += bytes / 50;  // chunk indexes and object headers
    const int error = h5::reserve_file_space(file_.getId(), bytes);
    if (error == 0) return;
    // Abandoned from the constructor (no destructor runs): HDF5's closing writes go to /dev/null,
    // what a partial reservation took is given back with the temporary.
    h5::divert_file_to_null(file_.getId());
    std::error_code removed;
    std::filesystem::remove(temp_path_, removed);
    throw IoError(h5::reserve_failure(final_path_, bytes, error, "the dump"));
}

DumpWriter::~DumpWriter() {
    if (finished_) return;
    // Abandoned (an exception part-way): drop the temporary file, never leave it as the final name.
    // Nothing HDF5 still has to write matters then, but writing may fail (a full disk, a file-size
    // limit), and HDF5 1.10 crashes closing a file whose close failed (in H5F__close, when the
    // H5File destructor closes it a second time, or at exit if left open). So the file's
    // descriptor is pointed at /dev/null first, where every write succeeds. (A close after a
    // failed metadata flush fails whatever the descriptor, "slist already enabled?": that is why
    // the constructor reserves the dump's space, reserve_space.)
    h5::divert_file_to_null(file_.getId());
    try {
        sets_.clear();
        file_.close();
    } catch (...) {
    }
    std::error_code ec;
    std::filesystem::remove(temp_path_, ec);
}

void DumpWriter::fail(const std::string& what, const H5::Exception& e) const {
    throw IoError(final_path_ + ": " + what + ": " + e.getDetailMsg() + " (" +
                  h5::error_stack_text() + ")");
}

void DumpWriter::create_float(const std::string& path, const std::vector<hsize_t>& dims,
                              const std::vector<hsize_t>& chunk) {
    H5::DSetCreatPropList plist;
    plist.setChunk(static_cast<int>(chunk.size()), chunk.data());
    sets_[path] = file_.createDataSet(
        path, float_type_, H5::DataSpace(static_cast<int>(dims.size()), dims.data()), plist);
}

H5::DataSet& DumpWriter::dataset(const std::string& path) {
    auto it = sets_.find(path);
    if (it == sets_.end())
        throw FormatError(final_path_ + ": the dump was not laid out with " + path);
    return it->second;
}

void DumpWriter::write_row(const std::string& path, int s, const void* data,
                           const H5::DataType& mem_type) {
    h5::quiet_errors();  // per thread in a thread-safe HDF5: a dump writes on a thread of its own
    if (s < 0 || s >= spec_.examples)
        throw FormatError(final_path_ + ": example " + std::to_string(s) + " outside 0.." +
                          std::to_string(spec_.examples - 1));
    H5::DataSet& ds = dataset(path);
    try {
        H5::DataSpace space = ds.getSpace();
        std::vector<hsize_t> dims = h5::shape_of(ds);
        std::vector<hsize_t> start(dims.size(), 0), count = dims;
        start[0] = static_cast<hsize_t>(s);
        count[0] = 1;
        space.selectHyperslab(H5S_SELECT_SET, count.data(), start.data());
        H5::DataSpace mem(static_cast<int>(count.size()), count.data());
        ds.write(data, mem_type, mem, space);
    } catch (const H5::Exception& e) {
        fail("cannot write " + path + " row " + std::to_string(s), e);
    }
}

void DumpWriter::write_example(int s, const ExampleRecord& r) {
    if (static_cast<int>(r.tokens.size()) != spec_.length)
        throw FormatError(final_path_ + ": example " + std::to_string(s) + " has " +
                          std::to_string(r.tokens.size()) + " tokens, the dump's L is " +
                          std::to_string(spec_.length));
    if (r.length < 1 || r.length > spec_.length)
        throw FormatError(final_path_ + ": example " + std::to_string(s) + " length " +
                          std::to_string(r.length) +
                          " outside 1..L=" + std::to_string(spec_.length));
    write_row("data/tokens", s, r.tokens.data(), H5::PredType::NATIVE_INT32);
    const std::int32_t length = r.length;
    write_row("data/lengths", s, &length, H5::PredType::NATIVE_INT32);
    if (spec_.labels) write_row("data/labels", s, &r.label, H5::PredType::NATIVE_INT32);
    if (spec_.predictions)
        write_row("data/predictions", s, &r.prediction, H5::PredType::NATIVE_INT32);
    if (spec_.text) {
        H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
        st.setCset(H5T_CSET_UTF8);
        // Stored as UTF-8 (the dataset says so, every reader decodes it so, validate checks it):
        // a byte tokenizer's text cut inside a character was not. Each byte that is not part of
        // valid UTF-8 becomes U+FFFD, as Python's errors="replace" reads it.
        std::string text;
        if (data::first_invalid_utf8(r.text))
            for (const char32_t c : data::decode_utf8(r.text))
                data::append_utf8(text, c);
        const char* ptr = text.empty() ? r.text.c_str() : text.c_str();
        write_row("data/text", s, &ptr, st);
    }
    if (r.attributes.size() != spec_.attributes.size())
        throw FormatError(final_path_ + ": example " + std::to_string(s) + " carries " +
                          std::to_string(r.attributes.size()) + " attributes, the dump declares " +
                          std::to_string(spec_.attributes.size()));
    for (std::size_t i = 0; i < r.attributes.size(); ++i)
        write_row("data/attributes/" + spec_.attributes[i], s, &r.attributes[i],
                  H5::PredType::NATIVE_DOUBLE);
}

void DumpWriter::write_reset_mask(int s, const std::int8_t* row) {
    write_row("data/reset_mask", s, row, H5::PredType::NATIVE_INT8);
}

std::pair<const void*, const H5::DataType*> DumpWriter::stored(const float* x, std::size_t n) {
    if (!spec_.float16) return {x, &H5::PredType::NATIVE_FLOAT};
    halves_.resize(n);
    to_half(x, n, halves_.data());
    return {halves_.data(), &half_type_};
}

void DumpWriter::write_float_row(const std::string& path, int s, FloatRow row) {
    // Halves, or floats to a float32 dump (what `dump` hands over): written as they are. Floats to
    // a float16 dump are converted here, a row's worth.
    if (row.f16) return write_row(path, s, row.f16, half_type_);
    if (!spec_.float16) return write_row(path, s, row.f32, H5::PredType::NATIVE_FLOAT);
    const std::vector<hsize_t> dims = h5::shape_of(dataset(path));
    std::size_t n = 1;
    for (std::size_t i = 1; i < dims.size(); ++i)
        n *= static_cast<std::size_t>(dims[i]);
    const auto [data, type] = stored(row.f32, n);
    write_row(path, s, data, *type);
}

void DumpWriter::write_hidden(int layer, int s, FloatRow rows) {
    write_float_row("layers/" + std::to_string(layer) + "/hidden", s, rows);
}

void DumpWriter::write_sentence(int layer, int s, FloatRow vec) {
    write_float_row("layers/" + std::to_string(layer) + "/sentence", s, vec);
}

void DumpWriter::write_gate(int layer, const std::string& gate, int s, FloatRow rows) {
    write_float_row("layers/" + std::to_string(layer) + "/gates/" + gate, s, rows);
}

void DumpWriter::write_attention(int layer, int s, FloatRow probs) {
    write_float_row("layers/" + std::to_string(layer) + "/attention", s, probs);
}

void DumpWriter::write_kernel(int layer, const std::vector<float>& forward,
                              const std::vector<float>& backward, double d_forward,
                              double d_backward) {
    try {
        if (!h5::exists(file_, "kernels")) file_.createGroup("kernels");
        H5::Group g = file_.createGroup("kernels/" + std::to_string(layer));
        auto put = [&](const char* name, const std::vector<float>& k) {
            const hsize_t n = k.size();
            H5::DataSet ds = g.createDataSet(name, float_type_, H5::DataSpace(1, &n));
            const auto [data, type] = stored(k.data(), k.size());
            ds.write(data, *type);
        };
        put("forward", forward);
        h5::write_float_attr(g, "D_forward", d_forward);
        if (!backward.empty()) {  // empty: a causal layer, forward only
            put("backward", backward);
            h5::write_float_attr(g, "D_backward", d_backward);
        }
    } catch (const H5::Exception& e) {
        fail("cannot write kernels of layer " + std::to_string(layer), e);
    }
}

void DumpWriter::write_kernel_groups(int layer, bool forward, const std::vector<float>& kernels,
                                     int groups, const std::vector<double>& skips) {
    try {
        H5::Group g = file_.openGroup("kernels/" + std::to_string(layer));
        const std::string dir = forward ? "forward" : "backward";
        const hsize_t dims[2] = {static_cast<hsize_t>(groups),
                                 static_cast<hsize_t>(kernels.size() / groups)};
        H5::DataSet k = g.createDataSet(dir + "_groups", float_type_, H5::DataSpace(2, dims));
        const auto [data, type] = stored(kernels.data(), kernels.size());
        k.write(data, *type);
        const hsize_t h = skips.size();
        H5::DataSet d =
            g.createDataSet("D_" + dir + "_groups", H5::PredType::IEEE_F64LE, H5::DataSpace(1, &h));
        d.write(skips.data(), H5::PredType::NATIVE_DOUBLE);
    } catch (const H5::Exception& e) {
        fail("cannot write the kernel groups of layer " + std::to_string(layer), e);
    }
}

void DumpWriter::write_mixing(int layer, const float* w, int n) {
    try {
        if (!h5::exists(file_, "mixing")) file_.createGroup("mixing");
        const hsize_t dims[2] = {static_cast<hsize_t>(n), static_cast<hsize_t>(n)};
        H5::DataSet ds = file_.createDataSet("mixing/" + std::to_string(layer), float_type_,
                                             H5::DataSpace(2, dims));
        const auto [data, type] = stored(w, static_cast<std::size_t>(n) * n);
        ds.write(data, *type);
    } catch (const H5::Exception& e) {
        fail("cannot write the mixing matrix of layer " + std::to_string(layer), e);
    }
}

void DumpWriter::finish() {
    try {
        for (auto& [path, ds] : sets_)
            ds.close();
        sets_.clear();
        file_.flush(H5F_SCOPE_GLOBAL);
        file_.close();
    } catch (const H5::Exception& e) {
        fail("cannot finish writing", e);
    }
    h5::give_back_reserve(temp_path_);
    std::error_code ec;
    std::filesystem::rename(temp_path_, final_path_, ec);
    if (ec)
        throw IoError(final_path_ + ": cannot rename the finished dump from " + temp_path_ + ": " +
                      ec.message());
    finished_ = true;
}

}  // namespace routescope
