#include "engine/io/importers/model_export.hpp"

#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/data/wordpiece_tokenizer.hpp"
#include "engine/io/importers/model_import.hpp"
#include "engine/io/stale_temporaries.hpp"
#include "engine/models/model.hpp"

namespace routescope::importers {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
    throw ConfigError(key + ": " + why);
}

void labels_into(ojson& j, const RunConfig& c) {
    const ModelConfig& m = c.model;
    if (m.n_labels <= 0) return;
    j["num_labels"] = m.n_labels;
    if (!c.data.labels || static_cast<int>(c.data.labels->size()) != m.n_labels) return;
    ojson id2label = ojson::object(), label2id = ojson::object();
    for (int k = 0; k < m.n_labels; ++k) {
        id2label[std::to_string(k)] = (*c.data.labels)[static_cast<std::size_t>(k)];
        label2id[(*c.data.labels)[static_cast<std::size_t>(k)]] = k;
    }
    j["id2label"] = id2label;
    j["label2id"] = label2id;
    // The import reads an id2label of LABEL_0..LABEL_<n-1> as transformers' placeholders (the
    // class indices, as GLUE's files write labels); these names are the model's own, even where
    // they read LABEL_<i>, and transformers keeps a config key it does not know.
    j["routescope_label_names"] = true;
}

// ---------------------------------------------------------------- pickle, protocol 2
class Pickle {
public:
    Pickle() { out_ += "\x80\x02"; }
    void op(char c) { out_ += c; }
    void global(const char* module, const char* name) {
        out_ += 'c';
        out_ += module;
        out_ += '\n';
        out_ += name;
        out_ += '\n';
    }
    void str(const std::string& s) {
        out_ += 'X';  // BINUNICODE
        le(static_cast<std::uint32_t>(s.size()), 4);
        out_ += s;
    }
    void integer(std::int64_t v) {
        if (v >= 0 && v < 256) {
            out_ += 'K';
            le(static_cast<std::uint64_t>(v), 1);
        } else if (v >= 0 && v < 65536) {
            out_ += 'M';
            le(static_cast<std::uint64_t>(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            out_ += 'J';
            le(static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)), 4);
        } else {
            out_ += '\x8a';  // LONG1, 8 bytes two's complement
            out_ += '\x08';
            le(static_cast<std::uint64_t>(v), 8);
        }
    }
    void int_tuple(const std::vector<std::int64_t>& v) {
        if (v.empty()) {
            out_ += ')';
            return;
        }
        out_ += '(';
        for (auto x : v)
            integer(x);
        out_ += 't';
    }
    std::string take() {
        out_ += '.';
        return std::move(out_);
    }

private:
    void le(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i)
            out_ += static_cast<char>((v >> (8 * i)) & 0xff);
    }
    std::string out_;
};

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
    std::vector<std::int64_t> s(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;)
        s[i - 1] = s[i] * shape[i];
    return s;
}

// Throws StagingWriteError naming the file (its name alone: the folder is the export's hidden
// staging folder, which export_model names by the --out the user gave) and the system's reason.
struct StagingWriteError : IoError {
    using IoError::IoError;
};

void write_text(const fs::path& path, const std::string& text) {
    errno = 0;
    std::ofstream out(path, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
        const int e = errno;
        throw StagingWriteError(path.filename().string() + ": " +
                                (e ? std::strerror(e) : "the write failed"));
    }
}

}  // namespace

ojson export_config(const RunConfig& c, std::int32_t pad_token_id) {
    const ModelConfig& m = c.model;
    ojson j;
    if (m.arch == "bert" || m.arch == "bigs") {
        // The switches the published BERT and BiGS layouts have no place for.
        const std::string published =
            std::string("the published ") + (m.arch == "bert" ? "BERT" : "BiGS");
        if (m.causal)
            refuse("model.causal",
                   "true: " + published + " layout is bidirectional (no causal variant to export)");
        if (!m.position_embeddings)
            refuse("model.position_embeddings",
                   "false: " + published + " layout has learned position embeddings");
        if (!m.embedding_norm)
            refuse("model.embedding_norm",
                   "false: " + published + " layout has a LayerNorm after the embeddings");
        if (m.mlm_head && !m.mlm_transform)
            refuse("model.mlm_transform",
                   "false: " + published +
                       " MLM head has its transform (dense + gelu) before the LayerNorm");
    }
    if (m.arch == "bert") {
        if (m.norm_position != "post")
            refuse("model.norm_position",
                   "'" + m.norm_position +
                       "': a Hugging Face BERT is post-LN; this pre-norm model has no BERT layout");
        if (m.block_gelu != "erf")
            refuse("model.block_gelu", "'tanh': BERT's hidden_act 'gelu' is the erf form");
        if (!m.type_embeddings)
            refuse("model.type_embeddings", "false: a BERT has token type embeddings");
        if (m.n_labels > 0 && m.pool != "first")
            refuse("model.pool", "'" + m.pool + "': BERT's pooler reads [CLS] (pool = first)");
        j["architectures"] = {m.mlm_head       ? "BertForMaskedLM"
                              : m.n_labels > 0 ? "BertForSequenceClassification"
                                               : "BertModel"};
        j["model_type"] = "bert";
        j["vocab_size"] = m.vocab_size;
        j["hidden_size"] = m.d_model;
        j["num_hidden_layers"] = m.n_layers;
        j["num_attention_heads"] = m.heads();
        j["intermediate_size"] = m.inner();
        j["hidden_act"] = "gelu";
        j["max_position_embeddings"] = m.max_len;
        j["type_vocab_size"] = 2;
        j["layer_norm_eps"] = m.ln_eps;
        j["hidden_dropout_prob"] = m.dropout;
        j["attention_probs_dropout_prob"] = m.dropout;
        j["initializer_range"] = m.init_std;
        j["position_embedding_type"] = "absolute";
        j["pad_token_id"] = pad_token_id;
        // Not a transformers key (its BERT pools [CLS], which pool = first matches): an encoder
        // whose sentence vectors are means says so, and its import gives model.pool back.
        if (m.pool != "first")
            j["pooler_type"] = m.pool == "mean_all" ? "mean_all" : "non_padding_mean";
    } else if (m.arch == "bigs") {
        if (m.ssm.n_kernels != 1)
            refuse("model.ssm.n_kernels",
                   std::to_string(m.ssm.n_kernels) + ": the published BiGS has one SSM kernel");
        j["architectures"] = {m.mlm_head       ? "BiGSForMaskedLM"
                              : m.n_labels > 0 ? "BiGSForSequenceClassification"
                                               : "BiGSModel"};
        j["model_type"] = "BiGS";
        j["vocab_size"] = m.vocab_size;
        j["hidden_size"] = m.d_model;
        j["num_hidden_layers"] = m.n_layers;
        j["intermediate_size"] = m.inner();
        j["num_ssm"] = m.ssm.n_modes;
        j["max_position_embeddings"] = m.max_len;
        j["type_vocab_size"] = 2;
        j["layer_norm_eps"] = m.ln_eps;
        // The release's "gelu" is jax.nn.gelu, the tanh form (model_import.cpp's reading).
        j["hidden_act"] = m.block_gelu == "tanh" ? "gelu" : "gelu_exact";
        j["hidden_dropout_prob"] = m.dropout;
        j["initializer_range"] = m.init_std;
        j["pre_norm"] = true;
        // The release's pooler (FlaxBiGSPooler, the port's BiGSPooler) reads "mean" as the mean of
        // every position and any other value as the non-padding mean: it has no first-token
        // pooler, so a classifier pooling [CLS] has no published equivalent. An encoder or MLM
        // model's pool only makes its dumps' sentence vectors (the release's MLM model has no
        // pooler): it is written as the non-padding mean, which a re-import reads back.
        if (m.n_labels > 0 && m.pool == "first")
            refuse("model.pool",
                   "'first': the official BiGS pools by the mean (its pooler_type "
                   "'mean' or 'non_padding_mean'), never by the first token");
        j["pooler_type"] = m.pool == "mean_all" ? "mean" : "non_padding_mean";
        j["pad_token_id"] = pad_token_id;
    } else {
        refuse("model.arch",
               "'" + m.arch + "' has no published layout to export (bigs and post-LN bert do)");
    }
    labels_into(j, c);
    // How the checkpoint frames its inputs: no transformers key says it, and the import reads it
    // back (import(export(x)) is x; without it an import frames at max_position_embeddings).
    ojson framing = ojson::object();
    framing["seq_len"] = c.data.seq_len;
    if (c.data.pairs) framing["pairs"] = *c.data.pairs;
    if (c.data.pair_gap != 0) framing["pair_gap"] = c.data.pair_gap;
    j["routescope_data"] = framing;
    return j;
}

// A tensor's bytes as the file stores them: float32, or int64 for the integer buffers
// (export_tensors' "int64": position_ids, whose float values are exact integers).
std::string stored_bytes(const NamedTensor& t) {
    if (t.dtype == "int64") {
        std::string out(t.data.size() * sizeof(std::int64_t), '\0');
        for (std::size_t i = 0; i < t.data.size(); ++i) {
            const auto v = static_cast<std::int64_t>(t.data[i]);
            std::memcpy(out.data() + i * sizeof v, &v, sizeof v);  // little-endian
        }
        return out;
    }
    return std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
}

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors) {
    ojson header = ojson::object();
    std::size_t offset = 0;
    for (const auto& t : tensors) {
        const std::size_t bytes =
            t.data.size() * (t.dtype == "int64" ? sizeof(std::int64_t) : sizeof(float));
        header[t.name] = {{"dtype", t.dtype == "int64" ? "I64" : "F32"},
                          {"shape", t.shape},
                          {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    header["__metadata__"] = {{"format", "pt"}};
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    const std::uint64_t n = h.size();
    std::memcpy(out.data(), &n, 8);  // little-endian (checked by the readers' static_assert)
    out += h;
    out.reserve(out.size() + offset);
    for (const auto& t : tensors)
        out += stored_bytes(t);
    return out;
}

std::string torch_pickle_bytes(const std::vector<NamedTensor>& tensors) {
    Pickle p;
    p.global("collections", "OrderedDict");
    p.op(')');
    p.op('R');
    p.op('(');  // MARK ... SETITEMS
    for (std::size_t k = 0; k < tensors.size(); ++k) {
        const NamedTensor& t = tensors[k];
        p.str(t.name);
        p.global("torch._utils", "_rebuild_tensor_v2");
        p.op('(');
        // persistent id ('storage', torch.FloatStorage, key, location, numel)
        p.op('(');
        p.str("storage");
        p.global("torch", t.dtype == "int64" ? "LongStorage" : "FloatStorage");
        p.str(std::to_string(k));
        p.str("cpu");
        p.integer(static_cast<std::int64_t>(t.data.size()));
        p.op('t');
        p.op('Q');     // BINPERSID
        p.integer(0);  // storage offset
        p.int_tuple(t.shape);
        p.int_tuple(contiguous_strides(t.shape));
        p.op('\x89');                            // requires_grad = False
        p.global("collections", "OrderedDict");  // backward hooks
        p.op(')');
        p.op('R');
        p.op('t');
        p.op('R');
    }
    p.op('u');
    return p.take();
}

void write_torch_zip(const std::string& path, const std::vector<NamedTensor>& tensors) {
    int error = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    const std::string name_only = fs::path(path).filename().string();
    if (!z) throw StagingWriteError(name_only + ": cannot create the zip");
    const std::string pickle = torch_pickle_bytes(tensors);
    static const std::string version = "3\n";
    // Each record's data starts at a multiple of 64 bytes, as torch.save writes them: a padding
    // extra field ("FB", torch's id) in the local header. torch.load(mmap=True) (torch >= 2.1,
    // and transformers' loader with it) makes each storage a view of the mapped file at its
    // record's offset, so an unaligned record gave float32 data at an odd address. `at`: where
    // the next local header starts (stored records: header, name, extra field, data).
    std::uint64_t at = 0;
    static const std::array<zip_uint8_t, 64> padding{};
    const auto add = [&](const std::string& name, const void* data, std::size_t n) {
        const std::string full = "archive/" + name;
        zip_source_t* src = zip_source_buffer(z, data, n, 0);
        const zip_int64_t index = src ? zip_file_add(z, full.c_str(), src, ZIP_FL_OVERWRITE) : -1;
        const std::uint64_t header = 30 + full.size() + 4;  // with the extra field's own header
        const auto pad = static_cast<zip_uint16_t>((64 - (at + header) % 64) % 64);
        if (index < 0 ||
            zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) < 0 ||
            zip_file_extra_field_set(z, static_cast<zip_uint64_t>(index), 0x4246,
                                     ZIP_EXTRA_FIELD_NEW, padding.data(), pad, ZIP_FL_LOCAL) < 0) {
            if (src && index < 0) zip_source_free(src);
            const std::string why = zip_strerror(z);
            zip_discard(z);
            throw StagingWriteError(name_only + ": cannot add " + name + " (" + why + ")");
        }
        at += header + pad + n;
    };
    add("data.pkl", pickle.data(), pickle.size());
    std::vector<std::string> integer_storages;  // kept alive until zip_close reads them
    integer_storages.reserve(tensors.size());
    for (std::size_t k = 0; k < tensors.size(); ++k) {
        if (tensors[k].dtype == "int64") {
            integer_storages.push_back(stored_bytes(tensors[k]));
            add("data/" + std::to_string(k), integer_storages.back().data(),
                integer_storages.back().size());
        } else {
            add("data/" + std::to_string(k), tensors[k].data.data(),
                tensors[k].data.size() * sizeof(float));
        }
    }
    add("version", version.data(), version.size());
    if (zip_close(z) != 0) {
        const std::string why = zip_strerror(z);
        zip_discard(z);
        throw StagingWriteError(name_only + ": cannot write the zip (" + why + ")");
    }
}

void export_model(const Checkpoint& ck, const std::string& to, const std::string& dir,
                  const std::string& source) {
    if (to != "safetensors" && to != "pytorch")
        throw ConfigError("--to: '" + to + "' (safetensors or pytorch)");
    // A model the published layouts cannot hold is the checkpoint's doing: the refusal names it
    // (docs/cli.md's "FILE: problem"), as every other command names the input it refuses.
    const auto named = [&](const std::string& what) {
        return source.empty() ? what : source + ": " + what;
    };
    ojson config;
    try {
        if (ck.tokenizer.kind != "wordpiece" && ck.tokenizer.kind != "wordpiece_cased")
            throw FormatError("tokenizer.kind: '" + ck.tokenizer.kind +
                              "': a published model's vocab.txt is WordPiece; this checkpoint's "
                              "tokenizer cannot be exported");
        // pad_token_id is the [PAD] id of the vocab.txt written beside it (what the engine and
        // transformers' tokenizer pad with); a vocabulary without [PAD] gets 0, what the engine
        // pads with then and transformers' default.
        const data::WordPieceTokenizer vocab(
            std::string_view(reinterpret_cast<const char*>(ck.tokenizer.model.data()),
                             ck.tokenizer.model.size()),
            ck.tokenizer.kind == "wordpiece" ? data::Casing::uncased : data::Casing::cased);
        config = export_config(ck.config, std::max(0, vocab.specials().pad));
    } catch (const ConfigError& e) {
        throw ConfigError(named(e.what()));
    } catch (const FormatError& e) {
        throw FormatError(named(e.what()));
    }
    const auto tensors =
        export_tensors(ck.config.model, ck.layout, ck.params.data(), to == "pytorch");

    // "out/", "." and "a/../b" name a directory as well as "out" does: the staging folder's name
    // and place come from the normalised path (with "out/" its empty file name put it inside the
    // target). A symbolic link is written through, as every output is: the link stays and the
    // directory it names gets the export.
    if (dir.empty())  // fs::absolute("") throws, which read as an internal error
        throw ConfigError("the output's path is empty: give the name of the directory to write");
    const fs::path final_dir = follow_output_links(fs::absolute(dir), dir);
    std::error_code ec;
    if (final_dir == final_dir.root_path())
        throw IoError(dir + ": the root directory cannot hold an export");
    remove_stale_export_staging(dir);  // a killed export's staging, beside or inside
    if (fs::exists(final_dir, ec) &&
        (!fs::is_directory(final_dir, ec) || !fs::is_empty(final_dir, ec)))
        throw IoError(dir + ": exists and is not an empty directory (nothing overwritten)");
    // An existing empty directory is the user's: it keeps its inode, mode, owner and ACLs (a
    // private 0700 folder stays private, a shell whose working directory it is stays in it), and
    // the files are moved into it one by one from a staging folder inside it (one filesystem even
    // where the directory is a mount point, and no need to write its parent). A directory that
    // does not exist is the staging folder beside it renamed, made as mkdir makes one (umask).
    const bool into_existing = fs::is_directory(final_dir, ec);
    std::string hidden(1, '.');  // (built in steps: GCC 12 misreads "." + s as overlapping)
    hidden.append(temporary_stem(final_dir.filename().string())).append(".export-");
    hidden.append(std::to_string(::getpid()));
    const fs::path tmp = (into_existing ? final_dir : final_dir.parent_path()) / hidden;
    // Registered before it is made: a SIGINT / SIGTERM while the files are written (main's
    // handler, exit 130) removes the staging folder and what it holds, as every writer's
    // temporary is removed (a staging folder left behind waited for the next export of the name).
    std::optional<TemporaryDirectoryGuard> remove_on_signal(std::in_place, tmp.string());
    std::vector<fs::path> moved;  // files already in the existing directory, removed on failure
    std::vector<std::unique_ptr<TemporaryFileGuard>> moved_on_signal;
    const auto undo = [&] {
        for (const fs::path& f : moved)
            fs::remove(f, ec);
        fs::remove_all(tmp, ec);
    };
    try {
        fs::remove_all(tmp, ec);
        fs::create_directories(tmp);
        std::vector<std::string> files = {"config.json", "vocab.txt", "tokenizer_config.json"};
        write_text(tmp / "config.json", config.dump(2) + "\n");
        write_text(tmp / "vocab.txt",
                   std::string(ck.tokenizer.model.begin(), ck.tokenizer.model.end()));
        // vocab.txt does not say whether it is cased; transformers reads it from here (and the
        // import reads it back).
        const bool lower = ck.tokenizer.kind == "wordpiece";
        write_text(tmp / "tokenizer_config.json",
                   ojson{{"tokenizer_class", "BertTokenizer"},
                         {"do_lower_case", lower},
                         {"strip_accents", nullptr},
                         {"tokenize_chinese_chars", true},
                         {"model_max_length", ck.config.model.max_len}}
                           .dump(2) +
                       "\n");
        files.push_back(to == "safetensors" ? "model.safetensors" : "pytorch_model.bin");
        if (to == "safetensors")
            write_text(tmp / files.back(), safetensors_bytes(tensors));
        else
            write_torch_zip((tmp / files.back()).string(), tensors);
        if (into_existing) {
            for (const std::string& name : files) {
                // Registered before the move: a signal now removes what was moved as well.
                moved_on_signal.push_back(
                    std::make_unique<TemporaryFileGuard>((final_dir / name).string()));
                fs::rename(tmp / name, final_dir / name);
                moved.push_back(final_dir / name);
            }
            fs::remove(tmp);
        } else {
            fs::rename(tmp, final_dir);
        }
        moved_on_signal.clear();
        remove_on_signal.reset();  // the export is in place under its final name
    } catch (const fs::filesystem_error& e) {
        undo();
        throw IoError(dir + ": cannot write the export (" + e.what() + ")");
    } catch (const StagingWriteError& e) {
        undo();
        throw IoError(dir + ": cannot write the export's " + e.what() + " (nothing written)");
    } catch (...) {
        undo();
        throw;
    }
}

void remove_stale_export_staging(const std::string& dir) {
    if (dir.empty()) return;
    try {
        const fs::path final_dir = follow_output_links(fs::absolute(dir), dir);
        if (final_dir == final_dir.root_path()) return;
        remove_stale_temporaries(final_dir.string(), ".export-");
        std::error_code ec;
        if (fs::is_directory(final_dir, ec))
            remove_stale_temporaries((final_dir / final_dir.filename()).string(), ".export-");
    } catch (const std::exception&) {  // tidying: a link that cannot be read is said by the export
    }
}

}  // namespace routescope::importers
