#include "engine/backend/make_backend.hpp"

#include "engine/backend/cpu/cpu_backend.hpp"
#include "engine/backend/guard_backend.hpp"
#include "engine/core/error.hpp"
#ifdef ROUTESCOPE_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.hpp"
#endif

namespace routescope {

std::string cuda_unavailable_reason() {
#ifndef ROUTESCOPE_HAVE_CUDA
    return "the CUDA backend is not compiled into this build (nvcc was not found when it was "
           "built)";
#else
    const auto info = cuda::query_devices();
    if (info.count == 0)
        return info.reason;  // names the driver's answer ("no usable CUDA device: ...")
    return "the CUDA backend does not implement the op table yet (only bench conv's cuFFT path "
           "runs on " +
           info.name + ")";
#endif
}

Device resolve_device(const std::string& name) {
    if (name == "cpu") return Device::cpu;
    if (name == "guard") return Device::guard;  // diagnostic (guard_backend.hpp)
    if (name == "auto") return cuda_unavailable_reason().empty() ? Device::cuda : Device::cpu;
    if (name == "cuda") {
        const std::string reason = cuda_unavailable_reason();
        if (!reason.empty()) throw ConfigError("--device cuda: " + reason);
        return Device::cuda;
    }
    throw ConfigError("--device: '" + name + "' is not cpu, cuda, auto or guard");
}

std::unique_ptr<Backend> make_backend(Device device, ThreadPool& pool) {
    if (device == Device::cuda) throw ConfigError("--device cuda: " + cuda_unavailable_reason());
    if (device == Device::guard) return std::make_unique<GuardBackend>(pool);
    return std::make_unique<CpuBackend>(pool);
}

}  // namespace routescope
