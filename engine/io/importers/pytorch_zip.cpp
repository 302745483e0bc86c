// PyTorch checkpoints: torch.save's zip (since 1.6), holding <prefix>/data.pkl, the pickled
// state_dict, and <prefix>/data/<key>, the raw little-endian bytes of each storage; and the
// legacy format before it (read_pytorch_legacy below: pickles then the storages in a row). The
// pickle is interpreted here, not by Python: only the opcodes torch.save uses and only the globals
// a state_dict needs are understood (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter, torch.<Type>Storage as persistent ids). Any other global is refused before
// anything else happens, so loading a file can never run code from it.
#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/importers/mapped_file.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {
namespace {

// ------------------------------------------------------------------ zip

class Zip {
public:
    explicit Zip(const std::string& path) : path_(path) {
        std::error_code size_error;
        archive_bytes_ = std::filesystem::file_size(path, size_error);
        if (size_error) archive_bytes_ = 0;
        int error = 0;
        zip_ = zip_open(path.c_str(), ZIP_RDONLY, &error);
        if (!zip_) {
            zip_error_t e;
            zip_error_init_with_code(&e, error);
            const std::string why = zip_error_strerror(&e);
            zip_error_fini(&e);
            if (error == ZIP_ER_OPEN || error == ZIP_ER_READ)
                throw IoError(path + ": cannot open (" + why + ")");
            throw FormatError(path + ": not a readable zip archive (" + why + ")");
        }
        // An archive naming one entry twice: libzip's lookup finds the first, torch.load the
        // last, so the two would read different weights from one file.
        std::set<std::string> seen;
        for (const auto& name : names())
            if (!seen.insert(name).second) {
                zip_discard(zip_);
                throw FormatError(path + ": the archive holds two entries named '" + name +
                                  "' (readers disagree on which one counts)");
            }
    }
    ~Zip() { zip_discard(zip_); }
    Zip(const Zip&) = delete;
    Zip& operator=(const Zip&) = delete;

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        const zip_int64_t n = zip_get_num_entries(zip_, 0);
        for (zip_int64_t i = 0; i < n; ++i)
            if (const char* name = zip_get_name(zip_, static_cast<zip_uint64_t>(i), 0))
                out.emplace_back(name);
        return out;
    }

    bool has(const std::string& name) const { return zip_name_locate(zip_, name.c_str(), 0) >= 0; }

    /// The entry's size in bytes. Its declared size is bounded by its compressed size (deflate
    /// expands at most ~1032×), and that by the archive's size (both are declared by the archive
    /// itself, so both are checked), so a tiny archive cannot ask for gigabytes.
    std::uint64_t size(const std::string& name) const {
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat(zip_, name.c_str(), 0, &st) != 0)
            throw FormatError(path_ + ": " + name + ": missing from the archive");
        if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
            throw FormatError(path_ + ": " + name + ": the archive does not give its size");
        if (st.comp_size > archive_bytes_)
            throw FormatError(path_ + ": " + name + ": declares " + std::to_string(st.comp_size) +
                              " compressed bytes in an archive of " +
                              std::to_string(archive_bytes_));
        if (st.size > st.comp_size * 1032 + 1024)
            throw FormatError(path_ + ": " + name + ": declares " + std::to_string(st.size) +
                              " bytes from " + std::to_string(st.comp_size) +
                              " compressed (more than deflate can produce)");
        return st.size;
    }

    /// The entry's bytes.
    std::vector<unsigned char> read(const std::string& name) const {
        return read(name, 0, size(name));
    }

    /// Bytes [begin, end) of the entry: those before `begin` are decompressed and dropped, those
    /// after `end` never read, so a storage's bytes that no tensor uses take no memory (three
    /// deflated storages of 256 MiB zeros, each holding an 8-element slice, took 768 MiB).
    std::vector<unsigned char> read(const std::string& name, std::uint64_t begin,
                                    std::uint64_t end) const {
        const std::uint64_t total = size(name);
        if (begin > end || end > total)
            throw FormatError(path_ + ": " + name + ": bytes " + std::to_string(begin) + ".." +
                              std::to_string(end) + " asked of an entry of " +
                              std::to_string(total));
        zip_file_t* f = zip_fopen(zip_, name.c_str(), 0);
        if (!f)
            throw FormatError(path_ + ": " + name + ": cannot open in the archive (" +
                              zip_strerror(zip_) + ")");
        std::vector<unsigned char> bytes(static_cast<std::size_t>(end - begin));
        std::vector<unsigned char> skipped;
        std::uint64_t at = 0;  // the entry's bytes read so far
        while (at < end) {
            unsigned char* into = nullptr;
            std::uint64_t want = 0;
            if (at < begin) {
                skipped.resize(std::size_t{1} << 20);
                into = skipped.data();
                want = std::min<std::uint64_t>(skipped.size(), begin - at);
            } else {
                into = bytes.data() + (at - begin);
                want = end - at;
            }
            const zip_int64_t got = zip_fread(f, into, want);
            if (got <= 0) break;
            at += static_cast<std::uint64_t>(got);
        }
        const std::string why = at == end ? "" : zip_file_strerror(f);
        zip_fclose(f);
        if (at != end)
            throw FormatError(path_ + ": " + name + ": truncated or corrupt entry (" + why + ")");
        return bytes;
    }

private:
    std::string path_;
    std::uintmax_t archive_bytes_ = 0;
    zip_t* zip_ = nullptr;
};

// ------------------------------------------------------------------ pickle values

struct Value;
using Ref = std::shared_ptr<Value>;

struct Value {
    enum Kind { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
    Kind kind = None;
    std::int64_t i = 0;
    double f = 0;
    std::string s;                             // Str, Bytes; Global "module.name"; Storage dtype
    std::vector<Ref> items;                    // Tuple, List
    std::vector<std::pair<Ref, Ref>> entries;  // Dict (ordered)
    // Storage: key (s2), numel (i). Tensor: storage (items[0]), offset (i), size, stride.
    std::string s2;
    std::vector<std::int64_t> size, stride;

    Value() = default;
    Value(const Value&) = delete;
    Value& operator=(const Value&) = delete;
    // Iterative: a pickle nests containers as deep as its bytes allow (200,000 TUPLE1 opcodes are
    // 200 kB), and the default destructor's recursion overflowed the stack freeing them. Children
    // this value holds the last reference to are emptied into a worklist before they die.
    ~Value() {
        std::vector<Ref> pending;
        const auto detach = [&pending](Value& v) {
            for (auto& r : v.items)
                if (r) pending.push_back(std::move(r));
            for (auto& [k, x] : v.entries) {
                if (k) pending.push_back(std::move(k));
                if (x) pending.push_back(std::move(x));
            }
            v.items.clear();
            v.entries.clear();
        };
        detach(*this);
        while (!pending.empty()) {
            Ref r = std::move(pending.back());
            pending.pop_back();
            if (r.use_count() == 1) detach(*r);  // r dies at the end of this iteration, childless
        }
    }
};

Ref make(Value::Kind k) {
    auto v = std::make_shared<Value>();
    v->kind = k;
    return v;
}

// torch.<Type>Storage → dtype name (the readers convert only the floating ones).
const std::map<std::string, std::string>& storage_types() {
    static const std::map<std::string, std::string> types = {
        {"torch.FloatStorage", "float32"},     {"torch.HalfStorage", "float16"},
        {"torch.BFloat16Storage", "bfloat16"}, {"torch.DoubleStorage", "float64"},
        {"torch.LongStorage", "int64"},        {"torch.IntStorage", "int32"},
        {"torch.ShortStorage", "int16"},       {"torch.CharStorage", "int8"},
        {"torch.ByteStorage", "uint8"},        {"torch.BoolStorage", "bool"}};
    return types;
}

bool allowed_global(const std::string& g) {
    return g == "collections.OrderedDict" || g == "torch._utils._rebuild_tensor_v2" ||
           g == "torch._utils._rebuild_parameter" || storage_types().count(g) != 0;
}

// ------------------------------------------------------------------ the pickle machine

class Unpickler {
public:
    Unpickler(const std::string& where, const std::vector<unsigned char>& bytes)
        : Unpickler(where, bytes.data(), bytes.size()) {}
    Unpickler(const std::string& where, const unsigned char* data, std::size_t size)
        : where_(where), p_(data), end_(data + size), begin_(p_) {}
    /// Bytes read up to and including the STOP of the last run().
    std::size_t consumed() const { return static_cast<std::size_t>(p_ - begin_); }

    Ref run() {
        while (true) {
            const std::size_t at = static_cast<std::size_t>(p_ - begin_);
            const unsigned char op = byte();
            switch (op) {
                case 0x80: {  // PROTO: torch.save writes 2 (legacy) to 5
                    const unsigned protocol = byte();
                    if (protocol > 5)
                        fail(at, "pickle protocol " + std::to_string(protocol) +
                                     " (Python's pickle knows 0 to 5)");
                    break;
                }
                case 0x95:
                    take(8);
                    break;  // FRAME
                case '.':
                    return pop();  // STOP
                case '(':
                    marks_.push_back(stack_.size());
                    break;  // MARK
                case '}':
                    push(make(Value::Dict));
                    break;
                case ']':
                    push(make(Value::List));
                    break;
                case ')':
                    push(make(Value::Tuple));
                    break;
                case 'N':
                    push(make(Value::None));
                    break;
                case 0x88:
                case 0x89: {
                    auto v = make(Value::Bool);
                    v->i = op == 0x88;
                    push(v);
                    break;
                }
                case 't': {
                    auto v = make(Value::Tuple);
                    v->items = pop_mark();
                    push(v);
                    break;
                }
                case 'l': {
                    auto v = make(Value::List);
                    v->items = pop_mark();
                    push(v);
                    break;
                }
                case 0x85:
                case 0x86:
                case 0x87: {
                    const std::size_t n = op - 0x84u;
                    need_stack(n);
                    auto v = make(Value::Tuple);
                    v->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
                    stack_.resize(stack_.size() - n);
                    push(v);
                    break;
                }
                case 'd': {
                    auto items = pop_mark();
                    auto v = make(Value::Dict);
                    set_items(*v, items);
                    push(v);
                    break;
                }
                case 'a': {
                    auto x = pop();
                    list_top()->items.push_back(x);
                    break;
                }
                case 'e': {
                    auto items = pop_mark();
                    auto l = list_top();
                    l->items.insert(l->items.end(), items.begin(), items.end());
                    break;
                }
                case 's': {
                    auto v = pop();
                    auto k = pop();
                    set_items(*dict_top(), {k, v});
                    break;
                }
                case 'u': {
                    auto items = pop_mark();
                    set_items(*dict_top(), items);
                    break;
                }
                case 'q':
                    memo_[byte()] = top();
                    break;
                case 'r':
                    memo_[u32()] = top();
                    break;
                case 0x94:
                    memo_[static_cast<std::uint32_t>(memo_.size())] = top();
                    break;
                case 'h':
                    push(memo_get(byte()));
                    break;
                case 'j':
                    push(memo_get(u32()));
                    break;
                case '0':
                    pop();
                    break;
                case '1':
                    pop_mark();
                    break;
                case '2':
                    push(top());
                    break;
                case 'J':
                    push(integer(static_cast<std::int32_t>(u32())));
                    break;
                case 'K':
                    push(integer(byte()));
                    break;
                case 'M': {
                    const std::uint32_t lo = byte();
                    push(integer(lo | std::uint32_t(byte()) << 8));
                    break;
                }
                case 0x8a: {  // LONG1: n-byte little-endian two's complement
                    const std::size_t n = byte();
                    if (n > 8) fail(at, "integer wider than 64 bits");
                    const unsigned char* b = take(n);
                    std::uint64_t v = 0;
                    for (std::size_t k = 0; k < n; ++k)
                        v |= std::uint64_t(b[k]) << (8 * k);
                    if (n > 0 && n < 8 && (b[n - 1] & 0x80)) v |= ~std::uint64_t{0} << (8 * n);
                    push(integer(static_cast<std::int64_t>(v)));
                    break;
                }
                case 'G': {
                    const unsigned char* b = take(8);
                    std::uint64_t bits = 0;
                    for (int k = 0; k < 8; ++k)
                        bits = bits << 8 | b[k];
                    auto v = make(Value::Float);
                    std::memcpy(&v->f, &bits, 8);
                    push(v);
                    break;
                }
                case 'X':
                    push(text(Value::Str, u32()));
                    break;
                case 0x8c:
                    push(text(Value::Str, byte()));
                    break;
                case 0x8d:
                    push(text(Value::Str, u64()));
                    break;
                case 'B':
                    push(text(Value::Bytes, u32()));
                    break;
                case 'C':
                    push(text(Value::Bytes, byte()));
                    break;
                // BINSTRING, SHORT_BINSTRING: Python 2's str (torch.save under Python 2.7, torch
                // <= 1.4: state_dict keys, 'storage', storage keys, 'cpu'). torch.load unpickles
                // with encoding='utf-8', so they are text, and bytes that are not UTF-8 fail there.
                case 'T':
                    push(python2_text(at, u32()));
                    break;
                case 'U':
                    push(python2_text(at, byte()));
                    break;
                case 'c': {
                    const std::string module = line(), name = line();
                    push(global(at, module, name));
                    break;
                }
                case 0x93: {
                    auto name = pop(), module = pop();
                    if (module->kind != Value::Str || name->kind != Value::Str)
                        fail(at, "STACK_GLOBAL of something other than two strings");
                    push(global(at, module->s, name->s));
                    break;
                }
                case 'Q':
                    push(persistent(at, pop()));
                    break;
                case 'R': {
                    auto args = pop();
                    auto callable = pop();
                    push(reduce(at, callable, args));
                    break;
                }
                case 'b': {
                    pop();  // the state: an OrderedDict's _metadata (module versions), unused
                    if (top()->kind != Value::Dict)
                        fail(at, "BUILD on something other than an OrderedDict");
                    break;
                }
                default: {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "0x%02x", op);
                    fail(at, std::string("opcode ") + hex +
                                 " is not one torch.save writes for a state_dict; refused");
                }
            }
        }
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& what) const {
        throw FormatError(where_ + ": byte " + std::to_string(at) + ": " + what);
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError(where_ + ": " + what);
    }

    const unsigned char* take(std::size_t n) {
        if (n > static_cast<std::size_t>(end_ - p_)) fail("truncated pickle (the data ends early)");
        const unsigned char* b = p_;
        p_ += n;
        return b;
    }
    unsigned char byte() { return *take(1); }
    std::uint32_t u32() {
        const unsigned char* b = take(4);
        return std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 |
               std::uint32_t(b[3]) << 24;
    }
    std::uint64_t u64() {
        const std::uint64_t lo = u32();
        return lo | std::uint64_t(u32()) << 32;
    }
    std::string line() {
        const unsigned char* nl = static_cast<const unsigned char*>(
            std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_)));
        if (!nl) fail("truncated pickle (GLOBAL without a newline)");
        std::string s(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(nl - p_));
        p_ = nl + 1;
        return s;
    }
    Ref text(Value::Kind k, std::uint64_t n) {
        if (n > static_cast<std::uint64_t>(end_ - p_))
            fail("truncated pickle (a string ends early)");
        auto v = make(k);
        const unsigned char* b = take(static_cast<std::size_t>(n));
        v->s.assign(reinterpret_cast<const char*>(b), static_cast<std::size_t>(n));
        return v;
    }
    Ref python2_text(std::size_t at, std::uint64_t n) {
        auto v = text(Value::Str, n);
        if (const auto bad = data::first_invalid_utf8(v->s))
            fail(at, "a Python 2 string that is not UTF-8 (byte " + std::to_string(*bad) +
                         " of it), which torch.load cannot read either");
        return v;
    }
    Ref integer(std::int64_t i) {
        auto v = make(Value::Int);
        v->i = i;
        return v;
    }

    void push(Ref v) { stack_.push_back(std::move(v)); }
    void need_stack(std::size_t n) const {
        const std::size_t floor = marks_.empty() ? 0 : marks_.back();
        if (stack_.size() < floor + n) fail("pickle stack underflow");
    }
    Ref pop() {
        need_stack(1);
        Ref v = std::move(stack_.back());
        stack_.pop_back();
        return v;
    }
    const Ref& top() const {
        need_stack(1);
        return stack_.back();
    }
    std::vector<Ref> pop_mark() {
        if (marks_.empty()) fail("pickle MARK missing");
        const std::size_t m = marks_.back();
        marks_.pop_back();
        std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
        stack_.resize(m);
        return items;
    }
    Ref memo_get(std::uint32_t key) const {
        auto it = memo_.find(key);
        if (it == memo_.end()) fail("pickle memo " + std::to_string(key) + " read before written");
        return it->second;
    }
    Ref list_top() const {
        const Ref& l = top();
        if (l->kind != Value::List) fail("APPEND to something other than a list");
        return l;
    }
    Ref dict_top() const {
        const Ref& d = top();
        if (d->kind != Value::Dict) fail("SETITEM on something other than a dict");
        return d;
    }
    void set_items(Value& dict, const std::vector<Ref>& items) const {
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        for (std::size_t k = 0; k < items.size(); k += 2)
            dict.entries.emplace_back(items[k], items[k + 1]);
    }

    Ref global(std::size_t at, const std::string& module, const std::string& name) const {
        const std::string g = module + "." + name;
        if (!allowed_global(g))
            fail(at, "the pickle references the global '" + g +
                         "', which a state_dict does not need; refused (only "
                         "collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
                         "torch._utils._rebuild_parameter and torch.<Type>Storage are allowed)");
        auto v = make(Value::Global);
        v->s = g;
        return v;
    }

    // ('storage', torch.<Type>Storage, key, location, numel); the legacy format adds
    // view_metadata, None unless the tensor shares a storage view (torch before 0.4 wrote those).
    Ref persistent(std::size_t at, const Ref& pid) const {
        const auto& it = pid->items;
        if (pid->kind != Value::Tuple || (it.size() != 5 && it.size() != 6) ||
            it[0]->kind != Value::Str || it[0]->s != "storage" || it[1]->kind != Value::Global ||
            it[2]->kind != Value::Str || it[4]->kind != Value::Int || it[4]->i < 0)
            fail(at, "persistent id is not ('storage', torch.<Type>Storage, key, location, numel)");
        if (it.size() == 6 && it[5]->kind != Value::None)
            fail(at,
                 "persistent id has view metadata (a storage view, as torch before 0.4 saved "
                 "them; re-save the state_dict with a recent torch)");
        auto type = storage_types().find(it[1]->s);
        if (type == storage_types().end()) fail(at, "persistent id names " + it[1]->s);
        auto v = make(Value::Storage);
        v->s = type->second;
        v->s2 = it[2]->s;
        v->i = it[4]->i;
        return v;
    }

    std::vector<std::int64_t> ints(std::size_t at, const Ref& t, const char* what) const {
        if (t->kind != Value::Tuple) fail(at, std::string("tensor ") + what + " is not a tuple");
        std::vector<std::int64_t> out;
        for (const auto& x : t->items) {
            if (x->kind != Value::Int || x->i < 0)
                fail(at, std::string("tensor ") + what + " holds a non-integer or negative value");
            out.push_back(x->i);
        }
        return out;
    }

    Ref reduce(std::size_t at, const Ref& callable, const Ref& args) const {
        if (callable->kind != Value::Global) fail(at, "REDUCE of something that is not a global");
        if (args->kind != Value::Tuple) fail(at, "REDUCE arguments are not a tuple");
        const auto& a = args->items;
        const std::string& g = callable->s;
        if (g == "collections.OrderedDict") {
            // Python 3 reduces an OrderedDict to no arguments and SETITEMS; Python 2.7 to
            // (OrderedDict, ([[key, value], ...],)) and a BUILD of its __dict__ (_metadata).
            auto d = make(Value::Dict);
            if (a.empty()) return d;
            if (a.size() != 1 || (a[0]->kind != Value::List && a[0]->kind != Value::Tuple))
                fail(at,
                     "OrderedDict built from arguments other than a list of [key, value] pairs");
            for (const auto& pair : a[0]->items) {
                if ((pair->kind != Value::List && pair->kind != Value::Tuple) ||
                    pair->items.size() != 2)
                    fail(at, "OrderedDict built from an item that is not a [key, value] pair");
                d->entries.emplace_back(pair->items[0], pair->items[1]);
            }
            return d;
        }
        if (g == "torch._utils._rebuild_tensor_v2") {
            // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
            if (a.size() < 4 || a[0]->kind != Value::Storage || a[1]->kind != Value::Int ||
                a[1]->i < 0)
                fail(at,
                     "_rebuild_tensor_v2 arguments are not (storage, offset, size, stride, ...)");
            auto t = make(Value::Tensor);
            t->items = {a[0]};
            t->i = a[1]->i;
            t->size = ints(at, a[2], "size");
            t->stride = ints(at, a[3], "stride");
            if (t->size.size() != t->stride.size())
                fail(at, "tensor size and stride differ in length");
            return t;
        }
        if (g == "torch._utils._rebuild_parameter") {
            if (a.empty() || a[0]->kind != Value::Tensor)
                fail(at, "_rebuild_parameter of something that is not a tensor");
            return a[0];
        }
        fail(at, g + " is not callable here");
    }

    std::string where_;
    const unsigned char* p_;
    const unsigned char* end_;
    const unsigned char* begin_;
    std::vector<Ref> stack_;
    std::vector<std::size_t> marks_;
    std::unordered_map<std::uint32_t, Ref> memo_;
};

std::size_t width_of(const std::string& dtype) {
    if (dtype == "float64" || dtype == "int64") return 8;
    if (dtype == "float32" || dtype == "int32") return 4;
    if (dtype == "float16" || dtype == "bfloat16" || dtype == "int16") return 2;
    return 1;
}

}  // namespace

namespace {

// The elements that views repeating their storage's elements (expanded: stride 0; overlapping
// strides) may materialise in one file (2^28 floats, 1 GiB).
constexpr std::size_t kExpandedElementsMax = std::size_t{1} << 28;

struct Span {
    const unsigned char* data = nullptr;
    std::size_t size = 0;
};

// A storage as the state_dict's tensors declare it (torch.<Type>Storage and element count).
struct StorageDeclaration {
    std::string dtype;
    std::int64_t numel = 0;
    std::string tensor;  // the first tensor that declares it
};

using Declarations = std::map<std::string, StorageDeclaration>;

// Records tensor `name`'s declaration of its storage `s` in `seen`. torch.load builds each
// storage once, from its first declaration, and reads every tensor on it as that type; a reader
// going by each tensor's own declaration would read other weights from the same bytes. A later
// declaration that disagrees on the type or size is therefore refused, as an archive naming one
// entry twice is. `label` names the storage in messages ("storage archive/data/").
void declare(Declarations& seen, const std::string& path, const std::string& label, const Value& s,
             const std::string& name) {
    const auto [it, first] = seen.try_emplace(s.s2, StorageDeclaration{s.s, s.i, name});
    const StorageDeclaration& d = it->second;
    if (!first && (d.dtype != s.s || d.numel != s.i))
        throw FormatError(path + ": " + label + s.s2 + " is declared as " +
                          std::to_string(d.numel) + " elements of " + d.dtype + " by " + d.tensor +
                          " and as " + std::to_string(s.i) + " elements of " + s.s + " by " + name +
                          "; torch.load builds it from the first declaration and reads " +
                          "both as " + d.dtype +
                          ", a reader going by each tensor's own declaration reads other "
                          "weights: refused");
}

// The storages the tensors of `root` declare, by key (declare: they must agree).
Declarations declared_storages(const std::string& path, const Ref& root, const std::string& label) {
    Declarations out;
    for (const auto& [key, value] : root->entries)
        if (value->kind == Value::Tensor)  // state_dict_tensors says what anything else is
            declare(out, path, label, *value->items[0],
                    key->kind == Value::Str ? key->s : "(a key that is no string)");
    return out;
}

// Where state_dict_tensors finds the storages' bytes: a zip's entries (copied into memory) or a
// legacy file's mapping.
class Storages {
public:
    virtual ~Storages() = default;
    /// "storage archive/data/3", for messages.
    virtual std::string what(const std::string& key) const = 0;
    /// The storage's bytes, without reading them; nullopt when the file lacks it, then
    /// missing(key) says so.
    virtual std::optional<std::uint64_t> size(const std::string& key) = 0;
    virtual std::string missing(const std::string& key) const = 0;
    /// Bytes [begin, end) of the storage, valid until release(key).
    virtual const unsigned char* bytes(const std::string& key, std::uint64_t begin,
                                       std::uint64_t end) = 0;
    virtual void release(const std::string& key) = 0;
    /// Whether bytes() copies into memory (so that the read's memory counts them).
    virtual bool copies() const = 0;
};

// The state_dict `root` of `path` as tensors, read from `storages`. First every tensor is checked
// against its storage's declaration and size and the memory the read will take against the read
// limit (h5::read_memory_limit), before anything is allocated; then each storage's bytes that
// some tensor uses are read, once, and released after the last tensor on it. Shared by the zip
// and the legacy format.
TensorFile state_dict_tensors(const std::string& path, const Ref& root, Storages& storages,
                              const std::string& label) {
    Declarations declarations;
    struct Planned {
        const Value* view = nullptr;
        std::string name, key;
        std::size_t count = 0, width = 0;
        bool contiguous = true;
    };
    struct Window {
        std::uint64_t begin = 0, end = 0;  // the elements some tensor reads, [begin, end)
        std::size_t last_use = 0;          // the last tensor that reads it
        bool used = false;
    };
    std::vector<Planned> plan;
    std::map<std::string, Window> windows;
    std::set<std::string> names;
    std::size_t expanded_elements = 0;
    for (const auto& [key, value] : root->entries) {
        if (key->kind != Value::Str) throw FormatError(path + ": state_dict key is not a string");
        const std::string& name = key->s;
        // A dict keeps the last value of a repeated key; a state_dict never repeats one, and
        // taking either copy silently would import a model the file does not describe.
        if (!names.insert(name).second)
            throw FormatError(path + ": state_dict key '" + name + "' appears twice");
        const auto fail = [&](const std::string& what) {
            throw FormatError(path + ": " + name + ": " + what);
        };
        if (value->kind != Value::Tensor) fail("not a tensor (a nested dict is not a state_dict)");
        const Value& declared = *value->items[0];
        const std::vector<std::int64_t>& shape = value->size;
        if (dtype_size(declared.s) == 0)
            fail("unknown dtype '" + declared.s +
                 "' (float32, float16, bfloat16, float64 or int64)");
        const auto bytes = storages.size(declared.s2);
        if (!bytes) fail(storages.missing(declared.s2));
        declare(declarations, path, label, declared, name);
        const std::size_t width = width_of(declared.s);
        if (static_cast<std::uint64_t>(declared.i) * width != *bytes)
            fail(storages.what(declared.s2) + " holds " + std::to_string(*bytes) +
                 " bytes, the pickle declares " + std::to_string(declared.i) + " elements of " +
                 std::to_string(width));
        const std::uint64_t capacity = *bytes / width;
        // A view may hold more elements than its storage: an expanded one (torch.Tensor.expand:
        // stride 0 along a dimension of size > 1), or one whose strides overlap (unfold,
        // as_strided). They are materialised here, within a bound on the whole file's
        // materialisation so that a small file cannot ask for gigabytes.
        bool expanded = false;
        for (std::size_t d = 0; d < shape.size(); ++d)
            expanded = expanded || (value->stride[d] == 0 && shape[d] > 1);
        const std::size_t count = checked_numel(shape, std::size_t{1} << 60, path + ": " + name);
        // The last element the view reads must lie inside the storage.
        std::uint64_t last = static_cast<std::uint64_t>(value->i);
        if (count > 0)
            for (std::size_t d = 0; d < shape.size(); ++d) {
                const auto step = static_cast<std::uint64_t>(value->stride[d]);
                const auto reach = static_cast<std::uint64_t>(shape[d] - 1);
                if (step > capacity || (step > 0 && reach > capacity / step))
                    fail("view runs past its storage");
                last += reach * step;  // each term at most capacity, at most 64 of them
            }
        if (count > 0 && last >= capacity) fail("view runs past its storage");
        if (expanded || count > capacity) {
            expanded_elements += count;  // at most 2^60 + 2^28: no overflow
            if (expanded_elements > kExpandedElementsMax)
                fail(std::string(expanded ? "expanded (stride-0) views"
                                          : "overlapping strided views (more elements than their "
                                            "storage holds)") +
                     " of the file would take more than " +
                     std::to_string(kExpandedElementsMax / (1u << 18)) + " MiB once materialised");
        }
        Planned p;
        p.view = value.get();
        p.name = name;
        p.key = declared.s2;
        p.count = count;
        p.width = width;
        for (std::size_t d = shape.size(), expect = 1; d-- > 0;) {  // C-order strides
            if (shape[d] != 1 && static_cast<std::size_t>(value->stride[d]) != expect)
                p.contiguous = false;
            expect *= static_cast<std::size_t>(shape[d]);
        }
        if (count > 0) {
            Window& w = windows[p.key];
            const std::uint64_t begin = static_cast<std::uint64_t>(value->i);
            w.begin = w.used ? std::min(w.begin, begin) : begin;
            w.end = w.used ? std::max(w.end, last + 1) : last + 1;
            w.last_use = plan.size();
            w.used = true;
        }
        plan.push_back(std::move(p));
    }
    // The read's memory at its peak: the tensors converted so far (float32) and the storage
    // bytes held at once, a storage being read at its first tensor and released after its last.
    // Against half the memory the process may use, not the quarter h5::read_memory_limit gives
    // one dataset of a file: an import holds the weights about twice (read, then copied into the
    // model: docs/benchmarks.md), and a quarter refused BERT-large (1.3 GB in float32) on a 4 GB
    // machine that imports it. A valid ROUTESCOPE_READ_LIMIT_MB sets the limit instead.
    {
        const char* env = std::getenv("ROUTESCOPE_READ_LIMIT_MB");
        char* end = nullptr;
        const bool set = env && std::strtoull(env, &end, 10) > 0 && end != env;
        const MemoryLimit available = memory_limit();
        const std::uint64_t limit = set || available.bytes <= 0
                                        ? h5::read_memory_limit()
                                        : static_cast<std::uint64_t>(available.bytes / 2);
        std::uint64_t held = 0, converted = 0;
        std::set<std::string> started;
        for (std::size_t i = 0; i < plan.size(); ++i) {
            const Planned& p = plan[i];
            if (p.count == 0) continue;
            const Window& w = windows.at(p.key);
            const std::uint64_t window = storages.copies() ? (w.end - w.begin) * p.width : 0;
            if (started.insert(p.key).second) held += window;
            converted += static_cast<std::uint64_t>(p.count) * sizeof(float);
            if (held + converted > limit)
                throw FormatError(
                    path + ": " + p.name + " (its " + storages.what(p.key) +
                    ", with the tensors read before it) needs " + h5::bytes_text(held + converted) +
                    " of memory to read, more than " +
                    (set || available.bytes <= 0
                         ? "the limit of " + h5::bytes_text(limit) +
                               (set ? " (ROUTESCOPE_READ_LIMIT_MB)" : "")
                         : "half of " + available.text() + " (an import holds the weights twice)") +
                    "; refusing the file");
            if (w.last_use == i) held -= window;
        }
    }
    TensorFile out;
    out.path = path;
    out.format = "pytorch";
    std::map<std::string, const unsigned char*> read;  // key → the bytes of its window
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const Planned& p = plan[i];
        const Value& view = *p.view;
        NamedTensor t;
        t.name = p.name;
        t.dtype = view.items[0]->s;
        t.shape = view.size;
        t.data.resize(p.count);
        if (p.count == 0) {
            out.tensors.push_back(std::move(t));
            continue;
        }
        const Window& w = windows.at(p.key);
        auto it = read.find(p.key);
        if (it == read.end())
            it = read.emplace(p.key, storages.bytes(p.key, w.begin * p.width, w.end * p.width))
                     .first;
        // The window starts at element w.begin of the storage.
        const unsigned char* base = it->second;
        const std::uint64_t offset = static_cast<std::uint64_t>(view.i) - w.begin;
        if (p.contiguous) {
            convert_to_float(t.dtype, base + offset * p.width, p.count, t.data.data());
        } else {
            // Gather in C order through the strides (torch.save keeps views as they are).
            std::vector<std::int64_t> index(t.shape.size(), 0);
            for (std::size_t n = 0; n < p.count; ++n) {
                std::uint64_t at = offset;
                for (std::size_t d = 0; d < index.size(); ++d)
                    at += static_cast<std::uint64_t>(index[d] * view.stride[d]);
                convert_to_float(t.dtype, base + at * p.width, 1, &t.data[n]);
                for (std::size_t d = index.size(); d-- > 0;) {
                    if (++index[d] < t.shape[d]) break;
                    index[d] = 0;
                }
            }
        }
        if (w.last_use == i) {
            read.erase(it);
            storages.release(p.key);
        }
        out.tensors.push_back(std::move(t));
    }
    return out;
}

// torch.save's format before 1.6 (torch/serialization.py _legacy_save; still written with
// _use_new_zipfile_serialization=False, and what most BERT checkpoints of 2018–2020 are): five
// pickles in a row — the magic number 0x1950a86a20f9469cfc6c, the protocol version 1001, sys_info
// {protocol_version, little_endian, type_sizes}, the state_dict (persistent ids ('storage', type,
// key, location, numel, view_metadata)), the sorted list of storage keys — then, for each key
// in that order, its element count (8 bytes, little-endian) and its bytes.
// The magic number's pickle: PROTO <protocol> (torch.save's pickle_protocol, 2 by default; any of
// 2-5 loads in torch), a FRAME of 13 bytes from protocol 4 on, then LONG1 of 10 bytes and STOP.
constexpr unsigned char kLegacyMagic[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
                                          0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
constexpr unsigned char kMagicFrame[] = {0x95, 0x0d, 0, 0, 0, 0, 0, 0, 0};

// The length of the magic number's pickle at `data` (0 when it is not there).
std::size_t legacy_magic_length(const unsigned char* data, std::size_t size) {
    if (size < 2 || data[0] != 0x80 || data[1] < 2 || data[1] > 5) return 0;
    std::size_t at = 2;
    if (data[1] >= 4) {
        if (size < at + sizeof kMagicFrame ||
            std::memcmp(data + at, kMagicFrame, sizeof kMagicFrame) != 0)
            return 0;
        at += sizeof kMagicFrame;
    }
    if (size < at + sizeof kLegacyMagic ||
        std::memcmp(data + at, kLegacyMagic, sizeof kLegacyMagic) != 0)
        return 0;
    return at + sizeof kLegacyMagic;
}

TensorFile read_pytorch_legacy(const std::string& path, const MappedFile& file) {
    const std::size_t magic = legacy_magic_length(file.data(), file.size());
    const unsigned char* p = file.data() + magic;
    std::size_t left = file.size() - magic;
    std::size_t offset = magic;
    const auto next_pickle = [&](const char* what) {
        Unpickler u(
            path + ": " + what + " (legacy torch.save, byte " + std::to_string(offset) + ")", p,
            left);
        Ref v = u.run();
        p += u.consumed();
        left -= u.consumed();
        offset += u.consumed();
        return v;
    };
    const Ref version = next_pickle("protocol version");
    if (version->kind != Value::Int || version->i != 1001)
        throw FormatError(path + ": legacy torch.save protocol version is not 1001");
    const Ref info = next_pickle("sys_info");
    if (info->kind != Value::Dict)
        throw FormatError(path + ": legacy torch.save sys_info is not a dict");
    for (const auto& [k, v] : info->entries)
        if (k->kind == Value::Str && k->s == "little_endian" &&
            !(v->kind == Value::Bool && v->i == 1))
            throw FormatError(path +
                              ": saved on a big-endian machine (sys_info little_endian is "
                              "not True); the readers are little-endian");
    const Ref root = next_pickle("state_dict");
    if (root->kind != Value::Dict)
        throw FormatError(path + ": the legacy torch.save pickle holds no state_dict (not a dict)");
    const Ref keys = next_pickle("storage keys");
    if (keys->kind != Value::List)
        throw FormatError(path + ": the legacy torch.save storage keys are not a list");
    // The storages follow in the keys' order; each one's size is in the pickle (numel × width of
    // its type), checked against the count written before its bytes. Declarations of one storage
    // must agree (declared_storages: torch.load takes the first).
    const auto declared = declared_storages(path, root, "storage ");
    std::map<std::string, Span> storages;
    for (const auto& key : keys->items) {
        if (key->kind != Value::Str)
            throw FormatError(path + ": a legacy torch.save storage key is not a string");
        const auto it = declared.find(key->s);
        if (it == declared.end())
            throw FormatError(path + ": storage " + key->s +
                              " is listed but no tensor of the state_dict uses it");
        if (left < 8)
            throw FormatError(path + ": truncated: storage " + key->s + " (byte " +
                              std::to_string(offset) + ") is missing");
        std::uint64_t count = 0;
        std::memcpy(&count, p, 8);
        p += 8;
        left -= 8;
        offset += 8;
        const std::size_t width = width_of(it->second.dtype);
        if (count != static_cast<std::uint64_t>(it->second.numel))
            throw FormatError(path + ": storage " + key->s + " holds " + std::to_string(count) +
                              " elements, the pickle declares " + std::to_string(it->second.numel));
        if (count > left / width)
            throw FormatError(path + ": truncated: storage " + key->s + " needs " +
                              std::to_string(count * width) + " bytes at byte " +
                              std::to_string(offset) + ", the file has " + std::to_string(left));
        storages[key->s] = Span{p, count * width};
        p += count * width;
        left -= count * width;
        offset += count * width;
    }
    // The storages lie in the mapping: read in place, nothing copied.
    class Mapped : public Storages {
    public:
        explicit Mapped(const std::map<std::string, Span>& spans) : spans_(spans) {}
        std::string what(const std::string& key) const override { return "storage " + key; }
        std::optional<std::uint64_t> size(const std::string& key) override {
            const auto it = spans_.find(key);
            if (it == spans_.end()) return std::nullopt;
            return it->second.size;
        }
        std::string missing(const std::string& key) const override {
            return "its storage " + key + " is not in the file";
        }
        const unsigned char* bytes(const std::string& key, std::uint64_t begin,
                                   std::uint64_t) override {
            return spans_.at(key).data + begin;
        }
        void release(const std::string&) override {}
        bool copies() const override { return false; }

    private:
        const std::map<std::string, Span>& spans_;
    } mapped(storages);
    return state_dict_tensors(path, root, mapped, "storage ");
}

}  // namespace

bool is_legacy_torch_save(const unsigned char* data, std::size_t size) {
    return legacy_magic_length(data, size) > 0;
}

TensorFile read_pytorch_zip(const std::string& path) {
    {
        const MappedFile file(path);
        if (is_legacy_torch_save(file.data(), file.size())) return read_pytorch_legacy(path, file);
        refuse_plain_pickle(path, file.data(), file.size());
    }
    Zip zip(path);
    std::string prefix;
    for (const auto& name : zip.names()) {
        const auto slash = name.find('/');
        if (slash != std::string::npos && name.substr(slash) == "/data.pkl") {
            if (!prefix.empty())
                throw FormatError(path + ": more than one data.pkl in the archive");
            prefix = name.substr(0, slash + 1);
        }
    }
    if (prefix.empty())
        throw FormatError(path + ": no <name>/data.pkl in the archive (not a torch.save file)");
    // torch.save records the byte order since PyTorch 2.1 ("little" or "big"; an archive without
    // the record is little-endian). The storages' bytes are read as they are, little-endian.
    if (zip.has(prefix + "byteorder")) {
        const auto order = zip.read(prefix + "byteorder");
        const std::string text(order.begin(), order.end());
        if (text != "little")
            throw FormatError(path + ": " + prefix + "byteorder is '" + text.substr(0, 16) +
                              "': saved on a big-endian machine; the readers are little-endian "
                              "(load and save it again with torch on a little-endian machine)");
    }
    const auto pickle = zip.read(prefix + "data.pkl");
    const Ref root = Unpickler(path + ": " + prefix + "data.pkl", pickle).run();
    if (root->kind != Value::Dict)
        throw FormatError(path + ": " + prefix + "data.pkl holds no state_dict (not a dict)");
    // Each storage's bytes that tensors use, read at its first tensor, released after its last.
    class Entries : public Storages {
    public:
        Entries(const Zip& zip, const std::string& prefix) : zip_(zip), prefix_(prefix) {}
        std::string what(const std::string& key) const override {
            return "storage " + prefix_ + "data/" + key;
        }
        std::optional<std::uint64_t> size(const std::string& key) override {
            if (!zip_.has(prefix_ + "data/" + key)) return std::nullopt;
            return zip_.size(prefix_ + "data/" + key);
        }
        std::string missing(const std::string& key) const override {
            return "its storage " + prefix_ + "data/" + key + " is missing from the archive";
        }
        const unsigned char* bytes(const std::string& key, std::uint64_t begin,
                                   std::uint64_t end) override {
            auto& held = held_[key];
            held = zip_.read(prefix_ + "data/" + key, begin, end);
            return held.data();
        }
        void release(const std::string& key) override { held_.erase(key); }
        bool copies() const override { return true; }

    private:
        const Zip& zip_;
        const std::string& prefix_;
        std::map<std::string, std::vector<unsigned char>> held_;
    } entries(zip, prefix);
    return state_dict_tensors(path, root, entries, "storage " + prefix + "data/");
}

}  // namespace routescope::importers
