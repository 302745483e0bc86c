#include "engine/io/importers/model_import.hpp"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/core/memory.hpp"
#include "engine/data/utf8.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/h5_file.hpp"
#include "engine/io/h5_reserve.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/models/model.hpp"

namespace routescope::importers {

namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError(path + ": cannot read");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// ------------------------------------------------------------------ config.json

// The value of `key`, of exactly the JSON type T calls for: nlohmann's get<int> wraps 2^32 + 16
// to 16, truncates 16.5 to 16 and reads true as 1, so an edited config.json imported a model it
// does not describe.
template <class T>
T get_or(const nlohmann::json& hf, const std::string& key, T fallback, const std::string& where) {
    if (!hf.contains(key) || hf[key].is_null()) return fallback;
    const nlohmann::json& v = hf[key];
    const auto bad = [&](const std::string& expected) {
        throw FormatError(where + ": " + key + ": expected " + expected + ", got " + v.dump());
    };
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) bad("true or false");
    } else if constexpr (std::is_integral_v<T>) {
        const std::string range = "an integer in [" +
                                  std::to_string(std::numeric_limits<T>::min()) + ", " +
                                  std::to_string(std::numeric_limits<T>::max()) + "]";
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
                bad(range);
        } else if (v.is_number_integer()) {
            const auto i = v.get<std::int64_t>();
            if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max()) bad(range);
        } else if (v.is_number_float()) {  // 16.0 is 16; 16.5 is not an integer
            const double x = v.get<double>();
            if (!(x == std::floor(x)) || x < std::numeric_limits<T>::min() ||
                x > std::numeric_limits<T>::max())
                bad(range);
            return static_cast<T>(x);
        } else {
            bad(range);
        }
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) bad("a number");
    } else {
        if (!v.is_string()) bad("a string");
    }
    return v.get<T>();
}

template <class T>
T require(const nlohmann::json& hf, const std::string& key, const std::string& where) {
    if (!hf.contains(key)) throw FormatError(where + ": missing key " + key);
    return get_or<T>(hf, key, T{}, where);
}

// ------------------------------------------------------------------ the BiGS name map

enum class Transform { none, transpose, drop_unit_head };

struct Source {
    Source() = default;
    Source(std::string n, Transform t = Transform::none, std::string a = {})
        : name(std::move(n)), transform(t), alt(std::move(a)) {}
    std::string name;
    Transform transform = Transform::none;
    std::string alt;  ///< another name for the same tensor (old BERT LayerNorm gamma/beta)
};

// The source tensor of each engine parameter of a bigs model, in the names of `format`.
std::map<std::string, Source> bigs_sources(const ModelConfig& m, const std::string& format) {
    const bool flax = format == "flax";
    const std::string sep = flax ? "/" : ".";
    const std::string root = flax ? "s4_bert" : "bigs";
    const std::string w = flax ? "scale" : "weight";   // LayerNorm
    const std::string k = flax ? "kernel" : "weight";  // Dense
    const Transform dense = flax ? Transform::transpose : Transform::none;
    const auto join = [&](std::initializer_list<std::string> parts) {
        std::string s;
        for (const auto& p : parts)
            s += (s.empty() ? "" : sep) + p;
        return s;
    };
    std::map<std::string, Source> out;
    const auto linear = [&](const std::string& target, const std::string& source) {
        out[target + ".weight"] = {source + sep + k, dense};
        out[target + ".bias"] = {source + sep + "bias"};
    };
    const auto norm = [&](const std::string& target, const std::string& source) {
        out[target + ".weight"] = {source + sep + w};
        out[target + ".bias"] = {source + sep + "bias"};
    };
    const std::string emb = join({root, "embeddings"});
    const std::string table = flax ? "embedding" : "weight";
    out["embeddings.word.weight"] = {join({emb, "word_embeddings", table})};
    out["embeddings.position.weight"] = {join({emb, "position_embeddings", table})};
    out["embeddings.type.weight"] = {join({emb, "token_type_embeddings", table})};
    norm("embeddings.norm", join({emb, "LayerNorm"}));
    for (int i = 0; i < m.n_layers; ++i) {
        const std::string t = "layers." + std::to_string(i) + ".";
        const std::string s = join({root, "encoder", "layer", std::to_string(i)});
        norm(t + "norm", join({s, "LayerNorm"}));
        for (const char* lin :
             {"dv", "du_forward", "du_backward", "duc_forward", "duc_backward", "dol", "do"})
            linear(t + lin, join({s, lin}));
        for (const auto& [dir, src] : {std::pair{"ssm_forward", "fs4"}, {"ssm_backward", "bs4"}}) {
            const std::string ssm = join({s, src});
            // Flax: fs4/{A_re, A_im, C, log_step, D}; the PyTorch port: fs4.kernel.{A_re, A_im,
            // C, log_step} and fs4.D.
            const std::string kernel = flax ? ssm : join({ssm, "kernel"});
            for (const char* leaf : {"A_re", "A_im", "C", "log_step"})
                out[t + dir + "." + leaf] = {join({kernel, leaf}), Transform::drop_unit_head};
            out[t + dir + ".D"] = {join({ssm, "D"}), Transform::drop_unit_head};
        }
    }
    const std::string head = join({"cls", "predictions"});
    linear("mlm.dense", join({head, "transform", "dense"}));
    norm("mlm.norm", join({head, "transform", "LayerNorm"}));
    // transformers ties cls.predictions.bias to decoder.bias: a file may hold either name.
    out["mlm.bias"] = {join({head, "bias"}), Transform::none,
                       flax ? std::string() : "cls.predictions.decoder.bias"};
    linear("classifier.pool", join({root, "pooler", "dense"}));
    linear("classifier.out", "classifier");
    return out;
}

// The source tensor of each engine parameter of a Hugging Face BERT (BertForMaskedLM,
// BertForSequenceClassification, BertForPreTraining) in the names of `format`: PyTorch and
// safetensors ("bert.encoder.layer.0.attention.self.query.weight"; old checkpoints name
// LayerNorm's weight/bias gamma/beta) or Flax ("bert/encoder/layer/0/attention/self/query/kernel",
// Dense kernels [in, out], LayerNorm scale/bias, embeddings "embedding").
std::map<std::string, Source> bert_sources(const ModelConfig& m, const std::string& format) {
    const bool flax = format == "flax";
    const std::string sep = flax ? "/" : ".";
    const Transform dense = flax ? Transform::transpose : Transform::none;
    const auto name = [&](std::string dotted) {
        if (flax) std::replace(dotted.begin(), dotted.end(), '.', '/');
        return dotted;
    };
    std::map<std::string, Source> out;
    const auto linear = [&](const std::string& target, const std::string& source) {
        out[target + ".weight"] = {name(source) + sep + (flax ? "kernel" : "weight"), dense};
        out[target + ".bias"] = {name(source) + sep + "bias"};
    };
    const auto norm = [&](const std::string& target, const std::string& source) {
        if (flax) {
            out[target + ".weight"] = {name(source) + "/scale"};
            out[target + ".bias"] = {name(source) + "/bias"};
        } else {
            out[target + ".weight"] = {source + ".weight", Transform::none, source + ".gamma"};
            out[target + ".bias"] = {source + ".bias", Transform::none, source + ".beta"};
        }
    };
    const std::string table = flax ? "/embedding" : ".weight";
    out["embeddings.word.weight"] = {name("bert.embeddings.word_embeddings") + table};
    out["embeddings.position.weight"] = {name("bert.embeddings.position_embeddings") + table};
    out["embeddings.type.weight"] = {name("bert.embeddings.token_type_embeddings") + table};
    norm("embeddings.norm", "bert.embeddings.LayerNorm");
    for (int i = 0; i < m.n_layers; ++i) {
        const std::string t = "layers." + std::to_string(i) + ".";
        const std::string s = "bert.encoder.layer." + std::to_string(i) + ".";
        linear(t + "attn.q", s + "attention.self.query");
        linear(t + "attn.k", s + "attention.self.key");
        linear(t + "attn.v", s + "attention.self.value");
        linear(t + "attn.o", s + "attention.output.dense");
        norm(t + "norm1", s + "attention.output.LayerNorm");
        linear(t + "ffn1", s + "intermediate.dense");
        linear(t + "ffn2", s + "output.dense");
        norm(t + "norm2", s + "output.LayerNorm");
    }
    linear("mlm.dense", "cls.predictions.transform.dense");
    norm("mlm.norm", "cls.predictions.transform.LayerNorm");
    // transformers ties cls.predictions.bias to decoder.bias: a file may hold either name.
    out["mlm.bias"] = {name("cls.predictions.bias"), Transform::none,
                       flax ? std::string() : "cls.predictions.decoder.bias"};
    linear("classifier.pool", "bert.pooler.dense");
    linear("classifier.out", "classifier");
    return out;
}

// The engine parameter → source map of `m.arch` in the names of `format`.
std::map<std::string, Source> sources_of(const ModelConfig& m, const std::string& format) {
    if (m.arch == "bigs") return bigs_sources(m, format);
    if (m.arch == "bert") return bert_sources(m, format);
    throw Error("map_parameters: no name map for arch " + m.arch);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Whether `source` (a tensor of the file) can fill `target`'s shape under `transform`.
bool shape_fits(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target,
                Transform transform) {
    switch (transform) {
        case Transform::none:
            return source == target;
        case Transform::transpose:
            return target.size() == 2 && source == std::vector<std::int64_t>{target[1], target[0]};
        case Transform::drop_unit_head:
            // The published SSMs have one kernel (H = 1): A_re [N] for [1, N], C [N, 2] for
            // [1, N, 2], D and log_step [1] (or a scalar) for [1].
            if (source == target) return true;
            return !target.empty() && target[0] == 1 &&
                   source == std::vector<std::int64_t>(target.begin() + 1, target.end());
    }
    return false;
}

void copy_into(const NamedTensor& source, const ParamEntry& target, Transform transform,
               float* out) {
    if (transform == Transform::transpose) {
        const std::vector<float> values = source.values();
        const std::int64_t rows = target.shape[0], cols = target.shape[1];  // [out, in]
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c)
                out[r * cols + c] = values[static_cast<std::size_t>(c * rows + r)];
    } else {
        source.values_into(out);
    }
}

// Whether two tensors hold the same float32 values bit for bit (compared in blocks, so that lazy
// tensors are never converted whole).
bool same_values(const NamedTensor& a, const NamedTensor& b) {
    if (a.size() != b.size()) return false;
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    std::vector<float> x(kBlock), y(kBlock);
    for (std::size_t i = 0; i < a.size(); i += kBlock) {
        const std::size_t n = std::min(kBlock, a.size() - i);
        a.values_into(x.data(), i, n);
        b.values_into(y.data(), i, n);
        if (std::memcmp(x.data(), y.data(), n * sizeof(float)) != 0) return false;
    }
    return true;
}

// Tensors a PyTorch state_dict repeats for a tied decoder: accepted when they equal the tensor
// they are tied to, bit for bit; otherwise they are a second set of weights the engine lacks.
const std::map<std::string, std::string>& tied_copies(const std::string& arch) {
    static const std::map<std::string, std::string> bigs = {
        {"cls.predictions.decoder.weight", "bigs.embeddings.word_embeddings.weight"},
        {"cls.predictions.decoder.bias", "cls.predictions.bias"}};
    static const std::map<std::string, std::string> bert = {
        {"cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"},
        {"cls.predictions.decoder.bias", "cls.predictions.bias"}};
    return arch == "bert" ? bert : bigs;
}

// What a tensor of a published class is when the engine's model (no classifier) does not use it:
// a phrase for the import's notes, or null when the name is no such module.
const char* unused_module(const ModelConfig& m, const std::string& name) {
    if (m.n_labels != 0) return nullptr;  // a classifier uses the pooler
    if (m.arch == "bert") {
        if (name.starts_with("bert.pooler.") || name.starts_with("bert/pooler/"))
            return "the [CLS] pooler, which only a classifier uses";
        if (name.starts_with("cls.seq_relationship.") || name.starts_with("cls/seq_relationship/"))
            return "the next-sentence head of a pretraining checkpoint";
    }
    if (m.arch == "bigs") {
        if (name.starts_with("bigs.pooler.") || name.starts_with("s4_bert/pooler/"))
            return "the pooler the official BiGSModel always creates";
        if (name.starts_with("cls.seq_relationship.") || name.starts_with("cls/seq_relationship/"))
            return "the next-sentence head of a pretraining checkpoint (BiGSForPreTraining)";
    }
    return nullptr;
}

// Integer buffers a transformers state_dict may hold: accepted by name when their values are what
// the engine computes itself (position ids 0..L-1, token type ids 0), else a problem.
std::string check_buffer(const NamedTensor& t, int max_len) {
    const bool positions = t.name.ends_with("embeddings.position_ids");
    if (t.shape.empty() || t.shape.back() != max_len || t.size() != std::size_t(max_len))
        return t.name + ": shape " + shape_text(t.shape) + ", expected [1, " +
               std::to_string(max_len) + "] (a buffer of max_position_embeddings ids)";
    const std::vector<float> values = t.values();
    for (std::size_t i = 0; i < values.size(); ++i) {
        const float want = positions ? static_cast<float>(i) : 0.0f;
        if (values[i] != want)
            return t.name + ": element " + std::to_string(i) + " is " +
                   std::to_string(static_cast<double>(values[i])) + ", expected " +
                   std::to_string(static_cast<double>(want)) +
                   (positions ? " (the engine's positions are 0..L-1)"
                              : " (the engine's default type ids are 0)");
    }
    return "";
}

bool is_buffer_name(const std::string& name) {
    return name.ends_with("embeddings.position_ids") || name.ends_with("embeddings.token_type_ids");
}

}  // namespace

// ------------------------------------------------------------------ files

namespace {
// TensorFlow weights, which import does not read: Google's original BERT release
// (bert_model.ckpt.index + .data-00000-of-00001, bert_config.json) and any tf.train checkpoint
// (*.ckpt*.index), or transformers' TF/Keras weights (tf_model.h5). What to run instead.
std::string tensorflow_weights(const fs::path& file) {
    const std::string name = file.filename().string();
    if (name == "tf_model.h5")
        return file.string() +
               ": TensorFlow (Keras) weights, which import does not read; convert them with "
               "transformers: BertForPreTraining.from_pretrained(DIR, from_tf=True)"
               ".save_pretrained(OUT), then import OUT";
    if (name.ends_with(".index") && name.find(".ckpt") != std::string::npos)
        return file.string() +
               ": a TensorFlow checkpoint (Google's original BERT release writes "
               "bert_model.ckpt.index and .data-*), which import does not read; convert it with "
               "transformers: `transformers-cli convert --model_type bert --tf_checkpoint "
               "DIR/bert_model.ckpt --config DIR/bert_config.json --pytorch_dump_output "
               "OUT/pytorch_model.bin`, copy bert_config.json and vocab.txt beside it, then "
               "import OUT";
    return "";
}
}  // namespace

namespace {
// A file import looks for by name in the model directory is either a regular file or absent;
// anything else there is said, never taken for absent ("no config.json" for a config.json that
// was a FIFO or a link to /dev/zero): what is there, in words, or "" for a regular file or
// nothing at all. A name that cannot be looked at (a directory the user may not enter) gives the
// system's reason.
std::string irregular_file(const fs::path& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_regular_file(st)) return "";
    std::string link;
    std::error_code lec;
    if (fs::is_symlink(fs::symlink_status(path, lec))) {
        const fs::path target = fs::read_symlink(path, lec);
        link = lec ? std::string(" (a symbolic link)")
                   : " (a symbolic link to " + target.string() + ")";
    }
    if (fs::exists(st)) return "names no regular file" + link + ": it is " + file_kind(st);
    if (ec && st.type() != fs::file_type::not_found)
        return "cannot be looked at (" + ec.message() + ")";
    if (!link.empty()) return "names no file" + link + ": its target does not exist";
    return "";
}
}  // namespace

ImportSource locate_import_source(const std::string& src, const std::string& format,
                                  const std::string& config, const std::string& vocab) {
    ImportSource s;
    std::error_code ec;
    fs::path dir;
    if (fs::is_directory(src, ec)) {
        dir = src;
        // Each file, then its sharded form (transformers writes the index when a model exceeds
        // save_pretrained's max_shard_size).
        const std::vector<std::pair<std::string, std::string>> candidates = {
            {"flax", "flax_model.msgpack"},       {"flax", "flax_model.msgpack.index.json"},
            {"safetensors", "model.safetensors"}, {"safetensors", "model.safetensors.index.json"},
            {"pytorch", "pytorch_model.bin"},     {"pytorch", "pytorch_model.bin.index.json"}};
        for (const auto& [f, name] : candidates) {
            if (format != "auto" && format != f) continue;
            if (const std::string why = irregular_file(dir / name); !why.empty())
                throw IoError((dir / name).string() + ": " + why +
                              " (import reads the weights from it: replace it with the file, or "
                              "give the weights file itself as SRC)");
            if (fs::is_regular_file(dir / name, ec)) {
                s.weights = (dir / name).string();
                s.format = f;
                break;
            }
        }
        if (s.weights.empty() && format == "auto")
            for (const auto& e : fs::directory_iterator(dir, ec))
                if (const std::string why = tensorflow_weights(e.path()); !why.empty())
                    throw FormatError(why);
        if (s.weights.empty())
            throw IoError(src + ": no weights file" +
                          (format == "auto" ? std::string(" (flax_model.msgpack, model.safetensors "
                                                          "or pytorch_model.bin, or one of them "
                                                          "sharded: <name>.index.json)")
                                            : " of format " + format));
    } else if (fs::is_regular_file(src, ec)) {
        if (const std::string why = tensorflow_weights(src); !why.empty()) throw FormatError(why);
        s.weights = src;
        // An index's format is its shards' (read_sharded detects and checks them).
        s.format = format == "auto" && !is_shard_index(src) ? detect_tensor_format(src) : format;
        dir = fs::path(src).parent_path();
        if (dir.empty()) dir = ".";
    } else {
        // There, but of another kind (as --vocab's "names no regular file"), or not reachable
        // (a directory it may not enter, a path past PATH_MAX: the system's reason).
        const fs::file_status st = fs::status(src, ec);
        if (fs::exists(st))
            throw IoError(src + ": SRC names no regular file or directory (it is " + file_kind(st) +
                          "): give a model directory or a weights file");
        if (ec && st.type() != fs::file_type::not_found)
            throw IoError(src + ": cannot read it (" + ec.message() + ")");
        throw IoError(src + ": no such file or directory");
    }
    s.config = config.empty() ? (dir / "config.json").string() : config;
    // Google's original BERT release names it bert_config.json (transformers' TF conversion
    // leaves it so beside the converted pytorch_model.bin).
    if (config.empty() && !fs::exists(fs::symlink_status(s.config, ec)) &&
        fs::exists(fs::symlink_status(dir / "bert_config.json", ec)))
        s.config = (dir / "bert_config.json").string();
    // A path given with --config or --vocab must be a regular file: a FIFO or /dev/zero would
    // block the read or never end, a directory is no vocabulary.
    const auto given_file = [&ec](const std::string& path, const char* option) {
        if (fs::is_regular_file(path, ec)) return;
        throw IoError(path + ": " + option + " " +
                      (!fs::exists(path, ec) ? "names no such file"
                       : fs::is_directory(path, ec)
                           ? "names a directory, not a file"
                           : "names no regular file (a pipe or a device)"));
    };
    if (!config.empty()) given_file(config, "--config");
    if (const std::string why = irregular_file(s.config); config.empty() && !why.empty())
        throw IoError(s.config + ": " + why +
                      " (import reads the configuration from it: replace it with the file, or "
                      "give one with --config)");
    if (!fs::is_regular_file(s.config, ec))
        throw IoError(s.config + ": no config.json (give one with --config)");
    if (!vocab.empty()) {
        given_file(vocab, "--vocab");
        s.vocab = vocab;
    } else {
        for (const char* name : {"vocab.txt", "tokenizer.json"}) {
            if (const std::string why = irregular_file(dir / name); !why.empty())
                throw IoError((dir / name).string() + ": " + why +
                              " (import reads the vocabulary from it: replace it with the file, "
                              "or give one with --vocab)");
            if (fs::is_regular_file(dir / name, ec)) {
                s.vocab = (dir / name).string();
                break;
            }
        }
        if (s.vocab.empty())
            throw IoError(dir.string() +
                          ": no vocab.txt or tokenizer.json (give one with --vocab)");
    }
    return s;
}

namespace {
// j["type"] when it is a string, else "" (nlohmann's value(key, default) for the same; GCC 12
// warns of a null dereference inside it here, a false positive of its inlining).
std::string type_of(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("type")) return "";
    const nlohmann::json& t = j.at("type");
    return t.is_string() ? t.get_ref<const std::string&>() : std::string();
}

// The engine's WordPiece is BERT's basic tokenizer, uncased (lower-case, strip accents) or cased
// (neither), with clean_text and CJK splitting (wordpiece_tokenizer.hpp). A tokenizer.json that
// says otherwise — accents stripped but case kept or the reverse, no CJK splitting, another
// normalizer or pre-tokenizer, another continuation prefix, word limit or unknown piece — would
// tokenize differently: refused naming the key. Absent fields (a file holding only the model) are
// read as BERT-uncased's. Returns the casing it describes.
data::Casing check_bert_tokenizer_json(const nlohmann::json& j, const std::string& path) {
    const auto refuse = [&](const std::string& key, const nlohmann::json& value,
                            const std::string& why) {
        throw FormatError(path + ": " + key + ": " + value.dump() + " (" + why +
                          "; the engine's WordPiece is BERT's, uncased or cased)");
    };
    data::Casing casing = data::Casing::uncased;
    // A key written as null is the tokenizers library's "none": no normalizer cleans, lower-cases
    // or splits CJK; no pre-tokenizer splits at whitespace and punctuation. Unlike an absent key.
    for (const char* key : {"normalizer", "pre_tokenizer"})
        if (j.contains(key) && j[key].is_null())
            refuse(key, j[key],
                   std::string("none: ") +
                       (key[0] == 'n' ? "the text would be neither cleaned nor lower-cased"
                                      : "words would not be split at whitespace and punctuation"));
    if (j.contains("normalizer")) {
        const auto& n = j["normalizer"];
        if (!n.is_object() || type_of(n) != "BertNormalizer")
            refuse("normalizer.type", n.is_object() && n.contains("type") ? n["type"] : n,
                   "not a BertNormalizer");
        for (const char* key : {"handle_chinese_chars", "clean_text"})
            if (n.contains(key) && n[key] != true)
                refuse(std::string("normalizer.") + key, n[key], "must be true");
        if (n.contains("lowercase") && !n["lowercase"].is_boolean())
            refuse("normalizer.lowercase", n["lowercase"], "must be true or false");
        if (n.contains("lowercase") && n["lowercase"] == false) casing = data::Casing::cased;
        // strip_accents null follows lowercase; only that (or the same value) is BERT's.
        if (n.contains("strip_accents") && !n["strip_accents"].is_null() &&
            n["strip_accents"] != (casing == data::Casing::uncased))
            refuse("normalizer.strip_accents", n["strip_accents"],
                   casing == data::Casing::uncased
                       ? "accents kept while lower-casing: must be true or null"
                       : "accents stripped while keeping case: must be false or null");
    }
    if (j.contains("pre_tokenizer")) {
        const auto& p = j["pre_tokenizer"];
        if (!p.is_object() || type_of(p) != "BertPreTokenizer")
            refuse("pre_tokenizer.type", p.is_object() && p.contains("type") ? p["type"] : p,
                   "not a BertPreTokenizer");
    }
    const auto& m = j["model"];
    if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"] != "##")
        refuse("model.continuing_subword_prefix", m["continuing_subword_prefix"],
               "BERT's is \"##\"");
    if (m.contains("max_input_chars_per_word") && m["max_input_chars_per_word"] != 100)
        refuse("model.max_input_chars_per_word", m["max_input_chars_per_word"], "BERT's is 100");
    if (m.contains("unk_token") && m["unk_token"] != "[UNK]")
        refuse("model.unk_token", m["unk_token"], "BERT's is \"[UNK]\"");
    return casing;
}

// A JSON object file transformers reads beside the vocabulary, or nothing when there is none
// (irregular_file refused anything but a regular file or nothing before). Added to `files`.
std::optional<nlohmann::json> read_beside(const fs::path& file, std::vector<std::string>& files) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    const std::string where = file.string();
    files.push_back(where);
    nlohmann::json j = parse_json_text(read_text(where), where);
    if (!j.is_object()) throw FormatError(where + ": not a JSON object");
    return j;
}

// What tokenizer_config.json `j` at `where` (transformers' BertTokenizer arguments) says of the
// casing, or nothing when its do_lower_case is absent. The same refusals as a tokenizer.json's.
std::optional<data::Casing> tokenizer_config_casing(const nlohmann::json& j,
                                                    const std::string& where) {
    const auto refuse = [&](const char* key, const std::string& why) {
        throw FormatError(where + ": " + key + ": " + j[key].dump() + " (" + why +
                          "; the engine's WordPiece is BERT's, uncased or cased)");
    };
    if (j.contains("tokenize_chinese_chars") && j["tokenize_chinese_chars"] != true)
        refuse("tokenize_chinese_chars", "must be true");
    if (j.contains("do_basic_tokenize") && j["do_basic_tokenize"] != true)
        refuse("do_basic_tokenize", "must be true: without it punctuation is not split");
    // BertTokenizer's do_lower_case defaults to true: {"strip_accents": false} alone means
    // lower-casing with accents kept, refused as when do_lower_case: true is written (it imported
    // uncased, accents stripped). The casing itself is still said by what comes next (a
    // tokenizer.json beside it, else transformers' default).
    const bool said = j.contains("do_lower_case") && !j["do_lower_case"].is_null();
    if (said && !j["do_lower_case"].is_boolean()) refuse("do_lower_case", "must be true or false");
    const bool lower = said ? j["do_lower_case"].get<bool>() : true;
    if (j.contains("strip_accents") && !j["strip_accents"].is_null() && j["strip_accents"] != lower)
        refuse("strip_accents",
               !lower ? "accents stripped while keeping case: must be false or null"
               : said ? "accents kept while lower-casing: must be true or null"
                      : "lower-casing by default (no do_lower_case) with accents kept: must be "
                        "true or null");
    if (!said) return std::nullopt;
    return lower ? data::Casing::uncased : data::Casing::cased;
}

// The content of a special token's value, a string or an AddedToken object {"content": ...}, or
// null when it is neither.
const nlohmann::json* token_content(const nlohmann::json& v) {
    const nlohmann::json* content = &v;
    if (v.is_object() && v.contains("content")) content = &v["content"];
    return content->is_string() ? content : nullptr;
}

// The special pieces of tokenizer_config.json and special_tokens_map.json (where save_pretrained
// writes them; from_pretrained applies it over tokenizer_config.json, so its value wins): another
// name than BERT's would change the ids (an unknown word's above all), and the engine frames by
// these names. Refused naming the file whose value transformers would take.
void check_special_token_names(const std::optional<nlohmann::json>& config,
                               const std::string& config_where,
                               const std::optional<nlohmann::json>& map,
                               const std::string& map_where) {
    for (const auto& [key, bert] : {std::pair{"unk_token", "[UNK]"},
                                    {"cls_token", "[CLS]"},
                                    {"sep_token", "[SEP]"},
                                    {"pad_token", "[PAD]"},
                                    {"mask_token", "[MASK]"}}) {
        const auto given = [key = key](const std::optional<nlohmann::json>& j) {
            return j && j->contains(key) && !(*j)[key].is_null();
        };
        if (!given(map) && !given(config)) continue;
        const bool from_map = given(map);
        const nlohmann::json& v = from_map ? (*map)[key] : (*config)[key];
        const nlohmann::json* content = token_content(v);
        if (!content || content->get_ref<const std::string&>() != bert)
            throw FormatError((from_map ? map_where : config_where) + ": " + key + ": " + v.dump() +
                              " (BERT's is \"" + bert +
                              "\"; the engine's WordPiece is BERT's, uncased or cased)");
    }
}

// A token transformers matches whole in the raw text, before BERT's basic tokenizer splits it:
// where it was declared (file: key), its content, and its id where the file gives one.
struct AddedToken {
    std::string where;
    std::string content;
    std::optional<std::int64_t> id;
};

// The added tokens `j` (the file at `where`) declares: a tokenizer.json's added_tokens
// ([{"id", "content", ...}]), a tokenizer_config.json's added_tokens_decoder ({"<id>":
// {"content", ...}}) and additional_special_tokens (also special_tokens_map.json's), an
// added_tokens.json's {content: id} (`ids_by_content`).
void collect_added_tokens(const nlohmann::json& j, const std::string& where,
                          std::vector<AddedToken>& out, bool ids_by_content = false) {
    const auto bad = [&](const std::string& key, const std::string& expected) {
        throw FormatError(where + ": " + key + ": expected " + expected);
    };
    const auto integer = [](const nlohmann::json& v) -> std::optional<std::int64_t> {
        if (v.is_number_integer()) return v.get<std::int64_t>();
        return std::nullopt;
    };
    if (ids_by_content) {
        for (const auto& [content, id] : j.items()) {
            if (!integer(id)) bad(content, "an integer id");
            out.push_back({where, content, integer(id)});
        }
        return;
    }
    if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
        const nlohmann::json& list = j["added_tokens"];
        if (!list.is_array()) bad("added_tokens", "an array");
        for (const nlohmann::json& t : list) {
            if (!t.is_object() || !t.contains("content") || !t["content"].is_string())
                bad("added_tokens", "objects with a string content");
            const auto id = t.contains("id") ? integer(t["id"]) : std::nullopt;
            if (!id) bad("added_tokens", "objects with an integer id");
            out.push_back({where + ": added_tokens", t["content"].get<std::string>(), id});
        }
    }
    if (j.contains("added_tokens_decoder") && !j["added_tokens_decoder"].is_null()) {
        const nlohmann::json& decoder = j["added_tokens_decoder"];
        if (!decoder.is_object()) bad("added_tokens_decoder", "an object");
        for (const auto& [key, t] : decoder.items()) {
            const nlohmann::json* content = token_content(t);
            const bool digits =
                !key.empty() && key.size() < 10 &&
                std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!digits || !content)
                bad("added_tokens_decoder." + key, "an id and an object with a string content");
            out.push_back({where + ": added_tokens_decoder", content->get_ref<const std::string&>(),
                           std::stoll(key)});
        }
    }
    if (j.contains("additional_special_tokens") && !j["additional_special_tokens"].is_null()) {
        const nlohmann::json& list = j["additional_special_tokens"];
        if (!list.is_array()) bad("additional_special_tokens", "an array");
        for (const nlohmann::json& t : list) {
            const nlohmann::json* content = token_content(t);
            if (!content) bad("additional_special_tokens", "strings or objects with a content");
            out.push_back({where + ": additional_special_tokens",
                           content->get_ref<const std::string&>(), std::nullopt});
        }
    }
}

// transformers matches every added token whole in the raw text before the basic tokenizer
// (tokenizer.add_tokens(["<e1>"]) then resize_token_embeddings gives "<e1>" the id after the
// vocabulary's last piece), with flags of its own (lstrip, rstrip, single_word, normalized). The
// engine's WordPiece keeps only BERT's five specials whole, the checkpoint holds the vocab.txt
// pieces alone, and the rows of such tokens got placeholder pieces while "<e1>" was split into
// "<", "e", "##1", ">": refused, naming the file and the tokens. The five specials at their own
// ids, which every tokenizer.json and tokenizer_config.json transformers writes lists, are BERT's.
void check_added_tokens(const std::vector<AddedToken>& added,
                        const data::WordPieceTokenizer& tokenizer) {
    const data::SpecialIds sp = tokenizer.specials();
    const std::map<std::string, std::int32_t> bert = {{"[PAD]", sp.pad},
                                                      {"[UNK]", sp.unk},
                                                      {"[CLS]", sp.cls},
                                                      {"[SEP]", sp.sep},
                                                      {"[MASK]", sp.mask}};
    std::vector<const AddedToken*> refused;
    for (const AddedToken& t : added) {
        const auto it = bert.find(t.content);
        if (it != bert.end() && it->second >= 0 && (!t.id || *t.id == it->second)) continue;
        if (refused.empty() || refused.front()->where == t.where) refused.push_back(&t);
    }
    if (refused.empty()) return;
    // In id order (a JSON object's keys come sorted by name).
    std::stable_sort(refused.begin(), refused.end(), [](const AddedToken* a, const AddedToken* b) {
        return a->id.value_or(std::numeric_limits<std::int64_t>::max()) <
               b->id.value_or(std::numeric_limits<std::int64_t>::max());
    });
    std::string list;
    for (std::size_t k = 0; k < refused.size() && k < 5; ++k) {
        const AddedToken& t = *refused[k];
        list += (k ? ", " : "") + nlohmann::json(t.content).dump();
        if (t.id) list += " (id " + std::to_string(*t.id) + ")";
    }
    if (refused.size() > 5) list += " and " + std::to_string(refused.size() - 5) + " more";
    throw FormatError(
        refused.front()->where + ": " + list + (refused.size() > 1 ? ": tokens" : ": a token") +
        " added to BERT's vocabulary (tokenizer.add_tokens or additional special tokens), which "
        "transformers matches whole in the text before the basic tokenizer; the engine's WordPiece "
        "keeps only [PAD] [UNK] [CLS] [SEP] [MASK] whole (at the vocabulary's ids), so the text "
        "would get other ids: the model cannot be imported with them");
}

// The piece a row gets where the checkpoint's vocab.txt cannot hold the published one, or the
// vocabulary has none (a padded embedding): bracketed like the specials, so never an MLM target.
std::string placeholder_piece(std::int64_t id) {
    return "[routescope_unused_" + std::to_string(id) + "]";
}

// Pieces of an uncased reading that it can never produce: any with an upper-case ASCII letter,
// bracketed specials ("[CLS]", "[unused7]") aside. Many of them mean a cased vocabulary.
std::vector<std::string> capitalised_pieces(const data::WordPieceTokenizer& t) {
    std::vector<std::string> out;
    for (std::int32_t id = 0; id < t.vocab_size(); ++id) {
        if (t.is_special(id)) continue;
        const std::string p = t.piece(id);
        if (std::any_of(p.begin(), p.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
            out.push_back(p);
    }
    return out;
}

// What transformers' from_pretrained reads from the vocabulary's directory besides it, whether
// the vocabulary is a vocab.txt (BertTokenizer) or a tokenizer.json (BertTokenizerFast).
struct TokenizerSettings {
    std::string config_where;  ///< tokenizer_config.json beside the vocabulary
    std::string json_where;    ///< tokenizer.json beside a vocab.txt
    bool has_config = false;   ///< whether there is a tokenizer_config.json
    /// tokenizer_config.json's do_lower_case, where it says one.
    std::optional<data::Casing> config_casing;
    /// The tokenizer.json beside a vocab.txt (`json_too`), parsed, where there is one.
    std::optional<nlohmann::json> tokenizer_json;
};

// Reads tokenizer_config.json (BertTokenizer's arguments: tokenizer_config_casing's refusals),
// special_tokens_map.json (applied over it: check_special_token_names), added_tokens.json and,
// with `json_too`, tokenizer.json beside the vocabulary `path`. Each file read is added to
// `files`, the tokens each declares to `added` (tokenizer.json's are left to the caller). One
// there but not a regular file is refused: passed over, its settings were taken for absent.
TokenizerSettings read_tokenizer_settings(const std::string& path, bool json_too,
                                          std::vector<std::string>& files,
                                          std::vector<AddedToken>& added) {
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    std::vector<std::string> names = {"tokenizer_config.json", "special_tokens_map.json",
                                      "added_tokens.json"};
    if (json_too) names.insert(names.begin() + 1, "tokenizer.json");
    for (const std::string& name : names)
        if (const std::string why = irregular_file(dir / name); !why.empty())
            throw IoError((dir / name).string() + ": " + why + " (import reads " + path +
                          "'s tokenizer settings from it: replace it with the file, or remove it)");
    // The vocabulary itself under one of these names (a tokenizer.json saved as
    // added_tokens.json) is the vocabulary, not its settings.
    const auto beside = [&](const char* name) -> std::optional<nlohmann::json> {
        if (fs::path(path).filename() == name) return std::nullopt;
        return read_beside(dir / name, files);
    };
    TokenizerSettings s;
    s.config_where = (dir / "tokenizer_config.json").string();
    s.json_where = (dir / "tokenizer.json").string();
    const std::string map_where = (dir / "special_tokens_map.json").string();
    const std::string added_where = (dir / "added_tokens.json").string();
    const std::optional<nlohmann::json> config = beside("tokenizer_config.json");
    if (config) {
        s.has_config = true;
        s.config_casing = tokenizer_config_casing(*config, s.config_where);
        collect_added_tokens(*config, s.config_where, added);
    }
    const std::optional<nlohmann::json> map = beside("special_tokens_map.json");
    check_special_token_names(config, s.config_where, map, map_where);
    if (map) collect_added_tokens(*map, map_where, added);
    if (const std::optional<nlohmann::json> a = beside("added_tokens.json"))
        collect_added_tokens(*a, added_where, added, /*ids_by_content=*/true);
    if (json_too) s.tokenizer_json = beside("tokenizer.json");
    return s;
}

// A cased tokenizer.json normalizer (`json_where`) with no do_lower_case in a tokenizer_config.json
// (`config_where`) beside it is read cased; transformers' BertTokenizerFast (what AutoTokenizer
// loads for a BERT) takes do_lower_case's default, true, and rebuilds the normalizer to
// lower-case: said, with the file that makes both read it cased.
std::string transformers_would_lower_case(const std::string& json_where,
                                          const std::string& config_where, bool config_exists) {
    return json_where +
           ": its normalizer keeps case (lowercase: false), and so does the import; "
           "transformers' BertTokenizerFast (AutoTokenizer's class for a BERT) would lower-case "
           "the text and strip accents, as its do_lower_case defaults to true and " +
           (config_exists ? config_where + " does not set it" : "there is no " + config_where) +
           ": put {\"do_lower_case\": false} in " + config_where +
           " for transformers to read it cased too";
}
}  // namespace

WordPieceVocab read_wordpiece_vocab(const std::string& path) {
    std::string text = read_text(path);
    WordPieceVocab out;
    out.files.push_back(path);
    std::optional<data::Casing> casing;
    std::string said_by;
    std::vector<AddedToken> added;
    if (path.ends_with(".json")) {
        const nlohmann::json j = parse_json_text(text, path);
        if (!j.is_object() || !j.contains("model") || !j["model"].is_object() ||
            type_of(j["model"]) != "WordPiece" || !j["model"].contains("vocab") ||
            !j["model"]["vocab"].is_object())
            throw FormatError(path + ": model: not a WordPiece model with a vocab");
        const data::Casing normalizer = check_bert_tokenizer_json(j, path);
        collect_added_tokens(j, path, added);
        // BertTokenizerFast reads the same files beside it as BertTokenizer beside a vocab.txt,
        // and where tokenizer_config.json's do_lower_case disagrees with the normalizer it
        // rebuilds the normalizer from the config's arguments: the config's casing wins.
        const TokenizerSettings s =
            read_tokenizer_settings(path, /*json_too=*/false, out.files, added);
        casing = s.config_casing.value_or(normalizer);
        said_by = s.config_casing ? s.config_where + "'s do_lower_case" : path + "'s normalizer";
        const auto reads = [](data::Casing c) {
            return c == data::Casing::uncased
                       ? std::string("uncased (lower-cased, accents stripped)")
                       : std::string("cased (case and accents kept)");
        };
        if (s.config_casing && *s.config_casing != normalizer)
            out.notes.push_back(
                s.config_where + ": do_lower_case: " +
                (*s.config_casing == data::Casing::uncased ? "true" : "false") + " overrides " +
                path + "'s normalizer (lowercase: " +
                (normalizer == data::Casing::uncased ? "true" : "false") +
                "), as transformers' BertTokenizerFast rebuilds the normalizer from "
                "tokenizer_config.json: read " +
                reads(*s.config_casing));
        else if (!s.config_casing && normalizer == data::Casing::cased)
            out.notes.push_back(transformers_would_lower_case(path, s.config_where, s.has_config));
        const auto& vocab = j["model"]["vocab"];
        // Said of the file's own keys (the tokenizer below would speak of a vocab.txt).
        if (!vocab.contains("[UNK]"))
            throw FormatError(path + ": model.vocab holds no [UNK] piece (" +
                              std::to_string(vocab.size()) + " pieces)");
        std::vector<std::string> pieces(vocab.size());
        std::vector<bool> seen(vocab.size(), false);
        for (const auto& [piece, id] : vocab.items()) {
            if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= pieces.size() ||
                seen[id.get<std::size_t>()])
                throw FormatError(path + ": model.vocab." + piece +
                                  ": ids are not 0..n-1, each once");
            pieces[id.get<std::size_t>()] = piece;
            seen[id.get<std::size_t>()] = true;
        }
        // The checkpoint keeps the pieces as vocab.txt text, one a line, whose reader ends a line
        // at LF and at a lone CR, drops a trailing CR and a leading byte-order mark, and refuses
        // NUL: a piece holding one of them ("x\ry") shifted every later id by one, or was refused
        // as more pieces than vocab_size. BERT's basic tokenizer never produces such a piece
        // (CR and LF split words, NUL and U+FEFF are dropped as control characters), so its row
        // gets a placeholder and every id stays the file's; said in a note.
        std::vector<std::string> replaced;
        for (std::size_t id = 0; id < pieces.size(); ++id) {
            std::string& p = pieces[id];
            if (p.find_first_of(std::string("\n\r\0", 3)) == std::string::npos &&
                !(id == 0 && p.starts_with("\xEF\xBB\xBF")))
                continue;
            if (replaced.size() < 5)
                replaced.push_back(nlohmann::json(p).dump() + " (id " + std::to_string(id) + ")");
            else if (replaced.size() == 5)
                replaced.emplace_back("...");
            p = placeholder_piece(static_cast<std::int64_t>(id));
        }
        if (!replaced.empty()) {
            std::string list;
            for (const auto& r : replaced)
                list += (list.empty() ? "" : ", ") + r;
            out.notes.push_back(path + ": model.vocab: " + list +
                                ": pieces holding a line end, a NUL or a leading byte-order mark, "
                                "which a checkpoint's vocab.txt cannot keep and BERT's tokenizer "
                                "never produces: their rows get the placeholder pieces "
                                "[routescope_unused_<id>], every id as the file has it");
        }
        text.clear();
        for (const auto& p : pieces)
            text += p + "\n";
    } else {
        // UTF-16 or UTF-32 text (Windows' "Unicode"): said with the iconv command that converts
        // this file (the tokenizer, given the text alone, cannot name it).
        if (const std::string wide =
                data::wide_unicode_text(std::string_view(text).substr(0, 64), path);
            !wide.empty())
            throw FormatError(path + ": " + wide);
        // A SentencePiece model (spiece.model) given for a WordPiece vocabulary: said in import's
        // terms (the tokenizer's own message speaks of train's tokenizer.kind).
        if (data::sentencepiece_model_bytes(text))
            throw FormatError(path +
                              ": a binary file (a SentencePiece .model, by its first bytes), not "
                              "a WordPiece vocabulary: import reads BERT's WordPiece only, a "
                              "vocab.txt (one UTF-8 piece per line) or a tokenizer.json with a "
                              "WordPiece model; give the one the model was trained with "
                              "(--vocab)");
        // A byte-order mark (an editor's "UTF-8 with BOM") is no part of the first piece: it made
        // "[PAD]" an unknown "\ufeff[PAD]", and MLM packing then found no [PAD].
        if (text.starts_with("\xEF\xBB\xBF")) {
            text.erase(0, 3);
            out.notes.push_back(path +
                                ": starts with a UTF-8 byte-order mark, which is not read "
                                "as part of its first piece");
        }
        // vocab.txt does not say; transformers reads do_lower_case from tokenizer_config.json
        // beside it (default true), and a tokenizer.json there says it too. The special tokens
        // are in tokenizer_config.json and special_tokens_map.json, the added tokens in
        // added_tokens.json, tokenizer_config.json and tokenizer.json.
        const TokenizerSettings s =
            read_tokenizer_settings(path, /*json_too=*/true, out.files, added);
        casing = s.config_casing;
        said_by = s.config_where + "'s do_lower_case";
        if (const std::optional<nlohmann::json>& j = s.tokenizer_json) {
            if (!casing && j->contains("model") && (*j)["model"].is_object()) {
                casing = check_bert_tokenizer_json(*j, s.json_where);
                said_by = s.json_where + "'s normalizer";
                if (*casing == data::Casing::cased)
                    out.notes.push_back(
                        transformers_would_lower_case(s.json_where, s.config_where, s.has_config));
            }
            collect_added_tokens(*j, s.json_where, added);
        }
    }
    std::optional<data::WordPieceTokenizer> tokenizer;
    try {
        tokenizer.emplace(text, casing.value_or(data::Casing::uncased));
    } catch (const Error& e) {
        throw FormatError(path + ": " + e.what());
    }
    check_added_tokens(added, *tokenizer);
    out.kind = tokenizer->kind();
    out.bytes = tokenizer->serialize();
    if (!casing) {
        const std::vector<std::string> caps = capitalised_pieces(*tokenizer);
        if (!caps.empty())
            out.notes.push_back(
                path +
                ": read as uncased (nothing beside it says otherwise: transformers' "
                "default), but " +
                std::to_string(caps.size()) + " of its pieces hold capital letters (e.g. '" +
                caps.front() +
                "'), which an uncased tokenizer never produces; for a cased vocabulary put "
                "tokenizer_config.json with {\"do_lower_case\": false} beside it and import "
                "again");
    } else if (*casing == data::Casing::cased) {
        out.notes.push_back(path + ": cased WordPiece (as " + said_by +
                            " says): case and accents kept");
    }
    return out;
}

// ------------------------------------------------------------------ configuration

std::string import_arch(const nlohmann::json& hf, const std::string& arch,
                        const std::string& where) {
    const std::string type = get_or<std::string>(hf, "model_type", "", where);
    std::string lower = type;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string found;
    if (lower == "bigs") found = "bigs";
    if (lower == "bert") found = "bert";
    if (found.empty() && !hf.contains("model_type")) {
        // Google's bert_config.json has no model_type: its name says BERT. Otherwise --arch may
        // say what the file does not.
        if (arch != "auto") return arch;
        if (fs::path(where).filename() == "bert_config.json") return "bert";
        throw FormatError(where +
                          ": no model_type key (a Hugging Face config.json names its "
                          "model: \"BiGS\" or \"bert\"; or give --arch bigs|bert)");
    }
    if (found.empty())
        throw FormatError(where + ": model_type: '" + type +
                          "' is not a model this importer knows (BiGS, bert)");
    if (arch != "auto" && arch != found)
        throw FormatError(where + ": model_type: '" + type + "' is not --arch " + arch);
    return found;
}

namespace {
// The first class config.json's `architectures` lists whose name contains one of `parts`, or "".
std::string architecture_with(const nlohmann::json& hf, std::initializer_list<const char*> parts) {
    if (!hf.contains("architectures") || !hf["architectures"].is_array()) return "";
    for (const auto& a : hf["architectures"]) {
        if (!a.is_string()) continue;
        const std::string name = a.get<std::string>();
        for (const char* part : parts)
            if (name.find(part) != std::string::npos) return name;
    }
    return "";
}

// A BiGS config.json's pooler_type as model.pool, read as the release reads it (FlaxBiGSPooler and
// the PyTorch port's BiGSPooler): "mean" averages every position of the row, padding included
// (mean_all; the release's rows are always Lmax long); every other value is the mean over the
// positions the attention mask marks real. The release has no first-token pooler: its "first"
// and "cls" are the non-padding mean too.
std::string pool_of(const std::string& pooler, const std::string& where) {
    if (pooler == "mean") return "mean_all";
    if (pooler == "non_padding_mean" || pooler == "first" || pooler == "cls") return "mean";
    throw FormatError(where + ": pooler_type: '" + pooler +
                      "' (the release reads 'mean' as the mean of every position and any other "
                      "value as the non-padding mean; the engine knows 'mean', "
                      "'non_padding_mean', 'first' and 'cls')");
}
}  // namespace

std::string add_base_prefix(TensorFile& file, const std::string& arch) {
    const bool flax = file.format == "flax";
    const std::string sep = flax ? "/" : ".";
    const std::string root = (arch == "bert" ? "bert" : flax ? "s4_bert" : "bigs") + sep;
    const std::string probe =
        flax ? "embeddings/word_embeddings/embedding" : "embeddings.word_embeddings.weight";
    if (file.find(root + probe) || !file.find(probe)) return "";
    for (auto& t : file.tensors)
        t.name = root + t.name;
    return root;
}

namespace {
// The encoder layer indices among the file's tensor names (…encoder.layer.<i>.… in PyTorch and
// safetensors names, …encoder/layer/<i>/… in Flax's, for BERT and BiGS alike).
std::set<long long> layers_in_file(const TensorFile& file) {
    std::set<long long> held;
    for (const auto& t : file.tensors) {
        for (const char* marker : {"encoder.layer.", "encoder/layer/"}) {
            const auto at = t.name.find(marker);
            if (at == std::string::npos) continue;
            std::size_t i = at + std::strlen(marker);
            long long index = 0;
            bool digits = false;
            while (i < t.name.size() && std::isdigit(static_cast<unsigned char>(t.name[i])) &&
                   index < (1LL << 30)) {
                index = index * 10 + (t.name[i++] - '0');
                digits = true;
            }
            if (digits) held.insert(std::min(index, 1LL << 30));
        }
    }
    return held;
}

// "0–1 and 29999" for runs of consecutive indices (a bounded list: a hostile file's thousands of
// runs are counted, not listed).
std::string runs_text(const std::vector<std::pair<long long, long long>>& runs) {
    constexpr std::size_t kListed = 8;
    std::string text;
    for (std::size_t k = 0; k < runs.size() && k < kListed; ++k) {
        const auto [first, last] = runs[k];
        text += (k == 0                 ? ""
                 : k + 1 == runs.size() ? " and "
                                        : ", ") +
                std::to_string(first) + (last > first ? "–" + std::to_string(last) : "");
    }
    if (runs.size() > kListed)
        text += " and " + std::to_string(runs.size() - kListed) + " more runs";
    return text;
}
}  // namespace

RunConfig translate_config(const nlohmann::json& hf, const std::string& arch,
                           const TensorFile& file, const std::string& where,
                           std::vector<std::string>* notes) {
    RunConfig c;
    ModelConfig& m = c.model;
    m.arch = arch;
    m.vocab_size = require<int>(hf, "vocab_size", where);
    m.d_model = require<int>(hf, "hidden_size", where);
    m.n_layers = require<int>(hf, "num_hidden_layers", where);
    // Layers the weights file does not hold would only be reported tensor by tensor after
    // building the name map of every one of them (2,000,000 layers in an edited config.json took
    // minutes and gigabytes against a 25 kB file): every layer 0..n-1 is looked for among the
    // file's layers first (the set of them, not the highest: one stray tensor of layer n-1 let
    // 29,998 missing layers through).
    {
        const std::set<long long> held = layers_in_file(file);
        std::vector<std::pair<long long, long long>> held_runs, missing;
        long long next = 0;  // the first layer not yet accounted for
        for (const long long i : held) {
            if (!held_runs.empty() && held_runs.back().second + 1 == i)
                held_runs.back().second = i;
            else
                held_runs.emplace_back(i, i);
            if (i > next && next < m.n_layers)
                missing.emplace_back(next, std::min<long long>(i, m.n_layers) - 1);
            next = i + 1;
        }
        if (next < m.n_layers) missing.emplace_back(next, m.n_layers - 1);
        if (!missing.empty()) {
            long long absent = 0;
            for (const auto& [first, last] : missing)
                absent += last - first + 1;
            throw FormatError(where + ": num_hidden_layers = " + std::to_string(m.n_layers) +
                              ", but " + file.path + " holds " +
                              (held.empty()
                                   ? std::string("no encoder layer")
                                   : "encoder layer" + std::string(held.size() == 1 ? " " : "s ") +
                                         runs_text(held_runs)) +
                              "; layer" + (absent == 1 ? " " : "s ") + runs_text(missing) +
                              (absent == 1 ? " is" : " are") + " missing");
        }
    }
    m.d_inner = require<int>(hf, "intermediate_size", where);
    m.max_len = require<int>(hf, "max_position_embeddings", where);
    m.ln_eps = get_or<double>(hf, "layer_norm_eps", 1e-12, where);
    m.dropout = get_or<double>(hf, "hidden_dropout_prob", 0.1, where);
    m.init_std = get_or<double>(hf, "initializer_range", 0.02, where);
    const std::string positions =
        get_or<std::string>(hf, "position_embedding_type", "absolute", where);
    if (positions != "absolute")
        throw FormatError(where + ": position_embedding_type: '" + positions +
                          "' (the engine has learned absolute positions only)");
    // Heads and attention the engine does not have, which would otherwise import as something
    // else: a causal decoder (BertLMHeadModel: is_decoder) as a bidirectional encoder, a
    // multiple-choice or regression head (one output row) as a one-label classifier, a sigmoid
    // multi-label head as a softmax one. Token classification and question answering would fail
    // later on a missing pooler or an unexpected tensor; named here by their class.
    if (get_or<bool>(hf, "is_decoder", false, where))
        throw FormatError(where +
                          ": is_decoder: true (a causal decoder such as BertLMHeadModel; the "
                          "importer reads bidirectional encoders)");
    const std::string problem = get_or<std::string>(hf, "problem_type", "", where);
    if (problem == "regression" || problem == "multi_label_classification")
        throw FormatError(where + ": problem_type: '" + problem +
                          "' (the engine's classifier is single-label softmax classification)");
    if (const std::string name =
            architecture_with(hf, {"ForMultipleChoice", "ForTokenClassification",
                                   "ForQuestionAnswering", "LMHeadModel", "ForCausalLM"});
        !name.empty())
        throw FormatError(where + ": architectures: '" + name +
                          "' (the importer reads masked-LM, pretraining and "
                          "sequence-classification models)");
    const bool flax = file.format == "flax";
    std::string types, mlm_bias;
    const std::string act = get_or<std::string>(hf, "hidden_act", "gelu", where);
    std::string bert_pooler;  // config.json's pooler_type, as written (bert)
    if (arch == "bert") {
        // Hugging Face BERT: post-LN layers, [CLS] pooler, and hidden_act used by the blocks AND
        // the MLM head's transform, whose gelu the engine fixes to erf: only transformers'
        // "gelu" (GELUActivation, the erf form) reproduces the model.
        if (act != "gelu")
            throw FormatError(where + ": hidden_act: '" + act +
                              "' (a BERT imports with 'gelu', the erf form, which its MLM head "
                              "transform shares; the engine's MLM head is gelu_erf)");
        m.block_gelu = "erf";
        m.norm_position = "post";
        // transformers' BERT does not read pooler_type: its pooler (and so a classifier) reads
        // [CLS]. Google's configs carry "first_token_transform" (bert-base-chinese, the
        // multilingual models), which is that. Routescope's export writes "non_padding_mean"
        // for an encoder whose sentence vectors are means (model.pool = mean), so that importing
        // the export gives the model back (and "mean_all" for model.pool = mean_all); every other
        // value is [CLS], as transformers has it.
        bert_pooler = get_or<std::string>(hf, "pooler_type", "first", where);
        // (transformers ignores the key: "non_padding_mean" and "mean" are Routescope's mean of
        // the real tokens, "mean_all" its mean of every position.)
        m.pool = bert_pooler == "non_padding_mean" || bert_pooler == "mean" ? "mean"
                 : bert_pooler == "mean_all"                                ? "mean_all"
                                                                            : "first";
        m.n_heads = require<int>(hf, "num_attention_heads", where);
        types = flax ? "bert/embeddings/token_type_embeddings/embedding"
                     : "bert.embeddings.token_type_embeddings.weight";
        mlm_bias = flax ? "cls/predictions/bias" : "cls.predictions.bias";
    } else {
        m.ssm.n_modes = get_or<int>(hf, "num_ssm", 64, where);
        m.ssm.n_kernels = 1;  // the published BiGS: one kernel shared by all channels
        // hidden_act is the gelu inside the blocks; the released JAX model's "gelu" is
        // jax.nn.gelu, the tanh approximation (MODELS.md, BiGS GATED block).
        if (act == "gelu" || act == "gelu_new" || act == "gelu_fast" || act == "gelu_pytorch_tanh")
            m.block_gelu = "tanh";
        else if (act == "gelu_exact" || act == "gelu_erf")
            m.block_gelu = "erf";
        else
            throw FormatError(where + ": hidden_act: '" + act +
                              "' is not a gelu; the engine's blocks have only gelu (tanh or erf)");
        if (!get_or<bool>(hf, "pre_norm", true, where))
            throw FormatError(where +
                              ": pre_norm: false (post-norm) is not a BiGS the engine builds");
        const std::string pooler =
            get_or<std::string>(hf, "pooler_type", "non_padding_mean", where);
        m.pool = pool_of(pooler, where);
        if (notes && (pooler == "first" || pooler == "cls"))
            notes->push_back(where + ": pooler_type '" + pooler +
                             "' is read as the release reads it, the mean of the real tokens "
                             "(the release has no first-token pooler; a Routescope export before "
                             "2026-12-07 wrote 'first' for a model that pooled [CLS])");
        types = flax ? "s4_bert/embeddings/token_type_embeddings/embedding"
                     : "bigs.embeddings.token_type_embeddings.weight";
        mlm_bias = flax ? "cls/predictions/bias" : "cls.predictions.bias";
    }

    // Type embeddings: the engine has exactly two segments.
    const auto type_vocab = get_or<int>(hf, "type_vocab_size", 2, where);
    m.type_embeddings = file.find(types) != nullptr;
    // transformers' BertModel always builds the table and adds its row to every token: weights
    // without it are not that model (built without it, the engine would compute another one, and
    // its export would be refused). A BiGS may lack it: Routescope exported one without before
    // session 29 (now zeros, model_export), and none is the same as a table of zeros.
    if (arch == "bert" && !m.type_embeddings)
        throw FormatError(file.path + ": " + types +
                          " is missing: a BERT always has a token type table (type_vocab_size " +
                          std::to_string(type_vocab) +
                          "), whose row 0 is added to every token; the weights are not a whole "
                          "BERT");
    if (m.type_embeddings && type_vocab != 2)
        throw FormatError(where + ": type_vocab_size: " + std::to_string(type_vocab) +
                          " (the engine's type embeddings have exactly 2 rows)");

    // A classification checkpoint: the classifier's rows are the labels.
    const NamedTensor* out = file.find(flax ? "classifier/bias" : "classifier.bias");
    if (out) {
        if (out->shape.size() != 1 || out->shape[0] < 1)
            throw FormatError(file.path_of(*out) + ": " + out->name + ": shape " +
                              shape_text(out->shape) + " is not [labels]");
        m.n_labels = static_cast<int>(out->shape[0]);
        if (arch == "bert" && m.pool != "first")
            throw FormatError(where + ": pooler_type: '" + bert_pooler +
                              "' for a classifier: a BERT's pooler, which its classifier reads, "
                              "takes [CLS] (first)");
        if (m.n_labels == 1)
            throw FormatError(file.path_of(*out) + ": " + out->name +
                              ": one output (a regression head, as STS-B's, or a multiple-choice "
                              "scorer; the engine's classifier needs at least 2 labels)");
        // The label count config.json declares is the classifier's: transformers builds it with
        // num_labels outputs (id2label's count where there is one: PretrainedConfig derives
        // num_labels from it) and refuses weights of another size. Imported, the names of another
        // model's labels were dropped with a note saying config.json had no id2label.
        const std::size_t n = static_cast<std::size_t>(m.n_labels);
        const auto outputs = [&] {
            const NamedTensor* w = file.find(flax ? "classifier/kernel" : "classifier.weight");
            return "the classifier has " + std::to_string(n) + " outputs (" +
                   (w ? w->name + ": shape " + shape_text(w->shape) + ", " : std::string()) +
                   out->name + ": shape " + shape_text(out->shape) +
                   "): transformers refuses this model (size mismatch); the config.json is "
                   "another model's, or the weights are";
        };
        const bool has_id2label = hf.contains("id2label") && !hf["id2label"].is_null();
        const int num_labels = get_or<int>(hf, "num_labels", 0, where);
        if (has_id2label && !hf["id2label"].is_object())
            throw FormatError(where + ": id2label: expected an object {\"<index>\": name}, got " +
                              hf["id2label"].dump());
        if (has_id2label && hf["id2label"].size() != n)
            throw FormatError(where + ": id2label names " + std::to_string(hf["id2label"].size()) +
                              " labels" +
                              (num_labels > 0 ? " (num_labels " + std::to_string(num_labels) + ")"
                                              : std::string()) +
                              ", but " + outputs());
        if (!has_id2label && hf.contains("num_labels") && !hf["num_labels"].is_null() &&
            static_cast<std::size_t>(num_labels) != n)
            throw FormatError(where + ": num_labels is " + std::to_string(num_labels) + ", but " +
                              outputs());
        if (has_id2label && num_labels > 0 && static_cast<std::size_t>(num_labels) != n && notes)
            notes->push_back(where + ": num_labels " + std::to_string(num_labels) +
                             " disagrees with id2label's " + std::to_string(n) +
                             " labels, which transformers reads (and the classifier has)");
        // The label names: id2label's, except where config.json has none (transformers writes
        // only what differs from its defaults, so a binary classifier with the default names has
        // no id2label) or only transformers' placeholders LABEL_<i> (unless marked real names),
        // incomplete or repeated names: then the class indices "0".."n-1", as GLUE's files and
        // Hugging Face datasets write labels, so that such data is scored against the right
        // outputs.
        std::vector<std::string> labels(n);
        for (std::size_t k = 0; k < n; ++k)
            labels[k] = std::to_string(k);
        std::string why;
        if (has_id2label) {
            std::vector<std::string> named(n);
            for (const auto& [id, name] : hf["id2label"].items()) {
                const bool digits = !id.empty() && id.size() < 10 &&
                                    id.find_first_not_of("0123456789") == std::string::npos;
                const std::size_t k = digits ? std::stoul(id) : n;
                if (k < n && name.is_string()) named[k] = name.get<std::string>();
            }
            // Routescope's export marks its id2label as the model's own names: a classifier
            // trained on labels that read LABEL_0, LABEL_1 gets them back (import(export(x)) is x).
            bool placeholders = !get_or<bool>(hf, "routescope_label_names", false, where);
            for (std::size_t k = 0; k < n; ++k)
                placeholders = placeholders && named[k] == "LABEL_" + std::to_string(k);
            const std::set<std::string> distinct(named.begin(), named.end());
            if (placeholders)
                why = "id2label holds transformers' placeholders LABEL_0..LABEL_" +
                      std::to_string(n - 1);
            else if (distinct.size() != n || distinct.count(""))
                why = "id2label's names are incomplete or repeated";
            else
                labels = named;
        } else {
            why = "config.json has no id2label for the classifier's " + std::to_string(n) +
                  " outputs";
        }
        if (!why.empty() && notes)
            notes->push_back(why + ": the labels are the class indices 0.." +
                             std::to_string(n - 1) + " (data.labels)");
        c.data.labels = labels;
        // What the model is for: `eval --data` scores a classifier per example (an imported
        // BiGS_*_MNLI was evaluated as an MLM on its classification file, and refused).
        c.train.objective = "classify";
    }
    // A fine-tuned classifier (BiGS_*_MNLI, BertForSequenceClassification) has no MLM head: the
    // model is built without one (model.mlm_head = false) rather than with a made-up head.
    const bool has_mlm_bias =
        file.find(mlm_bias) != nullptr ||
        (!flax && file.find("cls.predictions.decoder.bias") != nullptr);  // its tied alias
    m.mlm_head = m.n_labels == 0 || has_mlm_bias;
    // Neither head: an encoder saved on its own (BertModel, BiGSModel), imported without heads —
    // unless config.json names a class that has one, when the head's tensors are reported missing
    // (a damaged or partial file, not an encoder).
    if (m.n_labels == 0 && !has_mlm_bias &&
        architecture_with(
            hf, {"ForMaskedLM", "ForPreTraining", "ForSequenceClassification", "ForNextSentence"})
            .empty())
        m.mlm_head = false;
    // The release's MLM transform applies hidden_act through transformers' Flax ACT2FN ("gelu"
    // is the erf form there, "gelu_new"/"gelu_pytorch_tanh" the tanh form) while its blocks call
    // jax.nn.gelu (tanh) whatever hidden_act says. The engine's MLM head is gelu_erf, so an MLM
    // BiGS whose hidden_act is a tanh gelu is refused; a classifier has no such head.
    if (arch == "bigs" && m.mlm_head && act != "gelu" && act != "gelu_exact" && act != "gelu_erf")
        throw FormatError(where + ": hidden_act: '" + act +
                          "' (the released BiGS applies it in the MLM head's transform, where the "
                          "engine has gelu_erf: only 'gelu' imports with an MLM head)");
    c.tokenizer.kind = "wordpiece";
    c.tokenizer.vocab_size = m.vocab_size;
    c.data.seq_len = m.max_len;  // the released encoder pads to Lmax
    // Routescope's export records how the checkpoint framed its inputs (data.seq_len, a
    // classifier's data.pairs and data.pair_gap); the engine's validation below checks them.
    if (hf.contains("routescope_data") && !hf["routescope_data"].is_null()) {
        const nlohmann::json& framing = hf["routescope_data"];
        const std::string at = where + ": routescope_data";
        if (!framing.is_object())
            throw FormatError(at + ": expected an object, got " + framing.dump());
        c.data.seq_len = get_or<int>(framing, "seq_len", m.max_len, at);
        if (framing.contains("pairs") && !framing["pairs"].is_null())
            c.data.pairs = get_or<bool>(framing, "pairs", false, at);
        c.data.pair_gap = get_or<int>(framing, "pair_gap", 0, at);
    }
    try {
        c = RunConfig::from_json(c.to_json());  // the engine's own validation
        (void)models::Model::parameter_layout(c.model);
    } catch (const ConfigError& e) {
        throw FormatError(where + ": the translated configuration is invalid (" + e.what() + ")");
    }
    return c;
}

// ------------------------------------------------------------------ parameters

std::unique_ptr<ParamStore> map_parameters(const TensorFile& file, const RunConfig& config,
                                           std::vector<std::string>* notes) {
    const ModelConfig& m = config.model;
    const auto sources = sources_of(m, file.format);
    auto store = std::make_unique<ParamStore>();
    for (const auto& e : models::Model::parameter_layout(m))
        store->add(e.name, e.shape);

    // Every tensor is matched and its shape checked before the parameters are allocated: a
    // config.json whose vocab_size says 10^8 against a 25 kB weights file is refused in
    // milliseconds, not after allocating 6 GB.
    std::vector<std::string> problems;
    // A tensor's name as the list quotes it: the file's own text, so control characters as \xNN
    // (a Flax key's newline forged a line of the report) and at most 200 bytes of it.
    const auto named = [](const std::string& name) {
        return data::printable_text(data::abbreviated(name, 200));
    };
    std::set<std::string> used;
    std::vector<std::pair<const ParamEntry*, const NamedTensor*>> copies;
    for (const auto& e : store->entries()) {
        const auto it = sources.find(e.name);
        if (it == sources.end()) {
            problems.push_back(e.name + ": no source tensor in the name map");
            continue;
        }
        const Source& src = it->second;
        const NamedTensor* t = file.find(src.name);
        if (!t && !src.alt.empty()) t = file.find(src.alt);
        if (!t) {
            problems.push_back(src.name + ": missing (for " + e.name + ")");
            continue;
        }
        used.insert(t->name);
        if (dtype_size(t->dtype) != 2 && t->dtype != "float32" && t->dtype != "float64") {
            problems.push_back(named(t->name) + ": dtype " + named(t->dtype) +
                               " is not a floating-point parameter (for " + e.name + ")");
            continue;
        }
        if (!shape_fits(t->shape, e.shape, src.transform)) {
            std::vector<std::int64_t> want = e.shape;
            if (src.transform == Transform::transpose) std::reverse(want.begin(), want.end());
            problems.push_back(named(t->name) + ": shape " + shape_text(t->shape) + ", expected " +
                               shape_text(want) + " (for " + e.name + " " + shape_text(e.shape) +
                               ")");
            continue;
        }
        copies.emplace_back(&e, t);
    }
    const auto& tied_map = tied_copies(m.arch);
    for (const auto& t : file.tensors) {
        if (used.count(t.name)) continue;
        if (file.format != "flax" && is_buffer_name(t.name)) {
            const std::string problem = check_buffer(t, m.max_len);
            if (!problem.empty()) problems.push_back(data::printable_text(problem));
            continue;
        }
        const auto tied = tied_map.find(t.name);
        if (file.format != "flax" && m.mlm_head && tied != tied_map.end()) {
            const NamedTensor* original = file.find(tied->second);
            if (original && original->shape == t.shape && same_values(*original, t)) continue;
            problems.push_back(named(t.name) + ": differs from " + tied->second +
                               ", to which the engine ties it");
            continue;
        }
        // Modules a published class creates that a model without a classifier does not use:
        // a BERT pretraining checkpoint (BertForPreTraining, e.g. bert-base-uncased) holds the
        // pooler and the next-sentence head; the official BiGS port's BiGSModel creates its
        // pooler whatever add_pooling_layer says, so BiGSForMaskedLM's state_dict holds
        // bigs.pooler.dense.* (the Flax port's s4_bert/pooler/ when it was run). They are left
        // out, and said so; their shapes are still checked against the model's width.
        if (const char* what = unused_module(m, t.name)) {
            // Their shapes are still checked: the pooler's dense layer is [d, d] with a bias [d];
            // the next-sentence head maps d to 2 classes ([2, d] in PyTorch, a Flax kernel [d, 2]).
            const std::int64_t d = m.d_model;
            const bool nsp = t.name.find("seq_relationship") != std::string::npos;
            const bool bias = t.name.ends_with("bias");
            const bool flax_kernel = t.name.ends_with("/kernel");
            const std::vector<std::int64_t> want =
                bias  ? std::vector<std::int64_t>{nsp ? 2 : d}
                : nsp ? (flax_kernel ? std::vector<std::int64_t>{d, 2}
                                     : std::vector<std::int64_t>{2, d})
                      : std::vector<std::int64_t>{d, d};
            if (t.shape != want) {
                problems.push_back(named(t.name) + ": shape " + shape_text(t.shape) +
                                   ", expected " + shape_text(want) + " (" + what + ")");
                continue;
            }
            if (notes)
                notes->push_back(t.name + " " + shape_text(t.shape) + ": not imported (" + what +
                                 (m.mlm_head ? "; the imported model has the MLM head only)"
                                             : "; the imported model is the encoder alone)"));
            continue;
        }
        // A decoder matrix of its own (a Flax file of a model trained with tie_word_embeddings
        // false: cls/predictions/decoder/kernel): the engine's MLM head is tied to the word
        // embeddings, so it has no place for it; said so rather than "unexpected".
        if (t.name.find("predictions/decoder/kernel") != std::string::npos ||
            t.name.find("predictions.decoder.weight") != std::string::npos) {
            problems.push_back(named(t.name) +
                               ": an output embedding of its own (a model trained with "
                               "tie_word_embeddings false); the engine's MLM head reuses "
                               "the word embeddings, so an untied decoder cannot be "
                               "imported");
            continue;
        }
        problems.push_back(named(t.name) + ": unexpected (no parameter of this " + m.arch +
                           " model)");
    }
    if (!problems.empty()) {
        std::string text = file.path + ": " + std::to_string(problems.size()) + " tensor problem" +
                           (problems.size() == 1 ? "" : "s") + ":";
        // A bounded list: the first problems name the fault; thousands of lines bury it.
        constexpr std::size_t kListed = 40;
        for (std::size_t i = 0; i < problems.size() && i < kListed; ++i)
            text += "\n  " + problems[i];
        if (problems.size() > kListed)
            text += "\n  … and " + std::to_string(problems.size() - kListed) + " more";
        throw FormatError(text);
    }
    store->allocate_parameters_only();  // never trained here: no gradient buffer
    std::size_t doubles = 0;
    for (const auto& [e, t] : copies) {
        float* values = store->param(e->name);
        if (t->dtype == "float64") ++doubles;
        copy_into(*t, *e, sources.at(e->name).transform, values);
        file.release(*t);  // the file's pages of this tensor are no longer needed
        // Named here, as the input's tensor (the checkpoint's own check would name the
        // temporary file the import writes).
        for (std::size_t k = 0; k < e->size; ++k)
            if (!std::isfinite(values[k]))
                throw FormatError(file.path_of(*t) + ": " + t->name + ": " +
                                  (std::isnan(values[k]) ? "NaN" : "an infinity") + " at element " +
                                  std::to_string(k) + "; a model's parameters must be finite" +
                                  (t->dtype == "float64" ? " (a float64 beyond float32's range "
                                                           "rounds to an infinity)"
                                                         : ""));
    }
    if (doubles && notes)
        notes->push_back(std::to_string(doubles) + " tensor" + (doubles == 1 ? "" : "s") +
                         " stored as float64 in " + file.path +
                         ": rounded to float32, the engine's parameter type");
    return store;
}

std::vector<NamedTensor> export_tensors(const ModelConfig& m, const std::vector<ParamEntry>& layout,
                                        const float* params, bool with_tied_copies) {
    const auto sources = sources_of(m, "pytorch");
    std::vector<NamedTensor> out;
    if (m.arch == "bigs") {
        // The official port's BiGSEmbeddings registers position_ids = arange(Lmax)[None] as a
        // persistent buffer, so its state_dict (and a strict load) has it: int64 [1, Lmax], first
        // as there. Its values are what the import accepts and the engine computes itself.
        if (m.max_len > (1 << 24))
            throw Error("export: max_len " + std::to_string(m.max_len) +
                        " is past the position ids written exactly");
        NamedTensor t;
        t.name = "bigs.embeddings.position_ids";
        t.dtype = "int64";  // the writers store these values as int64
        t.shape = {1, m.max_len};
        t.data.resize(static_cast<std::size_t>(m.max_len));
        for (int i = 0; i < m.max_len; ++i)
            t.data[static_cast<std::size_t>(i)] = static_cast<float>(i);
        out.push_back(std::move(t));
    }
    for (const auto& e : layout) {
        const auto it = sources.find(e.name);
        if (it == sources.end())
            throw Error("export: " + e.name + " has no name in the " + m.arch + " name map");
        const Source& src = it->second;
        NamedTensor t;
        t.name = src.name;
        t.dtype = "float32";
        t.shape = e.shape;
        // The inverse of the import's transforms (the PyTorch names never transpose): the
        // published SSM's [1, N] and [1, N, 2] drop their unit head; [1] vectors stay [1].
        if (src.transform == Transform::drop_unit_head && e.shape.size() >= 2 && e.shape[0] == 1)
            t.shape.erase(t.shape.begin());
        t.data.assign(params + e.offset, params + e.offset + e.size);
        out.push_back(std::move(t));
    }
    if (m.arch == "bigs" && !m.type_embeddings) {
        // The published BiGS always has a token type table (type_vocab_size 2, which the exported
        // config states): a model trained without one is exported with a table of zeros, which adds
        // nothing, so that a loader of the release's classes finds every tensor it builds
        // (strict loading; a missing table would be initialised at random there).
        const auto it = sources.find("embeddings.type.weight");
        if (it == sources.end()) throw Error("export: no token type name in the bigs name map");
        NamedTensor t;
        t.name = it->second.name;
        t.dtype = "float32";
        t.shape = {2, m.d_model};
        t.data.assign(static_cast<std::size_t>(2 * m.d_model), 0.0f);
        out.push_back(std::move(t));
    }
    if (with_tied_copies && m.mlm_head) {
        // torch.save of a transformers state_dict repeats the tied decoder under its own names.
        for (const auto& pair : tied_copies(m.arch)) {
            // (not a structured binding: clang 14, which builds the fuzz targets, cannot capture
            // one in a lambda)
            const auto& copy = pair.first;
            const auto& original = pair.second;
            const auto it = std::find_if(out.begin(), out.end(),
                                         [&](const NamedTensor& t) { return t.name == original; });
            if (it == out.end()) throw Error("export: no " + original + " for " + copy);
            NamedTensor t = *it;
            t.name = copy;
            out.push_back(std::move(t));
        }
    }
    return out;
}

ImportedModel import_model(const ImportSource& source, const std::string& arch) {
    const nlohmann::json hf = parse_json_text(read_text(source.config), source.config);
    if (!hf.is_object()) throw FormatError(source.config + ": not a JSON object");
    const std::string engine_arch = import_arch(hf, arch, source.config);
    ImportedModel out;
    WordPieceVocab vocab = read_wordpiece_vocab(source.vocab);
    out.tokenizer.kind = vocab.kind;
    out.tokenizer.model = std::move(vocab.bytes);
    out.vocab_files = std::move(vocab.files);
    out.notes.insert(out.notes.end(), vocab.notes.begin(), vocab.notes.end());
    const data::WordPieceTokenizer tokenizer(std::string_view(
        reinterpret_cast<const char*>(out.tokenizer.model.data()), out.tokenizer.model.size()));
    // BERT and BiGS both frame every input as [CLS] text [SEP] (a pair: [CLS] a [SEP] b [SEP]),
    // as their tokenizers do: a vocabulary without these pieces imported, and every dump or
    // evaluation of the checkpoint then failed with a message naming neither file. Refused
    // before the weights are read.
    {
        const data::SpecialIds sp = tokenizer.specials();
        std::vector<std::string> absent;
        if (sp.cls < 0) absent.emplace_back("[CLS]");
        if (sp.sep < 0) absent.emplace_back("[SEP]");
        if (!absent.empty())
            throw FormatError(
                source.vocab + ": no " + absent.front() +
                (absent.size() > 1 ? " and no " + absent.back() + " pieces" : " piece") +
                " among its " + std::to_string(tokenizer.vocab_size()) + " pieces: a " +
                (engine_arch == "bert" ? "BERT" : "BiGS") +
                " frames every input as [CLS] text [SEP], so the model could read no text; give "
                "the vocabulary it was trained with (--vocab)");
    }
    // Lazy: a safetensors file's tensors are converted straight into the parameter store, one at a
    // time, and their pages given back (peak memory about the model, not twice it).
    TensorFile file = read_tensor_file(source.weights, source.format, /*lazy=*/true);
    out.source_format = file.format;
    out.shards = file.shards;
    if (const std::string prefix = add_base_prefix(file, engine_arch); !prefix.empty())
        out.notes.push_back(file.path + ": a base model's names (no '" + prefix +
                            "' prefix, as BertModel and BiGSModel save them): read as the "
                            "encoder of the task classes");
    out.config = translate_config(hf, engine_arch, file, source.config, &out.notes);
    out.config.tokenizer.kind = out.tokenizer.kind;  // wordpiece or wordpiece_cased
    if (out.config.model.n_labels == 0 && !out.config.model.mlm_head)
        out.notes.push_back("no MLM head and no classifier in " + file.path +
                            ": an encoder (model.mlm_head = false, model.n_labels = 0); it dumps, "
                            "and fine-tunes with train --init; MLM batches are refused");
    if (out.config.model.mlm_head && tokenizer.specials().mask < 0)
        out.notes.push_back(source.vocab +
                            ": no [MASK] piece, which the MLM head predicts at: masked-LM "
                            "training and evaluation of this checkpoint are refused (dumps and "
                            "fine-tuning do not need it)");
    if (tokenizer.vocab_size() > out.config.model.vocab_size)
        throw FormatError(source.vocab + ": " + std::to_string(tokenizer.vocab_size()) +
                          " pieces, more than the model's vocab_size " +
                          std::to_string(out.config.model.vocab_size));
    if (!out.config.model.mlm_head && out.config.model.n_labels > 0)
        out.notes.push_back(
            "no MLM head in " + file.path +
            ": a classification-only model (model.mlm_head = false); MLM batches are refused");
    out.params = map_parameters(file, out.config, &out.notes);
    // Fewer pieces than embedding rows: a vocabulary padded to a round size (the extra rows are
    // never produced by the tokenizer). The rows get placeholder pieces, bracketed like the
    // specials so that they are never an MLM target, and the checkpoint's tokenizer covers every
    // row (it refused the mismatch with a message naming its own temporary file). After the
    // shapes are checked: a vocab_size of 10^8 is refused there, not padded to.
    if (const std::int32_t pieces = tokenizer.vocab_size(); pieces < out.config.model.vocab_size) {
        // Each placeholder is a line of the checkpoint's vocabulary text and then an entry of the
        // tokenizer built from it (~100 bytes with the map's node): a vocab_size of 2^27 beside
        // 30 pieces (a sparse 4 GB weights file) ran into a bare bad_alloc after 9 GB.
        const double rows = static_cast<double>(out.config.model.vocab_size) - pieces;
        if (const MemoryLimit limit = memory_limit();
            limit.bytes > 0 && rows * 128.0 > limit.bytes / 4)
            throw FormatError(
                source.config + ": vocab_size " + std::to_string(out.config.model.vocab_size) +
                " is " + std::to_string(static_cast<long long>(rows)) + " rows more than the " +
                std::to_string(pieces) + " pieces of " + source.vocab +
                "; their placeholder pieces would need more than a quarter of " + limit.text() +
                ": give the model's own vocabulary");
        auto& text = out.tokenizer.model;
        if (!text.empty() && text.back() != '\n') text.push_back('\n');
        for (std::int32_t id = pieces; id < out.config.model.vocab_size; ++id) {
            const std::string piece = placeholder_piece(id) + "\n";
            text.insert(text.end(), piece.begin(), piece.end());
        }
        out.notes.push_back(source.vocab + ": " + std::to_string(pieces) + " pieces for " +
                            std::to_string(out.config.model.vocab_size) + " embedding rows: rows " +
                            std::to_string(pieces) + ".." +
                            std::to_string(out.config.model.vocab_size - 1) +
                            " get the placeholder pieces [routescope_unused_<id>]");
    }
    return out;
}

void write_imported_checkpoint(const std::string& path, ImportedModel& model,
                               const ImportProvenance& provenance) {
    const fs::path final_path = atomic_write_target(path);
    std::error_code ec;
    // Said of the path the user gave, before anything is written (the rename's error named a
    // temporary file, or "Success"); atomic_write_target refused a directory.
    // A directory that cannot be reached (one above it the user may not enter, a path past
    // PATH_MAX) is said with the system's reason, as every writer says it, not as "does not exist".
    const fs::file_status dir_status = fs::status(final_path.parent_path(), ec);
    if (!fs::is_directory(dir_status))
        throw IoError(path + ": its directory " + final_path.parent_path().string() +
                      (fs::exists(dir_status) ? " is a file, not a directory"
                       : ec && dir_status.type() != fs::file_type::not_found
                           ? " cannot be reached (" + ec.message() + ")"
                           : std::string(" does not exist")));
    // Named as every writer's temporary (engine/io/stale_temporaries.hpp): unlinked if a signal
    // ends the import, and swept by the next import of the same name if the process was killed
    // outright. Its own suffix: the checkpoint writer makes its temporary beside this one.
    const fs::path tmp = temporary_path_for(final_path.string(), "-import.ckpt.h5");
    remove_stale_temporaries(final_path.string());
    const TemporaryFileGuard guard(tmp.string());
    try {
        // Streamed (not built in memory) and the parameters freed before the read-back, so that
        // a published-size import holds the model once (docs/benchmarks.md).
        write_checkpoint_streaming(tmp.string(), model.config, *model.params, model.tokenizer);
        model.params.reset();
        h5::quiet_errors();
        {
            H5::H5File file(tmp.string(), H5F_ACC_RDWR);
            try {
                h5::write_string_attr(file, "import_source", provenance.source);
                h5::write_string_attr(file, "import_format", provenance.format);
                h5::write_string_attr(file, "import_sha256", provenance.sha256);
                if (!provenance.shards.empty()) {
                    nlohmann::json shards = nlohmann::json::object();
                    for (const auto& [name, sha] : provenance.shards)
                        shards[name] = sha;
                    h5::write_string_attr(file, "import_shards_sha256", shards.dump());
                }
                file.close();
            } catch (...) {
                // A full disk here (the checkpoint's reserve was given back at its close): HDF5
                // 1.10 crashes closing a file whose flush failed unless its writes cannot fail.
                h5::divert_file_to_memory(file.getId());
                throw;
            }
        }
        read_checkpoint(tmp.string());  // what was written reads back as a checkpoint
    } catch (const H5::Exception& e) {
        fs::remove(tmp, ec);
        throw IoError(path + ": cannot write the checkpoint (" + e.getDetailMsg() + ")");
    } catch (const Error& e) {
        // Said of --out, not of the temporary the writer was given.
        fs::remove(tmp, ec);
        std::string what = e.what();
        for (std::size_t at; (at = what.find(tmp.string())) != std::string::npos;)
            what.replace(at, tmp.string().size(), path);
        if (dynamic_cast<const IoError*>(&e)) throw IoError(what);
        if (dynamic_cast<const RuntimeFailure*>(&e)) throw RuntimeFailure(what);
        throw;
    } catch (...) {
        fs::remove(tmp, ec);
        throw;
    }
    fs::rename(tmp, final_path, ec);
    if (ec) {
        const std::string why = ec.message();
        fs::remove(tmp, ec);
        throw IoError(path + ": cannot rename the written checkpoint into place (" + why + ")");
    }
}

}  // namespace routescope::importers
