// Checks an activation dump against DUMP_FORMAT.md version 1.
#include <H5Cpp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include "engine/core/json_text.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/contained_validation.hpp"
#include "engine/io/format_checker.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/validation.hpp"

namespace routescope {
namespace {

const std::set<std::string> kArchs = {"bigs",   "stack_ssm", "gated_att", "bert",
                                      "birdie", "slstm",     "gmlp",      "external"};

/// A value for a message: "0.5", "4", "1.00012".
std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

/// "1 row", "48 rows".
std::string count_text(std::uint64_t n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string index_text(std::initializer_list<std::uint64_t> idx) {
    std::string s = "[";
    for (auto it = idx.begin(); it != idx.end(); ++it)
        s += (it == idx.begin() ? "" : ", ") + std::to_string(*it);
    return s + "]";
}

/// How far a stored attention row's sum may be from 1 (docs/formats/dump.md: "each row sums to
/// 1"), for rows of L keys stored in the float type `type`.
///
/// Routescope computes the softmax in float32 (engine/ops/attention.cpp; the CUDA backend the
/// same way): p_j = fl(e_j / s) with s = fl(Σ_j e_j), every row divided by the sum of its own
/// exponentials, so the error of exp itself cancels and |Σ_j p_j − 1| ≤ (L − 1)·u32 (the sum) +
/// u32 (the divisions) = L·2^-24 to first order (u32 = 2^-24).
/// Storing rounds each p_j to the dataset's type, whose unit roundoff is u = 2^-(m+1) for m
/// stored mantissa bits (float32 2^-24, float16 2^-11, bfloat16 2^-8): |p̂_j − p_j| ≤ u·p_j where
/// p̂_j is normal, and at most h, half the subnormal spacing, 2^-(bias+m) (float16 2^-25), below.
/// As Σ_j p_j = 1, rounding moves the sum by at most u + L·h: each value's error is relative to
/// that value, so the sum's error is u, not the L·u of L values each off by a full u. Hence
///     tol = 2·(L·2^-24 + u + L·h)
/// (the factor 2 covers second-order terms and other writers' summation orders): float32 at
/// L = 512, 6.1e-5; float16 at L = 512, 1.1e-3; float16 at L = 16, 1.0e-3. A row that is
/// off by a whole key's share (1/L) is far outside it.
double attention_sum_tolerance(const H5::DataType& type, hsize_t L) {
    std::size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0, bias = 0;
    if (H5Tget_fields(type.getId(), &spos, &epos, &esize, &mpos, &msize) < 0 || msize == 0) {
        msize = 23;  // not a float type HDF5 describes: float32's
        bias = 127;
    } else {
        bias = H5Tget_ebias(type.getId());
    }
    H5Eclear2(H5E_DEFAULT);
    const double n = static_cast<double>(L);
    const double u = std::ldexp(1.0, -static_cast<int>(msize + 1));
    const double h = std::ldexp(1.0, -static_cast<int>(std::min<std::size_t>(bias + msize, 1000)));
    return 2.0 * (n * std::ldexp(1.0, -24) + u + n * h);
}

class DumpChecker : public FormatChecker {
public:
    using FormatChecker::FormatChecker;

    void run() {
        check_root("routescope-dump", kDumpFormatVersion);
        if (stopped_) return;
        check_model();
        check_data();
        check_vocab();
        check_tokens();
        check_layers();
        check_kernels();
        check_mixing();
    }

private:
    std::optional<hsize_t> S_, L_, V_;
    std::optional<std::int64_t> n_layers_, d_model_;
    /// /data/lengths when the value scan read it and every length lies in 1..L (else empty): the
    /// padding of each example's attention rows.
    std::vector<std::int64_t> lengths_;
    /// /model config's model.causal (docs/config.md): attention keys after the query are 0.
    bool causal_ = false;

    void check_model() {
        if (!h5::is_group(file_, "model")) {
            add("/model", "a group with attrs arch, name, n_layers, d_model",
                h5::describe_path(file_, "model"));
            return;
        }
        H5::Group model = file_.openGroup("model");
        if (auto arch = require_string_attr(model, "/model", "arch")) {
            if (!kArchs.count(*arch))
                add("/model",
                    "attr arch one of bigs, stack_ssm, gated_att, bert, birdie, slstm, gmlp, "
                    "external",
                    "'" + *arch + "'");
        }
        require_string_attr(model, "/model", "name");
        n_layers_ = require_int_attr(model, "/model", "n_layers");
        // At most 2^31 − 1, as model.n_layers (docs/config.md): the FLOP model and the views
        // compute with it (2^64 − 1 read as 2^63 − 1 passed).
        if (n_layers_ && (*n_layers_ < 0 || *n_layers_ > std::numeric_limits<std::int32_t>::max()))
            add("/model", "attr n_layers in 0 … 2^31 − 1", h5::int_attr_text(model, "n_layers"));
        d_model_ = require_int_attr(model, "/model", "d_model");
        if (d_model_ && *d_model_ < 1)
            add("/model", "attr d_model ≥ 1", h5::int_attr_text(model, "d_model"));
        optional_json_attr(model, "/model", "config");
        if (auto config = h5::read_string_attr(model, "config")) {
            const nlohmann::json j = parse_json_or_discarded(*config);
            if (j.is_object() && j.contains("model") && j["model"].is_object()) {
                const auto& m = j["model"];
                causal_ =
                    m.contains("causal") && m["causal"].is_boolean() && m["causal"].get<bool>();
            }
        }
        if (h5::has_attr(model, "checkpoint") && !h5::read_string_attr(model, "checkpoint"))
            add("/model", "attr checkpoint a string", h5::attr_type_name(model, "checkpoint"));
        if (h5::has_attr(model, "checkpoint_sha256")) {
            auto sha = h5::read_string_attr(model, "checkpoint_sha256");
            const bool hex =
                sha && sha->size() == 64 && std::all_of(sha->begin(), sha->end(), [](char c) {
                    return std::isxdigit(static_cast<unsigned char>(c));
                });
            if (!hex)
                add("/model", "attr checkpoint_sha256 a 64-digit hex string",
                    sha ? "'" + *sha + "'" : h5::attr_type_name(model, "checkpoint_sha256"));
        }
    }

    void check_data() {
        if (!h5::is_group(file_, "data")) {
            add("/data", "a group holding tokens and lengths", h5::describe_path(file_, "data"));
            return;
        }
        // tokens: int32 [S, L]
        if (auto ds = require_dataset("/data/tokens")) {
            auto shape = h5::shape_of(*ds);
            expect_int32(*ds, "/data/tokens");
            if (shape.size() != 2) {
                add("/data/tokens", "rank 2 [S, L]",
                    "rank " + std::to_string(shape.size()) + " " + h5::shape_text(shape));
            } else if (shape[0] == 0 || shape[1] == 0) {
                add("/data/tokens", "S ≥ 1 and L ≥ 1", "shape " + h5::shape_text(shape));
            } else {
                S_ = shape[0];
                L_ = shape[1];
            }
        }
        // lengths: int32 [S], 1 ≤ length ≤ L
        if (auto ds = require_dataset("/data/lengths")) {
            expect_int32(*ds, "/data/lengths");
            if (expect_shape(*ds, "/data/lengths", {S_}, "[S]") && S_ && L_ &&
                options_.scan_values) {
                std::vector<std::int64_t> lengths;
                bool in_range = true;
                const bool read =
                    scan_ints(*ds, "/data/lengths", [&](std::int64_t v, std::uint64_t i) {
                        if (v >= 1 && v <= static_cast<std::int64_t>(*L_)) {
                            lengths.push_back(v);
                            return true;
                        }
                        add("/data/lengths", "values in 1..L=" + std::to_string(*L_),
                            std::to_string(v) + " at [" + std::to_string(i) + "]");
                        return in_range = false;
                    });
                if (read && in_range && lengths.size() == *S_) lengths_ = std::move(lengths);
            }
        }
        for (const char* name : {"labels", "predictions"}) {
            const std::string path = std::string("/data/") + name;
            if (!h5::exists(file_, path.substr(1))) continue;
            if (auto ds = dataset_at(path)) {
                expect_int32(*ds, path);
                // Any value is a label; read so that a dataset no reader can read is found here,
                // not by every analysis after validate passed it.
                if (expect_shape(*ds, path, {S_}, "[S]") && options_.scan_values)
                    scan_ints(*ds, path, [](std::int64_t, std::uint64_t) { return true; });
            }
        }
        if (h5::exists(file_, "data/text")) {
            if (auto ds = dataset_at("/data/text")) {
                const bool strings = h5::is_string(ds->getDataType());
                if (!strings)
                    add("/data/text", "vlen utf-8 strings", h5::type_name(ds->getDataType()));
                if (expect_shape(*ds, "/data/text", {S_}, "[S]") && strings)
                    read_strings(*ds, "/data/text");
            }
        }
        if (h5::exists(file_, "data/reset_mask")) {
            if (auto ds = dataset_at("/data/reset_mask")) {
                const bool int8 =
                    ds->getDataType().getClass() == H5T_INTEGER && ds->getDataType().getSize() == 1;
                if (!int8) add("/data/reset_mask", "int8", h5::type_name(ds->getDataType()));
                if (expect_shape(*ds, "/data/reset_mask", {S_, L_}, "[S, L]") && int8 &&
                    options_.scan_values) {
                    // Bit flags (MODELS.md): 1 = new packed sample, 2 = causal region.
                    scan_ints(*ds, "/data/reset_mask", [&](std::int64_t v, std::uint64_t i) {
                        if (v >= 0 && v <= 3) return true;
                        add("/data/reset_mask", "values in 0..3 (bit 1 new sample, bit 2 causal)",
                            std::to_string(v) + " at [" + std::to_string(i / *L_) + ", " +
                                std::to_string(i % *L_) + "]");
                        return false;
                    });
                }
            }
        }
        if (h5::exists(file_, "data/attributes")) {
            if (!h5::is_group(file_, "data/attributes")) {
                add("/data/attributes", "a group of float64 [S] datasets",
                    h5::describe_path(file_, "data/attributes"));
            } else {
                H5::Group attrs = file_.openGroup("data/attributes");
                for (const auto& name : h5::children(attrs)) {
                    const std::string path = "/data/attributes/" + name;
                    if (auto ds = dataset_at(path)) {
                        if (!(h5::is_float(ds->getDataType()) && ds->getDataType().getSize() == 8))
                            add(path, "float64", h5::type_name(ds->getDataType()));
                        if (expect_shape(*ds, path, {S_}, "[S]")) scan_finite(*ds, path);
                    }
                }
            }
        }
    }

    void check_vocab() {
        if (!h5::exists(file_, "vocab")) return;
        auto ds = dataset_at("/vocab");
        if (!ds) return;
        const bool strings = h5::is_string(ds->getDataType());
        if (!strings) add("/vocab", "vlen utf-8 strings", h5::type_name(ds->getDataType()));
        auto shape = h5::shape_of(*ds);
        if (shape.size() != 1) {
            add("/vocab", "rank 1 [V]", "rank " + std::to_string(shape.size()));
            return;
        }
        V_ = shape[0];
        if (strings) read_strings(*ds, "/vocab");
    }

    // Reads every string of a rank-1 string dataset (/vocab, /data/text), in both modes: its
    // type and shape say nothing of its storage, and variable-length strings are ids into the
    // file's global heap, metadata that libhdf5 trusts. A damaged id is an HDF5 read error
    // ("address of object past end of allocation"), reported here with the rows, instead of by
    // the analysis that reads the dataset after validate passed the file; or libhdf5 1.10
    // crashes on it (SIGSEGV, "free(): invalid size"; h5py too). `validate` and every command's
    // input check run this in a child process (contained_validation.hpp), where that crash is
    // the verdict "corrupt HDF5 metadata while reading /vocab" (the breadcrumb set before each
    // read), exit 1. The value scan also checks that each string is UTF-8, as every reader
    // decodes them (h5::read_strings; ASCII is UTF-8), whatever character set the type declares.
    void read_strings(const H5::DataSet& ds, const std::string& path) {
        const auto shape = h5::shape_of(ds);
        if (shape.size() != 1 || shape[0] == 0) return;
        const hsize_t n = shape[0];
        const H5::DataType type = ds.getDataType();
        const bool vlen = type.isVariableStr();
        const std::size_t width = vlen ? 0 : type.getSize();
        // Blocks of 1024 strings (the writer's chunk of /data/text); fixed-width ones about 8 MB.
        const hsize_t block =
            vlen ? 1024
                 : std::clamp<hsize_t>((8u << 20) / std::max<std::size_t>(width, 1), 1, 1024);
        H5::StrType vlen_type(H5::PredType::C_S1, H5T_VARIABLE);
        vlen_type.setCset(H5T_CSET_UTF8);  // as h5::read_strings reads them
        H5::DataSpace file_space = ds.getSpace();
        std::vector<char*> pointers;
        std::vector<char> fixed;
        std::uint64_t invalid = 0;
        std::string first_invalid;
        // Reads rows [r0, r0 + count) into `pointers` or `fixed`; false on an HDF5 read error.
        const auto read_rows = [&](hsize_t r0, hsize_t count, H5::DataSpace& mem_space) {
            h5::breadcrumb(path);
            file_space.selectHyperslab(H5S_SELECT_SET, &count, &r0);
            mem_space = H5::DataSpace(1, &count);
            try {
                if (vlen) {
                    pointers.assign(count, nullptr);
                    ds.read(pointers.data(), vlen_type, mem_space, file_space);
                } else {
                    fixed.resize(count * width);
                    ds.read(fixed.data(), type, mem_space, file_space);
                }
            } catch (const H5::Exception&) {
                return false;
            }
            return true;
        };
        for (hsize_t r0 = 0; r0 < n; r0 += block) {
            const hsize_t count = std::min(block, n - r0);
            H5::DataSpace mem_space;
            if (!read_rows(r0, count, mem_space)) {
                const std::string why = h5::error_stack_text();
                // The first row that fails, read one at a time (a damaged heap id is one row).
                hsize_t first_bad = r0;
                for (hsize_t r = r0; r < r0 + count; ++r) {
                    H5::DataSpace one;
                    const bool ok = read_rows(r, 1, one);
                    if (ok && vlen)
                        H5Dvlen_reclaim(vlen_type.getId(), one.getId(), H5P_DEFAULT,
                                        pointers.data());
                    if (!ok) {
                        first_bad = r;
                        break;
                    }
                }
                (void)h5::error_stack_text();  // the probes' own errors: cleared
                // A filter this library lacks (h5py's lzf) is no damage: the strings are intact
                // and read wherever the filter is installed, so the documented missing-filter
                // message alone (error_stack_text's wording for it), as for any other dataset.
                const bool missing_filter = why.rfind("the data is compressed with ", 0) == 0;
                add(path, "readable strings",
                    std::string(missing_filter ? "" : "damaged string storage: ") +
                        "an HDF5 read error at [" + std::to_string(first_bad) + "] (" + why + ")");
                return;
            }
            if (options_.scan_values) {
                for (hsize_t i = 0; i < count; ++i) {
                    std::string_view text;
                    if (vlen)
                        text = pointers[i] ? std::string_view(pointers[i]) : std::string_view();
                    else
                        text = std::string_view(fixed.data() + i * width, width);
                    const auto bad = data::first_invalid_utf8(text);
                    if (!bad) continue;
                    if (invalid++ == 0)
                        first_invalid = "invalid UTF-8 at [" + std::to_string(r0 + i) + "], byte " +
                                        std::to_string(*bad);
                }
            }
            if (vlen)
                H5Dvlen_reclaim(vlen_type.getId(), mem_space.getId(), H5P_DEFAULT, pointers.data());
        }
        if (invalid)
            add(path, "UTF-8 strings",
                first_invalid + " (" + count_text(invalid, "string", "strings") + " not UTF-8)");
    }

    // Token ids index the embedding table and /vocab: never negative, and below V when the dump
    // has a vocabulary (the dump reader rejects the same ids when it reads them).
    void check_tokens() {
        if (!options_.scan_values || !S_ || !L_ || !h5::is_dataset(file_, "data/tokens")) return;
        H5::DataSet tokens = file_.openDataSet("data/tokens");
        if (tokens.getDataType().getClass() != H5T_INTEGER) return;
        if (h5::storage_problem(tokens, file_size_)) return;  // reported by check_data
        scan_ints(tokens, "/data/tokens", [&](std::int64_t id, std::uint64_t i) {
            if (id >= 0 && (!V_ || id < static_cast<std::int64_t>(*V_))) return true;
            add("/data/tokens",
                !V_        ? std::string("ids ≥ 0")
                : *V_ == 0 ? std::string("no ids at all: /vocab is empty (V = 0), and ids must be "
                                         "below V")
                           : "ids in 0..V−1=" + std::to_string(*V_ - 1) + " (V from /vocab)",
                std::to_string(id) + " at [" + std::to_string(i / *L_) + ", " +
                    std::to_string(i % *L_) + "]");
            return false;
        });
    }

    void check_layers() {
        if (!h5::exists(file_, "layers")) return;
        if (!h5::is_group(file_, "layers")) {
            add("/layers", "a group", h5::describe_path(file_, "layers"));
            return;
        }
        H5::Group layers = file_.openGroup("layers");
        for (const auto& name : h5::children(layers)) {
            const std::string base = "/layers/" + name;
            if (!check_layer_index(name, base)) continue;
            if (!h5::is_group(layers, name)) {
                add(base, "a group", h5::describe_path(layers, name));
                continue;
            }
            check_layer(file_.openGroup("layers/" + name), base, name == "0");
        }
    }

    void check_layer(const H5::Group& g, const std::string& base, bool embeddings) {
        // Rows: all S examples, or the S' listed in example_index.
        std::optional<hsize_t> rows = S_;
        // The length of each row's example (value scan, lengths and example_index in range).
        std::vector<std::int64_t> row_lengths = lengths_;
        if (h5::exists(g, "example_index")) {
            row_lengths.clear();
            const std::string path = base + "/example_index";
            if (auto ds = dataset_at(path)) {
                expect_int32(*ds, path);
                auto shape = h5::shape_of(*ds);
                if (shape.size() != 1) {
                    add(path, "rank 1 [S']", "rank " + std::to_string(shape.size()));
                    rows.reset();
                } else {
                    rows = shape[0];
                    bool in_range = true;
                    // Each example at most once: the row of each example seen so far (a value
                    // names the example its row belongs to, so a repeat is two rows claiming it).
                    std::vector<std::int64_t> first_row;
                    if (S_ && options_.scan_values)
                        scan_ints(*ds, path, [&](std::int64_t v, std::uint64_t i) {
                            if (v >= 0 && v < static_cast<std::int64_t>(*S_)) {
                                if (first_row.empty())
                                    first_row.assign(static_cast<std::size_t>(*S_), -1);
                                auto& first = first_row[static_cast<std::size_t>(v)];
                                if (first >= 0) {
                                    add(path, "each example at most once",
                                        "example " + std::to_string(v) + " at [" +
                                            std::to_string(first) + "] and [" + std::to_string(i) +
                                            "]");
                                    return in_range = false;
                                }
                                first = static_cast<std::int64_t>(i);
                                if (!lengths_.empty())
                                    row_lengths.push_back(lengths_[static_cast<std::size_t>(v)]);
                                return true;
                            }
                            add(path, "row indices in 0..S−1=" + std::to_string(*S_ - 1),
                                std::to_string(v) + " at [" + std::to_string(i) + "]");
                            return in_range = false;
                        });
                    if (!in_range || row_lengths.size() != shape[0]) row_lengths.clear();
                }
            }
        }
        const std::optional<hsize_t> d =
            d_model_ ? std::optional<hsize_t>(static_cast<hsize_t>(*d_model_)) : std::nullopt;
        const char* rows_name = h5::exists(g, "example_index") ? "S'" : "S";
        if (auto ds = dataset_at(base + "/hidden")) {
            check_float_dataset(*ds, base + "/hidden", {rows, L_, d},
                                std::string("[") + rows_name + ", L, d]");
        }
        if (h5::exists(g, "sentence")) {
            if (auto ds = dataset_at(base + "/sentence"))
                check_float_dataset(*ds, base + "/sentence", {rows, d},
                                    std::string("[") + rows_name + ", d]");
        }
        if (h5::exists(g, "attention")) {
            // Attention probabilities [rows, H, L, L] (`dump --attention`) of block l ≥ 1; layer 0,
            // the embeddings, has none.
            if (embeddings)
                add(base + "/attention",
                    "no attention at layer 0 (the embeddings; attention belongs to blocks l ≥ 1)",
                    h5::describe_path(g, "attention"));
            else if (auto ds = dataset_at(base + "/attention"))
                check_attention(*ds, base + "/attention", rows, rows_name, row_lengths);
        }
        if (h5::exists(g, "gates")) {
            if (!h5::is_group(g, "gates")) {
                add(base + "/gates", "a group", h5::describe_path(g, "gates"));
                return;
            }
            H5::Group gates = g.openGroup("gates");
            std::optional<std::int64_t> reverse_from;
            if (h5::has_attr(gates, "reverse_from")) {
                // Birdie: channels ≥ reverse_from scan right to left (DUMP_FORMAT.md).
                reverse_from = h5::read_int_attr(gates, "reverse_from");
                if (!reverse_from || *reverse_from < 1)
                    add(base + "/gates", "attr reverse_from a positive integer",
                        reverse_from ? std::to_string(*reverse_from)
                                     : h5::attr_type_name(gates, "reverse_from"));
            }
            for (const auto& gate : h5::children(gates)) {
                const std::string path = base + "/gates/" + gate;
                auto ds = dataset_at(path);
                if (!ds) continue;
                // S-LSTM's sentence_weight has one more column: the sentence node's own weight.
                const bool plus_one = gate == "sentence_weight";
                std::optional<hsize_t> len =
                    L_ ? std::optional<hsize_t>(*L_ + (plus_one ? 1 : 0)) : std::nullopt;
                check_float_dataset(
                    *ds, path, {rows, len, std::nullopt},
                    std::string("[") + rows_name + (plus_one ? ", L+1, k]" : ", L, k]"));
                const auto shape = h5::shape_of(*ds);
                if (shape.size() == 3 && shape[2] == 0)
                    add(path, "k ≥ 1 gate channels", "k = 0 " + h5::shape_text(shape));
                if (reverse_from && *reverse_from >= 1 && shape.size() == 3 &&
                    static_cast<hsize_t>(*reverse_from) >= shape[2])
                    add(path,
                        "k > reverse_from = " + std::to_string(*reverse_from) + " (attr of " +
                            base + "/gates)",
                        "k = " + std::to_string(shape[2]));
            }
        }
    }

    // Each query row of a head is a distribution over the keys (docs/formats/dump.md): values
    // ≥ 0 summing to 1 within attention_sum_tolerance; keys at or after the example's length
    // (padding) exactly 0, and with model.causal the keys after the query too. Read in the
    // finiteness scan's own pass (full mode); rows holding NaN/Inf are that scan's.
    void check_attention(const H5::DataSet& ds, const std::string& path,
                         std::optional<hsize_t> rows, const char* rows_name,
                         const std::vector<std::int64_t>& row_lengths) {
        const auto shape = h5::shape_of(ds);
        struct Rule {
            std::uint64_t count = 0;
            std::string first;
            void hit(const std::string& what) {
                if (count++ == 0) first = what;
            }
        } sums, negative, padding, causal;
        const H5::DataType type = ds.getDataType();
        const hsize_t H = shape.size() == 4 ? shape[1] : 0, L = shape.size() == 4 ? shape[3] : 0;
        const double tol = attention_sum_tolerance(type, L);
        const bool have_lengths =
            !row_lengths.empty() && shape.size() == 4 && row_lengths.size() == shape[0];
        const auto visit = [&](const float* values, hsize_t r0, hsize_t nrows, hsize_t row) {
            if (H == 0 || L == 0 || row != H * L * L) return false;
            for (hsize_t r = 0; r < nrows; ++r) {
                const hsize_t s = r0 + r;
                const hsize_t n =
                    have_lengths ? static_cast<hsize_t>(row_lengths[static_cast<std::size_t>(s)])
                                 : L;
                for (hsize_t h = 0; h < H; ++h)
                    for (hsize_t i = 0; i < L; ++i) {
                        const float* p = values + ((r * H + h) * L + i) * L;
                        double sum = 0;
                        bool finite = true;
                        for (hsize_t j = 0; j < L; ++j) {
                            const float v = p[j];
                            if (!std::isfinite(v)) {
                                finite = false;
                                continue;
                            }
                            sum += v;
                            if (v < 0)
                                negative.hit(number_text(v) + " at " + index_text({s, h, i, j}));
                            if (v == 0) continue;
                            if (j >= n)
                                padding.hit(number_text(v) + " at " + index_text({s, h, i, j}) +
                                            ", a padding key (the example's length is " +
                                            std::to_string(n) + ")");
                            else if (causal_ && j > i)
                                causal.hit(number_text(v) + " at " + index_text({s, h, i, j}) +
                                           ", a key after the query");
                        }
                        if (finite && std::abs(sum - 1.0) > tol)
                            sums.hit("a row summing to " + number_text(sum) + " at " +
                                     index_text({s, h, i}));
                    }
            }
            return true;
        };
        check_float_dataset(ds, path, {rows, std::nullopt, L_, L_},
                            std::string("[") + rows_name + ", H, L, L]", visit);
        if (negative.count)
            add(path, "probabilities ≥ 0",
                negative.first + " (" +
                    count_text(negative.count, "negative value", "negative values") + ")");
        if (sums.count)
            add(path,
                "rows (over the keys) that sum to 1 within " + number_text(tol) + " (" +
                    h5::type_name(type) + ", L = " + std::to_string(L) + ")",
                sums.first + " (" + count_text(sums.count, "row", "rows") + " off)");
        if (padding.count)
            add(path, "exactly 0 at padding keys (key ≥ the example's length)",
                padding.first + " (" +
                    count_text(padding.count, "non-zero value", "non-zero values") + ")");
        if (causal.count)
            add(path, "exactly 0 at keys after the query (/model config: model.causal)",
                causal.first + " (" +
                    count_text(causal.count, "non-zero value", "non-zero values") + ")");
    }

    void check_kernels() {
        if (!h5::exists(file_, "kernels")) return;
        if (!h5::is_group(file_, "kernels")) {
            add("/kernels", "a group", h5::describe_path(file_, "kernels"));
            return;
        }
        H5::Group kernels = file_.openGroup("kernels");
        for (const auto& name : h5::children(kernels)) {
            const std::string base = "/kernels/" + name;
            if (!check_layer_index(name, base)) continue;
            if (name == "0") {
                add(base, "kernels of blocks l ≥ 1 only (layer 0 is the embeddings)", "'0'");
                continue;
            }
            if (!h5::is_group(kernels, name)) {
                add(base, "a group with forward/backward datasets",
                    h5::describe_path(kernels, name));
                continue;
            }
            H5::Group g = kernels.openGroup(name);
            for (const char* dir : {"forward", "backward"}) {
                if (!h5::exists(g, dir)) continue;
                if (auto ds = dataset_at(base + "/" + dir)) {
                    check_float_dataset(*ds, base + "/" + dir, {std::nullopt}, "[Lk]");
                    // A kernel of no taps: `analyze kernels` had nothing to read and said the
                    // layer "has no forward kernel" of a file validate had passed.
                    const auto shape = h5::shape_of(*ds);
                    if (shape.size() == 1 && shape[0] == 0)
                        add(base + "/" + dir, "a kernel of at least one tap", "length 0");
                }
            }
            // Every channel group's kernel (H > 1 kernels per SSM): [H, Lk] with H dividing d,
            // and its skips D_<direction>_groups [H], float64.
            for (const char* dir : {"forward", "backward"}) {
                const std::string groups = std::string(dir) + "_groups";
                const std::string skips = "D_" + groups;
                if (!h5::exists(g, groups)) {
                    if (h5::exists(g, skips)) add(base + "/" + skips, "beside " + groups, "alone");
                    continue;
                }
                auto ds = dataset_at(base + "/" + groups);
                if (!ds) continue;
                check_float_dataset(*ds, base + "/" + groups, {std::nullopt, std::nullopt},
                                    "[H, Lk]");
                const auto shape = h5::shape_of(*ds);
                if (shape.size() != 2) continue;
                if (d_model_ && (shape[0] < 1 || *d_model_ % static_cast<std::int64_t>(shape[0])))
                    add(base + "/" + groups, "H dividing d_model = " + std::to_string(*d_model_),
                        "H = " + std::to_string(shape[0]));
                check_group_row0(g, base, dir, *ds, shape);
                auto d = h5::exists(g, skips) ? dataset_at(base + "/" + skips) : std::nullopt;
                if (!d) {
                    add(base + "/" + skips, "present beside " + groups, "missing");
                    continue;
                }
                if (!h5::is_float(d->getDataType()))
                    add(base + "/" + skips, "a float dataset", h5::type_name(d->getDataType()));
                else if (expect_shape(*d, base + "/" + skips, {shape[0]}, "[H]"))
                    scan_finite(*d, base + "/" + skips);
            }
            for (const char* attr : {"D_forward", "D_backward"}) {
                if (!h5::has_attr(g, attr)) continue;
                auto v = h5::read_float_attr(g, attr);
                if (!v)
                    add(base, std::string("attr ") + attr + " a float",
                        h5::attr_type_name(g, attr));
                else if (!std::isfinite(*v))
                    add(base, std::string("attr ") + attr + " finite", std::to_string(*v));
            }
        }
    }

    // "row 0 equals `forward`" (docs/formats/dump.md): the kernel of the first channel group is
    // `<dir>`, so `<dir>_groups` needs it beside it with the same Lk (structure) and the same
    // values (value scan; compared as numbers, positions holding NaN/Inf left to scan_finite).
    void check_group_row0(const H5::Group& g, const std::string& base, const char* dir,
                          const H5::DataSet& groups, const std::vector<hsize_t>& shape) {
        const std::string gpath = base + "/" + dir + "_groups", kpath = base + "/" + dir;
        if (!h5::exists(g, dir)) {
            add(gpath, std::string("beside ") + kpath + " (its row 0)", "alone");
            return;
        }
        if (!h5::is_dataset(g, dir)) return;  // reported with `dir`
        H5::DataSet kernel = g.openDataSet(dir);
        const auto kshape = h5::shape_of(kernel);
        if (kshape.size() != 1 || h5::storage_problem(kernel, file_size_) ||
            !h5::is_float(kernel.getDataType()) || !h5::is_float(groups.getDataType()))
            return;  // reported with `dir` or the groups
        if (kshape[0] != shape[1]) {
            add(gpath,
                "rows of Lk = " + std::to_string(kshape[0]) + " values (the length of " + kpath +
                    ", its row 0)",
                "shape " + h5::shape_text(shape));
            return;
        }
        if (!options_.scan_values || shape[0] == 0 || shape[1] == 0) return;
        const hsize_t Lk = shape[1];
        if (2 * Lk * sizeof(double) > h5::read_memory_limit()) return;  // scan_finite said so
        std::vector<double> row0(Lk), k(Lk);
        try {
            H5::DataSpace file_space = groups.getSpace();
            const hsize_t start[2] = {0, 0}, count[2] = {1, Lk};
            file_space.selectHyperslab(H5S_SELECT_SET, count, start);
            H5::DataSpace mem_space(1, &Lk);
            h5::breadcrumb(gpath);
            groups.read(row0.data(), H5::PredType::NATIVE_DOUBLE, mem_space, file_space);
            h5::breadcrumb(kpath);
            kernel.read(k.data(), H5::PredType::NATIVE_DOUBLE);
        } catch (const H5::Exception&) {
            (void)h5::error_stack_text();  // a read error: reported by scan_finite
            return;
        }
        for (hsize_t j = 0; j < Lk; ++j) {
            if (!std::isfinite(row0[j]) || !std::isfinite(k[j]) || row0[j] == k[j]) continue;
            add(gpath, "row 0 equal to " + kpath,
                number_text(row0[j]) + " at [0, " + std::to_string(j) + "] where " + kpath + "[" +
                    std::to_string(j) + "] is " + number_text(k[j]));
            return;
        }
    }

    void check_mixing() {
        if (!h5::exists(file_, "mixing")) return;
        if (!h5::is_group(file_, "mixing")) {
            add("/mixing", "a group", h5::describe_path(file_, "mixing"));
            return;
        }
        H5::Group mixing = file_.openGroup("mixing");
        for (const auto& name : h5::children(mixing)) {
            const std::string path = "/mixing/" + name;
            if (!check_layer_index(name, path)) continue;
            if (name == "0") {
                add(path, "mixing matrices of blocks l ≥ 1 only (layer 0 is the embeddings)",
                    "'0'");
                continue;
            }
            auto ds = dataset_at(path);
            if (!ds) continue;
            auto shape = h5::shape_of(*ds);
            if (shape.size() == 2 && shape[0] != shape[1]) {
                add(path, "a square [n, n] matrix", "shape " + h5::shape_text(shape));
                continue;
            }
            check_float_dataset(*ds, path, {std::nullopt, std::nullopt}, "[n, n]");
        }
    }

    /// "<l>" is a decimal integer without leading zeros, at most n_layers (0 … 2^31 − 1: ten
    /// digits are a layer index; a name of any length is parsed without overflow).
    bool check_layer_index(const std::string& name, const std::string& path) {
        const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        if (!digits || (name.size() > 1 && name[0] == '0')) {
            add(path, "a layer index (decimal integer without leading zeros)", "'" + name + "'");
            return false;
        }
        // Saturating at 2^32: past every n_layers (at most 2^31 − 1), and far from overflow.
        constexpr std::uint64_t kCap = std::uint64_t{1} << 32;
        std::uint64_t index = 0;
        for (const char c : name)
            index = std::min(kCap, index * 10 + static_cast<std::uint64_t>(c - '0'));
        // Without a usable n_layers (reported at /model), the largest it may be.
        const auto int32_max = static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max());
        const bool known =
            n_layers_ && *n_layers_ >= 0 && static_cast<std::uint64_t>(*n_layers_) <= int32_max;
        const std::uint64_t most = known ? static_cast<std::uint64_t>(*n_layers_) : int32_max;
        if (index > most) {
            add(path,
                "a layer index in 0.." + std::to_string(most) +
                    (known ? " (/model n_layers)" : " (2^31 − 1, the largest n_layers)"),
                name);
            return false;
        }
        return true;
    }
};

}  // namespace

ValidationReport validate_dump(const std::string& path, const ValidateOptions& options) {
    ValidationReport report;
    report.file = path;
    report.kind = FileKind::Dump;
    DumpChecker checker(path, options, report);
    if (checker.opened()) checker.guarded([&] { checker.run(); });
    return report;
}

}  // namespace routescope
