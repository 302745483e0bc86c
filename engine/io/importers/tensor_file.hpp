#pragma once
// Readers of the weight files that published models come in (issue 16; MODELS.md "Importing the
// published BiGS weights"): Flax msgpack (flax.serialization), safetensors and PyTorch zip
// checkpoints (torch.save of a state_dict). Each gives the same thing: a list of named tensors with
// their shape, their dtype in the file and their values converted to float32 (float16 and
// bfloat16 exactly, float64 rounded to nearest). Names are the file's own: Flax paths joined with
// '/', PyTorch and safetensors keys as they are; mapping them onto Routescope's parameters is the
// importer's work (bigs_import.hpp).
//
// The readers never trust a size the file declares: every length, count and offset is checked
// against the bytes the file has before anything is allocated, so a small hostile file cannot ask
// for a huge allocation. Every problem is a FormatError naming the file and the tensor or key;
// nothing in a file is ever executed (the pickle reader interprets only what a state_dict needs).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/io/half.hpp"

namespace routescope::importers {

class MappedFile;

struct NamedTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::string dtype;  ///< as stored: float32 | float16 | bfloat16 | float64 | int64 (buffers)
    std::vector<float> data;  ///< row-major (C order), product(shape) values; empty when lazy
    /// A lazy tensor (read_tensor_file with lazy = true: safetensors) leaves `data` empty and
    /// points at its bytes in the file's mapping (TensorFile::mappings keep it alive); values()
    /// and values_into() convert them when asked, so a file is never held twice in memory.
    const unsigned char* raw = nullptr;
    std::size_t count = 0;  ///< elements of a lazy tensor
    /// The shard it was read from (TensorFile::shards), -1 when the file is not sharded.
    int shard = -1;

    std::size_t size() const { return raw ? count : data.size(); }
    /// Values [begin, begin + n) as float32 into `out` (converted from the file when lazy).
    void values_into(float* out, std::size_t begin, std::size_t n) const;
    void values_into(float* out) const { values_into(out, 0, size()); }
    std::vector<float> values() const;
};

struct TensorFile {
    std::string path;    ///< the weights file, or a sharded checkpoint's index
    std::string format;  ///< flax | safetensors | pytorch
    std::vector<NamedTensor> tensors;
    std::vector<std::shared_ptr<const MappedFile>> mappings;  ///< the lazy tensors' bytes
    /// A sharded checkpoint's shard files, in the order they were read (empty otherwise).
    std::vector<std::string> shards;

    /// The tensor of that name, or nullptr.
    const NamedTensor* find(const std::string& name) const;
    /// The file holding `t`: its shard, or `path`.
    const std::string& path_of(const NamedTensor& t) const;
    /// Gives a lazy tensor's pages of the mapping back to the system once its values were taken
    /// (madvise DONTNEED; they are read from the file again if asked for), so that an import's
    /// resident memory is the model it builds, not that plus the file. No-op for eager tensors.
    void release(const NamedTensor& t) const;
};

/// Flax msgpack (flax.serialization.to_bytes): nested string-keyed maps whose leaves are ExtType 1
/// payloads holding msgpack (shape, dtype name, raw little-endian C-order bytes).
TensorFile read_flax_msgpack(const std::string& path);

/// safetensors: u64 little-endian header length, JSON header {name: {dtype, shape, data_offsets}}
/// (plus __metadata__), then the data, which is memory-mapped.
TensorFile read_safetensors(const std::string& path, bool lazy = false);

/// torch.save zip: <prefix>/data.pkl (pickle of the state_dict) and <prefix>/data/<key> storages;
/// also torch.save's legacy format (before 1.6, or _use_new_zipfile_serialization=False), told by
/// its magic number.
TensorFile read_pytorch_zip(const std::string& path);
/// True when `data` starts as torch.save's legacy format does (a pickled 0x1950a86a20f9469cfc6c).
bool is_legacy_torch_save(const unsigned char* data, std::size_t size);

/// FormatError for a file that starts as a pickle (PROTO 2-5) but is no torch.save file of either
/// format (pickle.dump's own output); does nothing otherwise. Pickles are never run.
void refuse_plain_pickle(const std::string& path, const unsigned char* data, std::size_t size);

/// FormatError for a Git LFS pointer (the text file "version https://git-lfs..." that a clone made
/// without git-lfs holds in place of a large file), saying so and how to fetch the real file;
/// does nothing otherwise. Every reader's format check (detect_tensor_format,
/// content_format_problem) and the Flax reader call it.
void refuse_git_lfs_pointer(const std::string& path, const unsigned char* data, std::size_t size);
/// A file's first bytes as a message says them: `it starts as text, "<!DOCTYPE html>…"` for
/// text, else "its first byte is 0x3C".
std::string first_bytes_text(const unsigned char* data, std::size_t size);

/// A sharded checkpoint as transformers' save_pretrained writes one when a model exceeds
/// max_shard_size: an index (model.safetensors.index.json, pytorch_model.bin.index.json,
/// flax_model.msgpack.index.json) {"metadata": {...}, "weight_map": {tensor name: shard file}}
/// beside the shards, each an ordinary weights file of `format` (auto: detected per shard; every
/// shard must have the same). The tensors of all shards, in shard order. Shard names are plain
/// file names in the index's folder; every tensor of a shard must be listed there for that shard,
/// and every listed tensor must be in its shard, else a FormatError naming the index, the shard
/// and the tensor.
TensorFile read_sharded(const std::string& index_path, const std::string& format = "auto",
                        bool lazy = false);
/// True for a sharded checkpoint's index by its name (ends with ".index.json").
bool is_shard_index(const std::string& path);

/// The format of a weights file from its contents (zip magic or torch.save's legacy magic →
/// pytorch, a plausible safetensors header → safetensors, a msgpack map → flax); FormatError when
/// it is none of them.
std::string detect_tensor_format(const std::string& path);

/// When the file's first bytes prove another format than `expected` (a zip or torch.save's legacy
/// magic: pytorch; a fitting header length then '{': safetensors), what it is, e.g. "a PyTorch
/// checkpoint (torch.save) by its content, not a safetensors file as its name or --format says";
/// "" when they agree or prove nothing (the reader of `expected` then says what is wrong).
/// FormatError for a plain pickle.
std::string content_format_problem(const std::string& path, const std::string& expected);

/// Reads `path` as `format` (flax | safetensors | pytorch | auto; a format given must agree with
/// the content: content_format_problem); a sharded checkpoint's index (is_shard_index) is read
/// with read_sharded. `lazy`: safetensors tensors are checked but left in
/// the mapping (NamedTensor::raw) until their values are asked for; the other formats are always
/// read eagerly. FormatError when two tensors of the result have one name (whatever the format).
TensorFile read_tensor_file(const std::string& path, const std::string& format = "auto",
                            bool lazy = false);

/// bfloat16 bit patterns to float32 (exact, infinities and NaN included); float16's is
/// routescope::half_to_float (engine/io/half.hpp).
using routescope::half_to_float;
float bfloat16_to_float(std::uint16_t bits);

/// Converts `count` little-endian values of `dtype` (float32 | float16 | bfloat16 exactly;
/// float64 rounded to nearest; int64 exact up to 2^24) at `bytes` into `out`. Returns false for
/// another dtype.
bool convert_to_float(const std::string& dtype, const unsigned char* bytes, std::size_t count,
                      float* out);
/// Bytes per element of a dtype this reader knows (0 for an unknown one).
std::size_t dtype_size(const std::string& dtype);

/// Product of `shape`, checked: FormatError (naming `what`) for a negative dimension or when the
/// product exceeds `limit` (the elements the file could possibly hold).
std::size_t checked_numel(const std::vector<std::int64_t>& shape, std::size_t limit,
                          const std::string& what);

}  // namespace routescope::importers
