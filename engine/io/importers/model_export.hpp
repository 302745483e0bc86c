#pragma once
// Exporting a checkpoint as a published model (issue 16; the inverse of model_import.hpp): a
// directory with config.json (BiGS's or transformers' BertConfig keys), vocab.txt and the weights
// under the names the import reads — the official BiGS PyTorch port's (`bigs.*`, `cls.*`,
// `classifier`) for bigs, Hugging Face BERT's (`bert.*`, `cls.*`, `classifier`) for a post-LN
// bert — as model.safetensors or pytorch_model.bin.
//
// pytorch_model.bin is what torch.save writes: a zip (entries stored) of archive/data.pkl, a
// protocol-2 pickle made only of collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// torch.FloatStorage persistent ids (torch.LongStorage for the int64 position_ids buffer), one
// storage per tensor in archive/data/<n>, and archive/version; torch.load(weights_only=True) reads
// it. The decoder's tied copies (cls.predictions.decoder.*) are repeated there as a transformers
// state_dict has them, and left out of safetensors as transformers leaves them out. A bigs also
// gets bigs.embeddings.position_ids (int64 [1, Lmax], 0..Lmax-1), the persistent buffer of the
// official port's BiGSEmbeddings; its pooler (bigs.pooler.dense.*), which Routescope's BiGS MLM
// model does not have, is the one official name not written (docs/cli.md, export).
//
// import(export(x)) gives back x's parameters bit for bit (float32 throughout).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/io/checkpoint.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {

/// config.json of `config` for its architecture. ConfigError naming the key for a model the
/// published layout cannot express (bert: norm_position pre, block_gelu tanh, no type embeddings,
/// pool mean; bigs: ssm.n_kernels > 1; another arch). `pad_token_id`: the [PAD] id of the
/// vocab.txt exported with it. A classifier's id2label is marked as the model's own names
/// ("routescope_label_names": true), which the import keeps even where they read LABEL_<i>.
nlohmann::ordered_json export_config(const RunConfig& config, std::int32_t pad_token_id = 0);

/// Writes `ck` as a model directory `dir` in `to` (safetensors | pytorch): config.json, vocab.txt,
/// tokenizer_config.json, model.safetensors or pytorch_model.bin. Everything is written into a
/// hidden staging directory first: beside `dir` and renamed to it when `dir` does not exist (a new
/// directory, its mode from the umask as mkdir's); inside `dir` when it is an existing empty
/// directory, whose files are then moved into it one by one, so that the directory itself (inode,
/// mode, owner) stays the user's. On any failure nothing is left under `dir` (the moved files are
/// removed again), and the staging directory and moved files are registered
/// (TemporaryDirectoryGuard, TemporaryFileGuard) so that a signal ending the process removes them
/// too. `dir` must not exist or be an empty directory (IoError otherwise). `source`, the
/// checkpoint's path, starts the message of a refusal of the model (ConfigError naming the key,
/// export_config; FormatError when the checkpoint's tokenizer is not WordPiece, the published
/// models' vocab.txt).
void export_model(const Checkpoint& ck, const std::string& to, const std::string& dir,
                  const std::string& source = "");

/// Removes what an export killed without cleaning up (kill -9) left beside or inside `dir`: the
/// staging directories of processes that no longer run, so that an empty directory the export was
/// killed in reads as empty again. Errors are ignored (tidying).
void remove_stale_export_staging(const std::string& dir);

/// The files' bytes, for tests and the command.
std::string safetensors_bytes(const std::vector<NamedTensor>& tensors);
std::string torch_pickle_bytes(const std::vector<NamedTensor>& tensors);
void write_torch_zip(const std::string& path, const std::vector<NamedTensor>& tensors);

}  // namespace routescope::importers
