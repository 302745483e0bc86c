#pragma once
// Streaming writer of DUMP_FORMAT.md version 1. Memory is independent of S: each example's rows are
// written as they come (one example per chunk). The file is written under a temporary name in the
// target directory and renamed only by finish(), so a crash or an error never leaves a partial file
// under the final name.
#include <H5Cpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/io/stale_temporaries.hpp"

namespace routescope {

struct DumpSpec {
    std::string arch = "external";  ///< DUMP_FORMAT.md /model arch
    std::string name;
    int n_layers = 0;
    int d_model = 0;
    std::string config_json;        ///< optional
    std::string checkpoint;         ///< optional
    std::string checkpoint_sha256;  ///< optional
    std::string producer = "routescope";
    std::string device;  ///< optional: the device the model ran on (root attribute `device`)

    int examples = 0;                ///< S
    int length = 0;                  ///< L (padded)
    std::vector<int> layers;         ///< which /layers/<l> hold hidden states
    bool sentence = false;           ///< write /layers/<l>/sentence
    std::vector<std::string> gates;  ///< gate names written for every layer ≥ 1
    int gate_channels = 0;           ///< k
    /// H > 0: write /layers/<l>/attention [S, H, L, L] for every layer ≥ 1 (attention blocks'
    /// probabilities, `dump --attention`).
    int attention_heads = 0;
    bool float16 = false;  ///< float16 instead of float32 for float datasets
    bool labels = false;
    /// k of single gates where it differs from gate_channels (BiGS v has I channels, not d).
    std::map<std::string, int> gate_channels_of;
    /// Birdie: attr `reverse_from` (= N/2) of /layers/<l>/gates for the layers whose channels
    /// ≥ N/2 scan right to left (bidirectional and prefix layers).
    std::map<int, int> reverse_from;
    bool reset_mask = false;  ///< write /data/reset_mask int8 [S, L] (Birdie prefix mode)
    bool predictions = false;
    bool text = false;
    std::vector<std::string> attributes;  ///< /data/attributes/<name>
    std::vector<std::string> vocab;       ///< /vocab (empty: not written)
};

struct ExampleRecord {
    std::vector<std::int32_t> tokens;  ///< L ids (padding after `length`)
    int length = 0;
    std::int32_t label = 0;
    std::int32_t prediction = 0;
    std::string text;
    std::vector<double> attributes;  ///< in DumpSpec::attributes order
};

/// The values of one row of a float dataset: floats, or binary16 bits already converted
/// (half_bits, engine/io/half.hpp) for a float16 dump. The writer converts floats to a float16
/// dataset's halves itself (to_half: ties to even), so HDF5 only copies.
struct FloatRow {
    FloatRow(const float* v) : f32(v) {}          // NOLINT(google-explicit-constructor)
    FloatRow(const std::uint16_t* v) : f16(v) {}  // NOLINT(google-explicit-constructor)
    const float* f32 = nullptr;
    const std::uint16_t* f16 = nullptr;
};

class DumpWriter {
public:
    DumpWriter(std::string final_path, DumpSpec spec);
    ~DumpWriter();
    DumpWriter(const DumpWriter&) = delete;
    DumpWriter& operator=(const DumpWriter&) = delete;

    const DumpSpec& spec() const { return spec_; }
    void write_example(int s, const ExampleRecord& record);
    /// Row s of /data/reset_mask (L values; bit 1 = new packed sample, bit 2 = causal region).
    void write_reset_mask(int s, const std::int8_t* row);
    void write_hidden(int layer, int s, FloatRow rows /*[L, d]*/);
    void write_sentence(int layer, int s, FloatRow vec /*[d]*/);
    void write_gate(int layer, const std::string& gate, int s, FloatRow rows /*[L, k]*/);
    void write_attention(int layer, int s, FloatRow probs /*[H, L, L]*/);
    /// /kernels/<layer>: both directions, or (`backward` empty: a causal layer) forward alone.
    void write_kernel(int layer, const std::vector<float>& forward,
                      const std::vector<float>& backward, double d_forward, double d_backward);
    /// /kernels/<layer>/<direction>_groups [H, Lk] and D_<direction>_groups float64 [H]: every
    /// channel group's kernel and skip of a model with H > 1 kernels per SSM (the group
    /// /kernels/<layer> exists: write_kernel first).
    void write_kernel_groups(int layer, bool forward, const std::vector<float>& kernels, int groups,
                             const std::vector<double>& skips);
    void write_mixing(int layer, const float* w, int n);
    /// Flushes, closes and renames the temporary file to the final path.
    void finish();

    const std::string& final_path() const { return final_path_; }
    const std::string& temp_path() const { return temp_path_; }

private:
    void reserve_space();
    std::string final_path_, temp_path_;
    std::unique_ptr<TemporaryFileGuard> temp_guard_;  ///< unlinked if a signal ends the process
    DumpSpec spec_;
    H5::H5File file_;
    H5::DataType float_type_;
    H5::FloatType half_type_;            ///< binary16 in memory: what a FloatRow's f16 holds
    std::vector<std::uint16_t> halves_;  ///< floats converted for a float16 dataset
    std::map<std::string, H5::DataSet> sets_;
    bool finished_ = false;

    H5::DataSet& dataset(const std::string& path);
    void create_float(const std::string& path, const std::vector<hsize_t>& dims,
                      const std::vector<hsize_t>& chunk);
    void write_row(const std::string& path, int s, const void* data, const H5::DataType& mem_type);
    void write_float_row(const std::string& path, int s, FloatRow row);
    /// n floats as this dump stores them: `x` itself (float32) or its halves (float16), with the
    /// memory type to hand to HDF5.
    std::pair<const void*, const H5::DataType*> stored(const float* x, std::size_t n);
    [[noreturn]] void fail(const std::string& what, const H5::Exception& e) const;
};

/// HDF5's IEEE half-precision type (HDF5 1.10 has no predefined one; numpy's float16 layout).
H5::FloatType float16_type();

}  // namespace routescope
