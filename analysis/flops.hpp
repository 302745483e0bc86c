#pragma once
// Efficiency model (ANALYSES.md §7; the BiGS paper's Table 8): FLOPs of one forward pass of one
// sequence of length L, counting 2 FLOPs per multiply-accumulate:
//   dense      2·P·L            P = non-embedding parameters of the blocks (MODELS.md shapes)
//   attention  4·L²·d per attention layer (QKᵀ and AV)
//   mixing     the sequence-mixing op that is not a dense layer: the SSM's FFT convolution
//              (BiGS, STACK/SSM), gMLP's spatial matmul W·Z2, Birdie's and S-LSTM's scans
// The paper's caption says "forward and backward" but its numbers match the forward count; the
// forward+backward column is 3× forward (the backward pass is two GEMMs per forward GEMM).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/csv_table.hpp"
#include "analysis/provenance.hpp"

namespace routescope::analysis {

struct FlopConfig {
    std::string arch = "bigs";  ///< bigs | stack_ssm | gated_att | bert | birdie | slstm | gmlp
    std::int64_t layers = 23;   ///< blocks (S-LSTM: recurrent steps)
    std::int64_t d_model = 1024;
    std::int64_t intermediate = 0;  ///< I; 0: 3d for gated blocks and gMLP's 6d... see flops.cpp
    std::int64_t state = 0;  ///< SSM modes N (BiGS, STACK/SSM; 0: 64); Birdie's state (0: I or 3d)
    std::int64_t kernels = 1;  ///< SSM kernels per SSM H (model.ssm.n_kernels)
    bool causal = false;       ///< BiGS, STACK/SSM with model.causal: the forward SSM branch only
    /// gMLP: model.max_len, the side of each layer's spatial weight W [Lmax, Lmax] and its bias
    /// [Lmax], counted in the parameters (0: unknown, as with --arch: left out). Its FLOPs are the
    /// mixing term's, at the sequence's length.
    std::int64_t max_len = 0;
    bool gate_norm = false;  ///< S-LSTM with model.slstm.gate_norm: 7 LayerNorms on its gates
};

struct FlopRow {
    std::int64_t length = 0;
    double dense = 0, attention = 0, mixing = 0;
    double forward = 0, forward_backward = 0;
};

struct FlopResult {
    Provenance provenance;
    FlopConfig config;
    /// Non-embedding parameters the model holds: layers·P, plus gMLP's spatial W and b per layer
    /// when max_len is known (S-LSTM: P once, shared by its recurrent steps).
    double parameters = 0;
    std::vector<FlopRow> rows;
    nlohmann::json to_json() const;
    CsvTable table() const;
};

/// The FLOP model's configuration of a trained model: the run configuration stored in a
/// checkpoint's /config or a dump's /model attr `config` (model.arch, n_layers, d_model, I, and N =
/// model.ssm.n_modes, or Birdie's state size I). A dump without a configuration falls back to its
/// /model attrs arch, n_layers and d_model with the architecture's default I and N = 64.
/// ConfigError naming the file when neither names an architecture the model knows (arch
/// "external").
FlopConfig flop_config_of_file(const std::string& path);

/// Non-embedding parameters of one block of the architecture (length-independent part).
double block_parameters(const FlopConfig& config);
FlopResult flop_model(const FlopConfig& config, const std::vector<std::int64_t>& lengths);

}  // namespace routescope::analysis
