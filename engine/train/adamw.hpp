#pragma once
// AdamW (Loshchilov & Hutter 2019) exactly as torch.optim.AdamW (foreach off, no amsgrad) runs it,
// over the flat parameter and gradient buffers of a ParamStore. For update k = s + 1, per element:
//
//   p ← p · (1 − lr·wd)
//   m ← β1·m + (1 − β1)·g          v ← β2·v + (1 − β2)·g²
//   p ← p − lr/(1 − β1^k) · m / (√v / √(1 − β2^k) + ε)
//
// Parameter groups of docs/config.md, declared with each parameter (ParamEntry::group, set where
// the model declares it): `ssm` (the SSM tensors; rate train.ssm_lr, no decay), `no_decay` (every
// bias, LayerNorm weights, the embedding tables, `mlm.bias`, Birdie's forget gate `w_f`), `decay`
// (the other weights; train.weight_decay). Every parameter is updated every step, zero gradient or
// not.
//
// Global-norm clipping (train.clip_grad_norm > 0): ‖g‖ over all parameters together, in double;
// g ← g · min(1, max/(‖g‖ + 1e−6)) — torch.nn.utils.clip_grad_norm_'s formula.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/device_array.hpp"
#include "engine/core/config.hpp"
#include "engine/core/param_store.hpp"

namespace routescope::train {

using routescope::ParamGroup;

class AdamW {
public:
    /// Moments start at zero (in the memory of the store's backend, beside the gradients), update
    /// count at 0. The store must be allocated on a backend (ParamStore::allocate(Backend&)).
    AdamW(const TrainConfig& config, const ParamStore& store);

    /// ‖g‖₂ over the whole gradient buffer, summed in double (in a fixed order), by the store's
    /// backend (the flat-buffer operations of engine/backend/backend.hpp).
    static double grad_norm(const ParamStore& store);
    /// Scales the gradients when clip_grad_norm > 0 and ‖g‖ exceeds it; returns ‖g‖ before.
    double clip(ParamStore& store) const;
    /// One update with the rate of update `step()` (lr_schedule), then step() += 1: one
    /// Backend::adamw_spans over the store's runs of parameters with the same group (adjacent
    /// parameters of one group form one span). Returns the base rate used (train.lr × factor).
    double update(ParamStore& store);

    std::int64_t step() const { return step_; }
    void set_step(std::int64_t step) { step_ = step; }
    /// Host copies of the moments in the store's flat layout (torch's exp_avg, exp_avg_sq), for
    /// checkpoints: each a download from the backend.
    std::vector<float> m() const { return m_.download(); }
    std::vector<float> v() const { return v_.download(); }
    /// Uploads moments read from a checkpoint (sizes checked by the caller).
    void set_moments(const std::vector<float>& m, const std::vector<float>& v);

private:
    struct Span {
        std::size_t offset, size;
        ParamGroup group;
    };
    TrainConfig config_;
    std::vector<Span> spans_;
    std::vector<AdamWSpan> updates_;  ///< one per span, refilled every update (no allocation)
    DeviceArray<float> m_, v_;
    std::int64_t step_ = 0;
};

}  // namespace routescope::train
