// The CUDA backend's sources are compiled as C++20 (engine/backend/cuda/CMakeLists.txt), so they
// can include the engine's backend interface (engine/backend/backend.hpp, which uses std::span
// through engine/ops/op.hpp). This translation unit checks that at compile time, and that the
// records a CUDA backend hands to its kernels can be passed to them by value.
#include <type_traits>

#include "engine/backend/backend.hpp"

static_assert(__cplusplus >= 202002L, "nvcc must compile the CUDA backend as C++20");

namespace routescope::cuda {

// Kernel parameters are copied bytewise to the device: an AdamW update goes to its kernel as is.
static_assert(std::is_trivially_copyable_v<AdamWSpan>);
static_assert(std::is_standard_layout_v<AdamWSpan>);

}  // namespace routescope::cuda
