#pragma once
// A lazy reader of activation dumps (DUMP_FORMAT.md, version 1). Opening reads metadata and the
// small per-example arrays (lengths, labels, predictions); activations are read only as hyperslabs
// of the rows an analysis asks for, so sampling M tokens of a multi-GB dump reads M rows of d
// values, never the dataset. float16 and float32 datasets are both returned as float.
//
// Thread safety: every HDF5 call holds hdf5_mutex(); one DumpReader may be shared by threads.
#include <Eigen/Core>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/file_fingerprint.hpp"

namespace routescope::analysis {

using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// One token of one stored row of a layer: `row` indexes /layers/<l>/hidden's first axis.
struct TokenRef {
    std::int64_t row = 0;
    std::int64_t token = 0;
};

struct LayerInfo {
    int index = 0;
    std::int64_t rows = 0;  ///< S, or S' when the layer has an example_index
    bool has_sentence = false;
    std::vector<std::string> gates;  ///< names under /layers/<l>/gates
};

class DumpReader {
public:
    /// Opens `path`, checks its structure against DUMP_FORMAT.md (validate_dump without the value
    /// scan) and reads the metadata. Throws IoError (unreadable) or FormatError (the first
    /// violations, each naming its HDF5 path).
    explicit DumpReader(const std::string& path);
    ~DumpReader();
    DumpReader(const DumpReader&) = delete;
    DumpReader& operator=(const DumpReader&) = delete;

    const std::string& path() const { return path_; }
    const FileFingerprint& fingerprint() const { return fingerprint_; }
    std::int64_t examples() const { return S_; }       ///< S
    std::int64_t padded_length() const { return L_; }  ///< L
    std::int64_t width() const { return d_; }          ///< d
    const std::string& arch() const { return arch_; }
    const std::string& model_name() const { return name_; }
    std::int64_t n_layers() const { return n_layers_; }
    /// /model attr `config` (the producer's run configuration as JSON text), empty when absent.
    const std::string& model_config() const { return config_; }

    /// Layers present under /layers, ascending.
    std::vector<int> layers() const;
    bool has_layer(int layer) const { return layers_.count(layer) > 0; }
    /// The layer's info; throws ConfigError naming the layers present when it is absent.
    const LayerInfo& layer(int layer) const;
    /// Example (row of /data) of each stored row of the layer: example_index, or 0..S−1.
    const std::vector<std::int64_t>& example_of_row(int layer) const;
    /// Number of real tokens of each stored row of the layer.
    std::vector<std::int64_t> row_lengths(int layer) const;

    const std::vector<std::int64_t>& lengths() const { return lengths_; }
    bool has_labels() const { return labels_.has_value(); }
    bool has_predictions() const { return predictions_.has_value(); }
    /// Throw ConfigError naming the file when absent.
    const std::vector<std::int64_t>& labels() const;
    const std::vector<std::int64_t>& predictions() const;
    std::vector<std::string> attribute_names() const;
    std::vector<double> attribute(const std::string& name) const;
    bool has_text() const;
    std::vector<std::string> text() const;
    std::vector<std::string> vocab() const;
    std::vector<std::int32_t> tokens(std::int64_t example) const;
    /// The example's L tokens as text: its /vocab piece, or the id when the dump has no /vocab or
    /// the id is outside it (labels of position axes).
    std::vector<std::string> token_pieces(std::int64_t example) const;
    /// Birdie's /data/reset_mask row of one example (L values), empty when the dump has none.
    std::vector<std::int32_t> reset_mask(std::int64_t example) const;
    /// The first position of the example's causal region (reset-mask bit 2) among its real
    /// tokens: the prefix/suffix boundary of a prefix-LM row; −1 without a mask or a suffix.
    std::int64_t prefix_end(std::int64_t example) const;

    /// Hidden states of one stored row, its first `length` tokens: [length, d].
    RowMatrixF hidden_row(int layer, std::int64_t row) const;
    /// Hidden states of the given tokens, [n, d] in the given order (read sorted by row).
    RowMatrixF hidden_tokens(int layer, const std::vector<TokenRef>& tokens) const;
    /// /layers/<l>/sentence rows, [n, d]; throws when the layer has none.
    RowMatrixF sentence_rows(int layer, const std::vector<std::int64_t>& rows) const;
    /// Gate g of one stored row: [L (or L+1), k], all positions (the caller knows the length).
    RowMatrixF gate_row(int layer, const std::string& gate, std::int64_t row) const;
    /// Birdie: attr reverse_from of /layers/<l>/gates (channels ≥ it scan right to left); −1 when
    /// the layer has none (a causal layer, another architecture).
    int gate_reverse_from(int layer) const;
    /// Shape [rows, positions, k] of a gate dataset.
    std::vector<std::int64_t> gate_shape(int layer, const std::string& gate) const;

    /// Layer `layer`'s attention probabilities (`dump --attention`): the number of heads H, or 0
    /// when the layer has none.
    int attention_heads(int layer) const;
    /// Row `row` of /layers/<layer>/attention: [H · L, L] (head h's query i at row h·L + i).
    RowMatrixF attention_row(int layer, std::int64_t row) const;
    std::vector<int> kernel_layers() const;
    /// /kernels/<l>/forward or backward; empty when absent.
    std::vector<float> kernel(int layer, bool forward) const;
    /// D_forward / D_backward attributes of /kernels/<l> (0 when absent).
    double kernel_skip(int layer, bool forward) const;
    /// /kernels/<l>/<direction>_groups [H, Lk]: every channel group's kernel of a model with H > 1
    /// kernels per SSM (group g acts on channels [g·d/H, (g+1)·d/H)); empty when absent. With it,
    /// D_<direction>_groups [H] (FormatError when absent, of another length, or not finite).
    RowMatrixF kernel_groups(int layer, bool forward) const;
    /// H of <direction>_groups from its shape alone (no values read); 0 when absent.
    std::int64_t kernel_group_count(int layer, bool forward) const;
    std::vector<double> kernel_group_skips(int layer, bool forward) const;
    std::vector<int> mixing_layers() const;
    RowMatrixF mixing(int layer) const;

private:
    /// IoError when the file is no longer the one opened (size, mtime, inode): called after every
    /// read of values, since HDF5 reads bytes past a truncated end as zeros.
    void check_unchanged() const;
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string path_;
    FileFingerprint fingerprint_;
    std::int64_t S_ = 0, L_ = 0, d_ = 0, n_layers_ = 0;
    /// <direction>_groups' checked shape {H, Lk}, or {0, 0} when absent.
    std::pair<std::int64_t, std::int64_t> kernel_groups_shape(int layer, bool forward) const;
    std::string config_;
    std::string arch_, name_;
    std::map<int, LayerInfo> layers_;
    std::map<int, std::vector<std::int64_t>> example_index_;
    std::vector<std::int64_t> lengths_;
    std::optional<std::vector<std::int64_t>> labels_, predictions_;
};

}  // namespace routescope::analysis
