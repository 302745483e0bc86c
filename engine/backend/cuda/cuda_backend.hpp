#pragma once
// The CUDA backend's host-side interface. No CUDA header leaks out of this file, so the rest of the
// engine (and routescope-cli) compiles with a plain C++ compiler.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace routescope {
class Backend;
}

namespace routescope::cuda {

/// Thrown when a CUDA, cuBLAS or cuFFT call fails; the message names the call and the CUDA error.
struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct DeviceInfo {
    int count = 0;            ///< usable devices; 0 when none (then `reason` says why)
    std::string name;         ///< name of device 0
    std::string reason;       ///< why no device is usable, when count == 0
    int runtime_version = 0;  ///< CUDA runtime version (e.g. 13000)
};

/// Asks the CUDA runtime which devices are present. Never throws: a missing driver is a reason.
DeviceInfo query_devices();

/// The ops of the op table without CUDA kernels, comma-separated; empty when every op has them.
std::string missing_kernels();

/// The CUDA backend on device 0 (device_backend.cu): device memory, one stream, cuBLAS, cuFFT.
/// Throws CudaError when the device cannot be used.
std::unique_ptr<Backend> make_cuda_backend();

/// y ← a·x + y on device 0 (host arrays in and out). The elementwise path of the backend.
void axpy(float a, const float* x, float* y, std::size_t n);

/// Causal linear convolution of `channels` independent rows of length L with their kernels, via a
/// batched cuFFT R2C/C2R plan of size 2L: y = irfft(rfft(pad(u, 2L)) · rfft(pad(k, 2L)))[0:L].
/// u, k, y are [channels, L] row-major host arrays.
void fft_causal_conv(const float* u, const float* k, float* y, int L, int channels);

/// Phases of one fft_causal_conv, in milliseconds, timed by CUDA events on the device.
struct ConvTiming {
    double upload_ms = 0;    ///< u and k to the device (zero padding included)
    double compute_ms = 0;   ///< median over the repeats: two R2C, the product, one C2R
    double download_ms = 0;  ///< y back to the host
    double plan_ms = 0;      ///< creating the two cuFFT plans (host clock)
};

/// fft_causal_conv with its phases timed for `bench conv`: one upload, `repeats` runs of the
/// transforms and product on the resident data (the result is the same every run), one download.
ConvTiming fft_causal_conv_timed(const float* u, const float* k, float* y, int L, int channels,
                                 int repeats);

}  // namespace routescope::cuda
