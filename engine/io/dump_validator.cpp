// Checks an activation dump against DUMP_FORMAT.md version 1.
#include <H5Cpp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "engine/io/format_checker.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/validation.hpp"

namespace routescope {
namespace {

const std::set<std::string> kArchs = {"bigs",   "stack_ssm", "gated_att", "bert",
                                      "birdie", "slstm",     "gmlp",      "external"};

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

    void check_model() {
        if (!h5::is_group(file_, "model")) {
            add("/model", "a group with attrs arch, name, n_layers, d_model", "nothing");
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
            add("/model", "attr n_layers in 0 … 2^31 − 1", std::to_string(*n_layers_));
        d_model_ = require_int_attr(model, "/model", "d_model");
        if (d_model_ && *d_model_ < 1) add("/model", "attr d_model ≥ 1", std::to_string(*d_model_));
        optional_json_attr(model, "/model", "config");
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
            add("/data", "a group holding tokens and lengths", "nothing");
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
                scan_ints(*ds, "/data/lengths", [&](std::int64_t v, std::uint64_t i) {
                    if (v >= 1 && v <= static_cast<std::int64_t>(*L_)) return true;
                    add("/data/lengths", "values in 1..L=" + std::to_string(*L_),
                        std::to_string(v) + " at [" + std::to_string(i) + "]");
                    return false;
                });
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
                if (!h5::is_string(ds->getDataType()))
                    add("/data/text", "vlen utf-8 strings", h5::type_name(ds->getDataType()));
                expect_shape(*ds, "/data/text", {S_}, "[S]");
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
                add("/data/attributes", "a group of float64 [S] datasets", "a dataset");
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
        if (!h5::is_string(ds->getDataType()))
            add("/vocab", "vlen utf-8 strings", h5::type_name(ds->getDataType()));
        auto shape = h5::shape_of(*ds);
        if (shape.size() != 1) {
            add("/vocab", "rank 1 [V]", "rank " + std::to_string(shape.size()));
            return;
        }
        V_ = shape[0];
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
                V_ ? "ids in 0..V−1=" + std::to_string(*V_ - 1) + " (V from /vocab)"
                   : std::string("ids ≥ 0"),
                std::to_string(id) + " at [" + std::to_string(i / *L_) + ", " +
                    std::to_string(i % *L_) + "]");
            return false;
        });
    }

    void check_layers() {
        if (!h5::exists(file_, "layers")) return;
        if (!h5::is_group(file_, "layers")) {
            add("/layers", "a group", "a dataset");
            return;
        }
        H5::Group layers = file_.openGroup("layers");
        for (const auto& name : h5::children(layers)) {
            const std::string base = "/layers/" + name;
            if (!check_layer_index(name, base)) continue;
            if (!h5::is_group(layers, name)) {
                add(base, "a group", "a dataset");
                continue;
            }
            check_layer(file_.openGroup("layers/" + name), base);
        }
    }

    void check_layer(const H5::Group& g, const std::string& base) {
        // Rows: all S examples, or the S' listed in example_index.
        std::optional<hsize_t> rows = S_;
        if (h5::exists(g, "example_index")) {
            const std::string path = base + "/example_index";
            if (auto ds = dataset_at(path)) {
                expect_int32(*ds, path);
                auto shape = h5::shape_of(*ds);
                if (shape.size() != 1) {
                    add(path, "rank 1 [S']", "rank " + std::to_string(shape.size()));
                    rows.reset();
                } else {
                    rows = shape[0];
                    if (S_ && options_.scan_values)
                        scan_ints(*ds, path, [&](std::int64_t v, std::uint64_t i) {
                            if (v >= 0 && v < static_cast<std::int64_t>(*S_)) return true;
                            add(path, "row indices in 0..S−1=" + std::to_string(*S_ - 1),
                                std::to_string(v) + " at [" + std::to_string(i) + "]");
                            return false;
                        });
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
            // Attention probabilities [rows, H, L, L] (`dump --attention`): each row of a head a
            // distribution over the keys.
            if (auto ds = dataset_at(base + "/attention"))
                check_float_dataset(*ds, base + "/attention", {rows, std::nullopt, L_, L_},
                                    std::string("[") + rows_name + ", H, L, L]");
        }
        if (h5::exists(g, "gates")) {
            if (!h5::is_group(g, "gates")) {
                add(base + "/gates", "a group", "a dataset");
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

    void check_kernels() {
        if (!h5::exists(file_, "kernels")) return;
        if (!h5::is_group(file_, "kernels")) {
            add("/kernels", "a group", "a dataset");
            return;
        }
        H5::Group kernels = file_.openGroup("kernels");
        for (const auto& name : h5::children(kernels)) {
            const std::string base = "/kernels/" + name;
            if (!check_layer_index(name, base)) continue;
            if (!h5::is_group(kernels, name)) {
                add(base, "a group with forward/backward datasets", "a dataset");
                continue;
            }
            H5::Group g = kernels.openGroup(name);
            for (const char* dir : {"forward", "backward"}) {
                if (!h5::exists(g, dir)) continue;
                if (auto ds = dataset_at(base + "/" + dir))
                    check_float_dataset(*ds, base + "/" + dir, {std::nullopt}, "[Lk]");
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

    void check_mixing() {
        if (!h5::exists(file_, "mixing")) return;
        if (!h5::is_group(file_, "mixing")) {
            add("/mixing", "a group", "a dataset");
            return;
        }
        H5::Group mixing = file_.openGroup("mixing");
        for (const auto& name : h5::children(mixing)) {
            const std::string path = "/mixing/" + name;
            if (!check_layer_index(name, path)) continue;
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

    /// "<l>" is a decimal integer without leading zeros, at most n_layers.
    bool check_layer_index(const std::string& name, const std::string& path) {
        const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        if (!digits || (name.size() > 1 && name[0] == '0') || name.size() > 9) {
            add(path, "a layer index (decimal integer without leading zeros)", "'" + name + "'");
            return false;
        }
        const long index = std::stol(name);
        if (n_layers_ && index > *n_layers_) {
            add(path, "a layer index in 0.." + std::to_string(*n_layers_) + " (/model n_layers)",
                std::to_string(index));
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
