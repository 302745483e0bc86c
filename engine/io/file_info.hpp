#pragma once
// What a dump or checkpoint holds, read from metadata only (no dataset values): the summary that
// `routescope-cli inspect` prints and the workspace tree of the GUI shows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/validation.hpp"

namespace routescope {

struct DatasetInfo {
    std::string path;
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::string shape_text() const;
};

struct LayerInfo {
    int index = 0;
    std::optional<DatasetInfo> hidden, sentence, example_index;
    std::optional<DatasetInfo> attention;  ///< /layers/<l>/attention (dump --attention)
    std::vector<DatasetInfo> gates;
};

struct KernelInfo {
    int index = 0;
    std::optional<DatasetInfo> forward, backward;
    std::optional<double> d_forward, d_backward;
};

struct FileInfo {
    std::string file;
    std::uint64_t file_size = 0;
    FileKind kind = FileKind::Unknown;
    std::int64_t format_version = 0;
    std::string producer, created;
    // /model (dumps) or /config (checkpoints)
    std::string arch, name, config_json, checkpoint, checkpoint_sha256;
    std::int64_t n_layers = 0, d_model = 0;
    // dumps
    std::uint64_t examples = 0, length = 0, vocab = 0;
    std::vector<DatasetInfo> data;  ///< /data/* datasets (tokens, lengths, labels, ...)
    std::vector<LayerInfo> layers;
    std::vector<KernelInfo> kernels;
    std::vector<DatasetInfo> mixing;
    // checkpoints
    std::vector<DatasetInfo> params;
    std::uint64_t parameter_count = 0;
    std::string tokenizer_kind;
    std::optional<std::int64_t> train_step;
};

/// Reads the metadata of a dump or checkpoint. Tolerates missing optional parts; throws IoError
/// when the file cannot be opened at all.
FileInfo read_file_info(const std::string& path);

/// The readable multi-line summary printed by `routescope-cli inspect`.
std::string summary_text(const FileInfo& info);

/// A FileInfo as bytes and back, exactly (issue 25: the workbench's loader and `inspect` read the
/// summary in a child process, which hands it over this way). decode_file_info returns nullopt
/// for bytes that are not an encode_file_info result (truncated, wrong tag, counts past the end).
std::string encode_file_info(const FileInfo& info);
std::optional<FileInfo> decode_file_info(const std::string& bytes);

/// "1.2 MB".
std::string human_bytes(std::uint64_t bytes);

}  // namespace routescope
