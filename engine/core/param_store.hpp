#pragma once
// All parameters of a model in ONE contiguous buffer and their gradients in a second buffer with
// the same layout (llm.c): a checkpoint is the parameter buffer, an optimizer step is a loop over
// both, a data-parallel all-reduce is one call on the gradient buffer. Tensors are registered by
// name (PyTorch-style names, CHECKPOINT_FORMAT.md) with their shapes, then the buffers are
// allocated once; tensors are packed in registration order with no gaps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/core/aligned_buffer.hpp"
#include "engine/core/error.hpp"

namespace routescope {

/// How a parameter is initialised (MODELS.md init), declared with it.
enum class ParamInit : std::uint8_t {
    normal,          ///< N(0, model.init_std): dense weights, embedding tables
    zeros,           ///< biases
    ones,            ///< LayerNorm weights
    ssm,             ///< the A_re of one SSM: draws its five tensors together (ops::ssm_init)
    ssm_part,        ///< A_im, C, D, log_step: drawn with their SSM's A_re
    spatial_weight,  ///< gMLP's W: uniform(±1e−3/n), strict upper triangle 0 when causal
    spatial_bias,    ///< gMLP's b = 1
    forget_bias,     ///< Birdie's forget-gate bias (model.birdie.forget_init)
};

/// The optimizer group of a parameter (docs/config.md "Parameter groups"), declared with it.
enum class ParamGroup : std::uint8_t {
    decay,     ///< train.lr, train.weight_decay
    no_decay,  ///< train.lr, no decay: biases, LayerNorm, embeddings, Birdie's forget gate
    ssm,       ///< train.ssm_lr, no decay: the SSM parameters
};

struct ParamEntry {
    std::string name;
    std::vector<std::int64_t> shape;
    std::size_t offset = 0;  ///< in elements from the start of the buffer
    std::size_t size = 0;    ///< product of shape
    ParamInit init = ParamInit::normal;
    ParamGroup group = ParamGroup::decay;
    int layer = -1;  ///< the block index for per-layer initialisations (forget_bias), else −1
};

template <class T>
class BasicParamStore {
public:
    /// Registers a tensor; only before allocate(). Returns its index in registration order.
    std::size_t add(const std::string& name, std::vector<std::int64_t> shape,
                    ParamInit init = ParamInit::normal, ParamGroup group = ParamGroup::decay,
                    int layer = -1) {
        if (allocated_) throw Error("ParamStore::add('" + name + "'): store already allocated");
        if (index_.count(name)) throw Error("ParamStore::add: duplicate parameter '" + name + "'");
        std::size_t count = 1;
        for (auto dim : shape) {
            if (dim < 0) throw Error("ParamStore::add('" + name + "'): negative dimension");
            count *= static_cast<std::size_t>(dim);
        }
        entries_.push_back({name, std::move(shape), total_, count, init, group, layer});
        total_ += count;
        index_.emplace(name, entries_.size() - 1);
        return entries_.size() - 1;
    }

    /// Allocates both buffers, zero-filled. Pointers stay valid for the store's lifetime.
    void allocate() {
        if (allocated_) throw Error("ParamStore::allocate: already allocated");
        params_ = AlignedBuffer<T>(total_);
        grads_ = AlignedBuffer<T>(total_);
        allocated_ = true;
    }

    /// Allocates the parameters only (zero-filled), for a store that is never trained: the
    /// importer's, a model on its way to a checkpoint, which must not hold twice its size.
    /// grad_data() / grad() / zero_grad() then throw.
    void allocate_parameters_only() {
        if (allocated_) throw Error("ParamStore::allocate: already allocated");
        params_ = AlignedBuffer<T>(total_);
        allocated_ = true;
    }

    bool allocated() const { return allocated_; }
    std::size_t size() const { return total_; }
    const std::vector<ParamEntry>& entries() const { return entries_; }
    bool contains(std::string_view name) const { return index_.find(name) != index_.end(); }

    const ParamEntry& entry(std::string_view name) const {
        auto it = index_.find(name);  // heterogeneous: no std::string is built for the look-up
        if (it == index_.end())
            throw Error("ParamStore: no parameter named '" + std::string(name) + "'");
        return entries_[it->second];
    }

    T* data() { return checked(params_.data()); }
    const T* data() const { return checked(params_.data()); }
    T* grad_data() { return checked_grads(grads_.data()); }
    const T* grad_data() const { return checked_grads(grads_.data()); }

    T* param(std::string_view name) { return data() + entry(name).offset; }
    const T* param(std::string_view name) const { return data() + entry(name).offset; }
    T* grad(std::string_view name) { return grad_data() + entry(name).offset; }
    const T* grad(std::string_view name) const { return grad_data() + entry(name).offset; }

    /// Once per step: backward passes accumulate (+=) into the gradient buffer.
    void zero_grad() {
        T* g = grad_data();
        for (std::size_t i = 0; i < total_; ++i)
            g[i] = T(0);
    }

private:
    template <class P>
    P* checked(P* p) const {
        if (!allocated_) throw Error("ParamStore: buffers used before allocate()");
        return p;
    }
    template <class P>
    P* checked_grads(P* p) const {
        if (checked(p) == nullptr && total_ > 0)
            throw Error("ParamStore: no gradient buffer (allocate_parameters_only)");
        return p;
    }

    std::vector<ParamEntry> entries_;
    struct NameHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };
    std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>> index_;
    std::size_t total_ = 0;
    bool allocated_ = false;
    AlignedBuffer<T> params_;
    AlignedBuffer<T> grads_;
};

using ParamStore = BasicParamStore<float>;

}  // namespace routescope
