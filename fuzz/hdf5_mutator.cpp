// The HDF5-aware mutator of the dump and checkpoint targets (docs/reliability.md, "HDF5 inputs").
//
// Flipping bytes of an HDF5 file almost always breaks a superblock, B-tree or object header
// checksum, so the library rejects the file before a Routescope reader runs a line of its own code;
// and HDF5 1.10.8 itself crashes on some corrupt metadata. This mutator therefore never edits
// bytes: it opens the input as an in-memory file image (core driver, H5Pset_file_image), changes
// it through the HDF5 API (an attribute's value or type, a dataset's values, shape or type, a
// deleted or an extra object; JSON-text attributes such as a checkpoint's /config get a leaf of
// their JSON changed) and writes a compacted image back. Every input it makes is a well-formed
// HDF5 file with hostile contents, which is what reaches the readers' own checks.
//
// The cross-over copies one dataset or group of the second input into the first (same path).
// RS_FUZZ_HDF5_RAW=1 adds libFuzzer's byte mutations as well (a campaign against libhdf5 itself;
// expect crashes inside libhdf5 frames, the known class of docs/reliability.md). The API mutation
// then runs in a forked child, so that libhdf5 crashing on a byte-mutated input kills the child,
// not the campaign.
#include <hdf5.h>

#include <functional>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine/io/contained_validation.hpp"

namespace {

using Rng = std::minstd_rand;

constexpr std::size_t kMaxElements = 1 << 18;  // datasets larger than this are left alone

std::size_t pick(Rng& rng, std::size_t n) {
    return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng) : 0;
}
bool coin(Rng& rng, int one_in) {
    return pick(rng, static_cast<std::size_t>(one_in)) == 0;
}

bool is_hdf5(const std::uint8_t* data, std::size_t size) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    return size >= 512 && std::memcmp(data, sig, 8) == 0;
}

std::string unique_name() {
    static unsigned long n = 0;
    return "routescope-fuzz-image-" + std::to_string(++n);
}

hid_t core_fapl() {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 64 * 1024, 0);
    return fapl;
}

hid_t open_image(const std::uint8_t* data, std::size_t size, bool rw) {
    if (!is_hdf5(data, size)) return -1;
    hid_t fapl = core_fapl();
    H5Pset_file_image(fapl, const_cast<std::uint8_t*>(data), size);  // HDF5 copies the buffer
    hid_t f = H5Fopen(unique_name().c_str(), rw ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return f;
}

struct Object {
    std::string path;
    H5I_type_t type;
};

herr_t collect_link(hid_t group, const char* name, const H5L_info_t* info, void* out) {
    if (info->type != H5L_TYPE_HARD) return 0;
    hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
    if (obj < 0) return 0;
    static_cast<std::vector<Object>*>(out)->push_back({std::string("/") + name, H5Iget_type(obj)});
    H5Oclose(obj);
    return 0;
}

std::vector<Object> objects(hid_t file) {
    std::vector<Object> out{{"/", H5I_GROUP}};
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_link, &out);
    return out;
}

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* out) {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
}

std::vector<std::string> attr_names(hid_t obj) {
    std::vector<std::string> out;
    hsize_t idx = 0;
    H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &out);
    return out;
}

// ---------------------------------------------------------------- values

// v + 1 and friends wrap (two's complement) instead of overflowing.
std::int64_t wrap(std::uint64_t u) {
    return static_cast<std::int64_t>(u);
}

std::int64_t interesting_int(Rng& rng, std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v);
    const std::int64_t pool[] = {0,
                                 1,
                                 -1,
                                 2,
                                 3,
                                 7,
                                 8,
                                 255,
                                 256,
                                 65535,
                                 65536,
                                 std::numeric_limits<std::int32_t>::max(),
                                 std::numeric_limits<std::int32_t>::min(),
                                 std::numeric_limits<std::int64_t>::max(),
                                 std::numeric_limits<std::int64_t>::min(),
                                 std::int64_t{1} << 40,
                                 wrap(u + 1),
                                 wrap(u - 1),
                                 wrap(u * 2),
                                 wrap(0 - u),
                                 wrap(u + 1000)};
    return pool[pick(rng, std::size(pool))];
}

double interesting_double(Rng& rng, double v) {
    const double pool[] = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           0.5,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           1e300,
                           -1e300,
                           1e-310,
                           65504.0,
                           70000.0,
                           v * 2,
                           v + 1,
                           -v,
                           std::round(v) + 0.5};
    return pool[pick(rng, std::size(pool))];
}

const char* const kWords[] = {"",
                              "routescope-dump",
                              "routescope-checkpoint",
                              "bigs",
                              "birdie",
                              "slstm",
                              "external",
                              "bytes",
                              "wordpiece",
                              "sentencepiece",
                              "unigram",
                              "float16",
                              "u_f",
                              "u_b",
                              "v",
                              "{}",
                              "[]",
                              "null",
                              "0",
                              "-1",
                              "1",
                              "2",
                              "99",
                              "1e400",
                              "NaN",
                              "\xff\xfe",
                              "{\"model\": {}}",
                              "\"x\"",
                              "[MASK]",
                              "##s",
                              "hidden",
                              "gates",
                              "sentence",
                              "example_index",
                              "labels",
                              "lengths",
                              "tokens",
                              "text",
                              "vocab",
                              "kernels",
                              "mixing",
                              "attributes",
                              "params",
                              "train",
                              "adam_m",
                              "adam_v",
                              "format",
                              "format_version",
                              "json",
                              "kind",
                              "model",
                              "config",
                              "step",
                              "rng_state"};

std::string mutate_json(Rng& rng, const std::string& text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_structured()) return text;
    nlohmann::json flat = j.flatten();
    if (flat.empty()) return text;
    auto it = flat.begin();
    std::advance(it, static_cast<long>(pick(rng, flat.size())));
    const std::string key = it.key();
    switch (pick(rng, 8)) {
        case 0:
            flat.erase(key);
            break;
        case 1:
            flat[key] = interesting_int(rng, it->is_number_integer() ? it->get<std::int64_t>() : 0);
            break;
        case 2:
            flat[key] = interesting_double(rng, it->is_number() ? it->get<double>() : 0.0);
            break;
        case 3:
            flat[key] = kWords[pick(rng, std::size(kWords))];
            break;
        case 4:
            flat[key] = nullptr;
            break;
        case 5:
            flat[key] = !(it->is_boolean() && it->get<bool>());
            break;
        case 6:
            flat[key] = nlohmann::json::array({1, 2});
            break;
        default:
            flat[key + "_extra"] = 1;
            break;
    }
    try {
        return flat.unflatten().dump();
    } catch (const nlohmann::json::exception&) {
        return text;
    }
}

std::string mutate_string(Rng& rng, const std::string& s) {
    if (!s.empty() && (s[0] == '{' || s[0] == '[') && !coin(rng, 4)) return mutate_json(rng, s);
    std::string out = s;
    switch (pick(rng, 6)) {
        case 0:
            return kWords[pick(rng, std::size(kWords))];
        case 1:
            out.resize(pick(rng, s.size() + 1));
            return out;
        case 2:
            if (!out.empty()) out[pick(rng, out.size())] = static_cast<char>(pick(rng, 256));
            return out;
        case 3:
            return out + kWords[pick(rng, std::size(kWords))];
        case 4:
            return std::string(1 + pick(rng, 4096), 'x');
        default:
            return out + "\xc3";  // a cut UTF-8 sequence
    }
}

hid_t vlen_string_type() {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

// Reads the string elements of an attribute or dataset (is_attr) of string type `ftype`.
std::vector<std::string> read_strings(hid_t id, bool is_attr, hid_t ftype, hid_t space) {
    const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
    std::vector<std::string> out;
    if (n == 0 || n > kMaxElements) return out;
    if (H5Tis_variable_str(ftype) > 0) {
        hid_t mem = vlen_string_type();
        std::vector<char*> ptrs(n, nullptr);
        const herr_t rc = is_attr ? H5Aread(id, mem, ptrs.data())
                                  : H5Dread(id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
        if (rc >= 0) {
            for (char* p : ptrs)
                out.emplace_back(p ? p : "");
            H5Dvlen_reclaim(mem, space, H5P_DEFAULT, ptrs.data());
        }
        H5Tclose(mem);
    } else {
        const std::size_t width = H5Tget_size(ftype);
        std::vector<char> buf(n * width);
        hid_t mem = H5Tcopy(ftype);
        const herr_t rc = is_attr ? H5Aread(id, mem, buf.data())
                                  : H5Dread(id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
        H5Tclose(mem);
        if (rc >= 0)
            for (std::size_t i = 0; i < n; ++i) {
                std::string s(buf.data() + i * width, width);
                s.resize(std::strlen(s.c_str()));
                out.push_back(s);
            }
    }
    return out;
}

// ---------------------------------------------------------------- attributes

void write_attr(hid_t obj, const std::string& name, hid_t ftype, hid_t mtype, hid_t space,
                const void* buf) {
    if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
    hid_t a = H5Acreate2(obj, name.c_str(), ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) return;
    H5Awrite(a, mtype, buf);
    H5Aclose(a);
}

void write_string_attr(hid_t obj, const std::string& name, const std::string& value, bool vlen) {
    hid_t space = H5Screate(H5S_SCALAR);
    if (vlen) {
        hid_t t = vlen_string_type();
        const char* p = value.c_str();
        write_attr(obj, name, t, t, space, &p);
        H5Tclose(t);
    } else {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, std::max<std::size_t>(1, value.size()));
        std::string padded = value;
        padded.resize(std::max<std::size_t>(1, value.size()));
        write_attr(obj, name, t, t, space, padded.data());
        H5Tclose(t);
    }
    H5Sclose(space);
}

void write_int_attr(hid_t obj, const std::string& name, std::int64_t v,
                    hid_t ftype = H5T_STD_I64LE) {
    hid_t space = H5Screate(H5S_SCALAR);
    write_attr(obj, name, ftype, H5T_NATIVE_INT64, space, &v);
    H5Sclose(space);
}

void write_double_attr(hid_t obj, const std::string& name, double v) {
    hid_t space = H5Screate(H5S_SCALAR);
    write_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space, &v);
    H5Sclose(space);
}

// Copies every attribute of `src` onto `dst` (the compaction of the root group, a recreated
// dataset).
herr_t copy_one_attr(hid_t src, const char* name, const H5A_info_t*, void* dst_ptr) {
    const hid_t dst = *static_cast<hid_t*>(dst_ptr);
    hid_t a = H5Aopen(src, name, H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t type = H5Aget_type(a), space = H5Aget_space(a);
    const auto n =
        static_cast<std::size_t>(std::max<hssize_t>(0, H5Sget_simple_extent_npoints(space)));
    std::vector<unsigned char> buf(std::max<std::size_t>(1, n * H5Tget_size(type)));
    if (H5Aread(a, type, buf.data()) >= 0) {
        write_attr(dst, name, type, type, space, buf.data());
        if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)
            H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf.data());
    }
    H5Sclose(space);
    H5Tclose(type);
    H5Aclose(a);
    return 0;
}

void copy_attrs(hid_t src, hid_t dst) {
    hsize_t idx = 0;
    H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_one_attr, &dst);
}

void mutate_attr(Rng& rng, hid_t obj, const std::string& name) {
    hid_t a = H5Aopen(obj, name.c_str(), H5P_DEFAULT);
    if (a < 0) return;
    hid_t type = H5Aget_type(a), space = H5Aget_space(a);
    const H5T_class_t cls = H5Tget_class(type);
    const auto n =
        static_cast<std::size_t>(std::max<hssize_t>(0, H5Sget_simple_extent_npoints(space)));
    const int action = static_cast<int>(pick(rng, 10));
    if (action == 0) {  // delete
        H5Aclose(a), H5Sclose(space), H5Tclose(type);
        H5Adelete(obj, name.c_str());
        return;
    }
    if (action == 1) {  // another type, a related value
        H5Aclose(a), H5Sclose(space), H5Tclose(type);
        switch (pick(rng, 4)) {
            case 0:
                write_string_attr(obj, name, kWords[pick(rng, std::size(kWords))], coin(rng, 2));
                break;
            case 1:
                write_int_attr(obj, name, interesting_int(rng, 1),
                               coin(rng, 2) ? H5T_STD_I32LE : H5T_STD_U8LE);
                break;
            case 2:
                write_double_attr(obj, name, interesting_double(rng, 1.0));
                break;
            default: {  // an array where a scalar is expected
                const hsize_t dims[1] = {1 + pick(rng, 3)};
                hid_t s = H5Screate_simple(1, dims, nullptr);
                std::vector<std::int64_t> v(dims[0], interesting_int(rng, 1));
                write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, s, v.data());
                H5Sclose(s);
            }
        }
        return;
    }
    if (n > 0 && n <= kMaxElements && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
        const bool is_int = cls == H5T_INTEGER;
        std::vector<std::int64_t> iv(n);
        std::vector<double> dv(n);
        void* buf = is_int ? static_cast<void*>(iv.data()) : static_cast<void*>(dv.data());
        hid_t mem = is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
        if (H5Aread(a, mem, buf) >= 0) {
            const std::size_t i = pick(rng, n);
            if (is_int)
                iv[i] = interesting_int(rng, iv[i]);
            else
                dv[i] = interesting_double(rng, dv[i]);
            H5Awrite(a, mem, buf);
        }
    } else if (cls == H5T_STRING && n == 1) {
        auto strings = read_strings(a, true, type, space);
        const bool vlen = H5Tis_variable_str(type) > 0;
        H5Aclose(a), H5Sclose(space), H5Tclose(type);
        if (!strings.empty()) write_string_attr(obj, name, mutate_string(rng, strings[0]), vlen);
        return;
    }
    H5Aclose(a), H5Sclose(space), H5Tclose(type);
}

// ---------------------------------------------------------------- datasets

struct Data {
    hid_t ftype = -1;
    H5T_class_t cls = H5T_NO_CLASS;
    std::vector<hsize_t> dims;
    std::vector<std::int64_t> ints;
    std::vector<double> doubles;
    std::vector<std::string> strings;
    std::size_t count() const {
        std::size_t n = 1;
        for (auto d : dims)
            n *= d;
        return n;
    }
};

bool read_data(hid_t ds, Data& d) {
    hid_t space = H5Dget_space(ds);
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0 || rank > 8) return H5Sclose(space), false;
    d.dims.assign(static_cast<std::size_t>(rank), 0);
    H5Sget_simple_extent_dims(space, d.dims.data(), nullptr);
    d.ftype = H5Dget_type(ds);
    d.cls = H5Tget_class(d.ftype);
    const std::size_t n = d.count();
    bool ok = n <= kMaxElements;
    if (ok && n > 0) {
        if (d.cls == H5T_INTEGER) {
            d.ints.resize(n);
            ok = H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.ints.data()) >= 0;
        } else if (d.cls == H5T_FLOAT) {
            d.doubles.resize(n);
            ok = H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.doubles.data()) >=
                 0;
        } else if (d.cls == H5T_STRING) {
            d.strings = read_strings(ds, false, d.ftype, space);
            ok = d.strings.size() == n;
        } else {
            ok = false;
        }
    }
    H5Sclose(space);
    return ok;
}

void write_data(hid_t ds, const Data& d) {
    if (d.count() == 0) return;
    if (d.cls == H5T_INTEGER) {
        H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.ints.data());
    } else if (d.cls == H5T_FLOAT) {
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.doubles.data());
    } else if (d.cls == H5T_STRING) {
        std::vector<const char*> ptrs;
        for (const auto& s : d.strings)
            ptrs.push_back(s.c_str());
        hid_t mem = vlen_string_type();
        if (H5Tis_variable_str(d.ftype) > 0) {
            H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data());
        } else {  // fixed width: pad each element
            const std::size_t w = H5Tget_size(d.ftype);
            std::vector<char> buf(d.strings.size() * w, '\0');
            for (std::size_t i = 0; i < d.strings.size(); ++i)
                std::memcpy(buf.data() + i * w, d.strings[i].data(),
                            std::min(w, d.strings[i].size()));
            H5Dwrite(ds, d.ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
        }
        H5Tclose(mem);
    }
}

// Resizes the value arrays to the new element count, cycling the old values.
void refit(Data& d, std::size_t n) {
    auto cycle = [n](auto& v, auto fill) {
        const std::size_t old = v.size();
        v.resize(n, fill);
        for (std::size_t i = old; i < n && old > 0; ++i)
            v[i] = v[i % old];
    };
    cycle(d.ints, std::int64_t{0});
    cycle(d.doubles, 0.0);
    cycle(d.strings, std::string());
}

// Replaces the dataset at `path` by one of `d`'s type and shape (contiguous), keeping its
// attributes.
void recreate(hid_t file, const std::string& path, const Data& d) {
    const std::string tmp = path + ".routescope-fuzz-old";
    if (H5Lmove(file, path.c_str(), file, tmp.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) return;
    hid_t space = d.dims.empty()
                      ? H5Screate(H5S_SCALAR)
                      : H5Screate_simple(static_cast<int>(d.dims.size()), d.dims.data(), nullptr);
    hid_t ds =
        H5Dcreate2(file, path.c_str(), d.ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(space);
    if (ds < 0) {
        H5Lmove(file, tmp.c_str(), file, path.c_str(), H5P_DEFAULT, H5P_DEFAULT);
        return;
    }
    write_data(ds, d);
    hid_t old = H5Dopen2(file, tmp.c_str(), H5P_DEFAULT);
    if (old >= 0) copy_attrs(old, ds), H5Dclose(old);
    H5Dclose(ds);
    H5Ldelete(file, tmp.c_str(), H5P_DEFAULT);
}

hid_t float16_type() {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    return t;
}

void mutate_dataset(Rng& rng, hid_t file, const std::string& path) {
    hid_t ds = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
    if (ds < 0) return;
    Data d;
    const bool ok = read_data(ds, d);
    if (!ok) {
        if (d.ftype >= 0) H5Tclose(d.ftype);
        H5Dclose(ds);
        return;
    }
    const std::size_t n = d.count();
    const int action = static_cast<int>(pick(rng, 4));
    if (action <= 1 && n > 0) {  // values, in place
        for (std::size_t k = 1 + pick(rng, 4); k > 0; --k) {
            const std::size_t i = pick(rng, n);
            if (d.cls == H5T_INTEGER)
                d.ints[i] = interesting_int(rng, d.ints[i]);
            else if (d.cls == H5T_FLOAT)
                d.doubles[i] = interesting_double(rng, d.doubles[i]);
            else
                d.strings[i] = mutate_string(rng, d.strings[i]);
        }
        write_data(ds, d);
        H5Tclose(d.ftype);
        H5Dclose(ds);
        return;
    }
    H5Dclose(ds);
    if (action == 2) {  // shape
        switch (d.dims.empty() ? 1 : pick(rng, 4)) {
            case 0: {
                auto& dim = d.dims[pick(rng, d.dims.size())];
                const hsize_t choices[] = {0, 1, dim + 1, dim ? dim - 1 : 2, dim * 2 + 1};
                dim = choices[pick(rng, std::size(choices))];
                break;
            }
            case 1:
                d.dims.push_back(1 + pick(rng, 2));
                break;
            case 2:
                d.dims.pop_back();
                break;
            default:
                std::swap(d.dims.front(), d.dims.back());
                break;
        }
        if (d.count() > kMaxElements) return (void)H5Tclose(d.ftype);
        refit(d, d.count());
    } else {  // type
        const std::size_t k = pick(rng, 8);
        hid_t t = -1;
        H5T_class_t cls = H5T_FLOAT;
        switch (k) {
            case 0:
                t = H5Tcopy(H5T_IEEE_F32LE);
                break;
            case 1:
                t = H5Tcopy(H5T_IEEE_F64LE);
                break;
            case 2:
                t = float16_type();
                break;
            case 3:
                t = H5Tcopy(H5T_STD_I32LE), cls = H5T_INTEGER;
                break;
            case 4:
                t = H5Tcopy(H5T_STD_I64BE), cls = H5T_INTEGER;
                break;
            case 5:
                t = H5Tcopy(H5T_STD_I8LE), cls = H5T_INTEGER;
                break;
            case 6:
                t = H5Tcopy(H5T_STD_U8LE), cls = H5T_INTEGER;
                break;
            default:
                t = vlen_string_type(), cls = H5T_STRING;
                break;
        }
        const std::size_t count = d.count();
        if (cls != d.cls) {  // carry the values over where a conversion means something
            if (cls == H5T_STRING) {
                d.strings.clear();
                for (std::size_t i = 0; i < count; ++i)
                    d.strings.push_back(
                        d.cls == H5T_INTEGER
                            ? std::to_string(d.ints[i])
                            : std::to_string(d.doubles.empty() ? 0.0 : d.doubles[i]));
            } else if (cls == H5T_INTEGER) {
                d.ints.assign(count, 0);
                for (std::size_t i = 0; i < count && i < d.doubles.size(); ++i)
                    d.ints[i] = std::isfinite(d.doubles[i]) && std::fabs(d.doubles[i]) < 1e15
                                    ? static_cast<std::int64_t>(d.doubles[i])
                                    : 0;
            } else {
                d.doubles.assign(count, 0.0);
                for (std::size_t i = 0; i < count && i < d.ints.size(); ++i)
                    d.doubles[i] = static_cast<double>(d.ints[i]);
            }
        }
        H5Tclose(d.ftype);
        d.ftype = t;
        d.cls = cls;
    }
    recreate(file, path, d);
    H5Tclose(d.ftype);
}

void add_extra(Rng& rng, hid_t file, const std::vector<Object>& objs) {
    std::vector<const Object*> groups;
    for (const auto& o : objs)
        if (o.type == H5I_GROUP) groups.push_back(&o);
    const Object* g = groups[pick(rng, groups.size())];
    hid_t grp = H5Gopen2(file, g->path.c_str(), H5P_DEFAULT);
    if (grp < 0) return;
    const std::string name = coin(rng, 2) ? kWords[pick(rng, std::size(kWords))]
                                          : std::to_string(static_cast<int>(pick(rng, 12)) - 2);
    if (name.empty() || H5Lexists(grp, name.c_str(), H5P_DEFAULT) > 0) {
        H5Gclose(grp);
        return;
    }
    switch (pick(rng, 3)) {
        case 0: {
            hid_t sub = H5Gcreate2(grp, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (sub >= 0) H5Gclose(sub);
            break;
        }
        case 1:
            write_int_attr(grp, name, interesting_int(rng, 1));
            break;
        default: {
            const hsize_t dims[2] = {1 + pick(rng, 3), 1 + pick(rng, 4)};
            hid_t space = H5Screate_simple(1 + static_cast<int>(pick(rng, 2)), dims, nullptr);
            hid_t ds = H5Dcreate2(grp, name.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT);
            if (ds >= 0) {
                std::vector<double> v(dims[0] * dims[1], 0.25);
                H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
                H5Dclose(ds);
            }
            H5Sclose(space);
        }
    }
    H5Gclose(grp);
}

// One structural mutation of an open file.
void mutate_file(Rng& rng, hid_t file) {
    const auto objs = objects(file);
    const std::size_t action = pick(rng, 10);
    if (action < 4) {  // an attribute
        std::vector<std::pair<std::string, std::string>> attrs;
        for (const auto& o : objs) {
            hid_t obj = H5Oopen(file, o.path.c_str(), H5P_DEFAULT);
            if (obj < 0) continue;
            for (auto& a : attr_names(obj))
                attrs.emplace_back(o.path, a);
            H5Oclose(obj);
        }
        if (attrs.empty()) return;
        const auto& [path, name] = attrs[pick(rng, attrs.size())];
        hid_t obj = H5Oopen(file, path.c_str(), H5P_DEFAULT);
        if (obj >= 0) mutate_attr(rng, obj, name), H5Oclose(obj);
    } else if (action < 8) {  // a dataset
        std::vector<const Object*> sets;
        for (const auto& o : objs)
            if (o.type == H5I_DATASET) sets.push_back(&o);
        if (!sets.empty()) mutate_dataset(rng, file, sets[pick(rng, sets.size())]->path);
    } else if (action == 8 && objs.size() > 1) {  // delete an object
        H5Ldelete(file, objs[1 + pick(rng, objs.size() - 1)].path.c_str(), H5P_DEFAULT);
    } else {
        add_extra(rng, file, objs);
    }
}

// Writes `file` compacted (every root link and root attribute copied into a fresh image) into
// out[0, max); returns the size, or 0 when it does not fit or something failed.
herr_t copy_root_link(hid_t src, const char* name, const H5L_info_t* info, void* dst_ptr) {
    if (info->type == H5L_TYPE_HARD)
        H5Ocopy(src, name, *static_cast<hid_t*>(dst_ptr), name, H5P_DEFAULT, H5P_DEFAULT);
    return 0;
}

std::size_t save_compacted(hid_t file, std::uint8_t* out, std::size_t max) {
    hid_t fapl = core_fapl();
    hid_t dst = H5Fcreate(unique_name().c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (dst < 0) return 0;
    hid_t src_root = H5Gopen2(file, "/", H5P_DEFAULT), dst_root = H5Gopen2(dst, "/", H5P_DEFAULT);
    copy_attrs(src_root, dst_root);
    hsize_t idx = 0;
    H5Literate(src_root, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_root_link, &dst);
    H5Gclose(src_root), H5Gclose(dst_root);
    H5Fflush(dst, H5F_SCOPE_GLOBAL);
    std::size_t size = 0;
    const ssize_t need = H5Fget_file_image(dst, nullptr, 0);
    if (need > 0 && static_cast<std::size_t>(need) <= max &&
        H5Fget_file_image(dst, out, static_cast<std::size_t>(need)) == need)
        size = static_cast<std::size_t>(need);
    H5Fclose(dst);
    return size;
}

void quiet() {
    static const bool done = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
    (void)done;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

// The API mutation of one input: writes into `data` (up to max_size), returns the new size; 0 when
// the input is not an HDF5 image the library opens.
std::size_t api_mutate(std::uint8_t* data, std::size_t size, std::size_t max_size, Rng& rng) {
    hid_t file = open_image(data, size, true);
    if (file < 0) return 0;
    for (std::size_t k = 1 + pick(rng, 2); k > 0; --k)
        mutate_file(rng, file);
    std::vector<std::uint8_t> out(max_size);
    const std::size_t n = save_compacted(file, out.data(), max_size);
    H5Fclose(file);
    if (n == 0) return size;
    std::memcpy(data, out.data(), n);
    return n;
}

std::size_t api_cross_over(const std::uint8_t* data1, std::size_t size1, const std::uint8_t* data2,
                           std::size_t size2, std::uint8_t* out, std::size_t max_out_size,
                           Rng& rng) {
    hid_t a = open_image(data1, size1, true);
    if (a < 0) return 0;
    hid_t b = open_image(data2, size2, false);
    if (b >= 0) {
        const auto objs = objects(b);
        if (objs.size() > 1) {
            const std::string path = objs[1 + pick(rng, objs.size() - 1)].path;
            if (H5Lexists(a, path.c_str(), H5P_DEFAULT) > 0)
                H5Ldelete(a, path.c_str(), H5P_DEFAULT);
            hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
            H5Pset_create_intermediate_group(lcpl, 1);
            H5Ocopy(b, path.c_str(), a, path.c_str(), H5P_DEFAULT, lcpl);
            H5Pclose(lcpl);
        }
        H5Fclose(b);
    }
    const std::size_t n = save_compacted(a, out, max_out_size);
    H5Fclose(a);
    return n;
}

// RS_FUZZ_HDF5_RAW=1: the inputs are byte-mutated, so opening them through the HDF5 API may crash
// libhdf5 (or have it allocate gigabytes) in the fuzzer's own process — the harness, not the
// target. The API mutation then runs in a forked child (run_contained, 5 s), its result sent back;
// a child that dies leaves the input to libFuzzer's byte mutations.
bool raw_mode() {
    static const bool raw = std::getenv("RS_FUZZ_HDF5_RAW") != nullptr;
    return raw;
}

std::size_t contained(const std::function<std::string()>& work, std::uint8_t* out,
                      std::size_t max_size) {
    const routescope::ContainedRun run =
        routescope::run_contained([&](const auto& send) { send(work()); }, nullptr, 5.0);
    if (!run.ok() || run.messages.empty() || run.messages[0].empty() ||
        run.messages[0].size() > max_size)
        return 0;
    std::memcpy(out, run.messages[0].data(), run.messages[0].size());
    return run.messages[0].size();
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
    quiet();
    Rng rng(seed);
    if (!raw_mode()) {
        const std::size_t n = api_mutate(data, size, max_size, rng);
        return n == 0 ? size : n;
    }
    if (coin(rng, 4)) return LLVMFuzzerMutate(data, size, max_size);
    const std::size_t n = contained(
        [&] {
            std::vector<std::uint8_t> copy(data, data + size);
            copy.resize(std::max(size, max_size));
            const std::size_t m = api_mutate(copy.data(), size, max_size, rng);
            return std::string(reinterpret_cast<const char*>(copy.data()), m);
        },
        data, max_size);
    return n == 0 ? LLVMFuzzerMutate(data, size, max_size) : n;
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) {
    quiet();
    Rng rng(seed);
    if (!raw_mode()) return api_cross_over(data1, size1, data2, size2, out, max_out_size, rng);
    return contained(
        [&] {
            std::vector<std::uint8_t> buf(max_out_size);
            const std::size_t m =
                api_cross_over(data1, size1, data2, size2, buf.data(), max_out_size, rng);
            return std::string(reinterpret_cast<const char*>(buf.data()), m);
        },
        out, max_out_size);
}
