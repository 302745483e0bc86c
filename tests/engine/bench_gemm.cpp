// bench_gemm: the engine GEMM (ops::dense_forward, fp32) on square shapes against the machine's
// measured FMA peak. Not a test.
//
//   bench_gemm [threads=2] [seconds=0.5] [sizes=512,1024,2048] [repeats=5]
//
// Each figure is the best of `repeats` bursts of `seconds`: on a machine shared with other jobs
// the best burst is the one least disturbed, and peak and GEMM are measured the same way so the
// ratio stays fair.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend/cpu/gemm_bench.hpp"

int main(int argc, char** argv) {
    using namespace routescope::cpu;
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const double seconds = argc > 2 ? std::atof(argv[2]) : 0.5;
    std::vector<int> sizes;
    std::stringstream list(argc > 3 ? argv[3] : "512,1024,2048");
    for (std::string s; std::getline(list, s, ',');)
        sizes.push_back(std::stoi(s));
    const int repeats = argc > 4 ? std::max(1, std::atoi(argv[4])) : 5;

    double peak = 0;
    for (int i = 0; i < repeats; ++i)
        peak = std::max(peak, measure_fma_peak_gflops(threads, seconds));
    std::printf("FMA peak (%s, %d threads, best of %d): %.1f GFLOP/s\n", fma_peak_isa(), threads,
                repeats, peak);
    std::printf("%6s %6s %6s %8s %10s %8s\n", "m", "n", "k", "threads", "GFLOP/s", "% peak");
    for (int s : sizes) {
        GemmBenchResult best;
        for (int i = 0; i < repeats; ++i) {
            const auto r = bench_gemm(s, s, s, threads, seconds);
            if (r.gflops > best.gflops) best = r;
        }
        std::printf("%6d %6d %6d %8d %10.1f %7.1f%%\n", best.m, best.n, best.k, best.threads,
                    best.gflops, 100.0 * best.gflops / peak);
    }
    return 0;
}
