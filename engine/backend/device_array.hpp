#pragma once
// n elements of T in a backend's memory (Backend::allocate), released with it: the owner of every
// byte a step touches (parameters, gradients, moments, the activation arena, the batch). The host
// reaches the elements only by upload() and download(), which go through Backend::copy and count
// their bytes; data() is a device pointer, for the backend's ops and nothing else.
#include <cstddef>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/core/error.hpp"

namespace routescope {

template <class T>
class DeviceArray {
public:
    DeviceArray() = default;
    /// n elements, zero-filled (Backend::zero).
    DeviceArray(Backend& backend, std::size_t n) : backend_(&backend), n_(n) {
        if (n == 0) return;
        data_ = static_cast<T*>(backend.allocate(n * sizeof(T)));
        backend.zero(data_, n * sizeof(T));
    }
    ~DeviceArray() { reset(); }
    DeviceArray(DeviceArray&& o) noexcept
        : backend_(std::exchange(o.backend_, nullptr)),
          data_(std::exchange(o.data_, nullptr)),
          n_(std::exchange(o.n_, 0)) {}
    DeviceArray& operator=(DeviceArray&& o) noexcept {
        if (this != &o) {
            reset();
            backend_ = std::exchange(o.backend_, nullptr);
            data_ = std::exchange(o.data_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;

    T* data() { return data_; }
    const T* data() const { return data_; }
    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Backend* backend() const { return backend_; }

    /// Elements [offset, offset + n) ← host[0, n).
    void upload(const T* host, std::size_t n, std::size_t offset = 0) {
        check(offset, n, "upload");
        if (n)
            backend_->copy(data_ + offset, host, n * sizeof(T), Backend::CopyKind::host_to_device);
    }
    void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
    /// host[0, n) ← elements [offset, offset + n).
    void download(T* host, std::size_t n, std::size_t offset = 0) const {
        check(offset, n, "download");
        if (n)
            backend_->copy(host, data_ + offset, n * sizeof(T), Backend::CopyKind::device_to_host);
    }
    std::vector<T> download() const {
        std::vector<T> out(n_);
        download(out.data(), n_);
        return out;
    }
    void zero() {
        if (n_) backend_->zero(data_, n_ * sizeof(T));
    }

private:
    void check(std::size_t offset, std::size_t n, const char* what) const {
        if (offset > n_ || n > n_ - offset)
            throw Error(std::string("DeviceArray::") + what + ": elements [" +
                        std::to_string(offset) + ", " + std::to_string(offset + n) +
                        ") outside an array of " + std::to_string(n_));
    }
    void reset() noexcept {
        if (backend_ && data_) backend_->release(data_);
        data_ = nullptr;
        n_ = 0;
    }

    Backend* backend_ = nullptr;
    T* data_ = nullptr;
    std::size_t n_ = 0;
};

}  // namespace routescope
