// Flax msgpack (flax.serialization.to_bytes): msgpack.packb(state_dict) with every array an
// ExtType(1, msgpack.packb((shape, dtype.name, bytes))). Unpacked with msgpack-cxx under limits
// derived from the file size (a count msgpack declares allocates its objects up front), with
// str/bin/ext referencing the mapped file instead of being copied.
#include <msgpack.hpp>

#include <map>
#include <set>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/io/importers/mapped_file.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {
namespace {

constexpr std::int8_t kExtNdarray = 1;  // flax.serialization._MsgpackExtType.ndarray
constexpr std::size_t kMaxDepth = 64;

bool reference_everything(msgpack::type::object_type, std::size_t, void*) {
    return true;
}

// Limits for a msgpack buffer of `n` bytes: every element takes at least one byte.
msgpack::unpack_limit limits_for(std::size_t n) {
    return msgpack::unpack_limit(n, n / 2 + 1, n, n, n, kMaxDepth);
}

// Unpacks exactly one object covering [data, data + n); FormatError naming `where` otherwise.
msgpack::object_handle unpack_all(const std::string& path, const std::string& where,
                                  const char* data, std::size_t n) {
    msgpack::object_handle oh;
    std::size_t offset = 0;
    try {
        msgpack::unpack(oh, data, n, offset, reference_everything, nullptr, limits_for(n));
    } catch (const msgpack::insufficient_bytes&) {
        throw FormatError(path + ": " + where + ": truncated msgpack (the data ends early)");
    } catch (const std::exception& e) {
        throw FormatError(path + ": " + where + ": malformed msgpack (" + e.what() + ")");
    }
    if (offset != n)
        throw FormatError(path + ": " + where + ": " + std::to_string(n - offset) +
                          " bytes after the msgpack object");
    return oh;
}

const char* type_name(msgpack::type::object_type t) {
    using namespace msgpack::type;
    switch (t) {
        case NIL:
            return "nil";
        case BOOLEAN:
            return "a boolean";
        case POSITIVE_INTEGER:
        case NEGATIVE_INTEGER:
            return "an integer";
        case FLOAT32:
        case FLOAT64:
            return "a float";
        case STR:
            return "a string";
        case BIN:
            return "bytes";
        case ARRAY:
            return "a msgpack list";
        case MAP:
            return "a map";
        case EXT:
            return "an extension type";
    }
    return "an unknown msgpack type";
}

class Reader {
public:
    explicit Reader(const std::string& path) : path_(path) {}

    void walk(const msgpack::object& o, const std::string& name, TensorFile& out) {
        if (o.type == msgpack::type::MAP) {
            // Keys are checked per map here; a key holding '/' ({"bert/embeddings": ...} beside
            // {"bert": {"embeddings": ...}}) can still give two leaves one joined name, which
            // leaf_seen() refuses.
            std::set<std::string> seen;
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                const auto& kv = o.via.map.ptr[i];
                std::string key;
                if (kv.key.type == msgpack::type::STR)
                    key.assign(kv.key.via.str.ptr, kv.key.via.str.size);
                else if (kv.key.type == msgpack::type::POSITIVE_INTEGER)
                    key = std::to_string(kv.key.via.u64);
                else
                    fail(name.empty() ? "/" : name,
                         std::string("map key is ") + type_name(kv.key.type));
                if (key == "__msgpack_chunked_array__")
                    fail(name, "a chunked array (flax splits arrays over 1 GiB); not supported");
                const std::string child = name.empty() ? key : name + "/" + key;
                if (!seen.insert(key).second) fail(child, "duplicate key");
                keys_.push_back(key);
                walk(kv.val, child, out);
                keys_.pop_back();
            }
            return;
        }
        if (name.empty())
            fail("/",
                 std::string("the file holds ") + type_name(o.type) + ", not a map of parameters");
        if (o.type != msgpack::type::EXT)
            fail(name, std::string("holds ") + type_name(o.type) +
                           ", not an array (flax writes a parameter as a numpy ndarray, msgpack "
                           "extension type 1)");
        if (o.via.ext.type() != kExtNdarray)
            fail(name, "msgpack extension type " + std::to_string(o.via.ext.type()) +
                           " (flax writes arrays as type 1; complex values and numpy scalars are "
                           "not parameters this importer knows)");
        leaf_seen(name);
        out.tensors.push_back(leaf(o.via.ext.data(), o.via.ext.size, name));
    }

private:
    // The key path of the current leaf as Python subscripts it in the unpacked state dict:
    // ['bert/embeddings']['word_embeddings']['embedding'].
    std::string key_path() const {
        std::string p;
        for (const auto& k : keys_)
            p += "['" + k + "']";
        return p;
    }

    // Two leaves whose keys join to one name are one tensor named twice: which of them a reader
    // takes depends on it (flax restores the nested one into its model, the importer's name
    // lookup found the first in the file), so the file is refused, as safetensors' duplicate
    // keys and a state_dict's repeated ones are.
    void leaf_seen(const std::string& name) {
        const auto [it, fresh] = leaves_.emplace(name, key_path());
        if (!fresh)
            fail(name, "two arrays have this name once their keys are joined with '/': " +
                           it->second + " and " + key_path() +
                           " (a key holding '/'); readers disagree on which is the parameter");
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw FormatError(path_ + ": " + where + ": " + what);
    }

    NamedTensor leaf(const char* data, std::size_t n, const std::string& name) {
        const auto oh = unpack_all(path_, name, data, n);
        const msgpack::object& o = oh.get();
        if (o.type != msgpack::type::ARRAY || o.via.array.size != 3)
            fail(name, "array payload is not (shape, dtype, bytes)");
        const auto& shape = o.via.array.ptr[0];
        const auto& dtype = o.via.array.ptr[1];
        const auto& bytes = o.via.array.ptr[2];
        if (shape.type != msgpack::type::ARRAY) fail(name, "array shape is not a tuple");
        if (dtype.type != msgpack::type::STR) fail(name, "array dtype is not a string");
        if (bytes.type != msgpack::type::BIN && bytes.type != msgpack::type::STR)
            fail(name, "array data is not bytes");
        NamedTensor t;
        t.name = name;
        for (std::uint32_t i = 0; i < shape.via.array.size; ++i) {
            const auto& d = shape.via.array.ptr[i];
            if (d.type != msgpack::type::POSITIVE_INTEGER || d.via.u64 > (1ull << 62))
                fail(name, "array shape holds something other than a dimension");
            t.shape.push_back(static_cast<std::int64_t>(d.via.u64));
        }
        t.dtype.assign(dtype.via.str.ptr, dtype.via.str.size);
        const std::size_t width = dtype_size(t.dtype);
        if (width == 0)
            fail(name,
                 "unknown dtype '" + t.dtype + "' (float32, float16, bfloat16, float64 or int64)");
        const std::size_t have =
            bytes.type == msgpack::type::BIN ? bytes.via.bin.size : bytes.via.str.size;
        const char* raw = bytes.type == msgpack::type::BIN ? bytes.via.bin.ptr : bytes.via.str.ptr;
        const std::size_t count = checked_numel(t.shape, have, path_ + ": " + name);
        if (count * width != have)
            fail(name, "holds " + std::to_string(have) + " bytes, its shape and dtype need " +
                           std::to_string(count * width));
        t.data.resize(count);
        convert_to_float(t.dtype, reinterpret_cast<const unsigned char*>(raw), count,
                         t.data.data());
        return t;
    }

    std::string path_;
    std::vector<std::string> keys_;              // the map keys down to the current value
    std::map<std::string, std::string> leaves_;  // joined name → its key path, per leaf
};

}  // namespace

TensorFile read_flax_msgpack(const std::string& path) {
    MappedFile file(path);
    TensorFile out;
    out.path = path;
    out.format = "flax";
    if (file.size() == 0) throw FormatError(path + ": empty file, not Flax msgpack");
    const auto oh = unpack_all(path, "/", reinterpret_cast<const char*>(file.data()), file.size());
    Reader(path).walk(oh.get(), "", out);
    return out;
}

}  // namespace routescope::importers
