#include "app/cli/device_option.hpp"

#include "engine/backend/make_backend.hpp"

namespace routescope::cli {

void add_device_option(CLI::App* cmd, std::string& device) {
    cmd->add_option("--device", device,
                    "cpu | cuda | auto (auto: cuda when a usable GPU and backend are present) | "
                    "guard (diagnostic: the CPU kernels over memory the host cannot touch) | "
                    "cuda-emulated (diagnostic: the CUDA backend's kernels run on the host)")
        ->check(CLI::IsMember({"cpu", "cuda", "auto", "guard", "cuda-emulated"}));
}

Device checked_device(const std::string& device) {
    return resolve_device(device);
}

}  // namespace routescope::cli
