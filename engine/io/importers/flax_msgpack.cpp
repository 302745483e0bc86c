// Flax msgpack (flax.serialization.to_bytes): msgpack.packb(state_dict) with every array an
// ExtType(1, msgpack.packb((shape, dtype.name, bytes))). Checked byte by byte first (the counts
// its containers declare against the bytes left: check_structure), then unpacked with msgpack-cxx
// with str/bin/ext referencing the mapped file instead of being copied.
#include <msgpack.hpp>

#include <cstdio>
#include <set>
#include <string_view>
#include <vector>

#include "engine/core/error.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/importers/mapped_file.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {
namespace {

constexpr std::int8_t kExtNdarray = 1;  // flax.serialization._MsgpackExtType.ndarray
constexpr std::size_t kMaxDepth = 64;
// Flax keys are module and parameter names ("s4_bert", "layer", "11", "kernel"): a key of 250 KB
// or a joined name of 63 KB is no model's, and every array keeps its whole joined name (a 146 KB
// file of 4000 arrays under 63 nested 1000-byte keys took 770 MB).
constexpr std::size_t kMaxKey = 1024;
constexpr std::size_t kMaxName = 4096;
// All names together: the arrays of a real file hold far more bytes than their names; this bounds
// a file of many empty arrays under long keys by its size.
constexpr std::size_t kNamesSlack = std::size_t{64} << 20;
constexpr std::size_t kShownBytes = 200;  // of a key or name quoted in a message

// A key or joined name as a message quotes it: its first bytes, control characters as \xNN (a
// key's ESC sequences and newlines reached the terminal and forged lines of the report).
std::string shown(std::string_view text) {
    return data::printable_text(data::abbreviated(text, kShownBytes));
}

bool reference_everything(msgpack::type::object_type, std::size_t, void*) {
    return true;
}

// Limits for a msgpack buffer of `n` bytes: every element takes at least one byte.
msgpack::unpack_limit limits_for(std::size_t n) {
    return msgpack::unpack_limit(n, n / 2 + 1, n, n, n, kMaxDepth);
}

// Checks that [p, p + n) is exactly one msgpack object before msgpack-cxx unpacks it. msgpack-cxx
// allocates a container's elements (24 bytes each) when it reads the count, and its limits apply
// to each container alone: a 3 MB file of 60 nested lists, each declaring 3,000,000 elements,
// had it reserve 4 GB before the data ran out. Here the elements still owed by all open
// containers together must fit in the bytes left (each takes at least one), so an unpack that
// passes allocates in proportion to the buffer. `base`: the buffer's offset in the file.
void check_structure(const std::string& path, const std::string& where, const unsigned char* p,
                     std::size_t n, std::size_t base) {
    const auto fail = [&](const std::string& what) {
        throw FormatError(path + ": " + shown(where) + ": " + what);
    };
    const auto truncated = [&] { fail("truncated msgpack (the data ends early)"); };
    std::vector<std::uint64_t> open{1};  // elements still to read, per open container
    std::uint64_t owed = 1;              // their sum
    std::size_t at = 0;
    const auto field = [&](std::size_t width) {  // a big-endian length or count
        if (n - at < width) truncated();
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < width; ++i)
            v = v << 8 | p[at + i];
        at += width;
        return v;
    };
    while (owed > 0) {
        while (open.back() == 0)
            open.pop_back();
        if (at >= n) truncated();
        const std::size_t start = at;
        const unsigned char b = p[at++];
        --open.back();
        --owed;
        // A fixmap/fixarray/fixstr holds its count or length in the type byte; the types from
        // 0xC4 have a big-endian length or count field of `field` bytes and then `fixed` bytes
        // (an extension's type; a number's value), msgpack's spec.
        struct Head {
            std::uint8_t field, fixed;
            char kind;  // 's': scalar, 'a': array, 'm': map
        };
        static constexpr Head kHeads[] = {
            {1, 0, 's'}, {2, 0, 's'}, {4, 0, 's'},                             // bin 8/16/32
            {1, 1, 's'}, {2, 1, 's'}, {4, 1, 's'},                             // ext 8/16/32
            {0, 4, 's'}, {0, 8, 's'},                                          // float 32/64
            {0, 1, 's'}, {0, 2, 's'}, {0, 4, 's'}, {0, 8, 's'},                // uint 8..64
            {0, 1, 's'}, {0, 2, 's'}, {0, 4, 's'}, {0, 8, 's'},                // int 8..64
            {0, 2, 's'}, {0, 3, 's'}, {0, 5, 's'}, {0, 9, 's'}, {0, 17, 's'},  // fixext 1..16
            {1, 0, 's'}, {2, 0, 's'}, {4, 0, 's'},                             // str 8/16/32
            {2, 0, 'a'}, {4, 0, 'a'}, {2, 0, 'm'}, {4, 0, 'm'}};               // array, map 16/32
        char kind = 's';
        std::uint64_t count = 0;  // a container's elements or entries, a scalar's bytes
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            // an integer, nil or a boolean: the type byte alone
        } else if (b <= 0x8f) {
            kind = 'm', count = b & 0x0fu;
        } else if (b <= 0x9f) {
            kind = 'a', count = b & 0x0fu;
        } else if (b <= 0xbf) {
            count = b & 0x1fu;
        } else if (b == 0xc1) {  // the one byte msgpack never uses
            fail("malformed msgpack (byte 0xC1 at byte " + std::to_string(base + start) +
                 " is no msgpack type)");
        } else {
            const Head& h = kHeads[b - 0xc4];
            kind = h.kind;
            count = field(h.field) + h.fixed;
        }
        if (kind == 's') {
            if (count > n - at) truncated();
            at += static_cast<std::size_t>(count);
            continue;
        }
        const std::uint64_t elements = kind == 'm' ? 2 * count : count;
        if (elements == 0) continue;
        if (open.size() > kMaxDepth)
            fail("msgpack nested more than " + std::to_string(kMaxDepth) + " deep at byte " +
                 std::to_string(base + start));
        if (owed + elements > n - at)
            fail("truncated or damaged msgpack: the " + std::string(kind == 'm' ? "map" : "list") +
                 " at byte " + std::to_string(base + start) + " declares " + std::to_string(count) +
                 (kind == 'm' ? " entries" : " elements") +
                 (owed > 0 ? ", which with the " + std::to_string(owed) +
                                 " values its enclosing maps and lists still need is"
                           : ",") +
                 " more than the " + std::to_string(n - at) +
                 " bytes left can hold (each takes at least one byte)");
        open.push_back(elements);
        owed += elements;
    }
    if (at != n) fail(std::to_string(n - at) + " bytes after the msgpack object");
}

// Unpacks exactly one object covering [data, data + n) (check_structure first); FormatError
// naming `where` otherwise.
msgpack::object_handle unpack_all(const std::string& path, const std::string& where,
                                  const char* data, std::size_t n, std::size_t base) {
    check_structure(path, where, reinterpret_cast<const unsigned char*>(data), n, base);
    msgpack::object_handle oh;
    std::size_t offset = 0;
    try {
        msgpack::unpack(oh, data, n, offset, reference_everything, nullptr, limits_for(n));
    } catch (const msgpack::insufficient_bytes&) {
        throw FormatError(path + ": " + shown(where) + ": truncated msgpack (the data ends early)");
    } catch (const std::exception& e) {
        throw FormatError(path + ": " + shown(where) + ": malformed msgpack (" + e.what() + ")");
    }
    if (offset != n)
        throw FormatError(path + ": " + shown(where) + ": " + std::to_string(n - offset) +
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
    Reader(const std::string& path, const char* file, std::size_t size, TensorFile& out)
        : path_(path),
          file_(file),
          names_budget_(size + kNamesSlack),
          out_(out),
          leaves_(ByName{&out.tensors}) {}

    void read(const msgpack::object& root) {
        root_ = &root;
        walk(root, "");
    }

private:
    void walk(const msgpack::object& o, const std::string& name) {
        if (o.type == msgpack::type::MAP) {
            // Keys are checked per map here; a key holding '/' ({"bert/embeddings": ...} beside
            // {"bert": {"embeddings": ...}}) can still give two leaves one joined name, which
            // the leaf refuses.
            std::set<std::string> seen;
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                const auto& kv = o.via.map.ptr[i];
                std::string key;
                if (kv.key.type == msgpack::type::STR) {
                    if (kv.key.via.str.size > kMaxKey)
                        fail(name.empty() ? "/" : name,
                             "a map key of " + std::to_string(kv.key.via.str.size) + " bytes, '" +
                                 shown(std::string_view(kv.key.via.str.ptr, kv.key.via.str.size)) +
                                 "' (Flax keys are module and parameter names; at most " +
                                 std::to_string(kMaxKey) + " bytes)");
                    key.assign(kv.key.via.str.ptr, kv.key.via.str.size);
                } else if (kv.key.type == msgpack::type::POSITIVE_INTEGER) {
                    key = std::to_string(kv.key.via.u64);
                } else {
                    fail(name.empty() ? "/" : name,
                         std::string("map key is ") + type_name(kv.key.type));
                }
                if (key == "__msgpack_chunked_array__")
                    fail(name, "a chunked array (flax splits arrays over 1 GiB); not supported");
                if (name.size() + 1 + key.size() > kMaxName)
                    fail(name, "key '" + shown(key) + "' makes a name of " +
                                   std::to_string(name.size() + 1 + key.size()) +
                                   " bytes once the keys are joined with '/' (at most " +
                                   std::to_string(kMaxName) + ")");
                const std::string child = name.empty() ? key : name + "/" + key;
                if (!seen.insert(key).second) fail(child, "duplicate key");
                keys_.push_back(key);
                walk(kv.val, child);
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
        if (name.size() > names_budget_ - names_bytes_)
            fail(name, "the arrays' names, joined with '/', hold more than " +
                           std::to_string(names_budget_) +
                           " bytes together (the file's size plus 64 MiB): many arrays under "
                           "long keys, which no model's parameters are");
        names_bytes_ += name.size();
        if (const auto it = leaves_.find(std::string_view(name)); it != leaves_.end())
            fail(name, "two arrays have this name once their keys are joined with '/': " +
                           key_path_of(*leaf_objects_[*it]) + " and " + key_path(keys_) +
                           " (a key holding '/'); readers disagree on which is the parameter");
        out_.tensors.push_back(leaf(o.via.ext.data(), o.via.ext.size, name));
        leaf_objects_.push_back(&o);
        leaves_.insert(out_.tensors.size() - 1);
    }

    // A key path as Python subscripts it in the unpacked state dict:
    // ['bert/embeddings']['word_embeddings']['embedding'].
    static std::string key_path(const std::vector<std::string>& keys) {
        std::string p;
        for (const auto& k : keys)
            p += "['" + shown(k) + "']";
        return p;
    }

    // The key path of an earlier leaf, found again in the tree (only for a message: the leaves
    // keep no copy of it).
    std::string key_path_of(const msgpack::object& leaf) const {
        std::vector<std::string> keys;
        const auto find = [&](const auto& self, const msgpack::object& o) -> bool {
            if (&o == &leaf) return true;
            if (o.type != msgpack::type::MAP) return false;
            for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
                const auto& kv = o.via.map.ptr[i];
                keys.push_back(kv.key.type == msgpack::type::STR
                                   ? std::string(kv.key.via.str.ptr, kv.key.via.str.size)
                                   : std::to_string(kv.key.via.u64));
                if (self(self, kv.val)) return true;
                keys.pop_back();
            }
            return false;
        };
        find(find, *root_);
        return key_path(keys);
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw FormatError(path_ + ": " + shown(where) + ": " + what);
    }

    NamedTensor leaf(const char* data, std::size_t n, const std::string& name) {
        const auto oh = unpack_all(path_, name, data, n, static_cast<std::size_t>(data - file_));
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
            fail(name, "unknown dtype '" + shown(t.dtype) +
                           "' (float32, float16, bfloat16, float64 or int64)");
        const std::size_t have =
            bytes.type == msgpack::type::BIN ? bytes.via.bin.size : bytes.via.str.size;
        const char* raw = bytes.type == msgpack::type::BIN ? bytes.via.bin.ptr : bytes.via.str.ptr;
        const std::size_t count = checked_numel(t.shape, have, path_ + ": " + shown(name));
        if (count * width != have)
            fail(name, "holds " + std::to_string(have) + " bytes, its shape and dtype need " +
                           std::to_string(count * width));
        t.data.resize(count);
        convert_to_float(t.dtype, reinterpret_cast<const unsigned char*>(raw), count,
                         t.data.data());
        return t;
    }

    // Orders the indices of out.tensors by the tensors' names, and finds a name among them, so
    // that the leaves seen keep no second copy of each name.
    struct ByName {
        using is_transparent = void;
        const std::vector<NamedTensor>* tensors;
        std::string_view of(std::size_t i) const { return (*tensors)[i].name; }
        std::string_view of(std::string_view name) const { return name; }
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            return of(a) < of(b);
        }
    };

    std::string path_;
    const char* file_;  // the mapped file's first byte: offsets in messages
    std::size_t names_budget_;
    std::size_t names_bytes_ = 0;  // the leaves' joined names so far
    TensorFile& out_;
    const msgpack::object* root_ = nullptr;
    std::vector<std::string> keys_;  // the map keys down to the current value
    // Two leaves whose keys join to one name are one tensor named twice: which of them a reader
    // takes depends on it (flax restores the nested one into its model, the importer's name
    // lookup found the first in the file), so the file is refused, as safetensors' duplicate
    // keys and a state_dict's repeated ones are.
    std::set<std::size_t, ByName> leaves_;              // indices into out_.tensors
    std::vector<const msgpack::object*> leaf_objects_;  // per tensor, its ext in the tree
};

}  // namespace

TensorFile read_flax_msgpack(const std::string& path) {
    MappedFile file(path);
    TensorFile out;
    out.path = path;
    out.format = "flax";
    if (file.size() == 0) throw FormatError(path + ": empty file, not Flax msgpack");
    // The top level first: a text file (a Git LFS pointer, an HTML page) parses as a msgpack
    // integer ('v' is 0x76) followed by "bytes after the msgpack object".
    refuse_git_lfs_pointer(path, file.data(), file.size());
    const unsigned char first = file.data()[0];
    if ((first & 0xf0) != 0x80 && first != 0xde && first != 0xdf)
        throw FormatError(
            path + ": not Flax msgpack: " + first_bytes_text(file.data(), file.size()) +
            ", and flax.serialization writes a msgpack map (its first byte 0x80-0x8F, "
            "0xDE or 0xDF)");
    const auto* data = reinterpret_cast<const char*>(file.data());
    const auto oh = unpack_all(path, "/", data, file.size(), 0);
    Reader(path, data, file.size(), out).read(oh.get());
    return out;
}

}  // namespace routescope::importers
