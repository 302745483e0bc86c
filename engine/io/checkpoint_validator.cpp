// Checks a checkpoint against CHECKPOINT_FORMAT.md version 1 (structure, dtypes, finiteness).
// Each parameter's shape is compared with the one /config implies (the model's parameter layout)
// when /config parses; the loader checks the rest against the configuration.
#include <H5Cpp.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/config.hpp"
#include "engine/data/task.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/format_checker.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/validation.hpp"
#include "engine/models/model.hpp"

namespace routescope {
namespace {

class CheckpointChecker : public FormatChecker {
public:
    using FormatChecker::FormatChecker;

    void run() {
        check_root("routescope-checkpoint", kCheckpointFormatVersion);
        if (stopped_) return;
        check_config();
        check_params();
        check_tokenizer();
        check_train();
    }

private:
    std::vector<std::pair<std::string, std::vector<hsize_t>>> params_;
    std::map<std::string, std::vector<hsize_t>> expected_;  // from /config, when it parses
    std::vector<std::string> layout_order_;                 // the model's parameter order
    std::map<std::string, std::vector<hsize_t>> found_;     // /params as stored

    void check_config() {
        if (!h5::is_group(file_, "config")) {
            add("/config", "a group with attr json", h5::describe_path(file_, "config"));
            return;
        }
        H5::Group config = file_.openGroup("config");
        if (!h5::has_attr(config, "json")) {
            add("/config", "attr json (the run configuration)", "nothing");
            return;
        }
        optional_json_attr(config, "/config", "json");
        // The parameters' shapes the configuration implies, when it is one: each /params dataset
        // and its optimizer moments are compared with them (else the moments, compared with
        // /params alone, were blamed for a parameter of the wrong shape). A configuration that
        // does not parse is the loader's to report.
        try {
            const auto text = h5::read_string_attr(config, "json");
            if (!text) return;
            const RunConfig c = RunConfig::parse(*text);
            // The built-in task every command generates from /config (eval, dump, train
            // --resume refuse another name): data.generate_task's list, said here.
            if (c.data.task && !c.data.task->empty()) {
                const auto& names = data::task_names();
                if (std::find(names.begin(), names.end(), *c.data.task) == names.end()) {
                    std::string list;
                    for (const auto& n : names)
                        list += (list.empty() ? "" : ", ") + n;
                    add("/config", "data.task one of " + list, "'" + *c.data.task + "'");
                }
            }
            // The layout is built from /config's numbers, which the file merely states: a
            // 230 kB checkpoint saying model.n_layers = 50,000,000 made every reader build 1.5
            // billion entries (minutes, gigabytes). Compared first with the datasets /params
            // can hold, counted from its links (layout names have no '/', so its direct
            // children are all a loader looks at).
            if (h5::is_group(file_, "params")) {
                const auto held = h5::child_dataset_links(file_.openGroup("params"));
                if (const auto why = parameter_count_problem(c.model, held)) {
                    add("/config", "a model whose parameter tensors /params holds", *why);
                    return;
                }
            }
            for (const auto& e : models::Model::parameter_layout(c.model)) {
                expected_[e.name] = std::vector<hsize_t>(e.shape.begin(), e.shape.end());
                layout_order_.push_back(e.name);
            }
        } catch (const std::exception&) {
            expected_.clear();
            layout_order_.clear();
        }
    }

    void check_params() {
        if (!h5::is_group(file_, "params")) {
            add("/params", "a group of float32 parameters", h5::describe_path(file_, "params"));
            return;
        }
        H5::Group params = file_.openGroup("params");
        if (const auto id = h5::object_identity(params.getId())) {
            groups_seen_.insert(*id);
            ancestors_[*id] = "/params";
        }
        walk_params(params, "", 0);
        if (params_.empty()) add("/params", "at least one parameter", "an empty group");
        // In the model's order: the first parameter whose shape differs from /config's, then
        // how many more do (a /config of another width makes them all differ).
        std::size_t differ = 0;
        for (const auto& name : layout_order_) {
            const auto it = found_.find(name);
            if (it == found_.end() || it->second == expected_.at(name)) continue;
            if (differ++ == 0)
                add("/params/" + name,
                    "shape " + h5::shape_text(expected_.at(name)) + " (as /config's model implies)",
                    h5::shape_text(it->second));
        }
        if (differ > 1)
            add("/params", "the shapes /config's model implies",
                std::to_string(differ - 1) +
                    " more parameters of other shapes (is /config the "
                    "model's?)");
        // A parameter the model of /config does not have, said here (the structure stage): it was
        // reported only as its missing optimizer moments, which pointed the user the wrong way.
        if (!expected_.empty())
            for (const auto& [name, shape] : found_)
                if (!expected_.count(name))
                    add("/params/" + name, "a parameter of the model of /config",
                        "an unexpected parameter " + h5::shape_text(shape));
    }

    // Parameter names contain dots, not slashes, but accept nested groups from other writers.
    // Each group once: a hard link back to a group being walked (h5py's
    // `h['params/sub'] = h['params']`) made validate, inspect and every loader's input check
    // recurse for good; it is a violation naming the link and where it leads. Nesting is bounded
    // too (a recursion as deep as the file says could exhaust the stack).
    static constexpr int kMaxParamDepth = 16;
    std::set<std::string> groups_seen_;             // object identities walked
    std::map<std::string, std::string> ancestors_;  // the groups the walk is inside

    void walk_params(const H5::Group& g, const std::string& prefix, int depth) {
        for (const auto& name : h5::children(g)) {
            const std::string rel = prefix.empty() ? name : prefix + "/" + name;
            const std::string path = "/params/" + rel;
            if (h5::is_group(g, name)) {
                H5::Group child = g.openGroup(name);
                const auto id = h5::object_identity(child.getId());
                if (id) {
                    // A link back to a group this path is inside is a cycle; a second link to a
                    // group walked elsewhere is walked once (what it holds was checked there).
                    if (const auto up = ancestors_.find(*id); up != ancestors_.end()) {
                        add(path, "a parameter (a float32 dataset) or a group of them",
                            "a link back to " + up->second +
                                " (a cycle in the file's groups: the path never ends)");
                        continue;
                    }
                    if (!groups_seen_.insert(*id).second) continue;
                }
                if (depth + 1 > kMaxParamDepth) {
                    add(path, "groups nested at most " + std::to_string(kMaxParamDepth) + " deep",
                        "a deeper group (parameter names have no '/')");
                    continue;
                }
                if (id) ancestors_.emplace(*id, path);
                walk_params(child, rel, depth + 1);
                if (id) ancestors_.erase(*id);
                continue;
            }
            auto ds = dataset_at(path);
            if (!ds) continue;
            const H5::DataType type = ds->getDataType();
            if (!(h5::is_float(type) && type.getSize() == 4))
                add(path, "dtype float32", h5::type_name(type));
            const auto shape = h5::shape_of(*ds);
            const auto want = expected_.find(rel);
            found_[rel] = shape;
            params_.emplace_back(rel, want != expected_.end() ? want->second : shape);
            if (h5::is_float(type)) scan_finite(*ds, path);
        }
    }

    // FormatChecker::dataset_at, refusing virtual storage first: a checkpoint holds everything
    // needed to run its model "and nothing outside it" (docs/formats/checkpoint.md), and a
    // parameter mapped from another file made eval's results change with a file never named
    // while the checkpoint's SHA-256, which dumps record as provenance, stayed the same.
    std::optional<H5::DataSet> dataset_at(const std::string& path) {
        if (h5::is_dataset(file_, path.substr(1))) {
            const H5::DataSet ds = file_.openDataSet(path.substr(1));
            if (const auto sources = h5::virtual_sources(ds)) {
                add(path, "a dataset stored in the checkpoint (it holds nothing outside it)",
                    "a virtual dataset over " + *sources);
                return std::nullopt;
            }
        }
        return FormatChecker::dataset_at(path);
    }

    void check_tokenizer() {
        if (!h5::is_group(file_, "tokenizer")) {
            add("/tokenizer", "a group with attr kind", h5::describe_path(file_, "tokenizer"));
            return;
        }
        H5::Group tok = file_.openGroup("tokenizer");
        auto kind = require_string_attr(tok, "/tokenizer", "kind");
        static const std::set<std::string> kinds = {"sentencepiece", "bytes", "wordpiece",
                                                    "wordpiece_cased"};
        if (kind && !kinds.count(*kind))
            add("/tokenizer", "attr kind one of sentencepiece, bytes, wordpiece, wordpiece_cased",
                "'" + *kind + "'");
        const bool needs_model = kind && *kind != "bytes";
        if (!h5::exists(tok, "model")) {
            if (needs_model)
                add("/tokenizer/model", "uint8 [n] (the serialized tokenizer)", "nothing");
            return;
        }
        if (auto ds = dataset_at("/tokenizer/model")) {
            const H5::DataType type = ds->getDataType();
            if (type.getClass() != H5T_INTEGER || type.getSize() != 1)
                add("/tokenizer/model", "dtype uint8", h5::type_name(type));
            expect_shape(*ds, "/tokenizer/model", {std::nullopt}, "[n]");
        }
    }

    void check_train() {
        if (!h5::exists(file_, "train")) return;
        if (!h5::is_group(file_, "train")) {
            add("/train", "a group", h5::describe_path(file_, "train"));
            return;
        }
        H5::Group train = file_.openGroup("train");
        require_int_attr(train, "/train", "step");
        for (const char* name : {"tokens_seen", "data_position"})
            if (h5::has_attr(train, name)) require_int_attr(train, "/train", name);
        if (h5::has_attr(train, "rng_state") &&
            train.openAttribute("rng_state").getDataType().getClass() != H5T_INTEGER)
            add("/train", "attr rng_state an integer array",
                h5::attr_type_name(train, "rng_state"));
        for (const char* moment : {"adam_m", "adam_v"}) {
            if (!h5::exists(train, moment)) continue;
            for (const auto& [name, shape] : params_) {
                if (!expected_.empty() && !expected_.count(name)) continue;  // reported above
                const std::string rel = std::string("train/") + moment + "/" + name;
                const std::string path = "/" + rel;
                if (!h5::exists(file_, rel)) {
                    add(path, "a dataset shaped like /params/" + name, "nothing");
                    continue;
                }
                auto ds = dataset_at(path);
                if (!ds) continue;
                std::vector<std::optional<hsize_t>> dims(shape.begin(), shape.end());
                // AdamW's second moment is an average of squares: a negative one is no state
                // the optimizer reaches (its square root is NaN at the first step of a resume,
                // which then blamed train.lr). The first, where, and how many.
                std::uint64_t negative = 0;
                std::string first;
                const auto stored = h5::shape_of(*ds);
                const FloatBlockVisitor nonnegative = [&](const float* v, hsize_t r0, hsize_t nrows,
                                                          hsize_t row) {
                    for (hsize_t i = 0; i < nrows * row; ++i) {
                        if (!(v[i] < 0) || negative++ > 0) continue;
                        // The dataset's coordinates, as the finiteness scan gives them.
                        std::vector<hsize_t> at(stored.size());
                        hsize_t flat = r0 * row + i;
                        for (std::size_t k = stored.size(); k-- > 0;) {
                            at[k] = stored[k] ? flat % stored[k] : 0;
                            flat = stored[k] ? flat / stored[k] : 0;
                        }
                        first = number_text(v[i]) + " at " + h5::shape_text(at);
                    }
                    return true;
                };
                const bool second = std::string(moment) == "adam_v";
                check_float_dataset(*ds, path, dims,
                                    h5::shape_text(shape) + " (as /params/" + name +
                                        (expected_.count(name) ? " under /config" : "") + ")",
                                    second ? nonnegative : FloatBlockVisitor());
                if (negative > 0)
                    add(path, "values ≥ 0 (AdamW's second moment, an average of squares)",
                        first + " (" + std::to_string(negative) + " negative in all)");
            }
        }
        check_mixture_controller(train);
    }

    // /train/mixture_controller (objective birdie; docs/decisions.md, "Birdie mixture: the
    // controller state is saved"): attrs arms (string) and updates (integer), float arrays of one
    // value per arm.
    void check_mixture_controller(const H5::Group& train) {
        if (!h5::exists(train, "mixture_controller")) return;
        const std::string where = "/train/mixture_controller";
        if (!h5::is_group(train, "mixture_controller")) {
            add(where, "a group", h5::describe_path(train, "mixture_controller"));
            return;
        }
        H5::Group g = train.openGroup("mixture_controller");
        require_int_attr(g, where, "updates");
        const auto arms = h5::read_string_attr(g, "arms");
        if (!arms) {
            add(where, "attr arms (the arm names, comma-separated)",
                h5::has_attr(g, "arms") ? h5::attr_type_name(g, "arms") : "nothing");
            return;
        }
        const auto n = static_cast<hsize_t>(std::count(arms->begin(), arms->end(), ',') + 1);
        for (const char* name : {"mixture", "rewards", "predicted", "losses"}) {
            const std::string path = where + "/" + name;
            if (!h5::exists(file_, path.substr(1))) {
                add(path, "a float array of one value per arm", "nothing");
                continue;
            }
            auto ds = dataset_at(path);
            if (!ds) continue;
            const auto shape = h5::shape_of(*ds);
            if (!h5::is_float(ds->getDataType()) || shape != std::vector<hsize_t>{n})
                add(path, "a float array of one value per arm, [" + std::to_string(n) + "]",
                    h5::type_name(ds->getDataType()) + " " + h5::shape_text(shape));
        }
    }
};

}  // namespace

ValidationReport validate_checkpoint_structure(const std::string& path,
                                               const ValidateOptions& options) {
    ValidationReport report;
    report.file = path;
    report.kind = FileKind::Checkpoint;
    CheckpointChecker checker(path, options, report);
    if (checker.opened()) checker.guarded([&] { checker.run(); });
    return report;
}

ValidationReport validate_checkpoint(const std::string& path, const ValidateOptions& options) {
    ValidationReport report = validate_checkpoint_structure(path, options);
    if (!report.ok()) return report;
    try {
        (void)read_checkpoint(path);
    } catch (const std::exception& e) {
        // read_checkpoint's messages start with the file name; the report already carries it.
        std::string what = e.what();
        if (what.rfind(path + ": ", 0) == 0) what = what.substr(path.size() + 2);
        std::string where = "/";
        if (!what.empty() && what[0] == '/' && what.find(": ") != std::string::npos) {
            where = what.substr(0, what.find(": "));
            what = what.substr(where.size() + 2);
        }
        // "expected X, found Y" from the reader is said as such ("expected a checkpoint every
        // command can load, found expected 2 integers …, found …" read as nonsense).
        const std::size_t found = what.find(", found ");
        if (what.rfind("expected ", 0) == 0 && found != std::string::npos)
            report.violations.push_back({where, what.substr(9, found - 9), what.substr(found + 8)});
        else
            report.violations.push_back({where, "a checkpoint every command can load", what});
    }
    return report;
}

ValidationReport validate_file(const std::string& path, const ValidateOptions& options) {
    // The root attr `format` picks the checker; anything else is checked as a dump, whose root
    // check then names the missing or unknown format.
    std::string format;
    if (!h5::unreadable_reason(path)) {
        try {
            H5::H5File f(path, H5F_ACC_RDONLY);
            format = h5::read_string_attr(f, "format").value_or("");
        } catch (const H5::Exception&) {
        }
    }
    if (format == "routescope-checkpoint") return validate_checkpoint(path, options);
    return validate_dump(path, options);
}

const char* file_kind_name(FileKind kind) {
    switch (kind) {
        case FileKind::Dump:
            return "dump";
        case FileKind::Checkpoint:
            return "checkpoint";
        default:
            return "unknown";
    }
}

}  // namespace routescope
