#pragma once
// The CPU backend's GEMM measured against the machine itself (issue 3: "engine GEMM reaches
// ≥ 60% of the machine's measured FMA peak"): bench_gemm times ops::dense_forward, the GEMM every
// model runs, and measure_fma_peak_gflops times a register-only FMA loop, the ceiling no GEMM
// can pass. For `routescope-cli bench` and tests/engine/bench_gemm.cpp; never a timed unit test.
namespace routescope::cpu {

struct GemmBenchResult {
    int m = 0, n = 0, k = 0;  ///< C[m, n] = A[m, k] · B[n, k]ᵀ (rows, out, in of a dense layer)
    int threads = 0;
    int iterations = 0;
    double seconds = 0;  ///< wall time of the timed iterations (after one warm-up call)
    double gflops = 0;   ///< 2·m·n·k·iterations / seconds / 1e9
};

/// Runs fp32 dense_forward (no bias) on random data for at least `seconds` (at least 2 calls).
GemmBenchResult bench_gemm(int m, int n, int k, int threads, double seconds);

/// fp32 GFLOP/s of independent FMA chains held in registers on `threads` threads: AVX-512 or
/// AVX2/FMA intrinsics when the build targets them, else scalar fmaf (then a low figure).
double measure_fma_peak_gflops(int threads, double seconds = 0.3);

/// Which instruction set measure_fma_peak_gflops used ("avx512f", "avx2+fma", "scalar").
const char* fma_peak_isa();

}  // namespace routescope::cpu
