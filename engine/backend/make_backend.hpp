#pragma once
// Choosing a backend by device (`--device cpu|cuda|auto` of the commands that run a model).
#include <memory>
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/core/thread_pool.hpp"

namespace routescope {

/// "cpu", "cuda", "auto", "guard" or "cuda-emulated" (the diagnostic devices of guard_backend.hpp
/// and emulated_cuda_backend.hpp) → the device to run on. auto is cuda when a CUDA backend that
/// implements the op table is compiled in and a device is present, else cpu. cuda when it cannot
/// run throws ConfigError naming the reason (not compiled in; an op without CUDA kernels; no
/// driver or no device). Any other name is a ConfigError too.
Device resolve_device(const std::string& name);

/// Why the CUDA backend cannot run here, or an empty string when it can.
std::string cuda_unavailable_reason();

/// The backend of `device` over `pool` (the CPU backend's threads).
std::unique_ptr<Backend> make_backend(Device device, ThreadPool& pool);

}  // namespace routescope
