#pragma once
// What this build contains: version, libraries, backends. Printed by --version and the About box.
#include <string>

namespace routescope {

/// Multi-line text: "routescope 0.1.0\nHDF5 1.10.8\nEigen 3.4.0\n...".
std::string build_info_text();

/// Whether the CUDA backend was compiled in, and what the runtime says about devices.
bool cuda_compiled();
std::string cuda_status();

}  // namespace routescope
