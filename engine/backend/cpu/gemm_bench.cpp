#include "engine/backend/cpu/gemm_bench.hpp"

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include "engine/core/aligned_buffer.hpp"
#include "engine/core/error.hpp"
#include "engine/core/thread_pool.hpp"
#include "engine/ops/dense.hpp"

namespace routescope::cpu {

namespace {
using Clock = std::chrono::steady_clock;

double elapsed(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// 12 independent accumulators: enough to cover FMA latency (4–5 cycles) × 2 FMA ports on current
// x86 cores, so the loop is throughput-bound. a·acc + b with a just below 1 keeps values finite
// and normal for any iteration count.
constexpr int kChains = 12;
constexpr float kA = 0.9999999f, kB = 1e-7f;

#if defined(__AVX512F__)
constexpr int kLanes = 16;
float fma_block(std::int64_t iters) {
    __m512 acc[kChains];
    for (int c = 0; c < kChains; ++c)
        acc[c] = _mm512_set1_ps(static_cast<float>(c));
    const __m512 a = _mm512_set1_ps(kA), b = _mm512_set1_ps(kB);
    for (std::int64_t i = 0; i < iters; ++i) {
        for (int c = 0; c < kChains; ++c)
            acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    }
    __m512 s = acc[0];
    for (int c = 1; c < kChains; ++c)
        s = _mm512_add_ps(s, acc[c]);
    return _mm512_reduce_add_ps(s);
}
const char* const kIsa = "avx512f";
#elif defined(__FMA__)
constexpr int kLanes = 8;
float fma_block(std::int64_t iters) {
    __m256 acc[kChains];
    for (int c = 0; c < kChains; ++c)
        acc[c] = _mm256_set1_ps(static_cast<float>(c));
    const __m256 a = _mm256_set1_ps(kA), b = _mm256_set1_ps(kB);
    for (std::int64_t i = 0; i < iters; ++i) {
        for (int c = 0; c < kChains; ++c)
            acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    }
    __m256 s = acc[0];
    for (int c = 1; c < kChains; ++c)
        s = _mm256_add_ps(s, acc[c]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, s);
    float total = 0;
    for (float v : lanes)
        total += v;
    return total;
}
const char* const kIsa = "avx2+fma";
#else
constexpr int kLanes = 1;
float fma_block(std::int64_t iters) {
    float acc[kChains];
    for (int c = 0; c < kChains; ++c)
        acc[c] = static_cast<float>(c);
    for (std::int64_t i = 0; i < iters; ++i) {
        for (int c = 0; c < kChains; ++c)
            acc[c] = std::fma(acc[c], kA, kB);
    }
    float total = 0;
    for (float v : acc)
        total += v;
    return total;
}
const char* const kIsa = "scalar";
#endif
}  // namespace

const char* fma_peak_isa() {
    return kIsa;
}

double measure_fma_peak_gflops(int threads, double seconds) {
    if (threads < 1) throw Error("measure_fma_peak_gflops: threads must be >= 1");
    ThreadPool pool(threads);
    // Calibrate on one thread: how many iterations fill `seconds`.
    std::int64_t iters = 1 << 16;
    volatile float sink = 0;
    for (;;) {
        const auto start = Clock::now();
        sink = sink + fma_block(iters);
        const double t = elapsed(start);
        if (t > 0.05 || iters > (std::int64_t{1} << 40)) {
            iters = static_cast<std::int64_t>(static_cast<double>(iters) * seconds / t) + 1;
            break;
        }
        iters *= 4;
    }
    std::vector<float> results(static_cast<std::size_t>(threads));
    const auto start = Clock::now();
    pool.parallel_for(threads, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t t = b; t < e; ++t)
            results[static_cast<std::size_t>(t)] = fma_block(iters);
    });
    const double t = elapsed(start);
    for (float r : results)
        sink = sink + r;
    const double flops = 2.0 * kChains * kLanes * static_cast<double>(iters) * threads;
    return flops / t * 1e-9;
}

GemmBenchResult bench_gemm(int m, int n, int k, int threads, double seconds) {
    if (m < 1 || n < 1 || k < 1 || threads < 1) {
        throw Error("bench_gemm: m, n, k and threads must be >= 1");
    }
    ThreadPool pool(threads);
    AlignedBuffer<float> a(static_cast<std::size_t>(m) * k), w(static_cast<std::size_t>(n) * k),
        c(static_cast<std::size_t>(m) * n);
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (std::size_t i = 0; i < a.size(); ++i)
        a.data()[i] = dist(gen);
    for (std::size_t i = 0; i < w.size(); ++i)
        w.data()[i] = dist(gen);

    auto call = [&] {
        ops::dense_forward<float>(c.data(), a.data(), w.data(), nullptr, m, k, n, pool);
    };
    call();  // warm-up: page faults, caches
    GemmBenchResult r{m, n, k, threads, 0, 0, 0};
    const auto start = Clock::now();
    do {
        call();
        ++r.iterations;
        r.seconds = elapsed(start);
    } while (r.seconds < seconds || r.iterations < 2);
    r.gflops = 2.0 * m * n * static_cast<double>(k) * r.iterations / r.seconds * 1e-9;
    return r;
}

}  // namespace routescope::cpu
