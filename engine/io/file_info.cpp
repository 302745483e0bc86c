#include "engine/io/file_info.hpp"

#include <H5Cpp.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/h5_file.hpp"

namespace routescope {

std::string DatasetInfo::shape_text() const {
    std::vector<hsize_t> s(shape.begin(), shape.end());
    return h5::shape_text(s);
}

std::string human_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1000 && u < 4) {
        v /= 1000;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

namespace {

std::optional<DatasetInfo> dataset_info(const H5::Group& root, const std::string& rel) {
    if (!h5::is_dataset(root, rel)) return std::nullopt;
    H5::DataSet ds = root.openDataSet(rel);
    DatasetInfo info;
    info.path = "/" + rel;
    info.dtype = h5::type_name(ds.getDataType());
    for (auto d : h5::shape_of(ds))
        info.shape.push_back(d);
    return info;
}

bool layer_index(const std::string& name, int& out) {
    if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return false;
    if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    out = std::stoi(name);
    return true;
}

void read_dump(const H5::H5File& f, FileInfo& info) {
    if (h5::is_group(f, "model")) {
        H5::Group m = f.openGroup("model");
        info.arch = h5::read_string_attr(m, "arch").value_or("");
        info.name = h5::read_string_attr(m, "name").value_or("");
        info.n_layers = h5::read_int_attr(m, "n_layers").value_or(0);
        info.d_model = h5::read_int_attr(m, "d_model").value_or(0);
        info.config_json = h5::read_string_attr(m, "config").value_or("");
        info.checkpoint = h5::read_string_attr(m, "checkpoint").value_or("");
        info.checkpoint_sha256 = h5::read_string_attr(m, "checkpoint_sha256").value_or("");
    }
    if (auto tokens = dataset_info(f, "data/tokens"); tokens && tokens->shape.size() == 2) {
        info.examples = tokens->shape[0];
        info.length = tokens->shape[1];
    }
    if (h5::is_group(f, "data")) {
        H5::Group data = f.openGroup("data");
        for (const auto& name : h5::children(data)) {
            if (auto ds = dataset_info(f, "data/" + name)) info.data.push_back(*ds);
        }
        if (h5::is_group(f, "data/attributes"))
            for (const auto& name : h5::children(f.openGroup("data/attributes")))
                if (auto ds = dataset_info(f, "data/attributes/" + name)) info.data.push_back(*ds);
    }
    if (auto vocab = dataset_info(f, "vocab"); vocab && vocab->shape.size() == 1)
        info.vocab = vocab->shape[0];
    if (h5::is_group(f, "layers")) {
        for (const auto& name : h5::children(f.openGroup("layers"))) {
            LayerInfo layer;
            if (!layer_index(name, layer.index) || !h5::is_group(f, "layers/" + name)) continue;
            const std::string base = "layers/" + name;
            layer.hidden = dataset_info(f, base + "/hidden");
            layer.sentence = dataset_info(f, base + "/sentence");
            layer.example_index = dataset_info(f, base + "/example_index");
            layer.attention = dataset_info(f, base + "/attention");
            if (h5::is_group(f, base + "/gates"))
                for (const auto& g : h5::children(f.openGroup(base + "/gates")))
                    if (auto ds = dataset_info(f, base + "/gates/" + g)) layer.gates.push_back(*ds);
            info.layers.push_back(std::move(layer));
        }
        std::sort(info.layers.begin(), info.layers.end(),
                  [](const auto& a, const auto& b) { return a.index < b.index; });
    }
    if (h5::is_group(f, "kernels")) {
        for (const auto& name : h5::children(f.openGroup("kernels"))) {
            KernelInfo k;
            if (!layer_index(name, k.index) || !h5::is_group(f, "kernels/" + name)) continue;
            k.forward = dataset_info(f, "kernels/" + name + "/forward");
            k.backward = dataset_info(f, "kernels/" + name + "/backward");
            H5::Group g = f.openGroup("kernels/" + name);
            k.d_forward = h5::read_float_attr(g, "D_forward");
            k.d_backward = h5::read_float_attr(g, "D_backward");
            info.kernels.push_back(std::move(k));
        }
        std::sort(info.kernels.begin(), info.kernels.end(),
                  [](const auto& a, const auto& b) { return a.index < b.index; });
    }
    if (h5::is_group(f, "mixing"))
        for (const auto& name : h5::children(f.openGroup("mixing")))
            if (auto ds = dataset_info(f, "mixing/" + name)) info.mixing.push_back(*ds);
}

void read_checkpoint(const H5::H5File& f, FileInfo& info) {
    if (h5::is_group(f, "config")) {
        info.config_json = h5::read_string_attr(f.openGroup("config"), "json").value_or("");
        const auto cfg = parse_json_or_discarded(info.config_json);  // depth-checked
        if (!cfg.is_discarded() && cfg.contains("model") && cfg["model"].is_object()) {
            const auto& m = cfg["model"];
            if (m.contains("arch") && m["arch"].is_string()) info.arch = m["arch"];
            if (m.contains("d_model") && m["d_model"].is_number_integer())
                info.d_model = m["d_model"];
            if (m.contains("n_layers") && m["n_layers"].is_number_integer())
                info.n_layers = m["n_layers"];
        }
    }
    if (h5::is_group(f, "params")) {
        for (const auto& name : h5::children(f.openGroup("params"))) {
            auto ds = dataset_info(f, "params/" + name);
            if (!ds) continue;
            std::uint64_t n = 1;
            for (auto d : ds->shape)
                n *= d;
            info.parameter_count += n;
            info.params.push_back(*ds);
        }
    }
    if (h5::is_group(f, "tokenizer"))
        info.tokenizer_kind = h5::read_string_attr(f.openGroup("tokenizer"), "kind").value_or("");
    if (h5::is_group(f, "train")) info.train_step = h5::read_int_attr(f.openGroup("train"), "step");
}

}  // namespace

FileInfo read_file_info(const std::string& path) {
    H5::H5File f = h5::open_read(path);
    FileInfo info;
    info.file = path;
    std::error_code ec;
    info.file_size = std::filesystem::file_size(path, ec);
    const std::string format = h5::read_string_attr(f, "format").value_or("");
    info.kind = format == "routescope-checkpoint" ? FileKind::Checkpoint
                : format == "routescope-dump"     ? FileKind::Dump
                                                  : FileKind::Unknown;
    info.format_version = h5::read_int_attr(f, "format_version").value_or(0);
    info.producer = h5::read_string_attr(f, "producer").value_or("");
    info.created = h5::read_string_attr(f, "created").value_or("");
    try {
        if (info.kind == FileKind::Checkpoint)
            read_checkpoint(f, info);
        else
            read_dump(f, info);
    } catch (const H5::Exception& e) {
        throw FormatError(path + ": cannot read its structure: " + e.getDetailMsg());
    }
    return info;
}

std::string summary_text(const FileInfo& info) {
    // Names and paths from the file with their control characters as \xNN (a model name with ESC
    // sequences, or a newline that forges a line of this summary, printed as it is).
    const auto v = [](const std::string& text) { return data::printable_text(text); };
    std::ostringstream s;
    s << v(info.file) << "\n";
    s << "  kind:      " << file_kind_name(info.kind) << " (format version " << info.format_version
      << "), " << human_bytes(info.file_size) << "\n";
    if (!info.producer.empty()) s << "  producer:  " << v(info.producer) << "\n";
    if (!info.created.empty()) s << "  created:   " << v(info.created) << "\n";
    s << "  model:     " << (info.name.empty() ? "(unnamed)" : v(info.name)) << " — arch "
      << v(info.arch) << ", " << info.n_layers << " layers, d_model " << info.d_model << "\n";
    if (!info.checkpoint.empty()) s << "  from:      " << v(info.checkpoint) << "\n";
    if (info.kind == FileKind::Checkpoint) {
        s << "  params:    " << info.params.size() << " tensors, " << info.parameter_count
          << " values\n";
        s << "  tokenizer: " << (info.tokenizer_kind.empty() ? "(none)" : v(info.tokenizer_kind))
          << "\n";
        if (info.train_step) s << "  resumable: step " << *info.train_step << "\n";
        for (const auto& p : info.params)
            s << "    " << v(p.path) << "  " << p.dtype << " " << p.shape_text() << "\n";
        return s.str();
    }
    s << "  examples:  S = " << info.examples << ", padded length L = " << info.length;
    if (info.vocab) s << ", vocabulary " << info.vocab;
    s << "\n  data:     ";
    for (const auto& d : info.data)
        s << " " << v(d.path.substr(6)) << " (" << d.dtype << " " << d.shape_text() << ")";
    s << "\n  layers:    " << info.layers.size() << " stored\n";
    for (const auto& l : info.layers) {
        s << "    " << l.index << ":";
        if (l.hidden) s << " hidden " << l.hidden->dtype << " " << l.hidden->shape_text();
        if (l.sentence) s << ", sentence";
        if (l.attention)
            s << ", attention " << l.attention->dtype << " " << l.attention->shape_text();
        if (l.example_index && !l.example_index->shape.empty())
            s << ", " << l.example_index->shape[0] << " examples (example_index)";
        if (!l.gates.empty()) {
            s << ", gates";
            for (const auto& g : l.gates)
                s << " " << v(g.path.substr(g.path.rfind('/') + 1)) << g.shape_text();
        }
        s << "\n";
    }
    if (!info.kernels.empty()) {
        s << "  kernels:   " << info.kernels.size() << " layers (";
        for (std::size_t i = 0; i < info.kernels.size(); ++i)
            s << (i ? ", " : "") << info.kernels[i].index;
        s << ")";
        if (info.kernels[0].forward && !info.kernels[0].forward->shape.empty())
            s << ", length " << info.kernels[0].forward->shape[0];
        s << "\n";
    }
    if (!info.mixing.empty()) s << "  mixing:    " << info.mixing.size() << " spatial matrices\n";
    return s.str();
}

namespace {

// Length-prefixed fields (8-byte little-endian counts), no separators to escape: the strings come
// from a user's file and may hold any byte.
struct Writer {
    std::string out;
    void u64(std::uint64_t v) {
        for (int i = 0; i < 8; ++i)
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
    void f64(double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        u64(bits);
    }
    void str(const std::string& s) {
        u64(s.size());
        out += s;
    }
    void dataset(const DatasetInfo& d) {
        str(d.path);
        str(d.dtype);
        u64(d.shape.size());
        for (auto x : d.shape)
            u64(x);
    }
    void opt(const std::optional<DatasetInfo>& d) {
        u64(d ? 1 : 0);
        if (d) dataset(*d);
    }
    void opt(const std::optional<double>& d) {
        u64(d ? 1 : 0);
        if (d) f64(*d);
    }
    void datasets(const std::vector<DatasetInfo>& v) {
        u64(v.size());
        for (const auto& d : v)
            dataset(d);
    }
};

struct Reader {
    const std::string& in;
    std::size_t at = 0;
    bool ok = true;
    std::uint64_t u64() {
        if (!ok || in.size() - at < 8) {
            ok = false;
            return 0;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
        at += 8;
        return v;
    }
    std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
    double f64() {
        const std::uint64_t bits = u64();
        double v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }
    // A count of items each at least `min_bytes` long: no more than the bytes left can hold.
    std::uint64_t count(std::size_t min_bytes) {
        const std::uint64_t n = u64();
        if (ok && n > (in.size() - at) / std::max<std::size_t>(1, min_bytes)) ok = false;
        return ok ? n : 0;
    }
    std::string str() {
        const std::uint64_t n = count(1);
        if (!ok) return {};
        std::string s = in.substr(at, n);
        at += n;
        return s;
    }
    DatasetInfo dataset() {
        DatasetInfo d;
        d.path = str();
        d.dtype = str();
        const std::uint64_t n = count(8);
        for (std::uint64_t i = 0; i < n && ok; ++i)
            d.shape.push_back(u64());
        return d;
    }
    std::optional<DatasetInfo> opt_dataset() {
        if (u64() == 0 || !ok) return std::nullopt;
        return dataset();
    }
    std::optional<double> opt_double() {
        if (u64() == 0 || !ok) return std::nullopt;
        return f64();
    }
    std::vector<DatasetInfo> datasets() {
        std::vector<DatasetInfo> v;
        const std::uint64_t n = count(24);
        for (std::uint64_t i = 0; i < n && ok; ++i)
            v.push_back(dataset());
        return v;
    }
};

constexpr const char* kInfoTag = "RSFI1";

}  // namespace

std::string encode_file_info(const FileInfo& info) {
    Writer w;
    w.out = kInfoTag;
    w.str(info.file);
    w.u64(info.file_size);
    w.i64(static_cast<std::int64_t>(info.kind));
    w.i64(info.format_version);
    for (const std::string* s : {&info.producer, &info.created, &info.arch, &info.name,
                                 &info.config_json, &info.checkpoint, &info.checkpoint_sha256})
        w.str(*s);
    w.i64(info.n_layers);
    w.i64(info.d_model);
    w.u64(info.examples);
    w.u64(info.length);
    w.u64(info.vocab);
    w.datasets(info.data);
    w.u64(info.layers.size());
    for (const auto& l : info.layers) {
        w.i64(l.index);
        w.opt(l.hidden);
        w.opt(l.sentence);
        w.opt(l.example_index);
        w.opt(l.attention);
        w.datasets(l.gates);
    }
    w.u64(info.kernels.size());
    for (const auto& k : info.kernels) {
        w.i64(k.index);
        w.opt(k.forward);
        w.opt(k.backward);
        w.opt(k.d_forward);
        w.opt(k.d_backward);
    }
    w.datasets(info.mixing);
    w.datasets(info.params);
    w.u64(info.parameter_count);
    w.str(info.tokenizer_kind);
    w.u64(info.train_step ? 1 : 0);
    if (info.train_step) w.i64(*info.train_step);
    return w.out;
}

std::optional<FileInfo> decode_file_info(const std::string& bytes) {
    if (!bytes.starts_with(kInfoTag)) return std::nullopt;
    Reader r{bytes, std::strlen(kInfoTag)};
    FileInfo info;
    info.file = r.str();
    info.file_size = r.u64();
    const std::int64_t kind = r.i64();
    if (kind < 0 || kind > static_cast<std::int64_t>(FileKind::Checkpoint)) return std::nullopt;
    info.kind = static_cast<FileKind>(kind);
    info.format_version = r.i64();
    for (std::string* s : {&info.producer, &info.created, &info.arch, &info.name, &info.config_json,
                           &info.checkpoint, &info.checkpoint_sha256})
        *s = r.str();
    info.n_layers = r.i64();
    info.d_model = r.i64();
    info.examples = r.u64();
    info.length = r.u64();
    info.vocab = r.u64();
    info.data = r.datasets();
    const std::uint64_t layers = r.count(40);
    for (std::uint64_t i = 0; i < layers && r.ok; ++i) {
        LayerInfo l;
        l.index = static_cast<int>(r.i64());
        l.hidden = r.opt_dataset();
        l.sentence = r.opt_dataset();
        l.example_index = r.opt_dataset();
        l.attention = r.opt_dataset();
        l.gates = r.datasets();
        info.layers.push_back(std::move(l));
    }
    const std::uint64_t kernels = r.count(40);
    for (std::uint64_t i = 0; i < kernels && r.ok; ++i) {
        KernelInfo k;
        k.index = static_cast<int>(r.i64());
        k.forward = r.opt_dataset();
        k.backward = r.opt_dataset();
        k.d_forward = r.opt_double();
        k.d_backward = r.opt_double();
        info.kernels.push_back(std::move(k));
    }
    info.mixing = r.datasets();
    info.params = r.datasets();
    info.parameter_count = r.u64();
    info.tokenizer_kind = r.str();
    if (r.u64() != 0) info.train_step = r.i64();
    if (!r.ok || r.at != bytes.size()) return std::nullopt;
    return info;
}

}  // namespace routescope
