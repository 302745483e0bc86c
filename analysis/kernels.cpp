#include "analysis/kernels.hpp"

#include <H5Cpp.h>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

#include "analysis/hdf5_lock.hpp"
#include "engine/core/error.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/validation.hpp"

namespace routescope::analysis {

std::vector<double> s4d_kernel(const S4dParameters& p, std::int64_t length) {
    const double step = std::exp(p.log_step);
    std::vector<double> k(static_cast<std::size_t>(length), 0.0);
    for (std::size_t n = 0; n < p.a_re.size(); ++n) {
        const std::complex<double> a(std::min(p.a_re[n], -1e-4), p.a_im[n]);
        const std::complex<double> c(p.c_re[n], p.c_im[n]);
        const std::complex<double> b = c * (std::exp(step * a) - 1.0) / a;
        for (std::int64_t l = 0; l < length; ++l)
            k[static_cast<std::size_t>(l)] +=
                (b * std::exp(static_cast<double>(l) * step * a)).real();
    }
    return k;
}

std::vector<std::complex<double>> s4d_poles(const S4dParameters& p) {
    const double step = std::exp(p.log_step);
    std::vector<std::complex<double>> out;
    for (std::size_t n = 0; n < p.a_re.size(); ++n)
        out.push_back(std::exp(step * std::complex<double>(std::min(p.a_re[n], -1e-4), p.a_im[n])));
    return out;
}

std::vector<double> relative_kernel(const std::vector<double>& forward,
                                    const std::vector<double>& backward, double d_forward,
                                    double d_backward, int radius) {
    if (forward.empty()) throw FormatError("relative kernel: the forward kernel is empty");
    const bool causal = backward.empty();
    const int r_max = std::min<int>(
        radius,
        static_cast<int>(causal ? forward.size() : std::min(forward.size(), backward.size())) - 1);
    std::vector<double> v;
    for (int r = -r_max; r <= r_max; ++r) {
        if (r < 0)
            v.push_back(forward[static_cast<std::size_t>(-r)]);
        else if (r > 0)
            v.push_back(causal ? 0.0 : backward[static_cast<std::size_t>(r)]);
        else if (causal)
            v.push_back(forward[0] + d_forward);
        else
            v.push_back(0.5 * (forward[0] + d_forward) +
                        0.5 * (backward[0] + d_backward));  // lag 0 is in both directions
    }
    return v;
}

std::vector<double> min_max_scaled(const std::vector<double>& values) {
    std::vector<double> a(values.size());
    std::transform(values.begin(), values.end(), a.begin(), [](double x) { return std::abs(x); });
    const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
    const double low = *lo, span = *hi - *lo;
    for (double& x : a)
        x = span > 0 ? (x - low) / span : 0.0;
    return a;
}

std::vector<double> frequency_response(const std::vector<double>& kernel) {
    static std::mutex planner;  // FFTW's planner is not thread-safe; execution is
    const int n = static_cast<int>(kernel.size());
    std::vector<double> in(kernel);
    std::vector<fftw_complex> out(static_cast<std::size_t>(n / 2 + 1));
    fftw_plan plan;
    {
        std::lock_guard<std::mutex> lock(planner);
        plan = fftw_plan_dft_r2c_1d(n, in.data(), out.data(), FFTW_ESTIMATE);
    }
    fftw_execute(plan);
    {
        std::lock_guard<std::mutex> lock(planner);
        fftw_destroy_plan(plan);
    }
    std::vector<double> magnitude;
    for (const auto& c : out)
        magnitude.push_back(std::hypot(c[0], c[1]));
    return magnitude;
}

std::int64_t effective_length(const std::vector<double>& full) {
    const auto centre = static_cast<std::int64_t>(full.size() / 2);
    double total = 0;
    for (double x : full)
        total += std::abs(x);
    double covered = std::abs(full[static_cast<std::size_t>(centre)]);
    for (std::int64_t m = 0;; ++m) {
        if (m > 0)
            covered += std::abs(full[static_cast<std::size_t>(centre - m)]) +
                       std::abs(full[static_cast<std::size_t>(centre + m)]);
        if (covered >= 0.9 * total || m == centre) return m;
    }
}

namespace {

LayerKernel describe(int layer, std::vector<double> forward, std::vector<double> backward,
                     double d_f, double d_b, int radius) {
    LayerKernel k;
    k.layer = layer;
    k.d_forward = d_f;
    k.d_backward = d_b;
    k.relative = relative_kernel(forward, backward, d_f, d_b, radius);
    k.scaled = min_max_scaled(k.relative);
    k.response_forward = frequency_response(forward);
    if (!backward.empty()) k.response_backward = frequency_response(backward);
    const int full =
        static_cast<int>(backward.empty() ? forward.size()
                                          : std::min(forward.size(), backward.size())) -
        1;
    k.effective_length = effective_length(relative_kernel(forward, backward, d_f, d_b, full));
    k.forward = std::move(forward);
    k.backward = std::move(backward);
    return k;
}

/// "a vlen string", "an int64 array of 2": an attribute's type (h5::attr_type_name) in a sentence.
std::string with_article(const std::string& type) {
    if (type.rfind("an ", 0) == 0 || type.rfind("a ", 0) == 0) return type;
    const bool vowel = !type.empty() && std::string("aeiou").find(type[0]) != std::string::npos;
    return (vowel ? "an " : "a ") + type;
}

/// Reads /params/layers.<i>.ssm_<direction>.* of a checkpoint (CHECKPOINT_FORMAT.md).
class CheckpointSsm {
public:
    explicit CheckpointSsm(const std::string& path) : path_(path) {
        Hdf5Lock lock;
        h5::quiet_errors();
        file_ = h5::open_read(path);
        const auto format = h5::read_string_attr(file_, "format");
        if (format != "routescope-checkpoint")
            throw FormatError(path + ": root attr format is '" + format.value_or("(missing)") +
                              "', expected 'routescope-checkpoint'");
        const auto version = h5::read_int_attr(file_, "format_version");
        if (!version)
            // Present but of another type (the string "1", a float) is said as such: it was
            // "format_version (missing)".
            throw FormatError(
                path + ": root attr format_version " +
                (h5::has_attr(file_, "format_version")
                     ? "is " + with_article(h5::attr_type_name(file_, "format_version")) +
                           ", not an integer"
                     : "is missing (an integer, " + std::to_string(kCheckpointFormatVersion) +
                           " for this build)"));
        if (*version < 1 || *version > kCheckpointFormatVersion)
            throw FormatError(path + ": format_version " + std::to_string(*version) +
                              " is not one this build reads (1 … " +
                              std::to_string(kCheckpointFormatVersion) + ")");
        for (int i = 0;
             h5::is_dataset(file_, "params/layers." + std::to_string(i) + ".ssm_forward.A_re"); ++i)
            layers_.push_back(i + 1);
        // A causal model (model.causal = true) has forward SSMs only.
        causal_ = !layers_.empty() && !h5::is_dataset(file_, "params/layers.0.ssm_backward.A_re");
    }
    const std::vector<int>& layers() const { return layers_; }
    bool causal() const { return causal_; }
    /// H, the kernels per SSM: the first dimension of layer 1's forward A_re (metadata only).
    std::int64_t groups() const {
        Hdf5Lock lock;
        const auto shape = h5::shape_of(file_.openDataSet("params/layers.0.ssm_forward.A_re"));
        return shape.empty() ? 1 : static_cast<std::int64_t>(shape[0]);
    }

    S4dParameters read(int layer, bool forward, std::int64_t group = 0) const {
        Hdf5Lock lock;
        const std::string base = "params/layers." + std::to_string(layer - 1) +
                                 (forward ? ".ssm_forward." : ".ssm_backward.");
        auto dataset = [&](const std::string& name, std::size_t rank) {
            const std::string p = base + name;
            if (!h5::is_dataset(file_, p)) throw FormatError(path_ + ": missing parameter /" + p);
            H5::DataSet ds = file_.openDataSet(p);
            const auto shape = h5::shape_of(ds);
            if (shape.size() != rank)
                throw FormatError(path_ + ": /" + p + " has shape " + h5::shape_text(shape));
            std::size_t n = 1;
            for (auto s : shape)
                n *= s;
            std::vector<double> v(n);
            ds.read(v.data(), H5::PredType::NATIVE_DOUBLE);
            for (double x : v)
                if (!std::isfinite(x)) throw FormatError(path_ + ": /" + p + " holds NaN or Inf");
            return std::make_pair(v, shape);
        };
        const auto [a_re, shape] = dataset("A_re", 2);
        const auto a_im = dataset("A_im", 2).first;
        const auto c = dataset("C", 3).first;
        const auto d = dataset("D", 1).first;
        const auto step = dataset("log_step", 1).first;
        const std::size_t n = shape[1];
        if (n == 0 || shape[0] == 0)
            throw FormatError(path_ + ": /" + base + "A_re is " + h5::shape_text(shape) +
                              ": an SSM without modes has no kernel");
        if (a_im.size() != a_re.size() || c.size() != 2 * a_re.size() || d.size() != shape[0] ||
            step.size() != shape[0])
            throw FormatError(path_ + ": /" + base + "* shapes disagree (A_re " +
                              h5::shape_text(shape) + ")");
        S4dParameters p;
        p.groups = static_cast<std::int64_t>(shape[0]);
        if (group < 0 || group >= p.groups)
            throw ConfigError(path_ + ": --group " + std::to_string(group) + " is outside 0.." +
                              std::to_string(p.groups - 1) + " (the model has " +
                              std::to_string(p.groups) + " kernel(s) per SSM)");
        const auto g = static_cast<std::size_t>(group);
        p.a_re.assign(a_re.begin() + static_cast<std::ptrdiff_t>(g * n),
                      a_re.begin() + static_cast<std::ptrdiff_t>((g + 1) * n));
        p.a_im.assign(a_im.begin() + static_cast<std::ptrdiff_t>(g * n),
                      a_im.begin() + static_cast<std::ptrdiff_t>((g + 1) * n));
        for (std::size_t i = 0; i < n; ++i) {
            p.c_re.push_back(c[2 * (g * n + i)]);
            p.c_im.push_back(c[2 * (g * n + i) + 1]);
        }
        p.d = d[g];
        p.log_step = step[g];
        return p;
    }

    ~CheckpointSsm() {
        Hdf5Lock lock;
        file_.close();
    }

private:
    std::string path_;
    H5::H5File file_;
    std::vector<int> layers_;
    bool causal_ = false;
};

std::vector<int> pick(const std::vector<int>& present, const std::vector<int>& wanted,
                      const std::string& where) {
    if (wanted.empty()) return present;
    for (int l : wanted)
        if (std::find(present.begin(), present.end(), l) == present.end()) {
            std::string list;
            for (int p : present) {
                if (!list.empty()) list += ", ";
                list += std::to_string(p);
            }
            throw ConfigError(where + ": no SSM kernel for layer " + std::to_string(l) +
                              " (layers present: " + (list.empty() ? "none" : list) + ")");
        }
    return wanted;
}

LayerKernel checkpoint_layer(const CheckpointSsm& ckpt, int layer, const KernelOptions& options) {
    const S4dParameters f = ckpt.read(layer, true, options.group);
    if (ckpt.causal()) {  // forward only
        LayerKernel k =
            describe(layer, s4d_kernel(f, options.length), {}, f.d, 0.0, options.radius);
        k.poles_forward = s4d_poles(f);
        return k;
    }
    const S4dParameters b = ckpt.read(layer, false, options.group);
    LayerKernel k = describe(layer, s4d_kernel(f, options.length), s4d_kernel(b, options.length),
                             f.d, b.d, options.radius);
    k.poles_forward = s4d_poles(f);
    k.poles_backward = s4d_poles(b);
    return k;
}

}  // namespace

KernelsResult kernels_from_dump(const DumpReader& dump, const std::vector<int>& wanted,
                                const KernelOptions& options) {
    if (options.radius < 0) throw ConfigError("kernels: --radius must be ≥ 0");
    KernelsResult result;
    result.source = "dump";
    result.radius = options.radius;
    const auto present = dump.kernel_layers();
    const auto mixing = dump.mixing_layers();
    if (present.empty() && mixing.empty())
        throw ConfigError(dump.path() + ": the dump has no /kernels and no /mixing");
    std::vector<int> layers = wanted.empty() ? present : std::vector<int>{};
    for (int l : wanted)
        if (std::find(present.begin(), present.end(), l) != present.end())
            layers.push_back(l);
        else if (std::find(mixing.begin(), mixing.end(), l) == mixing.end())
            pick(present, {l}, dump.path());  // throws naming the layers present
    if (options.group < 0) throw ConfigError("kernels: --group must be ≥ 0");
    for (int l : layers) {
        auto f = dump.kernel(l, true), b = dump.kernel(l, false);  // b empty: a causal layer
        if (f.empty())
            throw FormatError(dump.path() + ": /kernels/" + std::to_string(l) +
                              " has no forward kernel");
        double df = dump.kernel_skip(l, true), db = dump.kernel_skip(l, false);
        const std::int64_t groups = dump.kernel_group_count(l, true);  // shape only
        result.groups = std::max<std::int64_t>(1, groups);
        if (options.group > 0) {  // another group's kernels: <direction>_groups row g
            if (options.group >= groups)
                throw ConfigError(
                    dump.path() + ": --group " + std::to_string(options.group) +
                    (groups > 1
                         ? " is outside 0.." + std::to_string(groups - 1) + " (the model has " +
                               std::to_string(groups) + " kernels per SSM)"
                         : ": layer " + std::to_string(l) +
                               " holds one kernel group (a model with one kernel per SSM, or a "
                               "dump written before /kernels/<l>/forward_groups existed)"));
            const auto g = static_cast<Eigen::Index>(options.group);
            const RowMatrixF fg = dump.kernel_groups(l, true);
            f.assign(fg.row(g).begin(), fg.row(g).end());
            df = dump.kernel_group_skips(l, true)[static_cast<std::size_t>(g)];
            if (!b.empty()) {
                const RowMatrixF bg = dump.kernel_groups(l, false);
                if (g >= bg.rows())
                    throw FormatError(dump.path() + ": /kernels/" + std::to_string(l) +
                                      "/backward_groups has fewer groups than forward_groups");
                b.assign(bg.row(g).begin(), bg.row(g).end());
                db = dump.kernel_group_skips(l, false)[static_cast<std::size_t>(g)];
            }
        }
        result.layers.push_back(
            describe(l, {f.begin(), f.end()}, {b.begin(), b.end()}, df, db, options.radius));
        // Finite kernels and skips that overflow in combination (|D| near 1.8e308): an error
        // naming the file, not null in the JSON and inf in the CSV.
        const LayerKernel& k = result.layers.back();
        for (const auto* values : {&k.relative, &k.scaled})
            for (const double v : *values)
                if (!std::isfinite(v))
                    throw FormatError(dump.path() + ": /kernels/" + std::to_string(l) +
                                      ": its kernels and skips combine beyond a double's range; "
                                      "a real model's are many orders smaller");
    }
    result.group = options.group;
    for (int l : mixing)
        if (wanted.empty() || std::find(wanted.begin(), wanted.end(), l) != wanted.end())
            result.mixing.push_back({l, dump.mixing(l)});
    result.provenance.analysis = "kernels";
    result.provenance.inputs.push_back(dump_input(dump));
    result.provenance.parameters = {
        {"radius", options.radius}, {"layers", wanted}, {"group", options.group}};
    return result;
}

KernelsResult kernels_from_checkpoint(const std::string& path, const std::vector<int>& wanted,
                                      const KernelOptions& options) {
    if (options.radius < 0 || options.length < 1)
        throw ConfigError("kernels: --radius ≥ 0 and --length ≥ 1");
    CheckpointSsm ckpt(path);
    KernelsResult result;
    result.source = "checkpoint";
    result.radius = options.radius;
    if (ckpt.layers().empty())
        throw ConfigError(path + ": the checkpoint has no layers.<i>.ssm_forward parameters");
    for (int l : pick(ckpt.layers(), wanted, path))
        result.layers.push_back(checkpoint_layer(ckpt, l, options));
    result.group = options.group;
    result.groups = ckpt.groups();
    result.provenance.analysis = "kernels";
    result.provenance.inputs.push_back(file_input(path, "checkpoint"));
    result.provenance.parameters = {{"radius", options.radius},
                                    {"length", options.length},
                                    {"layers", wanted},
                                    {"group", options.group}};
    return result;
}

KernelChangeResult kernel_change(const std::string& before, const std::string& after,
                                 const std::vector<int>& wanted, const KernelOptions& options) {
    CheckpointSsm a(before), b(after);
    if (a.causal() != b.causal())
        throw ConfigError(before + " and " + after + ": one model is causal, the other not");
    if (a.layers() != b.layers())
        throw ConfigError(before + " and " + after + " have different SSM layers (" +
                          std::to_string(a.layers().size()) + " against " +
                          std::to_string(b.layers().size()) + ")");
    KernelChangeResult result;
    result.radius = options.radius;
    for (int l : pick(a.layers(), wanted, before)) {
        const LayerKernel ka = checkpoint_layer(a, l, options),
                          kb = checkpoint_layer(b, l, options);
        KernelChange c;
        c.layer = l;
        c.before = ka.relative;
        c.after = kb.relative;
        for (std::size_t i = 0; i < c.before.size(); ++i)
            c.difference.push_back(c.after[i] - c.before[i]);
        const int full = static_cast<int>(options.length) - 1;
        const auto fa = relative_kernel(ka.forward, ka.backward, ka.d_forward, ka.d_backward, full);
        const auto fb = relative_kernel(kb.forward, kb.backward, kb.d_forward, kb.d_backward, full);
        double num = 0, den = 0;
        for (std::size_t i = 0; i < fa.size(); ++i) {
            num += (fb[i] - fa[i]) * (fb[i] - fa[i]);
            den += fa[i] * fa[i];
        }
        c.score = den > 0 ? std::sqrt(num / den) : std::numeric_limits<double>::infinity();
        result.layers.push_back(std::move(c));
    }
    result.provenance.analysis = "kernel-change";
    result.provenance.inputs = {file_input(before, "checkpoint_before"),
                                file_input(after, "checkpoint_after")};
    result.provenance.parameters = {{"radius", options.radius},
                                    {"length", options.length},
                                    {"layers", wanted},
                                    {"group", options.group}};
    return result;
}

namespace {
nlohmann::json complex_json(const std::vector<std::complex<double>>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& z : v)
        out.push_back({z.real(), z.imag()});
    return out;
}
}  // namespace

nlohmann::json KernelsResult::to_json() const {
    nlohmann::json out = {{"provenance", provenance.to_json()},
                          {"source", source},
                          {"radius", radius},
                          {"group", group},
                          {"groups", groups}};
    out["layers"] = nlohmann::json::array();
    for (const auto& k : layers) {
        nlohmann::json j = {{"layer", k.layer},
                            {"causal", k.backward.empty()},
                            {"relative", k.relative},
                            {"scaled", k.scaled},
                            {"forward", k.forward},
                            {"backward", k.backward},
                            {"D_forward", k.d_forward},
                            {"D_backward", k.d_backward},
                            {"response_forward", k.response_forward},
                            {"response_backward", k.response_backward},
                            {"effective_length", k.effective_length}};
        if (!k.poles_forward.empty()) {
            j["poles_forward"] = complex_json(k.poles_forward);
            j["poles_backward"] = complex_json(k.poles_backward);
        }
        out["layers"].push_back(j);
    }
    out["mixing"] = nlohmann::json::array();
    for (const auto& m : mixing) {
        nlohmann::json rows = nlohmann::json::array();
        for (Eigen::Index r = 0; r < m.w.rows(); ++r)
            rows.push_back(std::vector<float>(m.w.row(r).data(), m.w.row(r).data() + m.w.cols()));
        out["mixing"].push_back({{"layer", m.layer}, {"matrix", rows}});
    }
    return out;
}

CsvTable KernelsResult::table() const {
    CsvTable t;
    if (layers.empty() && !mixing.empty()) {
        // A gMLP: its spatial matrices W [L, L], what the figure shows (the CSV held only the
        // kernel columns' header). Row i (the output position) mixes column j (the input).
        t.columns = {"layer", "i", "j", "value"};
        for (const auto& m : mixing)
            for (Eigen::Index i = 0; i < m.w.rows(); ++i)
                for (Eigen::Index j = 0; j < m.w.cols(); ++j)
                    t.rows.push_back({m.layer, static_cast<std::int64_t>(i),
                                      static_cast<std::int64_t>(j), double(m.w(i, j))});
        return t;
    }
    t.columns = {"layer", "r", "value", "scaled"};
    for (const auto& k : layers) {
        const int r_max = static_cast<int>(k.relative.size() / 2);
        for (std::size_t i = 0; i < k.relative.size(); ++i)
            t.rows.push_back({k.layer, static_cast<int>(i) - r_max, k.relative[i], k.scaled[i]});
    }
    return t;
}

nlohmann::json KernelChangeResult::to_json() const {
    nlohmann::json out = {{"provenance", provenance.to_json()},
                          {"radius", radius},
                          {"layers", nlohmann::json::array()}};
    for (const auto& c : layers)
        out["layers"].push_back({{"layer", c.layer},
                                 {"before", c.before},
                                 {"after", c.after},
                                 {"difference", c.difference},
                                 {"change_score", c.score}});
    return out;
}

CsvTable KernelChangeResult::table() const {
    CsvTable t;
    t.columns = {"layer", "change_score"};
    for (const auto& c : layers)
        t.rows.push_back({c.layer, c.score});
    return t;
}

}  // namespace routescope::analysis
