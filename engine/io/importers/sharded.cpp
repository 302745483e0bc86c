// Sharded checkpoints (transformers' save_pretrained with max_shard_size; its utils "Sharded
// checkpoints"): an index file {"metadata": {"total_size": …}, "weight_map": {name: shard}} beside
// the shards, each an ordinary weights file holding some of the tensors. The names are the
// format's own (PyTorch keys, Flax paths joined with '/'), exactly as in an unsharded file, so the
// importer maps a sharded checkpoint's tensors as it maps one file's.
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/json_text.hpp"
#include "engine/data/file_text.hpp"
#include "engine/data/utf8.hpp"
#include "engine/io/importers/mapped_file.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {
namespace fs = std::filesystem;
namespace {

// A tensor name from a file as a message quotes it: its first 200 bytes, control characters as
// \xNN (as the Flax reader quotes keys: a name's newline would forge a line of the report).
std::string shown(std::string_view name) {
    return data::printable_text(data::abbreviated(name, 200));
}

struct ShardIndex {
    std::map<std::string, std::string> weight_map;  ///< tensor name → shard file name
    std::vector<std::string> names;                 ///< shard file names, sorted
    std::vector<std::string> paths;                 ///< the same in the index's folder
};

// An index is a small JSON file (a published 7 B model's is about 30 KB); a larger one is not an
// index and is refused before it is read whole.
constexpr std::uintmax_t kMaxIndexBytes = std::uintmax_t{64} << 20;

ShardIndex read_index(const std::string& path) {
    const auto fail = [&](const std::string& what) { throw FormatError(path + ": " + what); };
    std::error_code ec;
    if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) > kMaxIndexBytes)
        fail("larger than 64 MiB: not a sharded checkpoint's index");
    const std::string text = data::read_file_text(path, "sharded checkpoint index");
    const nlohmann::json j = parse_json_text(text, path);
    if (!j.is_object()) fail("not a JSON object");
    if (!j.contains("weight_map"))
        fail("no \"weight_map\" (a sharded checkpoint's index maps each tensor to its shard)");
    const auto& map = j["weight_map"];
    if (!map.is_object()) fail("\"weight_map\" is not an object of tensor name: shard file");
    if (map.empty()) fail("\"weight_map\" lists no tensor");
    ShardIndex index;
    std::set<std::string> names;
    for (const auto& [tensor, shard] : map.items()) {
        if (!shard.is_string())
            fail("weight_map: " + shown(tensor) + ": the shard is not a file name");
        const std::string name = shard.get<std::string>();
        // A plain file name in the index's folder: an index never reaches elsewhere on the disk.
        if (name.empty() || name == "." || name == ".." ||
            name.find_first_of(std::string("/\0", 2)) != std::string::npos)
            fail("weight_map: " + shown(tensor) + ": shard \"" + shown(name) +
                 "\" is not a file name in the index's folder");
        index.weight_map.emplace(tensor, name);
        names.insert(name);
    }
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    for (const auto& name : names) {
        const std::string shard_path = (dir / name).string();
        if (!fs::exists(shard_path, ec)) {
            std::string first;  // a tensor the missing shard should hold, to name it
            for (const auto& [tensor, shard] : index.weight_map)
                if (shard == name) {
                    first = tensor;
                    break;
                }
            fail("shard " + shown(name) + " (which holds " + shown(first) +
                 ", among others) does not exist in " + dir.string());
        }
        data::require_regular_file(shard_path, "weights");
        index.names.push_back(name);
        index.paths.push_back(shard_path);
    }
    return index;
}

TensorFile read_one(const std::string& path, const std::string& format, bool lazy) {
    if (format == "flax") return read_flax_msgpack(path);
    if (format == "safetensors") return read_safetensors(path, lazy);
    if (format == "pytorch") return read_pytorch_zip(path);
    throw Error("unknown weights format '" + format + "' (auto, flax, safetensors or pytorch)");
}

}  // namespace

bool is_shard_index(const std::string& path) {
    return path.ends_with(".index.json");
}

TensorFile read_sharded(const std::string& index_path, const std::string& format, bool lazy) {
    const ShardIndex index = read_index(index_path);
    const auto fail = [&](const std::string& what) { throw FormatError(index_path + ": " + what); };
    TensorFile out;
    out.path = index_path;
    std::set<std::string> seen;
    // A tensor a shard holds by the weight_map, to name it (a shard may be unreadable).
    const auto listed_in = [&](const std::string& shard) {
        for (const auto& [tensor, in] : index.weight_map)
            if (in == shard) return tensor;
        return std::string();
    };
    for (std::size_t s = 0; s < index.paths.size(); ++s) {
        const std::string& name = index.names[s];
        // Each shard's format is its content's: a format given (the index's name in a model
        // directory, --format) must agree with it. A torch.save shard among safetensors shards
        // was read as safetensors and refused for a nonsensical header length.
        if (format != "auto")
            if (const std::string problem = content_format_problem(index.paths[s], format);
                !problem.empty())
                fail("shard " + shown(name) + " (which holds " + shown(listed_in(name)) +
                     ", among others) is " + problem + " (" +
                     fs::path(index_path).filename().string() + " lists " + format +
                     " shards; the shards of one checkpoint have one format)");
        const std::string f = format == "auto" ? detect_tensor_format(index.paths[s]) : format;
        if (out.format.empty())
            out.format = f;
        else if (f != out.format)
            fail("shard " + shown(name) + " (which holds " + shown(listed_in(name)) +
                 ", among others) is " + f + ", shard " + shown(index.names[0]) + " is " +
                 out.format + " (the shards of one checkpoint have one format)");
        TensorFile shard = read_one(index.paths[s], f, lazy);
        for (auto& t : shard.tensors) {
            const auto it = index.weight_map.find(t.name);
            if (it == index.weight_map.end())
                fail("shard " + shown(name) + " holds " + shown(t.name) +
                     ", which the weight_map does not list");
            if (it->second != name)
                fail("shard " + shown(name) + " holds " + shown(t.name) +
                     ", which the weight_map places in " + shown(it->second));
            if (!seen.insert(t.name).second)
                fail("shard " + shown(name) + " holds " + shown(t.name) + " twice");
            t.shard = static_cast<int>(s);
            out.tensors.push_back(std::move(t));
        }
        for (auto& m : shard.mappings)
            out.mappings.push_back(std::move(m));
        out.shards.push_back(index.paths[s]);
    }
    for (const auto& [tensor, shard] : index.weight_map)
        if (!seen.count(tensor))
            fail("the weight_map places " + shown(tensor) + " in shard " + shown(shard) +
                 ", which does not hold it");
    return out;
}

}  // namespace routescope::importers
