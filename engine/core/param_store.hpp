#pragma once
// All parameters of a model in ONE contiguous buffer and their gradients in a second buffer with
// the same layout (llm.c): a checkpoint is the parameter buffer, an optimizer step is a loop over
// both, a data-parallel all-reduce is one call on the gradient buffer. Tensors are registered by
// name (PyTorch-style names, CHECKPOINT_FORMAT.md) with their shapes, then the buffers are
// allocated once; tensors are packed in registration order with no gaps.
//
// Where the buffers live: allocate(Backend&) puts them in the backend's memory (a model's store:
// the ops read them there, and host code reaches the values only through upload / download /
// host_copy, which go through Backend::copy); allocate() keeps them in host memory (an importer's
// store, a checkpoint's staging copy, tests), where data() and param() may be read directly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/backend/device_array.hpp"
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

    /// Allocates both buffers in host memory, zero-filled. Pointers stay valid for the store's
    /// lifetime.
    void allocate() {
        if (allocated_) throw Error("ParamStore::allocate: already allocated");
        params_ = AlignedBuffer<T>(total_);
        grads_ = AlignedBuffer<T>(total_);
        allocated_ = true;
    }

    /// Allocates both buffers in `backend`'s memory, zero-filled (file comment). The backend must
    /// outlive the store.
    void allocate(Backend& backend) {
        if (allocated_) throw Error("ParamStore::allocate: already allocated");
        device_params_ = DeviceArray<T>(backend, total_);
        device_grads_ = DeviceArray<T>(backend, total_);
        backend_ = &backend;
        allocated_ = true;
    }

    /// The parameters only (zero-filled) in `backend`'s memory, for a model that is never
    /// trained (evaluation, dumps: Model's ModelUse::inference). grad_data() / grad() /
    /// zero_grad() then throw.
    void allocate_parameters_only(Backend& backend) {
        if (allocated_) throw Error("ParamStore::allocate: already allocated");
        device_params_ = DeviceArray<T>(backend, total_);
        backend_ = &backend;
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

    /// The backend whose memory holds the buffers, or null for a host store.
    Backend* backend() const { return backend_; }
    bool on_device() const { return backend_ != nullptr; }

    /// The buffers: device pointers for a store on a backend (for its ops only), host pointers
    /// otherwise.
    T* data() { return checked(backend_ ? device_params_.data() : params_.data()); }
    const T* data() const { return checked(backend_ ? device_params_.data() : params_.data()); }
    T* grad_data() { return checked_grads(backend_ ? device_grads_.data() : grads_.data()); }
    const T* grad_data() const {
        return checked_grads(backend_ ? device_grads_.data() : grads_.data());
    }

    T* param(std::string_view name) { return data() + entry(name).offset; }
    const T* param(std::string_view name) const { return data() + entry(name).offset; }
    T* grad(std::string_view name) { return grad_data() + entry(name).offset; }
    const T* grad(std::string_view name) const { return grad_data() + entry(name).offset; }

    /// Once per step: backward passes accumulate (+=) into the gradient buffer.
    void zero_grad() {
        T* g = grad_data();
        if (backend_) {
            backend_->zero(g, total_ * sizeof(T));
            return;
        }
        for (std::size_t i = 0; i < total_; ++i)
            g[i] = T(0);
    }

    // ------------------------------------------------------------ host access (file comment)
    /// Every parameter ← host[0, size()).
    void upload(const T* host) { upload_range(host, 0, total_); }
    /// host[0, size()) ← every parameter.
    void download(T* host) const { download_range(host, 0, total_); }
    /// host[0, size()) ← every gradient (tests and tools; training never reads them on the host).
    void download_grads(T* host) const {
        const T* src = grad_data();
        if (backend_)
            backend_->copy(host, src, total_ * sizeof(T), Backend::CopyKind::device_to_host);
        else
            std::copy_n(src, total_, host);
    }
    /// One tensor ← host[0, entry.size) / host[0, entry.size) ← one tensor.
    void upload_entry(std::string_view name, const T* host) {
        const ParamEntry& e = entry(name);
        upload_range(host, e.offset, e.size);
    }
    std::vector<T> download_entry(std::string_view name) const {
        const ParamEntry& e = entry(name);
        std::vector<T> out(e.size);
        download_range(out.data(), e.offset, e.size);
        return out;
    }
    /// A host store with this store's layout and (with values) its parameters, downloaded once:
    /// what checkpoints, dumps and initialisation read and write on the host.
    BasicParamStore host_copy(bool values = true) const {
        BasicParamStore out;
        out.entries_ = entries_;
        out.index_ = index_;
        out.total_ = total_;
        out.allocate_parameters_only();
        if (values) download(out.data());
        return out;
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
    void upload_range(const T* host, std::size_t offset, std::size_t n) {
        T* dst = data() + offset;
        if (!n) return;
        if (backend_)
            backend_->copy(dst, host, n * sizeof(T), Backend::CopyKind::host_to_device);
        else
            std::copy_n(host, n, dst);
    }
    void download_range(T* host, std::size_t offset, std::size_t n) const {
        const T* src = data() + offset;
        if (!n) return;
        if (backend_)
            backend_->copy(host, src, n * sizeof(T), Backend::CopyKind::device_to_host);
        else
            std::copy_n(src, n, host);
    }

    std::size_t total_ = 0;
    bool allocated_ = false;
    AlignedBuffer<T> params_;
    AlignedBuffer<T> grads_;
    Backend* backend_ = nullptr;
    DeviceArray<T> device_params_;
    DeviceArray<T> device_grads_;
};

using ParamStore = BasicParamStore<float>;

}  // namespace routescope
