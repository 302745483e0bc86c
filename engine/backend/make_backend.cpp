#include "engine/backend/make_backend.hpp"

#include <algorithm>
#include <new>

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/emulated_cuda_backend.hpp"
#include "engine/backend/guard_backend.hpp"
#include "engine/core/error.hpp"
#ifdef ROUTESCOPE_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.hpp"
#endif

namespace routescope {

Precision parse_precision(const std::string& name) {
    if (name == "fp32") return Precision::fp32;
    if (name == "tf32") return Precision::tf32;
    if (name == "bf16-mixed") return Precision::bf16_mixed;
    throw ConfigError("train.precision: '" + name + "' is not fp32, tf32 or bf16-mixed");
}

const char* precision_name(Precision p) {
    switch (p) {
        case Precision::fp32:
            return "fp32";
        case Precision::tf32:
            return "tf32";
        case Precision::bf16_mixed:
            return "bf16-mixed";
    }
    return "fp32";
}

void Backend::set_precision(Precision p) {
    if (p != Precision::fp32)
        throw ConfigError(std::string("train.precision = ") + precision_name(p) + ": the " +
                          name() +
                          " backend computes in fp32 only (tf32 and bf16-mixed need --device cuda; "
                          "docs/config.md)");
    precision_ = p;
}

void* Backend::allocate_host(std::size_t bytes) {
    return ::operator new (std::max<std::size_t>(bytes, 1), std::align_val_t{64});
}

void Backend::release_host(void* p) noexcept {
    ::operator delete (p, std::align_val_t{64});
}

std::string cuda_unavailable_reason() {
#ifndef ROUTESCOPE_HAVE_CUDA
    return "the CUDA backend is not compiled into this build (nvcc was not found when it was "
           "built)";
#else
    const std::string missing = cuda::missing_kernels();
    if (!missing.empty()) return "the CUDA backend has no kernels yet for: " + missing;
    const auto info = cuda::query_devices();
    if (info.count == 0)
        return info.reason;  // names the driver's answer ("no usable CUDA device: ...")
    return {};
#endif
}

Device resolve_device(const std::string& name) {
    if (name == "cpu") return Device::cpu;
    if (name == "guard") return Device::guard;                  // diagnostic (guard_backend.hpp)
    if (name == "cuda-emulated") return Device::cuda_emulated;  // diagnostic (emulated_cuda_…)
    if (name == "auto") return cuda_unavailable_reason().empty() ? Device::cuda : Device::cpu;
    if (name == "cuda") {
        const std::string reason = cuda_unavailable_reason();
        if (!reason.empty()) throw ConfigError("--device cuda: " + reason);
        return Device::cuda;
    }
    throw ConfigError("--device: '" + name + "' is not cpu, cuda, auto, guard or cuda-emulated");
}

std::unique_ptr<Backend> make_backend(Device device, ThreadPool& pool) {
    if (device == Device::cuda) {
#ifdef ROUTESCOPE_HAVE_CUDA
        const std::string reason = cuda_unavailable_reason();
        if (reason.empty()) return cuda::make_cuda_backend();
        throw ConfigError("--device cuda: " + reason);
#else
        throw ConfigError("--device cuda: " + cuda_unavailable_reason());
#endif
    }
    if (device == Device::guard) return std::make_unique<GuardBackend>(pool);
    if (device == Device::cuda_emulated) return std::make_unique<EmulatedCudaBackend>();
    return std::make_unique<CpuBackend>(pool);
}

}  // namespace routescope
