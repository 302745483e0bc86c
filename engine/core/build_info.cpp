#include "engine/core/build_info.hpp"

#include "engine/backend/cpu/blas.hpp"
#include "engine/backend/make_backend.hpp"

#include <H5public.h>
#include <fftw3.h>

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <sstream>

#include "routescope/version.hpp"
#ifdef ROUTESCOPE_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.hpp"
#endif

namespace routescope {

bool cuda_compiled() {
#ifdef ROUTESCOPE_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

std::string cuda_status() {
#ifdef ROUTESCOPE_HAVE_CUDA
    const auto info = cuda::query_devices();
    std::ostringstream s;
    s << "compiled in (runtime " << info.runtime_version / 1000 << "."
      << (info.runtime_version % 1000) / 10 << "); ";
    if (info.count > 0)
        s << info.count << " device(s), " << info.name;
    else
        s << info.reason;
    return s.str();
#else
    return "not compiled in";
#endif
}

std::string build_info_text() {
    std::ostringstream s;
    s << "routescope " << kVersion << "\n"
      << "HDF5 " << H5_VERS_MAJOR << "." << H5_VERS_MINOR << "." << H5_VERS_RELEASE << "\n"
      << "Eigen " << EIGEN_WORLD_VERSION << "." << EIGEN_MAJOR_VERSION << "." << EIGEN_MINOR_VERSION
      << "\n"
      << "FFTW " << fftwf_version << "\n"
      << "BLAS " << cpu::blas_description() << "\n"
      << "nlohmann-json " << NLOHMANN_JSON_VERSION_MAJOR << "." << NLOHMANN_JSON_VERSION_MINOR
      << "." << NLOHMANN_JSON_VERSION_PATCH << "\n"
      << "CUDA backend: " << cuda_status() << "\n";
    // Whether `--device cuda` runs here (make_backend.hpp); the workbench's device box reads it.
    const std::string why = cuda_unavailable_reason();
    s << "CUDA engine: " << (why.empty() ? std::string("ready") : "unavailable (" + why + ")")
      << "\n";
    return s.str();
}

}  // namespace routescope
