#pragma once
// The engine's tensor: a view of memory owned elsewhere (the parameter buffer, the activation
// arena, a batch), with its shape, element type and the device the memory lives on. It is what a
// model hands an op and what a backend reads; it owns nothing and allocates nothing, so it can sit
// in a tape record by value.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace routescope {

enum class DType : std::uint8_t { f32, f64, i32 };
/// Where a backend's memory lives. guard: the CPU kernels over memory the host cannot touch
/// outside the backend's own calls (engine/backend/guard/guard_backend.hpp), a diagnostic device
/// that proves the engine reaches its tensors only through the backend.
enum class Device : std::uint8_t { cpu, cuda, guard, cuda_emulated };

constexpr const char* device_name(Device d) {
    return d == Device::cpu     ? "cpu"
           : d == Device::cuda  ? "cuda"
           : d == Device::guard ? "guard"
                                : "cuda-emulated";
}

constexpr std::size_t dtype_size(DType t) {
    return t == DType::f64 ? 8 : 4;
}
constexpr const char* dtype_name(DType t) {
    return t == DType::f32 ? "f32" : t == DType::f64 ? "f64" : "i32";
}

struct Tensor {
    static constexpr int kMaxRank = 4;

    void* data = nullptr;
    std::array<std::int64_t, kMaxRank> shape{};  ///< dims [0, rank); the rest unused
    std::int8_t rank = 0;
    DType dtype = DType::f32;
    Device device = Device::cpu;

    Tensor() = default;
    Tensor(void* p, std::initializer_list<std::int64_t> dims, DType t = DType::f32,
           Device dev = Device::cpu)
        : data(p), dtype(t), device(dev) {
        for (std::int64_t d : dims)
            if (rank < kMaxRank) shape[static_cast<std::size_t>(rank++)] = d;
    }

    std::int64_t numel() const {
        std::int64_t n = 1;
        for (int i = 0; i < rank; ++i)
            n *= shape[static_cast<std::size_t>(i)];
        return n;
    }
    std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
    template <class T>
    T* as() const {
        return static_cast<T*>(data);
    }
};

}  // namespace routescope
