// CUDA backend kernels: elementwise AXPY and the cuFFT long convolution (MODELS.md, S4D section).
#include "engine/backend/cuda/cuda_backend.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
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
    err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) {
        info.reason = std::string("no usable CUDA device: cudaGetDeviceProperties: ") +
                      cudaGetErrorString(err);
        cudaGetLastError();
        return info;
    }
    // A device the build holds no code for (the architectures are cmake/Cuda.cmake's: sm_80
    // machine code, sm_90 machine code and PTX; a V100 or T4 is compute capability 7.x) fails
    // at its first launch with "no kernel image is available". Asked of one of this build's
    // kernels, so the answer follows the architecture list it was compiled with; `auto` then
    // chooses the CPU and `--device cuda` says why.
    cudaFuncAttributes attributes{};
    err = cudaFuncGetAttributes(&attributes, axpy_kernel);
    if (err != cudaSuccess) {
        info.reason = std::string(prop.name) + " (compute capability " +
                      std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                      ") cannot run this build's kernels (" + cudaGetErrorString(err) +
                      "); it is built for compute capability 8.0 and newer";
        cudaGetLastError();
        return info;
    }
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

namespace {

/// A CUDA event, destroyed on scope exit.
struct Event {
    cudaEvent_t e = nullptr;
    Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
    ~Event() { cudaEventDestroy(e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
};

float elapsed_ms(const Event& a, const Event& b) {
    check(cudaEventSynchronize(b.e), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a.e, b.e), "cudaEventElapsedTime");
    return ms;
}

// The convolution with every phase on the default stream. Rows of length L go into rows of
// length n = 2L on the device by one strided copy each (cudaMemcpy2D), the padding zeroed by a
// memset, so the host never builds padded copies. With `timing`, the phases are timed and the
// transforms and product run `repeats` times (median kept).
void run_fft_causal_conv(const float* u, const float* k, float* y, int L, int channels, int repeats,
                         ConvTiming* timing) {
    const int n = 2 * L;
    const std::size_t row = static_cast<std::size_t>(L) * sizeof(float);
    const std::size_t padded_row = static_cast<std::size_t>(n) * sizeof(float);
    const std::size_t real_total = static_cast<std::size_t>(n) * channels;
    const std::size_t freq_total = static_cast<std::size_t>(L + 1) * channels;

    const auto plan_start = std::chrono::steady_clock::now();
    FftPlan forward(n, CUFFT_R2C, channels, "cufftPlan1d R2C");
    FftPlan inverse(n, CUFFT_C2R, channels, "cufftPlan1d C2R");
    const double plan_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - plan_start)
            .count();
    DeviceBuffer<float> du(real_total), dk(real_total), dy(real_total);
    DeviceBuffer<cufftComplex> fu(freq_total), fk(freq_total);
    Event t0, t1, t2, t3;

    check(cudaEventRecord(t0.e), "cudaEventRecord");
    check(cudaMemset(du.ptr, 0, real_total * sizeof(float)), "cudaMemset u");
    check(cudaMemset(dk.ptr, 0, real_total * sizeof(float)), "cudaMemset k");
    check(cudaMemcpy2D(du.ptr, padded_row, u, row, row, channels, cudaMemcpyHostToDevice),
          "cudaMemcpy2D u");
    check(cudaMemcpy2D(dk.ptr, padded_row, k, row, row, channels, cudaMemcpyHostToDevice),
          "cudaMemcpy2D k");
    check(cudaEventRecord(t1.e), "cudaEventRecord");

    constexpr unsigned threads = 256;
    std::vector<float> compute_ms;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        Event a, b;
        check(cudaEventRecord(a.e), "cudaEventRecord");
        check_fft(cufftExecR2C(forward.handle, du.ptr, fu.ptr), "cufftExecR2C u");
        check_fft(cufftExecR2C(forward.handle, dk.ptr, fk.ptr), "cufftExecR2C k");
        spectral_product<<<blocks_for(freq_total, threads), threads>>>(
            fu.ptr, fk.ptr, fu.ptr, freq_total, 1.0f / static_cast<float>(n));
        check(cudaGetLastError(), "spectral_product launch");
        check_fft(cufftExecC2R(inverse.handle, fu.ptr, dy.ptr), "cufftExecC2R");
        check(cudaEventRecord(b.e), "cudaEventRecord");
        if (timing) compute_ms.push_back(elapsed_ms(a, b));
    }

    check(cudaEventRecord(t2.e), "cudaEventRecord");
    check(cudaMemcpy2D(y, row, dy.ptr, padded_row, row, channels, cudaMemcpyDeviceToHost),
          "cudaMemcpy2D y");
    check(cudaEventRecord(t3.e), "cudaEventRecord");
    check(cudaEventSynchronize(t3.e), "cudaEventSynchronize");
    if (timing) {
        std::sort(compute_ms.begin(), compute_ms.end());
        timing->plan_ms = plan_ms;
        timing->upload_ms = elapsed_ms(t0, t1);
        timing->compute_ms = compute_ms[compute_ms.size() / 2];
        timing->download_ms = elapsed_ms(t2, t3);
    }
}

}  // namespace

void fft_causal_conv(const float* u, const float* k, float* y, int L, int channels) {
    if (L <= 0 || channels <= 0) return;
    run_fft_causal_conv(u, k, y, L, channels, 1, nullptr);
}

ConvTiming fft_causal_conv_timed(const float* u, const float* k, float* y, int L, int channels,
                                 int repeats) {
    ConvTiming timing;
    if (L <= 0 || channels <= 0) return timing;
    run_fft_causal_conv(u, k, y, L, channels, repeats, &timing);
    return timing;
}

}  // namespace routescope::cuda
