#pragma once
// Importing a published model (issue 16; MODELS.md "Importing the published BiGS weights"): a
// Hugging Face-style directory (config.json, one of flax_model.msgpack / pytorch_model.bin /
// model.safetensors, vocab.txt or tokenizer.json) becomes an ordinary checkpoint
// (CHECKPOINT_FORMAT.md): the configuration translated to Routescope's keys, every tensor mapped
// by name onto the engine's parameters (Flax Dense kernels transposed, LayerNorm scale → weight,
// the SSM's [N] vectors → [H = 1, N]), the WordPiece vocabulary embedded.
//
// Nothing is skipped silently: every missing, unexpected or wrongly shaped tensor is reported by
// name (all of them, in one FormatError); a semantic the engine does not have (a type vocabulary
// other than 2, another activation, relative positions) is a FormatError naming the config.json
// key.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"
#include "engine/io/checkpoint.hpp"
#include "engine/io/importers/tensor_file.hpp"

namespace routescope::importers {

/// The files of one import.
struct ImportSource {
    std::string weights;  ///< the weights file, or a sharded checkpoint's index (*.index.json)
    std::string format;   ///< flax | pytorch | safetensors (auto: an index's shards say)
    std::string config;   ///< config.json
    std::string vocab;    ///< vocab.txt or tokenizer.json
};

/// Finds the files of `src`: a directory (config.json, the weights file of `format` — auto takes
/// the first of flax_model.msgpack, model.safetensors, pytorch_model.bin, each followed by its
/// sharded form <name>.index.json — and vocab.txt or tokenizer.json) or one weights file or
/// shard index, whose config and vocabulary then come from `config` and `vocab` or from the
/// file's directory. `config`/`vocab` given explicitly win. IoError naming
/// what is missing.
ImportSource locate_import_source(const std::string& src, const std::string& format,
                                  const std::string& config, const std::string& vocab);

/// The engine architecture of a config.json: its model_type (BiGS → bigs, bert → bert), checked
/// against `arch` when that is not "auto". FormatError naming model_type when it is unknown.
std::string import_arch(const nlohmann::json& hf, const std::string& arch,
                        const std::string& where);

/// A base model saved on its own (BertModel, BiGSModel: save_pretrained of the encoder) names its
/// tensors without the prefix the task classes add ("embeddings.word_embeddings.weight" for
/// "bert.embeddings.word_embeddings.weight"; Flax "embeddings/…" for "bert/…" or "s4_bert/…");
/// transformers' from_pretrained adds it when it loads one into a task class, and so does this:
/// every tensor of such a file is renamed. Returns the prefix it added ("" when none).
std::string add_base_prefix(TensorFile& file, const std::string& arch);

/// The run configuration of a config.json for `arch` (FormatError naming the key for a value the
/// engine cannot represent). `file` refines it: the classifier head's labels, the type embeddings,
/// and the heads: a file with neither an MLM head nor a classifier, whose config.json names no
/// class with a head, is an encoder (model.mlm_head = false, model.n_labels = 0). A classifier's
/// labels are id2label's names, or the class indices "0".."n-1" where config.json has none or only
/// transformers' LABEL_<i> placeholders (said in `notes`).
RunConfig translate_config(const nlohmann::json& hf, const std::string& arch,
                           const TensorFile& file, const std::string& where,
                           std::vector<std::string>* notes = nullptr);

/// The parameters of `config`'s model filled from `file` by the name map of `config.model.arch`.
/// FormatError listing every missing, unexpected or wrongly shaped tensor by name. Tensors left out
/// on purpose (a pretraining BERT's pooler and next-sentence head) are listed in `notes`.
std::unique_ptr<ParamStore> map_parameters(const TensorFile& file, const RunConfig& config,
                                           std::vector<std::string>* notes = nullptr);

/// A published tokenizer as the engine keeps it: the vocab.txt bytes and the kind, "wordpiece"
/// (uncased) or "wordpiece_cased"; `notes` for the user (the casing and what said it).
struct WordPieceVocab {
    std::vector<std::uint8_t> bytes;
    std::string kind;
    std::vector<std::string> notes;
    /// Every file read: the vocabulary, and the tokenizer_config.json, special_tokens_map.json and
    /// added_tokens.json beside it (and the tokenizer.json beside a vocab.txt).
    std::vector<std::string> files;
};

/// The vocabulary of a vocab.txt or a tokenizer.json with a WordPiece model, validated by building
/// the tokenizer, and its casing: do_lower_case of the tokenizer_config.json beside it where it
/// says one (for a tokenizer.json, overriding its BertNormalizer's lowercase with a note, as
/// transformers' BertTokenizerFast rebuilds the normalizer from it), else a tokenizer.json's
/// normalizer (the vocabulary or the one beside a vocab.txt; a cased one gets a note that
/// transformers, whose do_lower_case defaults to true, would lower-case), else uncased
/// (transformers' default; a note when pieces hold capital letters). What is said must be BERT's
/// basic tokenizer, uncased or cased (strip_accents following the casing,
/// handle_chinese_chars/tokenize_chinese_chars, do_basic_tokenize and clean_text true,
/// BertPreTokenizer, prefix "##", 100 characters a word, [UNK]). Beside either vocabulary,
/// tokenizer_config.json and special_tokens_map.json (which wins, as from_pretrained applies it
/// last) must name BERT's five specials; no file may declare an added token (added_tokens.json,
/// tokenizer_config.json's added_tokens_decoder or additional_special_tokens, a tokenizer.json's
/// added_tokens) other than those five at the vocabulary's ids: transformers matches added tokens
/// whole in the text, the engine does not. A tokenizer.json piece the checkpoint's vocab.txt text
/// cannot hold (a CR, LF or NUL, a leading byte-order mark), which BERT's tokenizer never
/// produces, gets a placeholder at its id, with a note. FormatError naming the file and the key;
/// IoError for one of those files there that is not a regular file.
WordPieceVocab read_wordpiece_vocab(const std::string& path);

/// The inverse of map_parameters for `m` (model_export.hpp): every parameter of `layout` (values
/// from `params`, in the checkpoint's flat layout) under its PyTorch / safetensors name and shape
/// as the import reads it, in layout order; with `tied_copies`, the decoder's tied copies
/// (cls.predictions.decoder.{weight,bias}) appended, as torch.save of a transformers model has
/// them.
std::vector<NamedTensor> export_tensors(const ModelConfig& m, const std::vector<ParamEntry>& layout,
                                        const float* params, bool tied_copies);

struct ImportedModel {
    RunConfig config;
    std::unique_ptr<ParamStore> params;
    TokenizerBlob tokenizer;
    std::string source_format;
    /// A sharded checkpoint's shard files, in the order read (empty for one weights file).
    std::vector<std::string> shards;
    /// The files the vocabulary was read from (WordPieceVocab::files): never to be overwritten.
    std::vector<std::string> vocab_files;
    /// What the import left out or added on purpose, for the user to read (printed by the CLI).
    std::vector<std::string> notes;
};

/// Everything above in order: reads the files, translates and maps. `arch`: auto | bigs | bert.
/// bert is a Hugging Face BERT (post-LN, model.norm_position = post, pool = first).
ImportedModel import_model(const ImportSource& source, const std::string& arch);

/// Provenance recorded as root attributes of the checkpoint (import_source, import_format,
/// import_sha256: the weights file's SHA-256 — a sharded checkpoint's index's — and, for a sharded
/// checkpoint, import_shards_sha256: a JSON object {shard file name: its SHA-256}).
struct ImportProvenance {
    std::string source, format, sha256;
    std::vector<std::pair<std::string, std::string>> shards;  ///< (file name, SHA-256)
};

/// Writes `model` as a checkpoint at `path` with `provenance`: the checkpoint writer's temporary
/// file gets the attributes, then is renamed over `path`; on any failure nothing is left there.
/// The parameters are written as they are (write_checkpoint_streaming) and `model.params` is
/// released before the checkpoint is read back to check it, so memory peaks at one model.
void write_imported_checkpoint(const std::string& path, ImportedModel& model,
                               const ImportProvenance& provenance);

}  // namespace routescope::importers
