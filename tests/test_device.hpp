#pragma once
// The device a model test runs the engine on: `ROUTESCOPE_TEST_DEVICE` (cpu, cuda, guard) when
// set, else the test's own default. scripts/gpu-check.sh sets it to cuda, so the PyTorch parity
// of every architecture (test_parity) and the residency byte checks (test_guard_backend) run on
// the GPU with the same expectations. And the Python oracle: `ROUTESCOPE_PYTHON` in the
// environment (a GPU machine's python3 with PyTorch) before the one the build found.
#include <QString>

#include <cstdlib>
#include <string>

#include "engine/backend/make_backend.hpp"

namespace routescope::test {

inline Device test_device(Device fallback = Device::cpu) {
    const char* name = std::getenv("ROUTESCOPE_TEST_DEVICE");
    return name && *name ? resolve_device(name) : fallback;
}

inline QString test_python(const char* built_in) {
    const char* env = std::getenv("ROUTESCOPE_PYTHON");
    return QString::fromUtf8(env && *env ? env : built_in);
}

}  // namespace routescope::test
