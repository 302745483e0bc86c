// CUDA backend kernels: elementwise AXPY and the cuFFT long convolution (MODELS.md, S4D section).
#include "engine/backend/cuda/cuda_backend.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

#include <string>
#include <vector>

namespace routescope::cuda {
namespace {

void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(err));
}

void check_fft(cufftResult res, const char* what) {
    if (res != CUFFT_SUCCESS)
        throw CudaError(std::string(what) + ": cuFFT error " + std::to_string(res));
}

/// Owns device memory; freed on scope exit so an exception never leaks it.
template <class T>
struct DeviceBuffer {
    T* ptr = nullptr;
    explicit DeviceBuffer(std::size_t n) { check(cudaMalloc(&ptr, n * sizeof(T)), "cudaMalloc"); }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// A cuFFT plan, destroyed on scope exit.
struct FftPlan {
    cufftHandle handle = 0;
    FftPlan(int n, cufftType type, int batch, const char* what) {
        check_fft(cufftPlan1d(&handle, n, type, batch), what);
    }
    ~FftPlan() { cufftDestroy(handle); }
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;
};

__global__ void axpy_kernel(float a, const float* x, float* y, std::size_t n) {
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

// Pointwise product of two spectra, scaled by 1/n for cuFFT's unnormalised inverse.
__global__ void spectral_product(const cufftComplex* a, const cufftComplex* b, cufftComplex* out,
                                 std::size_t total, float scale) {
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i >= total) return;
    cufftComplex x = a[i], y = b[i];
    out[i] = make_cuFloatComplex((x.x * y.x - x.y * y.y) * scale, (x.x * y.y + x.y * y.x) * scale);
}

unsigned blocks_for(std::size_t n, unsigned threads) {
    return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

DeviceInfo query_devices() {
    DeviceInfo info;
    cudaRuntimeGetVersion(&info.runtime_version);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        info.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
        cudaGetLastError();  // clear the sticky error so later calls start clean
        return info;
    }
    if (count == 0) {
        info.reason = "no CUDA device present";
        return info;
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    info.count = count;
    info.name = prop.name;
    return info;
}

void axpy(float a, const float* x, float* y, std::size_t n) {
    if (n == 0) return;
    DeviceBuffer<float> dx(n), dy(n);
    check(cudaMemcpy(dx.ptr, x, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy x");
    check(cudaMemcpy(dy.ptr, y, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy y");
    constexpr unsigned threads = 256;
    axpy_kernel<<<blocks_for(n, threads), threads>>>(a, dx.ptr, dy.ptr, n);
    check(cudaGetLastError(), "axpy_kernel launch");
    check(cudaMemcpy(y, dy.ptr, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy y back");
}

void fft_causal_conv(const float* u, const float* k, float* y, int L, int channels) {
    if (L <= 0 || channels <= 0) return;
    const int n = 2 * L;
    const int nfreq = L + 1;
    const std::size_t real_total = static_cast<std::size_t>(n) * channels;
    const std::size_t freq_total = static_cast<std::size_t>(nfreq) * channels;

    // Zero-padded inputs on the host, then one copy each.
    std::vector<float> padded(real_total, 0.0f);
    DeviceBuffer<float> du(real_total), dk(real_total), dy(real_total);
    for (int c = 0; c < channels; ++c)
        std::copy(u + static_cast<std::size_t>(c) * L, u + static_cast<std::size_t>(c + 1) * L,
                  padded.begin() + static_cast<std::ptrdiff_t>(c) * n);
    check(cudaMemcpy(du.ptr, padded.data(), real_total * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy u");
    for (int c = 0; c < channels; ++c)
        std::copy(k + static_cast<std::size_t>(c) * L, k + static_cast<std::size_t>(c + 1) * L,
                  padded.begin() + static_cast<std::ptrdiff_t>(c) * n);
    check(cudaMemcpy(dk.ptr, padded.data(), real_total * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy k");

    DeviceBuffer<cufftComplex> fu(freq_total), fk(freq_total);
    FftPlan forward(n, CUFFT_R2C, channels, "cufftPlan1d R2C");
    FftPlan inverse(n, CUFFT_C2R, channels, "cufftPlan1d C2R");
    check_fft(cufftExecR2C(forward.handle, du.ptr, fu.ptr), "cufftExecR2C u");
    check_fft(cufftExecR2C(forward.handle, dk.ptr, fk.ptr), "cufftExecR2C k");
    constexpr unsigned threads = 256;
    spectral_product<<<blocks_for(freq_total, threads), threads>>>(
        fu.ptr, fk.ptr, fu.ptr, freq_total, 1.0f / static_cast<float>(n));
    check(cudaGetLastError(), "spectral_product launch");
    check_fft(cufftExecC2R(inverse.handle, fu.ptr, dy.ptr), "cufftExecC2R");
    check(cudaMemcpy(padded.data(), dy.ptr, real_total * sizeof(float), cudaMemcpyDeviceToHost),
          "cudaMemcpy y");
    for (int c = 0; c < channels; ++c)
        std::copy(padded.begin() + static_cast<std::ptrdiff_t>(c) * n,
                  padded.begin() + static_cast<std::ptrdiff_t>(c) * n + L,
                  y + static_cast<std::size_t>(c) * L);
}

}  // namespace routescope::cuda
