#include "engine/io/h5_file.hpp"

#include <H5Epublic.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>

#include "engine/core/error.hpp"
#include "engine/core/memory.hpp"
#include "engine/io/contained_validation.hpp"

namespace routescope::h5 {

namespace {

herr_t collect_error(unsigned n, const H5E_error2_t* err, void* data) {
    auto* out = static_cast<std::vector<std::string>*>(data);
    (void)n;
    if (err->desc && *err->desc) out->emplace_back(err->desc);
    return 0;
}

// The messages of the last failed HDF5 call on this thread, innermost first. HDF5 clears its
// error stack at the start of every API call, so a handle closed while an exception unwinds (an
// H5::DataType destroyed before the catch) would leave nothing to report; HDF5 calls this when
// an API call fails, before anything else can run.
thread_local std::vector<std::string> last_failure;

herr_t capture_failure(hid_t stack, void*) {
    std::vector<std::string> messages;
    H5Ewalk2(stack, H5E_WALK_UPWARD, collect_error, &messages);
    if (!messages.empty()) last_failure = std::move(messages);
    return 0;
}

// The external link a path resolution last refused on this thread: its path ("/store") and
// where it leads ("other.h5:/grp"). Set by refuse_external_traversal, read by exists() and
// describe_path() to name what was refused.
struct RefusedLink {
    bool met = false;
    std::string link;
    std::string target;
};
thread_local RefusedLink refused_link;

// The traversal of every external link in this process (deny_external_links): refused, never
// opening the file it names. Routescope's files hold everything they need ("nothing outside it",
// docs/formats), and a check of each path's own links missed one reached through a soft link
// (/params/w -> /store/w, /store an external link): validate called the file valid and the
// loaders read the other file's values; a named pipe there blocked the reader for good.
hid_t refuse_external_traversal(const char* name, hid_t group, const void* value, size_t size,
                                hid_t, hid_t) {
    // Both look-ups are HDF5 calls, which clear the error stack: before the push below.
    std::string at;
    if (const ssize_t n = H5Iget_name(group, nullptr, 0); n > 0) {
        at.assign(static_cast<std::size_t>(n) + 1, '\0');
        H5Iget_name(group, at.data(), at.size());
        at.resize(static_cast<std::size_t>(n));
    }
    const std::string link = (at.empty() || at == "/" ? "/" : at + "/") + (name ? name : "?");
    const char* file = nullptr;
    const char* object = nullptr;
    unsigned flags = 0;
    std::string target = "another file";
    if (value && size > 0 && H5Lunpack_elink_val(value, size, &flags, &file, &object) >= 0 &&
        file && object)
        target = std::string(file) + ":" + object;
    refused_link = {true, link, target};
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_LINK, H5E_CANTOPENOBJ,
             "%s is an external link to %s, which Routescope never follows", link.c_str(),
             target.c_str());
    return -1;
}

// What HDF5's own external link class answers for H5Lget_val: the packed value, as stored.
ssize_t external_link_value(const char*, const void* value, size_t size, void* buf,
                            size_t buf_size) {
    if (buf && value) std::memcpy(buf, value, std::min(size, buf_size));
    return static_cast<ssize_t>(size);
}

// Replaces HDF5's external link class, once per process: no path resolution anywhere in the
// process (a soft link's target, an open by name, the C++ API's lookups) can leave the file.
// HDF5 lets a registered class be replaced (H5Lregister, ids from H5L_TYPE_UD_MIN, which is
// H5L_TYPE_EXTERNAL); links are still listed, described and unpacked as before.
void deny_external_links() {
    static std::once_flag once;
    std::call_once(once, [] {
        static const H5L_class_t refused = {H5L_LINK_CLASS_T_VERS,
                                            H5L_TYPE_EXTERNAL,
                                            "external (refused by Routescope)",
                                            nullptr,
                                            nullptr,
                                            nullptr,
                                            refuse_external_traversal,
                                            nullptr,
                                            external_link_value};
        if (H5Lregister(&refused) < 0) H5Eclear2(H5E_DEFAULT);
    });
}

}  // namespace

void quiet_errors() {
    // In a thread-safe HDF5 build the automatic error handler is per thread, so every thread that
    // touches HDF5 (GUI workers, analysis threads, a dump's writer) installs its own: nothing is
    // printed, and the failure is kept for error_stack_text.
    thread_local bool quiet = false;
    if (quiet) return;
    H5::Exception::dontPrint();
    H5Eset_auto2(H5E_DEFAULT, capture_failure, nullptr);
    quiet = true;
    // Every reader and writer calls this before its first HDF5 call (open_read included).
    deny_external_links();
}

std::string error_stack_text() {
    std::vector<std::string> messages;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &messages);
    H5Eclear2(H5E_DEFAULT);
    if (messages.empty()) messages = last_failure;
    last_failure.clear();
    // A compression filter the library lacks (h5py's lzf, a blosc or bitshuffle plugin): say so,
    // not the plugin search's own complaint, which is innermost.
    // The filter's name is quoted when the file stores it ("required filter 'lzf' is not
    // registered") and "(name unavailable)" when not; a missing plugin directory adds its own
    // messages below this one.
    for (const auto& m : messages) {
        const auto at = m.find("required filter ");
        if (at == std::string::npos || m.find("not registered") == std::string::npos) continue;
        std::string filter = "a filter whose name the file does not store";
        if (m.compare(at + 16, 1, "'") == 0) {
            const auto end = m.find('\'', at + 17);
            filter = "the '" + m.substr(at + 17, end == std::string::npos ? 0 : end - at - 17) +
                     "' filter";
        }
        return "the data is compressed with " + filter +
               ", which this HDF5 library does not have (h5py's lzf and the blosc, "
               "bitshuffle or zstd plugins are not built in; gzip is): rewrite the file with "
               "gzip or without compression, e.g. `h5repack -f NONE in.h5 out.h5`, or install "
               "the filter's HDF5 plugin";
    }
    // The innermost (first when walking upward) messages say what actually went wrong.
    std::string text;
    for (std::size_t i = 0; i < messages.size() && i < 2; ++i) {
        if (!text.empty()) text += "; ";
        text += messages[i];
    }
    // One line: HDF5's write errors carry ctime()'s newline ("time = Fri Nov 27 ...\n, filename").
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text.empty() ? "unknown HDF5 error" : text;
}

std::optional<std::string> unreadable_reason(const std::string& path) {
    quiet_errors();
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
        // A symbolic link that leads back to itself, a directory that may not be searched: the
        // OS's own reason, not "no such file".
        if (ec == std::errc::too_many_symbolic_link_levels)
            return "a symbolic link that leads back to itself (" + ec.message() + ")";
        return "cannot reach the file (" + ec.message() + ")";
    }
    if (!fs::exists(st)) {
        if (fs::is_symlink(fs::symlink_status(path, ec)))
            return "a symbolic link to a file that does not exist";
        return "no such file";
    }
    if (fs::is_directory(st)) return "a directory, not a file";
    if (!fs::is_regular_file(st))
        return std::string("not a regular file (") +
               (fs::is_fifo(st)                                      ? "a FIFO"
                : fs::is_socket(st)                                  ? "a socket"
                : fs::is_character_file(st) || fs::is_block_file(st) ? "a device"
                                                                     : "a special file") +
               ")";
    const auto size = fs::file_size(path, ec);
    if (ec) return "cannot stat the file (" + ec.message() + ")";
    if (size == 0) return "an empty file (0 bytes)";
    {
        std::ifstream probe(path, std::ios::binary);
        if (!probe) return "a file that cannot be opened for reading";
    }
    const htri_t is = H5Fis_hdf5(path.c_str());
    if (is == 0) {
        H5Eclear2(H5E_DEFAULT);
        return "not an HDF5 file (no HDF5 signature)";
    }
    if (is < 0) return "an unreadable file (" + error_stack_text() + ")";
    const hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid < 0) {
        std::string why = error_stack_text();
        if (why.find("truncated") != std::string::npos)
            return "a truncated HDF5 file (" + why + ")";
        // HDF5's file locking: another process has the file open for writing (h5py's "r+" or
        // "a", an SWMR writer, a run still dumping). The file is not damaged.
        if (why.find("unable to lock file") != std::string::npos ||
            why.find("already open for write") != std::string::npos)
            return "in use: another process has it open for writing (HDF5 file locking). Wait "
                   "for the writer to finish or close it; to read it while it is written, at "
                   "your own risk, set HDF5_USE_FILE_LOCKING=FALSE (" +
                   why + ")";
        return "a damaged HDF5 file (" + why + ")";
    }
    H5Fclose(fid);
    return std::nullopt;
}

H5::H5File open_read(const std::string& path) {
    if (auto why = unreadable_reason(path)) throw IoError(path + ": cannot open: " + *why);
    try {
        return H5::H5File(path, H5F_ACC_RDONLY);
    } catch (const H5::Exception& e) {
        throw IoError(path + ": cannot open: " + e.getDetailMsg());
    }
}

namespace {
// A float type by its layout, not its size alone: a 2-byte float may be IEEE binary16 or bfloat16
// (docs/formats/dump.md accepts both), and calling bfloat16 "float16" misstated what the file
// holds. IEEE binary16/32/64 and bfloat16 are named as numpy and PyTorch do, in either byte order
// (numpy's name for '>f2' is float16 too); any other layout is said as its bits.
std::string float_type_name(hid_t id) {
    const std::size_t bytes = H5Tget_size(id);
    const std::size_t bits = 8 * bytes;
    std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    const bool fields = H5Tget_fields(id, &spos, &epos, &esize, &mpos, &msize) >= 0;
    const std::size_t bias = H5Tget_ebias(id);
    const bool whole = H5Tget_precision(id) == bits && H5Tget_offset(id) == 0 &&
                       H5Tget_norm(id) == H5T_NORM_IMPLIED;
    H5Eclear2(H5E_DEFAULT);
    // Sign on top, exponent below it, mantissa at the bottom, every bit used.
    const auto layout = [&](std::size_t e, std::size_t m, std::size_t b) {
        return fields && whole && spos == bits - 1 && epos == m && esize == e && mpos == 0 &&
               msize == m && bias == b && 1 + e + m == bits;
    };
    if (bytes == 2 && layout(5, 10, 15)) return "float16";
    if (bytes == 2 && layout(8, 7, 127)) return "bfloat16";
    if (bytes == 4 && layout(8, 23, 127)) return "float32";
    if (bytes == 8 && layout(11, 52, 1023)) return "float64";
    if (!fields) return "float(" + std::to_string(bits) + " bits, nonstandard)";
    return "float(" + std::to_string(bits) + " bits, nonstandard: " + std::to_string(esize) +
           " exponent bits with bias " + std::to_string(bias) + ", " + std::to_string(msize) +
           " mantissa bits)";
}
}  // namespace

std::string type_name(const H5::DataType& type) {
    switch (type.getClass()) {
        case H5T_INTEGER: {
            H5::IntType it(type.getId());
            const bool is_signed = it.getSign() != H5T_SGN_NONE;
            return std::string(is_signed ? "int" : "uint") + std::to_string(8 * type.getSize());
        }
        case H5T_FLOAT:
            return float_type_name(type.getId());
        case H5T_STRING: {
            const bool vlen = type.isVariableStr();
            return vlen ? "vlen string"
                        : "fixed-length string (" + std::to_string(type.getSize()) + " bytes)";
        }
        case H5T_COMPOUND:
            return "compound";
        case H5T_ENUM:
            return "enum";
        case H5T_VLEN:
            return "vlen sequence";
        case H5T_ARRAY:
            return "array";
        case H5T_OPAQUE:
            return "opaque";
        case H5T_REFERENCE:
            return "reference";
        case H5T_BITFIELD:
            return "bitfield";
        default:
            return "unknown type";
    }
}

std::vector<hsize_t> shape_of(const H5::DataSet& ds) {
    H5::DataSpace space = ds.getSpace();
    const int rank = space.getSimpleExtentNdims();
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank > 0 ? rank : 0));
    if (rank > 0) space.getSimpleExtentDims(dims.data());
    return dims;
}

bool is_binary16_le(const H5::DataType& type) {
    const hid_t id = type.getId();
    if (H5Tget_class(id) != H5T_FLOAT || H5Tget_size(id) != 2 || H5Tget_order(id) != H5T_ORDER_LE)
        return false;
    std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
    if (H5Tget_fields(id, &spos, &epos, &esize, &mpos, &msize) < 0) return false;
    return spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10 &&
           H5Tget_ebias(id) == 15 && H5Tget_norm(id) == H5T_NORM_IMPLIED;
}

std::string shape_text(const std::vector<hsize_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

bool is_float(const H5::DataType& type) {
    return type.getClass() == H5T_FLOAT;
}

bool is_int(const H5::DataType& type, std::size_t bytes) {
    if (type.getClass() != H5T_INTEGER || type.getSize() != bytes) return false;
    return H5::IntType(type.getId()).getSign() != H5T_SGN_NONE;
}

bool is_string(const H5::DataType& type) {
    return type.getClass() == H5T_STRING;
}

namespace {
std::string object_name(const H5::H5Object& obj) {
    char name[512];
    const ssize_t n = H5Iget_name(obj.getId(), name, sizeof name);
    if (n <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return "?";
    }
    return name;
}
}  // namespace

bool has_attr(const H5::H5Object& obj, const std::string& name) {
    return obj.attrExists(name);
}

namespace {
// A fixed-length string's value by its padding type. NULLPAD (h5py's np.bytes_): trailing NULs are
// padding, and a NUL inside is part of the value ("routescope-dump\0junk" is not the format's
// name), as h5py reads it. NULLTERM (H5Cpp's StrType(C_S1, n), C's char[n]): the value ends at its
// first NUL, as HDF5's own conversion reads it; what follows is whatever the writer's buffer held.
// SPACEPAD (Fortran's convention): trailing spaces are padding.
void strip_padding(std::string& value, const H5::DataType& type) {
    const H5T_str_t pad =
        H5Tis_variable_str(type.getId()) > 0 ? H5T_STR_NULLPAD : H5Tget_strpad(type.getId());
    if (pad == H5T_STR_NULLTERM) {
        if (const auto end = value.find('\0'); end != std::string::npos) value.resize(end);
    } else {
        const char c = pad == H5T_STR_SPACEPAD ? ' ' : '\0';
        while (!value.empty() && value.back() == c)
            value.pop_back();
    }
    H5Eclear2(H5E_DEFAULT);
}
}  // namespace

std::optional<std::string> read_string_attr(const H5::H5Object& obj, const std::string& name) {
    if (!obj.attrExists(name)) return std::nullopt;
    breadcrumb(object_name(obj) + " attr " + name);
    try {
        H5::Attribute attr = obj.openAttribute(name);
        H5::DataType type = attr.getDataType();
        if (type.getClass() != H5T_STRING) return std::nullopt;
        if (attr.getSpace().getSimpleExtentNpoints() != 1) return std::nullopt;
        // Through the C API: the C++ read into a std::string stops at the first NUL, so a value
        // with a NUL inside ("bigs\0junk") read as its first part and passed every check.
        const bool vlen = H5Tis_variable_str(type.getId()) > 0;
        const H5::DataSpace space = attr.getSpace();  // before the copy below, which must be closed
        const hid_t memtype = H5Tcopy(vlen ? H5T_C_S1 : type.getId());
        if (memtype < 0) return std::nullopt;
        std::optional<std::string> value;
        if (vlen) {
            // A variable-length string is a C string: it cannot hold a NUL inside.
            H5Tset_size(memtype, H5T_VARIABLE);
            H5Tset_cset(memtype, H5Tget_cset(type.getId()));
            char* raw = nullptr;
            if (H5Aread(attr.getId(), memtype, &raw) >= 0) {
                value = raw ? std::string(raw) : std::string();
                H5Dvlen_reclaim(memtype, space.getId(), H5P_DEFAULT, &raw);
            }
        } else if (const std::size_t width = H5Tget_size(memtype); width > 0) {
            // Fixed-length strings carry their padding: NULs, or spaces where the type says so
            // (H5T_STR_SPACEPAD, Fortran's convention), which h5py drops too.
            std::string raw(width, '\0');
            if (H5Aread(attr.getId(), memtype, raw.data()) >= 0) {
                strip_padding(raw, type);
                value = std::move(raw);
            }
        }
        H5Tclose(memtype);
        if (!value) {
            H5Eclear2(H5E_DEFAULT);
            last_failure.clear();
        }
        return value;
    } catch (const H5::Exception&) {
        return std::nullopt;
    }
}

namespace {
// One integer attribute as stored: its magnitude as uint64 when the type is unsigned (HDF5's
// conversion to int64 clips 2^64 − 1 to 2^63 − 1 silently), else as int64. nullopt when it is
// not one integer.
struct StoredInt {
    bool is_unsigned = false;
    std::uint64_t u = 0;
    std::int64_t s = 0;
};

std::optional<StoredInt> read_stored_int(const H5::H5Object& obj, const std::string& name) {
    try {
        H5::Attribute attr = obj.openAttribute(name);
        if (attr.getDataType().getClass() != H5T_INTEGER) return std::nullopt;
        if (attr.getSpace().getSimpleExtentNpoints() != 1) return std::nullopt;
        StoredInt v;
        v.is_unsigned = H5::IntType(attr.getDataType().getId()).getSign() == H5T_SGN_NONE;
        if (v.is_unsigned)
            attr.read(H5::PredType::NATIVE_UINT64, &v.u);
        else
            attr.read(H5::PredType::NATIVE_INT64, &v.s);
        return v;
    } catch (const H5::Exception&) {
        H5Eclear2(H5E_DEFAULT);
        return std::nullopt;
    }
}
}  // namespace

std::optional<std::int64_t> read_int_attr(const H5::H5Object& obj, const std::string& name) {
    if (!obj.attrExists(name)) return std::nullopt;
    breadcrumb(object_name(obj) + " attr " + name);
    const auto v = read_stored_int(obj, name);
    if (!v) return std::nullopt;
    if (!v->is_unsigned) return v->s;
    // Bounded here, so that every range check refuses it (int_attr_text says the stored value).
    constexpr auto top = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(v->u > top ? top : v->u);
}

std::string int_attr_text(const H5::H5Object& obj, const std::string& name) {
    try {
        if (!obj.attrExists(name)) return {};
    } catch (const H5::Exception&) {
        H5Eclear2(H5E_DEFAULT);
        return {};
    }
    const auto v = read_stored_int(obj, name);
    if (!v) return {};
    return v->is_unsigned ? std::to_string(v->u) : std::to_string(v->s);
}

std::optional<double> read_float_attr(const H5::H5Object& obj, const std::string& name) {
    if (!obj.attrExists(name)) return std::nullopt;
    breadcrumb(object_name(obj) + " attr " + name);
    try {
        H5::Attribute attr = obj.openAttribute(name);
        const auto cls = attr.getDataType().getClass();
        if (cls != H5T_FLOAT && cls != H5T_INTEGER) return std::nullopt;
        if (attr.getSpace().getSimpleExtentNpoints() != 1) return std::nullopt;
        double v = 0;
        attr.read(H5::PredType::NATIVE_DOUBLE, &v);
        return v;
    } catch (const H5::Exception&) {
        return std::nullopt;
    }
}

std::string attr_type_name(const H5::H5Object& obj, const std::string& name) {
    try {
        H5::Attribute attr = obj.openAttribute(name);
        std::string t = type_name(attr.getDataType());
        const auto n = attr.getSpace().getSimpleExtentNpoints();
        if (n != 1) t += " array of " + std::to_string(n);
        return t;
    } catch (const H5::Exception&) {
        return "an unreadable attribute";
    }
}

std::vector<std::string> children(const H5::Group& group) {
    std::vector<std::string> names;
    const hsize_t n = group.getNumObjs();
    names.reserve(n);
    for (hsize_t i = 0; i < n; ++i)
        names.push_back(group.getObjnameByIdx(i));
    return names;
}

namespace {
// `path` below `group`, from the file's root ("/layers/1", not "/1").
std::string path_in(const H5::Group& group, const std::string& path) {
    std::string base;
    try {
        base = group.getObjName();
    } catch (const H5::Exception&) {
        H5Eclear2(H5E_DEFAULT);
    }
    if (base.empty() || base == "/") return "/" + path;
    return base + "/" + path;
}

// The value of the link `name` below `loc` (a soft link's target path, an external link's packed
// file and object names), "" when HDF5 cannot say.
std::string link_value(hid_t loc, const std::string& name, std::size_t size) {
    std::string value(size + 1, '\0');
    if (H5Lget_val(loc, name.c_str(), value.data(), value.size(), H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
        return {};
    }
    value.resize(size);
    return value;
}
}  // namespace

bool exists(const H5::Group& group, const std::string& path) {
    // Check each component so that "a/b" on a missing "a" is false rather than an error.
    std::string partial;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto slash = path.find('/', start);
        partial = path.substr(0, slash == std::string::npos ? path.size() : slash);
        if (!partial.empty() && H5Lexists(group.getId(), partial.c_str(), H5P_DEFAULT) <= 0) {
            H5Eclear2(H5E_DEFAULT);
            last_failure.clear();  // an expected failure: not a reason to report later
            return false;
        }
        // An external link is never followed: Routescope's files do not use them, and following
        // one opens whatever file it names (a named pipe blocked the reader for good).
        H5L_info_t link;
        const bool known = !partial.empty() &&
                           H5Lget_info(group.getId(), partial.c_str(), &link, H5P_DEFAULT) >= 0;
        if (known && link.type == H5L_TYPE_EXTERNAL)
            throw FormatError(group.getFileName() + ": " + path_in(group, partial) +
                              " is an external link to another file; Routescope's files do not "
                              "use external links (a sharded dump's master uses virtual "
                              "datasets), and it is not followed");
        // Nor one a soft link leads through (/params/w -> /store/w, /store an external link):
        // the soft link is resolved here, with every external link refused (deny_external_links),
        // so the file named is never opened and the message names both links. A soft link to
        // nothing is left to the callers ("a dangling link to ...").
        if (known && link.type == H5L_TYPE_SOFT) {
            deny_external_links();
            refused_link = {};
            const htri_t there = H5Oexists_by_name(group.getId(), partial.c_str(), H5P_DEFAULT);
            const RefusedLink refused = refused_link;
            H5Eclear2(H5E_DEFAULT);
            last_failure.clear();
            if (there < 0 && refused.met) {
                const std::string target =
                    std::string(link_value(group.getId(), partial, link.u.val_size).c_str());
                throw FormatError(group.getFileName() + ": " + path_in(group, partial) +
                                  " is a soft link to " + (target.empty() ? "?" : target) +
                                  ", which leads through " + refused.link +
                                  ", an external link to " + refused.target +
                                  "; Routescope's files do not use external links (a sharded "
                                  "dump's master uses virtual datasets), and it is not followed");
            }
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return true;
}

namespace {
std::optional<H5O_type_t> object_type(const H5::Group& group, const std::string& path) {
    if (!exists(group, path)) return std::nullopt;
    H5O_info_t info;
    if (H5Oget_info_by_name(group.getId(), path.c_str(), &info, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
        return std::nullopt;
    }
    return info.type;
}
}  // namespace

bool is_group(const H5::Group& group, const std::string& path) {
    return object_type(group, path) == H5O_TYPE_GROUP;
}

bool is_dataset(const H5::Group& group, const std::string& path) {
    return object_type(group, path) == H5O_TYPE_DATASET;
}

namespace {
// An object's kind as a message says it.
std::string kind_text(H5O_type_t type) {
    switch (type) {
        case H5O_TYPE_GROUP:
            return "a group";
        case H5O_TYPE_DATASET:
            return "a dataset";
        case H5O_TYPE_NAMED_DATATYPE:
            return "a named datatype";
        default:
            return "an object of unknown kind";
    }
}

// "other.h5:/x", where an external link leads.
std::string external_target(hid_t loc, const std::string& name, std::size_t size) {
    const std::string value = link_value(loc, name, size);
    const char* file = nullptr;
    const char* object = nullptr;
    unsigned flags = 0;
    if (value.empty() ||
        H5Lunpack_elink_val(value.data(), value.size(), &flags, &file, &object) < 0) {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
        return "another file";
    }
    return std::string(file ? file : "?") + ":" + (object ? object : "?");
}

}  // namespace

std::string describe_path(const H5::Group& group, const std::string& path) {
    const hid_t loc = group.getId();
    const auto nothing = [] {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();  // an expected failure: not a reason to report later
        return std::string("nothing");
    };
    // The links on the way, each without following an external one (as exists()); a component
    // that is not there (behind a dangling link too) means nothing is at `path`.
    H5L_info_t link{};
    std::size_t start = 0;
    while (true) {
        const auto slash = path.find('/', start);
        const std::string partial =
            path.substr(0, slash == std::string::npos ? path.size() : slash);
        if (!partial.empty()) {
            if (H5Lexists(loc, partial.c_str(), H5P_DEFAULT) <= 0 ||
                H5Lget_info(loc, partial.c_str(), &link, H5P_DEFAULT) < 0)
                return nothing();
            if (link.type == H5L_TYPE_EXTERNAL) {
                const std::string to = external_target(loc, partial, link.u.val_size);
                if (slash == std::string::npos)
                    return "an external link to " + to + " (not followed)";
                return "a path through " + path_in(group, partial) + ", an external link to " + to +
                       " (not followed)";
            }
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    if (path.empty()) return nothing();
    if (link.type != H5L_TYPE_HARD && link.type != H5L_TYPE_SOFT)
        return "a user-defined link (not followed)";
    // Resolve it (a soft link through its chain), with external links refused (the process
    // never follows one: deny_external_links).
    deny_external_links();
    refused_link = {};
    H5O_info_t info{};
    const herr_t got = H5Oget_info_by_name(loc, path.c_str(), &info, H5P_DEFAULT);
    const bool met_external = refused_link.met;
    const std::string why = got < 0 ? error_stack_text() : std::string();
    H5Eclear2(H5E_DEFAULT);
    last_failure.clear();
    if (link.type == H5L_TYPE_HARD)
        return got >= 0 ? kind_text(info.type) : "an object HDF5 cannot read (" + why + ")";
    // A soft link's value is its target path and the NUL that ends it.
    const std::string target = link_value(loc, path, link.u.val_size).c_str();
    const std::string named =
        target.empty() ? std::string("a soft link") : "a soft link to " + target;
    if (got >= 0) return named + " (" + kind_text(info.type) + ")";
    if (met_external) return named + ", which leads through an external link (not followed)";
    if (why.find("too many links") != std::string::npos)
        return named + ", which never resolves (a loop of soft links)";
    return target.empty() ? std::string("a dangling soft link") : "a dangling link to " + target;
}

std::optional<std::string> object_identity(hid_t id) {
    std::string key;
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    if (H5Oget_info3(id, &info, H5O_INFO_BASIC) < 0) {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
        return std::nullopt;
    }
    key = std::to_string(info.fileno) + ":";
    key.append(reinterpret_cast<const char*>(&info.token), sizeof info.token);
#else
    H5O_info_t info;
    if (H5Oget_info2(id, &info, H5O_INFO_BASIC) < 0) {
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
        return std::nullopt;
    }
    key = std::to_string(info.fileno) + ":" + std::to_string(info.addr);
#endif
    return key;
}

namespace {
herr_t count_dataset_link(hid_t group, const char* name, const H5L_info_t* link, void* data) {
    auto* count = static_cast<std::uint64_t*>(data);
    if (link->type == H5L_TYPE_SOFT) {
        ++*count;  // may name a dataset; not resolved here
    } else if (link->type == H5L_TYPE_HARD) {
#if H5_VERSION_GE(1, 12, 0)
        H5O_info2_t info;
        if (H5Oget_info_by_name3(group, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
            info.type == H5O_TYPE_DATASET)
#else
        H5O_info_t info;
        if (H5Oget_info_by_name2(group, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
            info.type == H5O_TYPE_DATASET)
#endif
            ++*count;
    }
    return 0;
}
}  // namespace

std::uint64_t child_dataset_links(const H5::Group& group) {
    std::uint64_t count = 0;
    hsize_t at = 0;
    if (H5Literate(group.getId(), H5_INDEX_NAME, H5_ITER_NATIVE, &at, count_dataset_link, &count) <
        0) {
        // Counted as far as HDF5 could: the links after a damaged one are not datasets a
        // reader could open either.
        H5Eclear2(H5E_DEFAULT);
        last_failure.clear();
    }
    return count;
}

std::optional<std::string> virtual_sources(const H5::DataSet& ds) {
    H5::DSetCreatPropList plist = ds.getCreatePlist();
    if (plist.getLayout() != H5D_VIRTUAL) return std::nullopt;
    size_t count = 0;
    if (H5Pget_virtual_count(plist.getId(), &count) < 0 || count == 0) {
        H5Eclear2(H5E_DEFAULT);
        return std::string("sources it does not name");
    }
    const auto text = [&](size_t i) {
        std::string file, dset;
        const ssize_t n = H5Pget_virtual_filename(plist.getId(), i, nullptr, 0);
        if (n >= 0) {
            file.assign(static_cast<std::size_t>(n) + 1, '\0');
            H5Pget_virtual_filename(plist.getId(), i, file.data(), file.size());
            file.resize(static_cast<std::size_t>(n));
        }
        const ssize_t dn = H5Pget_virtual_dsetname(plist.getId(), i, nullptr, 0);
        if (dn >= 0) {
            dset.assign(static_cast<std::size_t>(dn) + 1, '\0');
            H5Pget_virtual_dsetname(plist.getId(), i, dset.data(), dset.size());
            dset.resize(static_cast<std::size_t>(dn));
        }
        H5Eclear2(H5E_DEFAULT);
        return (file.empty() ? std::string("?") : file) + ":" +
               (dset.rfind('/', 0) == 0 ? dset : "/" + dset);
    };
    std::string out = text(0);
    if (count > 1) out += " and " + std::to_string(count - 1) + " more";
    return out;
}

std::uint64_t declared_bytes(const H5::DataSet& ds) {
    std::uint64_t bytes = ds.getDataType().getSize();
    for (hsize_t d : shape_of(ds)) {
        if (d != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / d)
            return std::numeric_limits<std::uint64_t>::max();
        bytes *= d;
    }
    return bytes;
}

std::string bytes_text(std::uint64_t bytes) {
    const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1000 && u < 6) {
        v /= 1000;
        ++u;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

namespace {
// "a checkpoint" or "a dump", by the root attr format of the file holding `ds`, for messages.
std::string file_kind_text(const H5::DataSet& ds) {
    std::string kind = "a dump";
    const hid_t file = H5Iget_file_id(ds.getId());
    if (file >= 0) {
        const hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
        if (root >= 0) {
            try {  // only naming the file in a message: an unreadable attribute leaves "a dump"
                if (read_string_attr(H5::Group(root), "format") == "routescope-checkpoint")
                    kind = "a checkpoint";
            } catch (const H5::Exception&) {
            } catch (const std::exception&) {
            }
            H5Gclose(root);
        }
        H5Fclose(file);
    }
    H5Eclear2(H5E_DEFAULT);
    last_failure.clear();
    return kind;
}
}  // namespace

std::optional<std::string> storage_problem(const H5::DataSet& ds, std::uint64_t file_size) {
    const std::uint64_t declared = declared_bytes(ds);
    if (declared == 0) return std::nullopt;
    const auto shape = shape_of(ds);
    const std::string declares = "declares " + shape_text(shape) + " " +
                                 type_name(ds.getDataType()) + " (" + bytes_text(declared) + ")";
    H5::DSetCreatPropList plist = ds.getCreatePlist();
    const H5D_layout_t layout = plist.getLayout();
    if (layout == H5D_VIRTUAL) {
        // A virtual dataset (a sharded dump's master file) stores nothing itself: its data live
        // in the source files, each checked when it is validated. Here: every source file exists
        // (HDF5 would read a missing one as fill values, silently).
        size_t count = 0;
        if (H5Pget_virtual_count(plist.getId(), &count) < 0)
            return declares + " as a virtual dataset whose mappings cannot be read";
        const std::filesystem::path dir = std::filesystem::path(ds.getFileName()).parent_path();
        for (size_t i = 0; i < count; ++i) {
            const ssize_t n = H5Pget_virtual_filename(plist.getId(), i, nullptr, 0);
            if (n < 0) return declares + " as a virtual dataset whose source names cannot be read";
            std::string name(static_cast<std::size_t>(n) + 1, '\0');
            H5Pget_virtual_filename(plist.getId(), i, name.data(), name.size());
            name.resize(static_cast<std::size_t>(n));
            const std::filesystem::path source = std::filesystem::path(name).is_absolute()
                                                     ? std::filesystem::path(name)
                                                     : dir / name;
            std::error_code ec;
            // A source in the file itself, or a source that is itself virtual, can make a cycle
            // (a 30 kB master naming itself took 13 GB and a crash of the HDF5 library): a
            // sharded dump's sources are its shard files, which hold their data.
            if (name == "." || std::filesystem::equivalent(source, ds.getFileName(), ec))
                return declares +
                       " as a virtual dataset over its own file (a sharded dump's "
                       "sources are its shard files)";
            if (!std::filesystem::exists(source, ec))
                return declares + " as a virtual dataset over " + name +
                       ", which does not exist (a missing shard would read as fill values)";
            if (!std::filesystem::is_regular_file(source, ec))
                return declares + " as a virtual dataset over " + name +
                       ", which is not a regular file";
            const ssize_t dn = H5Pget_virtual_dsetname(plist.getId(), i, nullptr, 0);
            if (dn < 0) return declares + " as a virtual dataset whose source names cannot be read";
            std::string dset(static_cast<std::size_t>(dn) + 1, '\0');
            H5Pget_virtual_dsetname(plist.getId(), i, dset.data(), dset.size());
            dset.resize(static_cast<std::size_t>(dn));
            const hid_t f = H5Fopen(source.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
            if (f < 0) {
                H5Eclear2(H5E_DEFAULT);
                return declares + " as a virtual dataset over " + name +
                       ", which is not a readable HDF5 file";
            }
            bool nested = false, found = false;
            if (H5Lexists(f, dset.c_str(), H5P_DEFAULT) > 0) {
                const hid_t d = H5Dopen2(f, dset.c_str(), H5P_DEFAULT);
                if (d >= 0) {
                    found = true;
                    const hid_t dcpl = H5Dget_create_plist(d);
                    nested = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
                    if (dcpl >= 0) H5Pclose(dcpl);
                    H5Dclose(d);
                }
            }
            H5Eclear2(H5E_DEFAULT);
            H5Fclose(f);
            if (!found)
                return declares + " as a virtual dataset over " + name + ":" + dset +
                       ", which is not a dataset of that file (its rows would read as fill "
                       "values)";
            if (nested)
                return declares + " as a virtual dataset over " + name + ":" + dset +
                       ", itself a virtual dataset (a shard must hold its data; virtual datasets "
                       "over virtual datasets can form a cycle)";
            // The source holds what it declares, by the same rules as any dataset of a dump
            // (checked against its own file's size): a shard whose chunked datasets were never
            // written read as fill values through the master, and validate called it valid.
            // Not virtual (above), so this goes one level deep.
            try {
                const H5::H5File source_file(source.string(), H5F_ACC_RDONLY);
                const H5::DataSet source_ds = source_file.openDataSet(dset);
                const std::uint64_t source_size = std::filesystem::file_size(source, ec);
                if (auto why = storage_problem(source_ds, ec ? 0 : source_size))
                    return declares + " as a virtual dataset over " + name + ":" + dset +
                           ", which " + *why;
            } catch (const H5::Exception&) {
                H5Eclear2(H5E_DEFAULT);
                last_failure.clear();
                return declares + " as a virtual dataset over " + name + ":" + dset +
                       ", which cannot be opened";
            }
        }
        // Every element mapped: the union of the mappings' selections in the virtual dataset
        // covers its extent (a source that exists but maps half the rows read the rest as fill
        // values, and every check passed).
        hid_t covered = -1;
        bool whole = false, unknown = false;
        for (size_t i = 0; i < count && !whole && !unknown; ++i) {
            const hid_t space = H5Pget_virtual_vspace(plist.getId(), i);
            if (space < 0) {
                unknown = true;
                continue;
            }
            const H5S_sel_type type = H5Sget_select_type(space);
            if (type == H5S_SEL_ALL)
                whole = true;
            else if (type == H5S_SEL_HYPERSLABS && covered < 0)
                covered = H5Scopy(space);
            else if (type == H5S_SEL_HYPERSLABS)
                unknown = H5Smodify_select(covered, H5S_SELECT_OR, space) < 0;
            else if (type != H5S_SEL_NONE)
                unknown = true;  // a point selection: not counted here
            H5Sclose(space);
        }
        const hssize_t mapped = covered >= 0 ? H5Sget_select_npoints(covered) : 0;
        if (covered >= 0) H5Sclose(covered);
        H5Eclear2(H5E_DEFAULT);
        std::uint64_t elements = 1;
        for (const auto d : shape)
            elements *= d;
        if (!whole && !unknown && mapped >= 0 && static_cast<std::uint64_t>(mapped) < elements)
            return declares + " as a virtual dataset whose sources map " + std::to_string(mapped) +
                   " of its " + std::to_string(elements) +
                   " elements (the rest would read as fill values)";
        return std::nullopt;
    }
    // External raw storage (h5py's `external=`): the values live in other files, named by the
    // file and resolved against the reader's working directory, not the file's folder; a short
    // one reads as zeros. Not read: a dump or a checkpoint holds its own data (docs/formats).
    if (const int external = H5Pget_external_count(plist.getId()); external > 0) {
        char name[512] = {};
        off_t offset = 0;
        hsize_t size = 0;
        if (H5Pget_external(plist.getId(), 0, sizeof name, name, &offset, &size) < 0)
            name[0] = '\0';
        H5Eclear2(H5E_DEFAULT);
        return declares + " stored in " + std::to_string(external) + " external raw file" +
               (external == 1 ? "" : "s") + " ('" + name +
               "'...), which Routescope does not read (" + file_kind_text(ds) +
               " holds its own data: copy them in, e.g. h5repack -l CONTI IN OUT)";
    }
    if (layout != H5D_CHUNKED) {
        if (declared > file_size) return declares + " but the file holds " + bytes_text(file_size);
        // Contiguous storage is allocated when the data are first written (h5py's
        // create_dataset(name, shape, dtype) without data allocates none): a dataset with
        // elements and no storage reads as fill values, as a chunked one whose chunks were never
        // written does. A compact dataset's storage is made with it (filled at creation), so
        // there HDF5 cannot tell; the status says allocated.
        H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
        const bool known = H5Dget_space_status(ds.getId(), &status) >= 0;
        H5Eclear2(H5E_DEFAULT);
        if ((known && status == H5D_SPACE_STATUS_NOT_ALLOCATED) ||
            (layout == H5D_CONTIGUOUS && ds.getStorageSize() == 0))
            return declares +
                   " but its data were never written (no storage allocated: it "
                   "would read as fill values)";
        return std::nullopt;
    }
    // Chunked: the bytes stored must account for the declared ones. Unfiltered chunks hold at
    // least the declared bytes once all are written; with filters, gzip (HDF5's strongest
    // built-in one) compresses at most about 1000:1, so more than 4096:1 means chunks that were
    // never written (reading them yields fill values for as long as the declared size says).
    // (H5Dget_num_chunks would count chunks, but 1.10 fails on h5py's v1 B-tree indexes.)
    const std::uint64_t stored = ds.getStorageSize();
    const int filters = plist.getNfilters();
    if (filters == 0 && stored < declared)
        return declares + " but stores only " + bytes_text(stored) +
               " of unfiltered chunks (chunks never written)";
    if (filters > 0 && declared / 4096 > stored)
        return declares + " in " + bytes_text(stored) +
               " of filtered chunks, more than 4096:1, which no HDF5 filter compresses";
    // Filtered chunks compress to any size, so the bytes cannot show a chunk that was never
    // written (half the rows of a gzip'd dataset read as fill values and passed): each chunk is
    // asked for by its offset (H5Dget_chunk_storage_size; 1.10.8 fails with "chunk storage is
    // not allocated" for one never written, so a failure counts as that only where the same call
    // answered for another chunk of the dataset). Bounded: a dataset of more than 2^20 chunks is
    // left to the ratio test above.
    if (filters > 0) {
        const int rank = static_cast<int>(shape.size());
        std::vector<hsize_t> chunk(shape.size());
        if (rank > 0 && plist.getChunk(rank, chunk.data()) == rank) {
            std::uint64_t chunks = 1;
            bool bounded = true;
            for (int a = 0; a < rank && bounded; ++a) {
                if (chunk[static_cast<std::size_t>(a)] == 0) return std::nullopt;
                chunks *=
                    (shape[static_cast<std::size_t>(a)] + chunk[static_cast<std::size_t>(a)] - 1) /
                    chunk[static_cast<std::size_t>(a)];
                bounded = chunks <= (std::uint64_t{1} << 20);
            }
            std::vector<hsize_t> offset(shape.size(), 0);
            std::optional<std::vector<hsize_t>> missing;
            bool answered = false;
            for (std::uint64_t k = 0; bounded && k < chunks; ++k) {
                hsize_t bytes = 0;
                if (H5Dget_chunk_storage_size(ds.getId(), offset.data(), &bytes) >= 0 && bytes > 0)
                    answered = true;
                else if (!missing)
                    missing = offset;
                H5Eclear2(H5E_DEFAULT);
                if (answered && missing) break;
                for (int a = rank - 1; a >= 0; --a) {  // the next chunk's offset, last axis fastest
                    const auto i = static_cast<std::size_t>(a);
                    offset[i] += chunk[i];
                    if (offset[i] < shape[i]) break;
                    offset[i] = 0;
                }
            }
            if (answered && missing) {
                std::string at;
                for (int a = 0; a < rank; ++a)
                    at += (a ? ", " : "") + std::to_string((*missing)[static_cast<std::size_t>(a)]);
                return declares + " whose filtered chunk at [" + at +
                       "] was never written (it would read as fill values)";
            }
        }
    }
    return std::nullopt;
}

std::uint64_t read_memory_limit() {
    if (const char* env = std::getenv("ROUTESCOPE_READ_LIMIT_MB")) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(env, &end, 10);
        if (end != env && mb > 0) return static_cast<std::uint64_t>(mb) << 20;
    }
    // A quarter of the memory this process may use (the least of physical memory, ulimit -v,
    // ulimit -d and the cgroup's limit: a quarter of the machine's 23 GB was more than a 4 GB
    // ulimit -v allows, and the read ended in a bare bad_alloc).
    const double available = memory_limit().bytes;
    if (available <= 0) return std::uint64_t{4} << 30;
    return static_cast<std::uint64_t>(available / 4);
}

void require_memory(const std::string& file, const std::string& what, std::uint64_t bytes) {
    const std::uint64_t limit = read_memory_limit();
    if (bytes > limit)
        throw FormatError(file + ": " + what + " needs " + bytes_text(bytes) +
                          " of memory to read, more than the limit of " + bytes_text(limit) +
                          (std::getenv("ROUTESCOPE_READ_LIMIT_MB")
                               ? std::string(" (ROUTESCOPE_READ_LIMIT_MB)")
                               : " (a quarter of " + memory_limit().text() + ")") +
                          "; refusing the file");
}

std::vector<std::int64_t> read_ints(const H5::DataSet& ds) {
    const auto n = static_cast<std::size_t>(ds.getSpace().getSimpleExtentNpoints());
    std::vector<std::int64_t> out(n);
    if (n) ds.read(out.data(), H5::PredType::NATIVE_INT64);
    return out;
}

std::vector<std::string> read_strings(const H5::DataSet& ds) {
    H5::DataType type = ds.getDataType();
    H5::DataSpace space = ds.getSpace();
    const auto n = static_cast<std::size_t>(space.getSimpleExtentNpoints());
    std::vector<std::string> out(n);
    if (n == 0) return out;
    if (type.isVariableStr()) {
        std::vector<char*> raw(n, nullptr);
        H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
        st.setCset(H5T_CSET_UTF8);
        ds.read(raw.data(), st);
        for (std::size_t i = 0; i < n; ++i)
            out[i] = raw[i] ? raw[i] : "";
        H5Dvlen_reclaim(st.getId(), space.getId(), H5P_DEFAULT, raw.data());
    } else {
        const std::size_t width = type.getSize();
        std::vector<char> raw(n * width);
        ds.read(raw.data(), type);
        for (std::size_t i = 0; i < n; ++i) {
            std::string s(raw.data() + i * width, width);
            strip_padding(s, type);
            out[i] = std::move(s);
        }
    }
    return out;
}

void write_string_attr(H5::H5Object& obj, const std::string& name, const std::string& value) {
    H5::StrType st(H5::PredType::C_S1, H5T_VARIABLE);
    st.setCset(H5T_CSET_UTF8);
    H5::Attribute attr = obj.createAttribute(name, st, H5::DataSpace(H5S_SCALAR));
    attr.write(st, value);
}

void write_int_attr(H5::H5Object& obj, const std::string& name, std::int64_t value) {
    H5::Attribute attr =
        obj.createAttribute(name, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR));
    attr.write(H5::PredType::NATIVE_INT64, &value);
}

void write_float_attr(H5::H5Object& obj, const std::string& name, double value) {
    H5::Attribute attr =
        obj.createAttribute(name, H5::PredType::NATIVE_DOUBLE, H5::DataSpace(H5S_SCALAR));
    attr.write(H5::PredType::NATIVE_DOUBLE, &value);
}

std::string iso8601_now() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace routescope::h5
