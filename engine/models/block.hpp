#pragma once
// What every block of the BiGS family (MODELS.md) has in common: it is declared once into the
// ParamStore under `layers.<i>.` with the names of tests/reference/README.md, and its forward maps
// the residual stream h [B, L, d] to the next one on a Graph.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"
#include "engine/models/graph.hpp"

namespace routescope::models {

/// The batch a block sees: sizes and valid lengths (attention masks padding keys). The SSMs' FFT
/// plans are the backend's (prepared in the planning pass).
struct BlockInput {
    int B = 0;
    int L = 0;
    const std::int32_t* lengths = nullptr;
    /// [B], every value L: the pool over every position of the row, padding included
    /// (model.pool = mean_all, the official BiGS's pooler_type "mean").
    const std::int32_t* row_lengths = nullptr;
    /// Birdie's reset mask [B, L] (Batch::reset_mask) or null.
    const std::int32_t* reset_mask = nullptr;
    /// Birdie's carry masks [B, L] derived from the reset mask at the model boundary (Model::
    /// forward, before the step's ops run; birdie_block.hpp), or null without a reset mask:
    /// left to right, right to left, and right to left in a prefix layer.
    const std::int32_t* keep_forward = nullptr;
    const std::int32_t* keep_reverse = nullptr;
    const std::int32_t* keep_reverse_prefix = nullptr;
};

class Block {
public:
    virtual ~Block() = default;
    virtual Act forward(Graph& g, const Act& h, const BlockInput& in) = 0;
};

/// "layers.<index>." — the prefix of every parameter of a block.
inline std::string layer_prefix(int index) {
    return "layers." + std::to_string(index) + ".";
}

/// `<name>.weight` [out, in] (normal init, decayed) and `<name>.bias` [out] (zero, not decayed):
/// a PyTorch Linear.
inline void declare_linear(ParamStore& store, const std::string& name, int in, int out) {
    store.add(name + ".weight", {out, in}, ParamInit::normal, ParamGroup::decay);
    store.add(name + ".bias", {out}, ParamInit::zeros, ParamGroup::no_decay);
}

/// `<name>.weight` (1), `<name>.bias` (0) [d], neither decayed: a PyTorch LayerNorm.
inline void declare_layernorm(ParamStore& store, const std::string& name, int d) {
    store.add(name + ".weight", {d}, ParamInit::ones, ParamGroup::no_decay);
    store.add(name + ".bias", {d}, ParamInit::zeros, ParamGroup::no_decay);
}

/// One BiGS SSM: A_re, A_im [H, N]; C [H, N, 2]; D, log_step [H] (CHECKPOINT_FORMAT.md), in the
/// ssm group (train.ssm_lr, no decay), drawn together by ops::ssm_init.
inline void declare_ssm(ParamStore& store, const std::string& name, const SsmConfig& ssm) {
    const std::int64_t H = ssm.n_kernels, N = ssm.n_modes;
    store.add(name + ".A_re", {H, N}, ParamInit::ssm, ParamGroup::ssm);
    store.add(name + ".A_im", {H, N}, ParamInit::ssm_part, ParamGroup::ssm);
    store.add(name + ".C", {H, N, 2}, ParamInit::ssm_part, ParamGroup::ssm);
    store.add(name + ".D", {H}, ParamInit::ssm_part, ParamGroup::ssm);
    store.add(name + ".log_step", {H}, ParamInit::ssm_part, ParamGroup::ssm);
}

/// The block gelu of model.block_gelu.
inline Gelu block_gelu(const ModelConfig& m) {
    return m.block_gelu == "erf" ? Gelu::erf : Gelu::tanh;
}

/// The block of model.arch for layer `index` (declares its parameters when `store` is not yet
/// allocated). ConfigError naming model.arch for an architecture this engine does not build.
std::unique_ptr<Block> make_block(const ModelConfig& m, int index);
void declare_block(ParamStore& store, const ModelConfig& m, int index);

}  // namespace routescope::models
